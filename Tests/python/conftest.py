"""Shared fixtures of the reader checks: the receiptflow binary and generated ground-truth tables."""

import os
import pathlib
import subprocess

import pytest

import tables

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _find_binary():
    env = os.environ.get("RECEIPTFLOW_BIN")
    if env:
        return env
    for config in ("release", "debug"):
        p = ROOT / ".build" / config / "receiptflow"
        if p.exists():
            return str(p)
    return None


def sink_harness(receiptflow):
    """The output writers' test harness: RECEIPTFLOW_SINKS_BIN, or SinkHarness beside the receiptflow binary."""
    path = os.environ.get("RECEIPTFLOW_SINKS_BIN") or str(pathlib.Path(receiptflow).parent / "SinkHarness")
    if not os.path.exists(path):
        pytest.fail("no SinkHarness binary: build it (swift build --product SinkHarness; scripts/test.sh does)")
    return path


def pytest_configure(config):
    config.addinivalue_line("markers", "spark: runs Spark (Java 17, PySpark); left out of the quick test command")


@pytest.fixture(scope="session")
def receiptflow():
    path = _find_binary()
    if not path:
        pytest.fail("no receiptflow binary: build it and set RECEIPTFLOW_BIN (scripts/test.sh does)")
    return path


def write_tables(receiptflow, tmp, fmt, receipts, transactions, extra=(), out=None):
    """Writes the rows through `SinkHarness write`; returns the output directory (or stdout bytes)."""
    tmp = pathlib.Path(tmp)
    tmp.mkdir(parents=True, exist_ok=True)
    rpath = tmp / "receipts.input.ndjson"
    tpath = tmp / "transactions.input.ndjson"
    tables.dump_rows(rpath, receipts, tables.RECEIPTS)
    tables.dump_rows(tpath, transactions, tables.TRANSACTIONS)
    outdir = out or str(tmp / f"out-{fmt}")
    cmd = [sink_harness(receiptflow), "write", "--format", fmt, "--out", outdir,
           "--receipts", str(rpath), "--transactions", str(tpath), *extra]
    res = subprocess.run(cmd, capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    return res.stdout if outdir == "-" else pathlib.Path(outdir)


@pytest.fixture(scope="session")
def dataset():
    """Receipts and transactions rows with edge cases: Unicode, CSV metacharacters, nulls, extreme integers."""
    return tables.generate(n_receipts=5000, n_transactions=12000, seed=20240611)
