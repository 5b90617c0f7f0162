#!/usr/bin/env bash
# The README's test command. First checks what the build and the tests need and stops within seconds with the fix
# when something is missing (the Python reader packages it installs itself when pip can); then the Swift tests in
# debug and release, then the Python reader checks on the release binary of the same build.
#   bash scripts/test.sh                    everything
#   bash scripts/test.sh --filter NAME      only the Swift tests matching NAME (debug and release), no Python checks
#   bash scripts/test.sh --force            everything, even when nothing changed since the last passing run
# A second run with nothing changed rebuilds nothing: the release tests build in their own folder
# (.build-release-tests, with the testing flags), so they never invalidate the plain release build that
# scripts/demo.sh, scripts/install.sh and scripts/bench.sh make in .build. In a git checkout, a full run that
# passed records a hash of every file git sees and of the toolchain; when nothing differs, the next full run says
# so and stops, as a build system does with a passed test whose inputs are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- What the tests need ----------------------------------------------------------------------------------------
missing=()
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
[ -f /usr/include/zstd.h ] || missing+=(libzstd-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v openssl >/dev/null || missing+=(openssl)  # an independent judge of the receipts the generator signs
command -v zstd >/dev/null || missing+=(zstd)        # compressed inputs in the Python checks
[ -x /usr/bin/time ] || missing+=(time)              # peak memory of the hostile-input tests
command -v java >/dev/null || [ -x "${JAVA_HOME:-/nonexistent}/bin/java" ] || missing+=(openjdk-17-jre-headless)  # Spark
command -v chromium >/dev/null || missing+=(chromium)  # renders the HTML report (Tests/python/test_report.py)
if [ ${#missing[@]} -gt 0 ]; then
    echo "test: missing system packages; install them first:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
command -v swift >/dev/null || { echo "test: swift is not on PATH (Swift 6: https://www.swift.org/install/)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "test: python3 is missing:  sudo apt-get install -y python3 python3-pip" >&2; exit 1; }

# The Python reader checks' packages (Tests/python/requirements.txt), installed when any is missing.
python_ready() {
    python3 - <<'EOF' 2>/dev/null
import importlib.util, sys
names = {"pyarrow": "pyarrow", "duckdb": "duckdb", "polars": "polars", "pytest": "pytest", "pyspark": "pyspark",
         "pandas": "pandas", "pillow": "PIL"}
wanted = [l.split("#")[0].strip() for l in open("Tests/python/requirements.txt")]
missing = [w for w in wanted if w and importlib.util.find_spec(names.get(w, w)) is None]
if missing:
    print("test: Python packages missing: " + " ".join(missing), file=sys.stderr)
    sys.exit(1)
EOF
}
if ! python_ready; then
    echo "test: installing them:  python3 -m pip install -r Tests/python/requirements.txt" >&2
    if ! python3 -m pip install -q --disable-pip-version-check -r Tests/python/requirements.txt; then
        echo "test: pip could not install the Python packages. Install pip (sudo apt-get install -y python3-pip)" >&2
        echo "      or use a virtual environment, then:  python3 -m pip install -r Tests/python/requirements.txt" >&2
        exit 1
    fi
    python_ready || exit 1
fi

# --- Nothing changed since the last passing run ------------------------------------------------------------------
force=0
if [ "${1:-}" = "--force" ]; then
    force=1
    shift
fi
stamp=.build/test-passed
fingerprint=""
if [ $# -eq 0 ] && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    fingerprint="$({
        swift --version 2>&1 || true
        python3 --version 2>&1 || true
        git ls-files -z --cached --others --exclude-standard | sort -z | xargs -0 -r sha256sum 2>&1 || true
    } | sha256sum | cut -d' ' -f1)"
    if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
        echo "test: nothing changed since the last passing run of every test (stamp $stamp); run" \
            "\`bash scripts/test.sh --force\` to run them again"
        exit 0
    fi
fi

# --- Swift tests -------------------------------------------------------------------------------------------------
swift build --build-tests
swift test --skip-build "$@"
# Release build: the parser must hold its bounds without debug checks too.
# `swift test` (not `swift build --build-tests`, which cannot enable testable imports in release) builds them.
release=(-c release --scratch-path .build-release-tests)
swift test "${release[@]}" "$@"
[ $# -eq 0 ] || exit 0

# --- Python reader checks, on the release binary the tests just built --------------------------------------------
# The output writers' harness (a test-only executable) comes from the debug build above: building it in the release
# scratch path without testable imports would invalidate the release tests' build.
sinks="$(swift build "${release[@]}" --show-bin-path)/SinkHarness"
[ -x "$sinks" ] || sinks="$(swift build --show-bin-path)/SinkHarness"
RECEIPTFLOW_BIN="$(swift build "${release[@]}" --show-bin-path)/receiptflow" RECEIPTFLOW_SINKS_BIN="$sinks" \
    python3 -m pytest -q Tests/python
# Every test passed: a second run with nothing changed can say so without running them again.
if [ -n "$fingerprint" ]; then
    mkdir -p .build
    echo "$fingerprint" > "$stamp"
fi
