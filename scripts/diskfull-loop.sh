#!/usr/bin/env bash
# Exports that hit a full disk, run again and again under ThreadSanitizer: every run must exit 0 (it fitted) or 1
# (it did not) with the output folder exactly as it was before the run, and none may crash or report a race.
#
# usage: scripts/diskfull-loop.sh [RUNS]      (default 200)
#   RECEIPTFLOW_BIN   the binary to run (default .build-tsan/debug/receiptflow, built with
#                     swift build --sanitize=thread --scratch-path .build-tsan --product receiptflow)
# The disk is a small tmpfs when this shell may mount one (root); otherwise each run gets a file-size limit
# (ulimit -f, with SIGXFSZ ignored so that writes fail with EFBIG instead of killing the process).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-200}"
bin="${RECEIPTFLOW_BIN:-.build-tsan/debug/receiptflow}"
if [ ! -x "$bin" ]; then
    echo "diskfull-loop: $bin is missing; build it first:" >&2
    echo "  swift build --sanitize=thread --scratch-path .build-tsan --product receiptflow" >&2
    exit 1
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

work="$(mktemp -d)"
mnt="$work/mnt"
mkdir -p "$mnt"
mounted=0
cleanup() {
    if [ "$mounted" = 1 ]; then umount "$mnt" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Input: generated receipts signed by a test CA kept in the work folder, a few bad ones among them.
"$bin" generate --count 1500 --out "$work/in.ndjson" --seed 11 --ca-dir "$work/ca" --quiet
small="$work/small.ndjson"
head -n 40 "$work/in.ndjson" >"$small"
anchor="$work/ca/root.pem"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0 exitcode=66}"
formats=(csv parquet ndjson)

# The size of a complete run of each format, measured on the ordinary disk.
declare -A need
for f in "${formats[@]}"; do
    "$bin" export "$work/in.ndjson" --out "$work/probe-$f" --format "$f" --trust-anchor "$anchor" --threads 2 --quiet 2>/dev/null
    need[$f]=$(du -sb "$work/probe-$f" | cut -f1)
done
max=0
for f in "${formats[@]}"; do [ "${need[$f]}" -gt "$max" ] && max=${need[$f]}; done

mode=ulimit
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=$(((max + (4 << 20)) / 1024))k tmpfs "$mnt" 2>/dev/null; then
    mounted=1
    mode=tmpfs
fi
echo "diskfull-loop: $runs runs of $bin, disk full by $mode"

snapshot() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) 2>/dev/null || true; }

crashes=0
races=0
changed=0
completed=0
failed=0
other=0
for ((i = 0; i < runs; i++)); do
    f=${formats[$((i % 3))]}
    out="$mnt/out-$f"
    if [ ! -f "$out/summary.json" ]; then
        "$bin" export "$small" --out "$out" --format "$f" --trust-anchor "$anchor" --threads 2 --quiet --overwrite \
            2>/dev/null
    fi
    before="$(snapshot "$out")"
    # Leave a different share of what the run needs each time, 0 to 110%: the disk fills at every stage, and
    # some runs fit.
    share=$(((i * 7919) % 1100))
    rm -f "$mnt/filler"
    cmd=("$bin" export "$work/in.ndjson" --out "$out" --format "$f" --trust-anchor "$anchor" --threads 2 --quiet
        --overwrite)
    set +e
    if [ "$mode" = tmpfs ]; then
        free=$(($(stat -f -c '%a*%S' "$mnt")))
        leave=$((need[$f] * share / 1000))
        fill=$((free - leave))
        [ "$fill" -gt 0 ] && head -c "$fill" /dev/zero >"$mnt/filler" 2>/dev/null
        "${cmd[@]}" 2>"$work/err"
        rc=$?
    else
        limit=$((need[$f] * share / 1000 / 1024 + 1))
        bash -c 'trap "" XFSZ; ulimit -f '"$limit"'; exec "$@"' _ "${cmd[@]}" 2>"$work/err"
        rc=$?
    fi
    set -e
    rm -f "$mnt/filler"
    if [ $(((i + 1) % 25)) = 0 ]; then echo "diskfull-loop: $((i + 1)) runs done" >&2; fi
    if grep -q "ThreadSanitizer" "$work/err"; then
        races=$((races + 1))
        echo "run $i ($f, $share/1000): ThreadSanitizer report" >&2
        grep -m 20 -A 20 "WARNING: ThreadSanitizer\|ERROR: ThreadSanitizer" "$work/err" >&2 || true
    fi
    if [ "$rc" -ge 128 ] || grep -q "SEGV\|Bad pointer\|Fatal error\|stack trace" "$work/err"; then
        crashes=$((crashes + 1))
        echo "run $i ($f, $share/1000): crashed, exit $rc" >&2
        tail -n 30 "$work/err" >&2
    elif [ "$rc" = 0 ]; then
        completed=$((completed + 1))
    elif [ "$rc" = 1 ]; then
        failed=$((failed + 1))
        if [ "$(snapshot "$out")" != "$before" ]; then
            changed=$((changed + 1))
            echo "run $i ($f, $share/1000): exit 1 but the output folder changed" >&2
        fi
    elif [ "$rc" != 66 ]; then
        other=$((other + 1))
        echo "run $i ($f, $share/1000): unexpected exit $rc" >&2
        tail -n 5 "$work/err" >&2
    fi
done
echo "diskfull-loop: $runs runs: $completed completed, $failed failed cleanly (disk full), $crashes crashed," \
    "$races with ThreadSanitizer reports, $changed left the folder changed, $other other exits"
[ "$crashes" = 0 ] && [ "$races" = 0 ] && [ "$changed" = 0 ] && [ "$other" = 0 ]
