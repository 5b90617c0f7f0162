"""Shared helpers of test_spark.py and test_spark_task.py: the receiptflow binary, a generated corpus split into
files, and the single-machine reference tables."""

import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.join(REPO, "scripts", "spark", "driver.py")
sys.path.insert(0, os.path.dirname(DRIVER))


def receiptflow_bin():
    """The binary under test (RECEIPTFLOW_BIN, as scripts/test.sh sets it), or a skip saying how to provide it."""
    path = os.environ.get("RECEIPTFLOW_BIN")
    if not path:
        pytest.fail("RECEIPTFLOW_BIN is not set: build receiptflow and point RECEIPTFLOW_BIN at it")
    if not os.access(path, os.X_OK):
        pytest.fail(f"RECEIPTFLOW_BIN={path} is not an executable file")
    return path


def generate_split_corpus(binary, directory, count, files, compress=(), customers=None):
    """`receiptflow generate` once (`--count count`, or `--customers customers` over 3 years), then its lines cut
    into `files` consecutive files p0...; the indexes in `compress` are zstd-compressed (skipped when the zstd tool
    is missing). Returns (paths in order, trust anchor). Blank and malformed lines stay as generated, so line
    numbers count them as in any input. The whole corpus stays as DIRECTORY/corpus.ndjson, with the customer
    generator's expected tables beside it."""
    ca = os.path.join(directory, "ca")
    corpus = os.path.join(directory, "corpus.ndjson")
    what = ["--count", str(count), "--bad-fraction", "0.05"] if customers is None else ["--customers", str(customers)]
    subprocess.run(
        [binary, "generate", *what, "--seed", "7", "--ca-dir", ca, "--out", corpus, "--quiet"],
        check=True,
    )
    with open(corpus, "rb") as fh:
        lines = fh.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    parts = os.path.join(directory, "parts")
    os.makedirs(parts)
    paths = []
    n = len(lines)
    for i in range(files):
        path = os.path.join(parts, f"p{i}.ndjson")
        with open(path, "wb") as fh:
            fh.write(b"\n".join(lines[i * n // files : (i + 1) * n // files]) + b"\n")
        if i in compress and shutil.which("zstd"):
            subprocess.run(["zstd", "-q", "--rm", path], check=True)
            path += ".zst"
        paths.append(path)
    return paths, os.path.join(ca, "root.pem")


def reference_tables(binary, inputs, trust_anchor, out, fmt="parquet", extra=()):
    """The single-machine run: `receiptflow export INPUT... --out out [extra]`, read back as pyarrow tables (Parquet;
    for another format, the output directory)."""
    import pyarrow.parquet as pq

    subprocess.run(
        [binary, "export", *inputs, "--out", out, "--trust-anchor", trust_anchor, "--quiet", "--format", fmt,
         *extra],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    if fmt != "parquet":
        return out
    return (
        pq.read_table(os.path.join(out, "receipts.parquet")),
        pq.read_table(os.path.join(out, "transactions.parquet")),
    )
