#!/usr/bin/env bash
# The benchmark as users and CI run it: builds receiptflow-bench in release mode, runs it over the generated
# corpora (made in bench-out/ on the first run: 50,000 receipts, seed 2, bad fraction 0.05; and the receipts of
# 8,000 customers over 3 years, about 105,000), writes bench-out/bench.json and checks it against
# Benchmarks/thresholds.json (ratios and allocation counts only).
#   scripts/bench.sh [receiptflow-bench run options, e.g. --count 20000 --repeat 5]
#   scripts/bench.sh jws [receiptflow-bench jws options, e.g. --repeat 3 --peer]
#   scripts/bench.sh history [receiptflow-bench history options]
# The first form compares the export (--no-history and the default, history on) with a plain C loop doing the
# work every record needs over the same corpus, on each of the two corpora: one whose purchases are nearly all
# distinct, and one whose receipts repeat their account's purchases, as real archives do. The second form is the
# JWS export against a plain C loop for JWS (a corpus of about 10,000 JWS made in bench-out/ on the first run),
# written to bench-out/jws.json and checked against the "jws" section of the thresholds. The third is the purchase
# history's cost on short corpora (10,000 and 40,000 receipts, made on the first run) and on the customer-history
# corpus of the first form (made here when absent), written to bench-out/history.json and checked against
# "history_short".
# Exit status: non-zero on a regression. Wall-clock numbers mean little when `uptime` shows a load above the
# core count; the CPU-time columns and ratios do not depend on it.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product receiptflow-bench >&2
BIN="$(swift build -c release --show-bin-path)/receiptflow-bench"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
if [ "${1:-}" = "jws" ]; then
    shift
    exec "$BIN" jws --json bench-out/jws.json --check Benchmarks/thresholds.json "$@"
fi
if [ "${1:-}" = "history" ]; then
    shift
    exec "$BIN" history --short --json bench-out/history.json --check Benchmarks/thresholds.json "$@"
fi
"$BIN" run --json bench-out/bench.json --check Benchmarks/thresholds.json "$@"
