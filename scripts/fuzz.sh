#!/usr/bin/env bash
# Builds the libFuzzer targets with AddressSanitizer and runs each for a bounded time or number of runs.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 60)
#   FUZZ_RUNS=N scripts/fuzz.sh               (stop each target after N executions instead)
#   FUZZ_TARGETS="der" scripts/fuzz.sh        (only some targets; default "der ndjson zstd csv jws jwsline")
#   FUZZ_FIXTURES=0 scripts/fuzz.sh           (do not seed the DER and JWS targets with Tests/Fixtures)
#   scripts/fuzz.sh merge WORK_DIR TARGET     (add WORK_DIR's inputs that reach new coverage to Fuzz/corpus/TARGET)
# Corpora live in Fuzz/corpus/<target>/ (generated receipts and fuzzer finds; never fixture files).
# A crash leaves crash-* files in fuzz-out/ and fails the script; each becomes a regression input in
# Fuzz/regressions/<target>/ (replayed first on every run, and by FuzzCorpusReplayTests) plus a Swift test.
# See Fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${FUZZ_OUT:-fuzz-out}"  # binaries, logs, work corpora and crash inputs (ignored by git)
mkdir -p "$out"
# A failed precondition must reach libFuzzer's crash handler at once, not wait for Swift's backtracer.
export SWIFT_BACKTRACE=enable=no

build_target() {  # name, module sources (Swift, C files of a C target with an include/ folder, system module folders)..., entry file
    local name="$1"; shift
    local tmp; tmp=$(mktemp -d)
    mkdir -p "$tmp/src" "$tmp/obj"
    local cflags=()
    rm -f "$out/fuzz-$name"
    for f in "$@"; do
        case "$f" in
        *.c)
            # A C target (CSIMD): instrumented like the Swift code, imported through a module map of its headers.
            local dir mod; dir="$(cd "$(dirname "$f")" && pwd)"; mod="$(basename "$dir")"
            clang -O2 -g -fsanitize=address,fuzzer-no-link -I "$dir/include" -c "$f" -o "$tmp/obj/$mod-$(basename "$f").o"
            if [ ! -f "$tmp/$mod/module.modulemap" ]; then
                mkdir -p "$tmp/$mod"
                { echo "module $mod {"; for h in "$dir"/include/*.h; do echo "    header \"$h\""; done; echo "    export *"; echo "}"; } \
                    > "$tmp/$mod/module.modulemap"
                cflags+=(-I "$tmp/$mod")
            fi
            ;;
        Sources/CZstd | Sources/CZlib | Sources/COpenSSL)
            # A system library module (its module map links the library).
            cflags+=(-I "$(cd "$f" && pwd)")
            ;;
        *)
            # One Swift module: the library sources minus their imports of each other, plus the entry point.
            sed -E '/^import (ReceiptModel|ReceiptDER|ReceiptIO|ReceiptVerify|ReceiptJWS)$/d' "$f" > "$tmp/src/$(basename "$(dirname "$f")")_$(basename "$f")"
            ;;
        esac
    done
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name "Fuzz_$name" "${cflags[@]}" "$tmp"/src/*.swift \
        $(ls "$tmp"/obj/*.o 2>/dev/null) -o "$out/fuzz-$name" 2>&1 | grep -v "Cannot export local symbol" || true
    rm -rf "$tmp"
    [ -x "$out/fuzz-$name" ] || { echo "fuzz: could not build the $name target" >&2; exit 1; }
}

build() {  # name
    case "$1" in
    der) build_target der Sources/ReceiptModel/*.swift Sources/ReceiptDER/*.swift Fuzz/DERFuzz.swift ;;
    ndjson) build_target ndjson Sources/ReceiptModel/*.swift Sources/ReceiptIO/NDJSONScanner.swift \
        Sources/ReceiptIO/JSONString.swift Sources/ReceiptIO/Base64.swift Sources/CSIMD/*.c Fuzz/NDJSONFuzz.swift ;;
    zstd) build_target zstd Sources/CZstd Sources/CZlib Sources/ReceiptModel/RawPath.swift Sources/ReceiptModel/Lock.swift Sources/ReceiptIO/ByteSource.swift Sources/ReceiptIO/InputError.swift \
        Sources/ReceiptIO/ZstdByteSource.swift Sources/ReceiptIO/GzipByteSource.swift Sources/ReceiptIO/InputSniffer.swift \
        Sources/ReceiptIO/InputOpener.swift Sources/ReceiptIO/RecordBatch.swift Sources/ReceiptIO/RecordReader.swift \
        Sources/ReceiptIO/RecordReader+CSV.swift Sources/ReceiptIO/CSVFramer.swift Sources/ReceiptIO/CSVFields.swift \
        Sources/ReceiptIO/CSVHeader.swift Fuzz/ZstdFuzz.swift ;;
    csv) build_target csv Sources/CZstd Sources/CZlib Sources/ReceiptModel/*.swift Sources/ReceiptIO/ByteSource.swift \
        Sources/ReceiptIO/InputError.swift Sources/ReceiptIO/ZstdByteSource.swift Sources/ReceiptIO/GzipByteSource.swift \
        Sources/ReceiptIO/InputSniffer.swift Sources/ReceiptIO/InputOpener.swift Sources/ReceiptIO/RecordBatch.swift \
        Sources/ReceiptIO/RecordReader.swift Sources/ReceiptIO/RecordReader+CSV.swift Sources/ReceiptIO/CSVFramer.swift \
        Sources/ReceiptIO/CSVFields.swift Sources/ReceiptIO/CSVHeader.swift Sources/ReceiptIO/CSVRowScanner.swift \
        Fuzz/CSVFuzz.swift ;;
    jws) build_target jws Sources/COpenSSL Sources/CSIMD/*.c Sources/ReceiptModel/*.swift Sources/ReceiptDER/*.swift \
        Sources/ReceiptVerify/*.swift Sources/ReceiptVerify/TrustPolicies/*.swift Sources/ReceiptJWS/*.swift Fuzz/JWSFuzz.swift ;;
    jwsline) build_target jwsline Sources/COpenSSL Sources/CSIMD/*.c Sources/ReceiptModel/*.swift \
        Sources/ReceiptDER/*.swift Sources/ReceiptVerify/*.swift Sources/ReceiptVerify/TrustPolicies/*.swift Sources/ReceiptJWS/*.swift \
        Sources/ReceiptIO/NDJSONScanner.swift Sources/ReceiptIO/JSONString.swift Sources/ReceiptIO/Base64.swift \
        Sources/ReceiptIO/JWSDetector.swift Sources/ReceiptIO/RecordBatch.swift Sources/ReceiptPipeline/LineDecoder.swift \
        Sources/ReceiptIO/CSVFields.swift Sources/ReceiptIO/CSVHeader.swift Sources/ReceiptIO/CSVRowScanner.swift \
        Sources/ReceiptPipeline/LineDecoder+CSV.swift \
        Sources/ReceiptPipeline/JWSLine.swift Sources/ReceiptPipeline/DeviceIdentifier.swift \
        Sources/ReceiptPipeline/ColumnAppend.swift Fuzz/JWSLineFuzz.swift ;;
    *) echo "fuzz: unknown target '$1' (der, ndjson, zstd, csv, jws or jwsline)" >&2; exit 2 ;;
    esac
}

run_target() {  # name, seconds
    local name="$1" seconds="$2"
    local corpus="Fuzz/corpus/$name"
    mkdir -p "$corpus" "$out/work-$name"
    local seeds=()
    # Real receipts are transient seeds only (never committed); the committed corpus grows from generated data.
    if [ "$name" = der ] && [ "${FUZZ_FIXTURES:-1}" = 1 ] && [ -d Tests/Fixtures/real ]; then
        seeds=(Tests/Fixtures/real)
    fi
    if [ "$name" = jws ] && [ "${FUZZ_FIXTURES:-1}" = 1 ] && [ -d Tests/Fixtures/jws ]; then
        mkdir -p "$out/seeds-jws"
        cp Tests/Fixtures/jws/*.jws "$out/seeds-jws/"
        seeds=("$out/seeds-jws")
    fi
    if [ "$name" = jwsline ] && [ "${FUZZ_FIXTURES:-1}" = 1 ] && [ -d Tests/Fixtures/jws ]; then
        # The real samples as the lines export reads: a notification as its body, any other JWS in the record field.
        mkdir -p "$out/seeds-jwsline"
        for f in Tests/Fixtures/jws/*.jws; do
            case "$(basename "$f")" in
            notification*) key=signedPayload ;;
            *) key=receipt-data ;;
            esac
            printf '{"id":"%s","%s":"%s"}' "$(basename "$f" .jws)" "$key" "$(tr -d '\n' < "$f")" \
                > "$out/seeds-jwsline/$(basename "$f" .jws)"
        done
        seeds=("$out/seeds-jwsline")
    fi
    local limit=(-max_total_time="$seconds")
    [ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
    # Regression inputs first: they must not crash.
    if [ -d "Fuzz/regressions/$name" ]; then
        "$out/fuzz-$name" -runs=0 "Fuzz/regressions/$name" > "$out/$name-regressions.log" 2>&1 || {
            tail -n 40 "$out/$name-regressions.log"
            echo "fuzz: a regression input of $name crashes again (log: $out/$name-regressions.log)" >&2
            return 1
        }
    fi
    local log="$out/$name.log"
    if ! "$out/fuzz-$name" "$out/work-$name" "$corpus" "${seeds[@]}" "${limit[@]}" -max_len=65536 \
        -rss_limit_mb=2048 -artifact_prefix="$out/$name-" -print_final_stats=1 > "$log" 2>&1; then
        tail -n 60 "$log"
        echo "fuzz: $name found a crash; the input is in $out/$name-crash-* (log: $log)" >&2
        return 1
    fi
    tail -n 6 "$log"
    echo "fuzz: $name: $(sed -n 's/^stat::number_of_executed_units: *//p' "$log") executions, no crash"
}

if [ "${1:-}" = merge ]; then
    work="${2:?usage: scripts/fuzz.sh merge WORK_DIR TARGET}"
    name="${3:?usage: scripts/fuzz.sh merge WORK_DIR TARGET}"
    build "$name"
    before=$(ls "Fuzz/corpus/$name" | wc -l)
    "$out/fuzz-$name" -merge=1 -max_len=65536 "Fuzz/corpus/$name" "$work" > "$out/$name-merge.log" 2>&1
    tail -n 2 "$out/$name-merge.log"
    echo "fuzz: Fuzz/corpus/$name: $before -> $(ls "Fuzz/corpus/$name" | wc -l) inputs"
    exit 0
fi

seconds="${1:-60}"
for t in ${FUZZ_TARGETS:-der ndjson zstd csv jws jwsline}; do
    build "$t"
    run_target "$t" "$seconds"
done
