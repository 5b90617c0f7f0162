#!/usr/bin/env bash
# Peers side by side on the same corpus, in one run: an `openssl cms -verify` shell loop (on a subset,
# extrapolated per receipt), the hand-rolled Python validator (scripts/peers/py_validator.py: cryptography +
# asn1crypto) on one process and on one process per core, and `receiptflow export` on the whole corpus.
# Prints receipts/s of each and the ratios (targets: >= 80x Python on all cores, >= 300x the openssl loop).
#
#   scripts/peers/run.sh [--count N] [--openssl N] [--python N] [--json FILE]
#
# Every rate is given twice: wall clock, and from CPU time ("per core": records / CPU seconds x cores, what
# the tool would do with the machine to itself). On a machine other builds are using, compare the CPU column.
# Needs: swift, zstd, openssl, python3 with `pip install cryptography asn1crypto`.
set -euo pipefail
cd "$(dirname "$0")/../.."

COUNT=50000
OPENSSL_N=500
PYTHON_N=2000
JSON=""
while [ $# -gt 0 ]; do
    case "$1" in
    --count) COUNT="$2"; shift 2 ;;
    --openssl) OPENSSL_N="$2"; shift 2 ;;
    --python) PYTHON_N="$2"; shift 2 ;;
    --json) JSON="$2"; shift 2 ;;
    *) echo "usage: scripts/peers/run.sh [--count N] [--openssl N] [--python N] [--json FILE]" >&2; exit 2 ;;
    esac
done

CORES="$(nproc)"
OUT=bench-out
CA="$OUT/test-ca"
CORPUS="$OUT/$(printf 'corpus-%d-s2-b0.050.ndjson.zst' "$COUNT")"
python3 -c 'import cryptography, asn1crypto' 2>/dev/null || {
    echo "scripts/peers/run.sh: the Python peer needs: pip install cryptography asn1crypto" >&2
    exit 1
}
if [ -z "${RECEIPTFLOW_BIN:-}" ]; then
    swift build -c release --product receiptflow >&2
    RECEIPTFLOW_BIN="$(swift build -c release --show-bin-path)/receiptflow"
fi
mkdir -p "$OUT"
if [ ! -f "$CORPUS" ]; then
    # The same corpus receiptflow-bench makes (same count, seed 2, bad fraction 0.05, same test CA).
    "$RECEIPTFLOW_BIN" generate --count "$COUNT" --seed 2 --bad-fraction 0.05 --digest mixed --ca-dir "$CA" \
        --out "$CORPUS"
fi
ROOT="$CA/root.pem"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "peers on $CORPUS ($COUNT receipts), $CORES cores, load $(cut -d' ' -f1 /proc/loadavg)" >&2

# 1. openssl cms -verify, one process per receipt, on the first OPENSSL_N records that decode to DER.
python3 - "$CORPUS" "$OPENSSL_N" "$WORK/der" <<'PY'
import base64, json, os, subprocess, sys
corpus, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.makedirs(out)
data = subprocess.run(["zstd", "-dc", corpus], check=True, capture_output=True).stdout
k = 0
for line in data.split(b"\n"):
    if k == n:
        break
    try:
        obj = json.loads(line)
        der = base64.b64decode("".join(obj["receipt-data"].split()), validate=True)
    except Exception:
        continue
    if der:
        with open(os.path.join(out, "%06d.der" % k), "wb") as f:
            f.write(der)
        k += 1
PY
cat > "$WORK/loop.sh" <<'SH'
ok=0; n=0
for f in "$1"/*.der; do
    n=$((n + 1))
    if openssl cms -verify -binary -inform DER -in "$f" -CAfile "$2" -purpose any -out /dev/null 2>/dev/null; then
        ok=$((ok + 1))
    fi
done
echo "$n $ok" > "$3"
SH
/usr/bin/time -f "%e %U %S" -o "$WORK/openssl.time" bash "$WORK/loop.sh" "$WORK/der" "$ROOT" "$WORK/openssl.count"
read -r OSSL_N OSSL_OK < "$WORK/openssl.count"
read -r OSSL_WALL OSSL_U OSSL_S < "$WORK/openssl.time"

# 2. Python, one process, then one process per core (validation time only, input already in memory).
python3 scripts/peers/py_validator.py --root "$ROOT" --limit "$PYTHON_N" "$CORPUS" > "$WORK/py1.json"
python3 scripts/peers/py_validator.py --root "$ROOT" --limit "$PYTHON_N" --processes "$CORES" "$CORPUS" \
    > "$WORK/pyN.json"

# 3. receiptflow export, the whole corpus, all threads (Parquet out, verification on).
/usr/bin/time -f "%e %U %S %M" -o "$WORK/rf.time" "$RECEIPTFLOW_BIN" export "$CORPUS" --trust-anchor "$ROOT" \
    --out "$WORK/rf-out" --quiet 2>/dev/null
read -r RF_WALL RF_U RF_S RF_RSS_KB < "$WORK/rf.time"
RF_VALID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["valid"])' "$WORK/rf-out/summary.json")

python3 - "$CORES" "$COUNT" "$RF_WALL" "$RF_U" "$RF_S" "$RF_RSS_KB" "$RF_VALID" "$OSSL_N" "$OSSL_OK" "$OSSL_WALL" \
    "$OSSL_U" "$OSSL_S" "$WORK/py1.json" "$WORK/pyN.json" "$JSON" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
a = sys.argv[1:]
cores, count = int(a[0]), int(a[1])
rf_wall, rf_cpu, rf_rss, rf_valid = float(a[2]), float(a[3]) + float(a[4]), int(a[5]) / 1024, int(a[6])
o_n, o_ok, o_wall, o_cpu = int(a[7]), int(a[8]), float(a[9]), float(a[10]) + float(a[11])
py1, pyn = json.load(open(a[12])), json.load(open(a[13]))
out, load = a[14], float(a[15])
rows = {
    # wall: as measured; per_core: records / CPU seconds, times the cores the tool can use at once.
    "receiptflow": {"records": count, "valid": rf_valid, "wall": count / rf_wall, "cpu": count / rf_cpu * cores,
                    "peak_rss_mb": rf_rss},
    "python_all_cores": {"records": pyn["records"], "valid": pyn["valid"], "wall": pyn["receipts_per_second"],
                         "cpu": pyn["receipts_per_cpu_second"] * cores},
    "python_one_process": {"records": py1["records"], "valid": py1["valid"], "wall": py1["receipts_per_second"],
                           "cpu": py1["receipts_per_cpu_second"]},
    "openssl_cms_loop": {"records": o_n, "valid": o_ok, "wall": o_n / o_wall, "cpu": o_n / o_cpu},
}
print("%-44s %9s %9s %14s %14s" % ("peer (same corpus)", "records", "valid", "receipts/s", "per core x%d" % cores))
labels = {
    "receiptflow": "receiptflow export (all threads, Parquet)",
    "python_all_cores": "Python cryptography+asn1crypto, %d procs" % cores,
    "python_one_process": "Python cryptography+asn1crypto, 1 proc",
    "openssl_cms_loop": "openssl cms -verify loop (1 proc/receipt)",
}
for k, r in rows.items():
    print("%-44s %9d %9d %14.1f %14.1f" % (labels[k], r["records"], r["valid"], r["wall"], r["cpu"]))
ratios = {}
for peer, target in (("python_all_cores", 80), ("python_one_process", None), ("openssl_cms_loop", 300)):
    w = rows["receiptflow"]["wall"] / rows[peer]["wall"]
    c = rows["receiptflow"]["cpu"] / rows[peer]["cpu"]
    ratios[peer] = {"wall": w, "cpu": c, "target": target}
    print("receiptflow / %-24s %8.0fx wall clock %8.0fx from CPU time%s" % (
        peer, w, c, "   (target >= %dx)" % target if target else ""))
print("load average %.1f at the end; receiptflow peak RSS %.0f MB" % (load, rf_rss))
if out:
    json.dump({"cores": cores, "load_average": load, "peers": rows, "ratios": ratios}, open(out, "w"), indent=2)
    print("wrote", out)
PY
