#!/usr/bin/env bash
# Builds the libFuzzer targets with AddressSanitizer and runs each for a bounded time or number of runs.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 60)
#   FUZZ_RUNS=N scripts/fuzz.sh               (stop each target after N executions instead)
# Corpora live in Fuzz/corpus/<target>/ (seeded from generated receipts and, when present, ../shared/fixtures).
# A crash leaves crash-* files in fuzz-out/; each becomes a regression input in Fuzz/regressions/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=fuzz-out
mkdir -p "$out"

build_target() {  # name, module sources..., entry file
    local name="$1"; shift
    local tmp; tmp=$(mktemp -d)
    # One module: the library sources minus their imports of each other, plus the entry point.
    for f in "$@"; do sed -E '/^import (ReceiptModel|ReceiptDER|ReceiptIO)$/d' "$f" > "$tmp/$(basename "$(dirname "$f")")_$(basename "$f")"; done
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name "Fuzz_$name" "$tmp"/*.swift -o "$out/fuzz-$name" 2>&1 | grep -v "Cannot export local symbol" || true
    rm -rf "$tmp"
}

run_target() {  # name
    local name="$1"
    local corpus="Fuzz/corpus/$name"
    mkdir -p "$corpus" "$out/work-$name"
    local regress=()
    [ -d "Fuzz/regressions/$name" ] && regress=("Fuzz/regressions/$name")
    local seeds=()
    # Real receipts are transient seeds only (never committed); the committed corpus grows from generated data.
    if [ "$name" = der ] && [ -d ../shared/fixtures/real ]; then seeds=(../shared/fixtures/real); fi
    local limit=(-max_total_time="$seconds")
    [ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
    # Regression inputs first: they must not crash.
    if [ ${#regress[@]} -gt 0 ]; then "$out/fuzz-$name" "${regress[@]}" -runs=0; fi
    "$out/fuzz-$name" "$out/work-$name" "$corpus" "${seeds[@]}" "${limit[@]}" -max_len=65536 -rss_limit_mb=2048 \
        -artifact_prefix="$out/$name-" -print_final_stats=1 2>&1 | tail -n 12
}

targets="${FUZZ_TARGETS:-der ndjson}"
for t in $targets; do
    case "$t" in
    der) build_target der Sources/ReceiptModel/*.swift Sources/ReceiptDER/*.swift Fuzz/DERFuzz.swift ;;
    ndjson) build_target ndjson Sources/ReceiptModel/*.swift Sources/ReceiptIO/NDJSONScanner.swift \
        Sources/ReceiptIO/JSONString.swift Sources/ReceiptIO/Base64.swift Fuzz/NDJSONFuzz.swift ;;
    esac
    run_target "$t"
done
