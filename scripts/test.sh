#!/usr/bin/env bash
# The test command from the README: Swift tests (debug and release), then the Python reader checks.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build
swift test
# Release build: the parser must hold its bounds without debug checks too.
swift test -c release
if [ -n "$(ls Tests/python/test_*.py 2>/dev/null)" ]; then
    swift build -c release --product receiptflow
    swift build -c release --product SinkHarness
    RECEIPTFLOW_BIN="$(swift build -c release --show-bin-path)/receiptflow" python3 -m pytest -q Tests/python
fi
