#!/usr/bin/env bash
# Runs the Swift test suite under AddressSanitizer and ThreadSanitizer, each in its own scratch path
# (.build-asan, .build-tsan) so that neither clobbers the normal .build. The receiptflow binary that the CLI tests
# spawn is built in the same scratch path, so it runs instrumented too.
#   scripts/sanitizers.sh                 both, the whole suite
#   scripts/sanitizers.sh address         one of them
#   SANITIZER_FILTER=REGEX scripts/sanitizers.sh    only the tests matching REGEX (swift test --filter)
# Prints how long each pass took; fails on the first sanitizer report (ASan aborts, TSan exits 66).
set -euo pipefail
cd "$(dirname "$0")/.."

# LeakSanitizer stays on (ASan's default on Linux), minus the toolchain's own leaks (scripts/lsan-suppressions.txt);
# a sanitizer report stops the process with a non-zero status.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"

filter=()
[ -n "${SANITIZER_FILTER:-}" ] && filter=(--filter "$SANITIZER_FILTER")

for s in "${@:-address thread}"; do
    for sanitizer in $s; do
        case "$sanitizer" in
        address) scratch=.build-asan ;;
        thread) scratch=.build-tsan ;;
        *) echo "sanitizers.sh: unknown sanitizer '$sanitizer' (address or thread)" >&2; exit 2 ;;
        esac
        start=$(date +%s)
        swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
        built=$(date +%s)
        swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${filter[@]}"
        end=$(date +%s)
        echo "sanitizers: $sanitizer clean: build $((built - start)) s, tests $((end - built)) s"
    done
done
