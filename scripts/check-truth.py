#!/usr/bin/env python3
"""Compares a `receiptflow export` output folder with a generator truth file (data/README.md).

    scripts/check-truth.py OUT_DIR TRUTH_FILE [--format csv|parquet] [--csv-raw]

Without --format, the format is the one OUT_DIR holds (export writes Parquet by default).

Reads receipts.<ext> and transactions.<ext>, or the folders of a run written in parts (receipts/part-*.<ext>),
with the standard library for CSV and pyarrow for Parquet, and checks, per record: line, record_id, status,
error_code and every receipt column the truth names (and jws_index and record_kind for a truth made with
`generate --jws`, one line per JWS) (device_hash_matches too for a truth made with
`generate --device-ids`, exported with `--device-id-field device_id`); for status-0 records, every transaction. Prints the first
mismatches and exits 1 when there are any. A CSV string cell is compared with the truth's text as the contract says
CSV writes it: with a leading apostrophe when it begins like a spreadsheet formula, unless the export was made with
`--csv-raw` (give it here too).
"""
import csv
import datetime
import io
import json
import os
import subprocess
import sys
from collections import defaultdict

RECEIPT_COLUMNS = {
    "receipt_type": "str", "bundle_id": "str", "application_version": "str", "original_application_version": "str",
    "app_item_id": "int", "download_id": "int", "version_external_identifier": "int",
    "receipt_creation_date": "ts", "original_purchase_date": "ts", "expiration_date": "ts",
    "in_app_count": "int", "digest_algorithm": "str",
}
TRANSACTION_COLUMNS = {
    "quantity": "int", "product_id": "str", "transaction_id": "str", "original_transaction_id": "str",
    "purchase_date": "ts", "original_purchase_date": "ts", "expires_date": "ts", "cancellation_date": "ts",
    "web_order_line_item_id": "int", "is_trial_period": "bool", "is_in_intro_offer_period": "bool",
    "promotional_offer_id": "str", "product_type": "int", "cancellation_reason": "int",
}


def read_truth(path):
    raw = open(path, "rb").read()
    if raw[:4] == b"\x28\xb5\x2f\xfd":
        raw = subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def csv_value(v, kind):
    """CSV cells are text: empty is null, timestamps are 2019-08-08T05:43:20.000Z."""
    if v == "":
        return None
    if kind == "int":
        return int(v)
    if kind == "bool":
        return v == "true"
    if kind == "ts":
        d = datetime.datetime.strptime(v, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        return round(d.timestamp() * 1000)
    return v


# docs/contract.md, Formats: a CSV string cell beginning with one of these gets a leading apostrophe.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(v):
    """The truth's text as a CSV cell holds it (without --csv-raw)."""
    return "'" + v if isinstance(v, str) and v.startswith(FORMULA_START) else v


def parquet_value(v, kind):
    if v is None:
        return None
    if kind == "ts":
        return round(v.timestamp() * 1000) if hasattr(v, "timestamp") else int(v)
    return v


def table_files(out_dir, name, fmt):
    """`name.<ext>`, or the parts of a run written in parts (`name/part-00000.<ext>`, ...) in part order."""
    folder = os.path.join(out_dir, name)
    if os.path.isdir(folder):
        return sorted(os.path.join(folder, f) for f in os.listdir(folder)
                      if f.startswith("part-") and f.endswith("." + fmt))
    return [f"{out_dir}/{name}.{fmt}"]


def read_table(out_dir, name, fmt):
    rows = []
    if fmt == "csv":
        for path in table_files(out_dir, name, fmt):
            with open(path, newline="", encoding="utf-8") as f:
                rows += list(csv.DictReader(f))
        return rows, csv_value
    import pyarrow.parquet as pq
    for path in table_files(out_dir, name, fmt):
        rows += pq.read_table(path).to_pylist()
    return rows, parquet_value


def detect_format(out_dir):
    """The format of the receipts table in `out_dir` (a file or a folder of parts), or None."""
    for fmt in ("parquet", "csv"):
        if os.path.isfile(os.path.join(out_dir, f"receipts.{fmt}")):
            return fmt
        folder = os.path.join(out_dir, "receipts")
        if os.path.isdir(folder) and any(f.endswith("." + fmt) for f in os.listdir(folder)):
            return fmt
    return None


def main():
    args = sys.argv[1:]
    fmt = None
    raw = "--csv-raw" in args
    if raw:
        args.remove("--csv-raw")
    if "--format" in args:
        i = args.index("--format")
        if i + 1 >= len(args) or args[i + 1] not in ("csv", "parquet"):
            print("check-truth: --format takes csv or parquet", file=sys.stderr)
            return 2
        fmt = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, truth_path = args
    fmt = fmt or detect_format(out_dir)
    if fmt is None:
        print(f"check-truth: {out_dir} holds no receipts.parquet or receipts.csv (nor a folder of parts): give "
              "the --out folder of a `receiptflow export` run in Parquet or CSV", file=sys.stderr)
        return 2
    truth = read_truth(truth_path)
    receipts, value = read_table(out_dir, "receipts", fmt)
    transactions, _ = read_table(out_dir, "transactions", fmt)
    # What a string of the truth looks like in the output.
    text = csv_text if fmt == "csv" and not raw else (lambda v: v)
    # A JWS truth (`generate --jws`) has a line per JWS: rows and transactions are keyed by (line, jws_index).
    jws = bool(truth) and "jws_index" in truth[0]

    def position(row):
        return (int(row["line"]), int(row["jws_index"]) if jws and row["jws_index"] not in ("", None) else None)

    by_line = defaultdict(list)
    for t in transactions:
        by_line[position(t)].append(t)

    problems = []
    if len(receipts) != len(truth):
        problems.append(f"{len(receipts)} receipt rows for {len(truth)} truth records")
    for row, t in zip(receipts, truth):
        where = f"line {t['line']} ({t['kind']})"
        checks = [("line", int(row["line"]), t["line"]), ("record_id", row["record_id"] or None, text(t["id"])),
                  ("status", int(row["status"]), t["status"]), ("error_code", row["error_code"] or None, t["error_code"])]
        checks += [(c, value(row[c], k), text(t[c]) if k == "str" else t[c]) for c, k in RECEIPT_COLUMNS.items()]
        if jws:
            where = f"line {t['line']} jws_index {t['jws_index']} ({t['kind']})"
            checks += [("jws_index", value(row["jws_index"], "int"), t["jws_index"]),
                       ("record_kind", row["record_kind"], text(t["record_kind"]))]
        if "device_hash_matches" in t:
            # `generate --device-ids`, exported with `--device-id-field device_id`.
            checks.append(("device_hash_matches", value(row.get("device_hash_matches"), "bool"),
                           t["device_hash_matches"]))
        if t["status"] == 0:
            got = by_line.get((t["line"], t.get("jws_index")), [])
            checks.append(("transactions", len(got), len(t["transactions"])))
            for n, (g, e) in enumerate(zip(got, t["transactions"])):
                checks += [(f"transactions[{n}].{c}", value(g[c], k), text(e[c]) if k == "str" else e[c])
                           for c, k in TRANSACTION_COLUMNS.items()]
        problems += [f"{where}: {c} is {got!r}, expected {want!r}" for c, got, want in checks if got != want]
    expected_tx = sum(len(t["transactions"]) for t in truth if t["status"] == 0)
    if len(transactions) != expected_tx:
        problems.append(f"{len(transactions)} transaction rows, expected {expected_tx}")
    for p in problems[:30]:
        print(p)
    print(f"{len(truth)} records, {len(transactions)} transactions, {len(problems)} mismatches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
