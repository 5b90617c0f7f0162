#!/usr/bin/env bash
# The README's main command: builds receiptflow and runs the main job end to end on the built-in samples, both
# generations in one run: data/sample.ndjson.zst (2,500 synthetic receipts signed by the project's test CA, 5% bad
# records of every kind) and data/sample-jws.ndjson.zst (400 lines of StoreKit 2 / App Store Server JWS signed by a
# test PKI shaped like Apple's, in every input shape, with bad JWS of every kind).
#   bash scripts/demo.sh [parquet|csv|ndjson]
set -euo pipefail
cd "$(dirname "$0")/.."
format="${1:-parquet}"

missing=()
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
[ -f /usr/include/zstd.h ] || missing+=(libzstd-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
if [ ${#missing[@]} -gt 0 ]; then
    echo "demo: missing system libraries; install them first:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi

swift build -c release --product receiptflow >&2
bin="$(swift build -c release --show-bin-path)/receiptflow"
out="out/demo-$format"
rm -rf "$out"
"$bin" export data/sample.ndjson.zst data/sample-jws.ndjson.zst \
    --trust-anchor data/test-root.pem --trust-anchor data/test-jws-root.pem --out "$out" --format "$format" --progress
echo
echo "== $out"
ls -l "$out"
echo
echo "== $out/summary.json"
cat "$out/summary.json"
echo
# The purchase history: each purchase once, each subscription with its state (docs/history.md).
for table in purchases subscriptions; do
    file="$out/$table.$format"
    [ -f "$file" ] || continue
    echo "== $file ($(grep -o "\"$table\" : [0-9]*" "$out/summary.json" | grep -o '[0-9]*$') rows; the first 3)"
    if [ "$format" = parquet ]; then
        python3 -c 'import sys, pyarrow.parquet as pq
for row in pq.read_table(sys.argv[1]).slice(0, 3).to_pylist(): print(row)' "$file" 2>/dev/null \
            || echo "(install pyarrow to print Parquet rows)"
    else
        head -n 4 "$file"
    fi
    echo
done
