#!/usr/bin/env bash
# Synthetic receipt data.
#   scripts/make-data.sh sample         regenerate the committed sample in data/ (byte-identical: see data/README.md)
#   scripts/make-data.sh bench [N]      N receipts (default 100000) into bench-out/ (ignored by git)
#   scripts/make-data.sh check          regenerate the sample into a temporary folder and compare it with data/
#   scripts/make-data.sh history        rewrite data/samples.<table>.csv.zst, the history tables of both samples
#                                       exported in one run (Tests/python/test_sample_history.py compares with them)
# The test CA lives in $RECEIPTFLOW_CA_DIR (default .build/test-ca); its keys are derived from a fixed seed, so an
# empty folder is filled with the same CA every time.
set -euo pipefail
cd "$(dirname "$0")/.."

CA_DIR="${RECEIPTFLOW_CA_DIR:-.build/test-ca}"
SAMPLE_ARGS=(--count 2500 --seed 1 --bad-fraction 0.05 --digest mixed)

swift build -c release --product receiptflow >&2
BIN="$(swift build -c release --show-bin-path)/receiptflow"

case "${1:-sample}" in
sample)
    "$BIN" generate "${SAMPLE_ARGS[@]}" --ca-dir "$CA_DIR" --out data/sample.ndjson.zst
    cp "$CA_DIR/root.pem" data/test-root.pem
    ;;
bench)
    n="${2:-100000}"
    mkdir -p bench-out
    "$BIN" generate --count "$n" --seed 2 --bad-fraction "${BAD_FRACTION:-0.05}" --ca-dir "$CA_DIR" \
        --out "bench-out/bench-$n.ndjson.zst"
    cp "$CA_DIR/root.pem" bench-out/test-root.pem
    ;;
check)
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    "$BIN" generate "${SAMPLE_ARGS[@]}" --ca-dir "$tmp/ca" --out "$tmp/sample.ndjson.zst" --quiet
    cmp "$tmp/sample.ndjson.zst" data/sample.ndjson.zst
    cmp "$tmp/sample.truth.ndjson.zst" data/sample.truth.ndjson.zst
    cmp "$tmp/ca/root.pem" data/test-root.pem
    echo "data/ sample matches a fresh regeneration"
    ;;
history)
    # The run of data/README.md ("Both samples in one run"), from the checkout's root: `purchases.source` holds
    # the input paths as given.
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    "$BIN" export data/sample.ndjson.zst data/sample-jws.ndjson.zst \
        --trust-anchor data/test-root.pem --trust-anchor data/test-jws-root.pem \
        --format csv --quiet --out "$tmp/samples"
    for table in purchases subscriptions events daily; do
        zstd -q -19 -f "$tmp/samples/$table.csv" -o "data/samples.$table.csv.zst"
    done
    ;;
*)
    echo "usage: scripts/make-data.sh [sample | bench [N] | check | history]" >&2
    exit 2
    ;;
esac
