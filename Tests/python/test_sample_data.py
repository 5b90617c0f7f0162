"""The built-in samples export to their ground truth: the receipts sample and the JWS sample, alone and in one run."""

import csv
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


def export(receiptflow, out, *inputs, fmt="parquet"):
    cmd = [receiptflow, "export", *map(str, inputs), "--out", str(out), "--format", fmt, "--quiet",
           "--trust-anchor", str(DATA / "test-root.pem"), "--trust-anchor", str(DATA / "test-jws-root.pem")]
    res = subprocess.run(cmd, capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()


def check_truth(out, truth, fmt):
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "check-truth.py"), str(out), str(truth),
                          "--format", fmt], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_the_jws_sample_exports_to_its_truth(receiptflow, tmp_path):
    for fmt in ("csv", "parquet"):
        out = tmp_path / fmt
        export(receiptflow, out, DATA / "sample-jws.ndjson.zst", fmt=fmt)
        report = check_truth(out, DATA / "sample-jws.truth.ndjson.zst", fmt)
        assert " 0 mismatches" in report, report


def test_both_samples_in_one_run_keep_every_record(receiptflow, tmp_path):
    # The demo's run: both generations in one export. Each input's rows are those of its truth file.
    out = tmp_path / "both"
    export(receiptflow, out, DATA / "sample.ndjson.zst", DATA / "sample-jws.ndjson.zst", fmt="csv")
    with open(out / "receipts.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    by_source = {}
    for r in rows:
        by_source.setdefault(r["source"], []).append(r)
    assert set(by_source) == {str(DATA / "sample.ndjson.zst"), str(DATA / "sample-jws.ndjson.zst")}
    assert len(by_source[str(DATA / "sample.ndjson.zst")]) == 2500
    assert {r["record_kind"] for r in by_source[str(DATA / "sample-jws.ndjson.zst")]} >= {
        "jws_transaction", "jws_renewal", "jws_notification"}
    assert all(r["record_kind"] == "receipt" for r in by_source[str(DATA / "sample.ndjson.zst")])
