"""A run written in parts (`export --part-records N`), killed with SIGKILL at random points and resumed with
`--resume` until done, read back as one table per folder by DuckDB (`read_parquet('out/receipts/*.parquet')`),
pyarrow.dataset and polars: the same rows, in the same order, as the single files of an uninterrupted run; Spark
reads the same rows (in an order of its own)."""

import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import time

import duckdb
import polars as pl
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

TABLES = ("receipts", "transactions")
PART_RECORDS = 300


def _generate(receiptflow, tmp):
    ca = tmp / "ca"
    inputs = []
    for name, count, seed in (("a.ndjson", 1400, 41), ("b.ndjson.zst", 1100, 42)):
        out = tmp / name
        subprocess.run([receiptflow, "generate", "--count", str(count), "--seed", str(seed), "--bad-fraction", "0.2",
                        "--out", str(out), "--ca-dir", str(ca), "--quiet"], check=True)
        inputs.append(str(out))
    return inputs, str(ca / "root.pem")


def _parts(out):
    folder = out / "receipts"
    return len([n for n in os.listdir(folder) if n.startswith("part-")]) if folder.exists() else 0


def _killed_and_resumed(receiptflow, common, out, rng):
    """Runs until completion, SIGKILLing the first attempts at random points; returns the kill points."""
    points = []
    for attempt in range(40):
        resume = (out / "manifest.json").exists()
        args = [receiptflow, "export", *common, "--out", str(out)]
        args += ["--resume"] if resume else ["--part-records", str(PART_RECORDS)]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if len(points) < 4:
            if not points:
                delay = rng.uniform(0, 0.04)
                points.append(f"{delay * 1000:.0f} ms in")
                time.sleep(delay)
            else:
                target = _parts(out) + rng.randint(1, 2)
                extra = rng.uniform(0, 0.015)
                points.append(f"{extra * 1000:.0f} ms after part {target}")
                deadline = time.monotonic() + 120
                while proc.poll() is None and _parts(out) < target and time.monotonic() < deadline:
                    time.sleep(0.001)
                time.sleep(extra)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
        if proc.returncode == -signal.SIGKILL:
            continue
        assert proc.returncode == 0, f"attempt {attempt}: {err.decode()} (kill points {points})"
        return points
    raise AssertionError(f"no attempt completed (kill points {points})")


@pytest.fixture(scope="module")
def runs(receiptflow, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("parts")
    inputs, anchor = _generate(receiptflow, tmp)
    common = [*inputs, "--trust-anchor", anchor, "--format", "parquet", "--threads", "2", "--quiet"]
    clean = tmp / "clean"
    subprocess.run([receiptflow, "export", *common, "--out", str(clean)], check=True)
    seed = int(os.environ.get("RESUME_SEED", time.time_ns() % 1_000_000))
    out = tmp / "resumed"
    points = _killed_and_resumed(receiptflow, common, out, random.Random(seed))
    return {"clean": clean, "out": out, "inputs": inputs, "why": f"seed {seed}, kill points {points}"}


def _duck(query):
    rel = duckdb.connect().sql(query)
    return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()


def _check_order(table, inputs):
    """Rows keep input order: by source (in command-line order), then line."""
    index = {p: i for i, p in enumerate(inputs)}
    keys = list(zip((index[s] for s in table.column("source").to_pylist()), table.column("line").to_pylist()))
    assert keys == sorted(keys)


@pytest.mark.parametrize("table", TABLES)
def test_duckdb_reads_the_part_folder_as_one_table(runs, table):
    got = _duck(f"SELECT * FROM read_parquet('{runs['out']}/{table}/*.parquet')")
    want = _duck(f"SELECT * FROM read_parquet('{runs['clean']}/{table}.parquet')")
    assert got.num_rows == want.num_rows > 0, runs["why"]
    assert got.equals(want), runs["why"]
    _check_order(got, runs["inputs"])


@pytest.mark.parametrize("table", TABLES)
def test_pyarrow_dataset_reads_the_part_folder_as_one_table(runs, table):
    got = ds.dataset(runs["out"] / table, format="parquet").to_table()
    want = pq.read_table(runs["clean"] / f"{table}.parquet")
    assert got.num_rows == want.num_rows > 0, runs["why"]
    assert got.equals(want), runs["why"]
    _check_order(got, runs["inputs"])


@pytest.mark.parametrize("table", TABLES)
def test_polars_reads_the_part_folder_as_one_table(runs, table):
    got = pl.read_parquet(f"{runs['out']}/{table}/*.parquet")
    want = pl.read_parquet(runs["clean"] / f"{table}.parquet")
    assert got.height == want.height > 0, runs["why"]
    assert got.equals(want), runs["why"]
    _check_order(got.to_arrow(), runs["inputs"])


def test_every_part_is_a_complete_file_listed_in_the_manifest(runs):
    out = runs["out"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and manifest["part_records"] == PART_RECORDS
    parts = manifest["parts"]
    assert len(parts) >= 5, runs["why"]
    listed = {f for p in parts for f in p["files"]}
    # Every folder a run writes: the renewals table (JWS renewal infos) has parts too, empty for receipts.
    on_disk = {f"{t}/{n}" for t in TABLES + ("renewals",) for n in os.listdir(out / t)}
    assert on_disk == listed, runs["why"]  # no temporary file, no orphan part
    first = 0
    for i, p in enumerate(parts):
        assert p["index"] == i and p["first_record"] == first
        receipts = pq.ParquetFile(out / p["files"][0])  # opens the footer: the file is complete on its own
        transactions = pq.ParquetFile(out / p["files"][1])
        assert receipts.metadata.num_rows == p["records"]
        assert transactions.metadata.num_rows == p["transactions"]
        assert p["records"] >= PART_RECORDS or i == len(parts) - 1
        if i:
            assert p["start"] == parts[i - 1]["end"]
        first += p["records"]
    summary = json.loads((out / "summary.json").read_text())
    clean = json.loads((runs["clean"] / "summary.json").read_text())
    for key in ("records", "valid", "rejected", "transactions_written", "blank_lines", "bytes_read", "by_status",
                "by_error_code"):
        assert summary[key] == clean[key], key
    assert summary["records"] == first == 2500


@pytest.mark.spark
def test_spark_reads_the_part_folder_as_one_table(runs):
    """Spark takes the folder as one table; like any Spark read it does not promise row order (it packs files into
    partitions by size), so the rows are compared after ordering by source and line."""
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -r Tests/python/requirements.txt)")
    if not shutil.which("java"):
        pytest.fail("Java is not installed (Spark needs Java 17)")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("part-folders")
             .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false").getOrCreate())
    try:
        index = {p: i for i, p in enumerate(runs["inputs"])}
        for table, columns in (("receipts", ["source", "line", "status", "error_code", "receipt_sha256"]),
                               ("transactions", ["source", "line", "transaction_id", "product_id"])):
            got = spark.read.parquet(str(runs["out"] / table)).select(*columns).collect()
            want = pq.read_table(runs["clean"] / f"{table}.parquet").select(columns).to_pylist()
            assert len(got) == len(want), runs["why"]
            got_rows = sorted((index[r["source"]], *[r[c] for c in columns[1:]]) for r in got)
            want_rows = [(index[r["source"]], *[r[c] for c in columns[1:]]) for r in want]
            if table == "transactions":
                want_rows.sort()  # several rows share (source, line): compare as ordered multisets
            assert got_rows == want_rows, runs["why"]
    finally:
        spark.stop()
