#!/usr/bin/env bash
# Whole-process measurements of `receiptflow export` that the in-process benchmark cannot make:
#  1. scaling: receipts/s with all cores, with --threads 1, and with the whole process on one core
#     (taskset -c 0, the single-thread case: reader, worker and writer share one CPU); ratios printed;
#  2. peak RSS (GNU time) on the corpus and on the corpus repeated 3 times (over 1 GB of NDJSON), to show that
#     memory does not grow with input size.
#   scripts/bench-pipeline.sh [REPEAT]      (best of REPEAT runs per configuration, default 3)
# Uses the benchmark corpus bench-out/corpus-50000-s2-b0.050.ndjson.zst (generated if absent, the same bytes
# receiptflow-bench uses). Wall-clock numbers mean little when the load average exceeds the core count.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat="${1:-3}"
swift build -c release --product receiptflow >&2
bin="$(swift build -c release --show-bin-path)/receiptflow"
mkdir -p bench-out
corpus=bench-out/corpus-50000-s2-b0.050.ndjson.zst
ca=bench-out/test-ca
if [ ! -f "$corpus" ]; then
    "$bin" generate --count 50000 --seed 2 --bad-fraction 0.05 --digest mixed --ca-dir "$ca" --out "$corpus" >&2
fi
root="$ca/root.pem"
[ -f "$root" ] || { "$bin" generate --count 1 --ca-dir "$ca" --out bench-out/one.ndjson --quiet; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

best_rate() {  # args: command prefix...; prints the best receipts/s of $repeat runs
    local best=0
    for _ in $(seq "$repeat"); do
        rm -rf "$out/o"
        "$@" export "$corpus" --trust-anchor "$root" --out "$out/o" --quiet 2>/dev/null
        local r
        r=$(python3 -c "import json;print(json.load(open('$out/o/summary.json'))['receipts_per_second'])")
        best=$(python3 -c "print(max($best, $r))")
    done
    echo "$best"
}

all=$(best_rate "$bin")
# The option goes after the subcommand's arguments: a small wrapper appends it.
one=$(best_rate sh -c 'exec "$0" "$@" --threads 1' "$bin")
pinned=$(best_rate taskset -c 0 "$bin")
python3 - "$all" "$one" "$pinned" <<'PY'
import sys
all_, one, pinned = map(float, sys.argv[1:])
print(f"scaling: all cores {all_:,.0f} receipts/s; --threads 1 {one:,.0f} receipts/s (x{all_/one:.2f});"
      f" one core (taskset -c 0) {pinned:,.0f} receipts/s (x{all_/pinned:.2f})")
PY

if command -v /usr/bin/time >/dev/null; then
    cat "$corpus" "$corpus" "$corpus" > "$out/x3.ndjson.zst"
    for input in "$corpus" "$out/x3.ndjson.zst"; do
        rm -rf "$out/o"
        /usr/bin/time -f "%M" -o "$out/rss" "$bin" export "$input" --trust-anchor "$root" --out "$out/o" --quiet 2>/dev/null
        mb=$(python3 -c "print(round(int(open('$out/rss').read().split()[-1]) / 1024))")
        bytes=$(zstd -dc "$input" | wc -c)
        echo "peak RSS: $mb MB for $(python3 -c "print(round($bytes / 1e9, 2))") GB of NDJSON ($(basename "$input"))"
    done
else
    echo "peak RSS: skipped (GNU time is not installed: apt-get install time)"
fi
