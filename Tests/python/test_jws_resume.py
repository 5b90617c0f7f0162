"""A run in parts over JWS input (transactions and renewal infos in every form, beside generated receipts), killed
with SIGKILL after parts are committed and resumed with `--resume` until done: every table it writes (the
receipts, transactions and renewals part folders, purchases and subscriptions) is byte for byte that of a run in
parts that was never killed, and purchases and subscriptions are also those of a run without parts."""

import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import time

import pytest

pytest.importorskip("cryptography", reason="the JWS test PKI needs cryptography (pip install -r requirements.txt)")

import jws_support  # noqa: E402

PART_RECORDS = 40
PART_TABLES = ("receipts", "transactions", "renewals")
HISTORY_TABLES = ("purchases", "subscriptions", "events", "daily")
# In the middle of the JWS subscriptions' periods, so that the renewal infos give several states.
AS_OF = "2024-05-15T00:00:00Z"


@pytest.fixture(scope="module")
def inputs(receiptflow, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jws-resume")
    pki = jws_support.TestPKI()
    jws_root = tmp / "jws-root.pem"
    jws_root.write_bytes(pki.root_pem)
    jws = tmp / "jws.ndjson"
    jws.write_text("\n".join(jws_support.subscription_lines(pki, 90)) + "\n")
    receipts = tmp / "receipts.ndjson"
    subprocess.run([receiptflow, "generate", "--customers", "25", "--seed", "5", "--ca-dir", str(tmp / "ca"),
                    "--out", str(receipts), "--quiet"], check=True)
    common = [str(jws), str(receipts), "--trust-anchor", str(jws_root), "--trust-anchor", str(tmp / "ca" / "root.pem"),
              "--format", "parquet", "--as-of", AS_OF, "--threads", "2", "--quiet"]
    return {"tmp": tmp, "common": common}


def _run(receiptflow, common, out, *extra, env=None):
    res = subprocess.run([receiptflow, "export", *common, "--out", str(out), *extra], capture_output=True,
                         env={**os.environ, **(env or {})}, check=False)
    assert res.returncode == 0, res.stderr.decode()
    return out


def _parts(out):
    folder = out / "receipts"
    return len(list(folder.glob("part-*"))) if folder.exists() else 0


def _killed_and_resumed(receiptflow, common, out, env, rng):
    """Runs until done; the first attempts are SIGKILLed once one or two more parts are committed, and the
    committed part folders get the `jws` marker older versions wrote. Returns (kills, part folders marked)."""
    kills = marked = 0
    for attempt in range(40):
        resume = (out / "manifest.json").exists()
        args = [receiptflow, "export", *common, "--out", str(out)]
        args += ["--resume"] if resume else ["--part-records", str(PART_RECORDS)]
        proc = subprocess.Popen(args, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if kills < 3:
            target = _parts(out) + rng.randint(1, 2)
            deadline = time.monotonic() + 120
            while proc.poll() is None and _parts(out) < target and time.monotonic() < deadline:
                time.sleep(0.001)
            time.sleep(rng.uniform(0, 0.005))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
        if proc.returncode == -signal.SIGKILL:
            kills += 1
            # Part folders sealed by earlier versions hold a `jws` marker file; a resume ignores it.
            for folder in (out / ".receiptflow-history").glob("part-*"):
                (folder / "jws").touch()
                marked += 1
            continue
        assert proc.returncode == 0, f"attempt {attempt}: {err.decode()}"
        return kills, marked
    raise AssertionError("no attempt completed")


def _files(out, table):
    """The files of a table: `table.parquet`, or the part files of `table/` in name order."""
    single = out / f"{table}.parquet"
    if single.exists():
        return [single]
    return sorted((out / table).glob("part-*.parquet"))


@pytest.mark.parametrize("seed", [1, 2])
def test_a_killed_and_resumed_jws_run_writes_the_tables_of_a_plain_run(receiptflow, inputs, seed):
    tmp, common = inputs["tmp"], inputs["common"]
    # A small history budget, so that purchases and renewal infos spill and are sealed with the parts.
    env = {"RECEIPTFLOW_HISTORY_MEMORY": "65536"}
    plain = tmp / f"plain-{seed}"
    whole = tmp / f"whole-{seed}"
    for d in (plain, whole):
        shutil.rmtree(d, ignore_errors=True)
    _run(receiptflow, common, plain, "--part-records", str(PART_RECORDS), env=env)
    _run(receiptflow, common, whole)
    out = tmp / f"resumed-{seed}"
    shutil.rmtree(out, ignore_errors=True)
    kills, marked = _killed_and_resumed(receiptflow, common, out, env, random.Random(seed))
    assert kills >= 1 and marked >= 1, "no attempt was killed after a part: the resume was not exercised"

    # The input holds what the test is about: JWS transactions and renewal infos, and the refined states.
    import pyarrow.parquet as pq

    summary = json.loads((plain / "summary.json").read_text())
    assert summary["history"]["spilled_bytes"] > 0
    manifest = json.loads((plain / "manifest.json").read_text())
    assert len(manifest["parts"]) >= 10

    renewals = sum(pq.read_table(f).num_rows for f in _files(plain, "renewals"))
    jws_index = [pq.read_table(f, columns=["jws_index"]).column(0) for f in _files(plain, "transactions")]
    jws_transactions = sum(len(c) - c.null_count for c in jws_index)
    assert renewals > 50 and jws_transactions > 100
    states = set(pq.read_table(whole / "subscriptions.parquet").column("state").to_pylist())
    assert {"active", "grace_period", "billing_retry", "expired", "unknown"} <= states

    for table in PART_TABLES + HISTORY_TABLES:
        got, want = _files(out, table), _files(plain, table)
        assert [f.name for f in got] == [f.name for f in want], table
        assert got, table
        for g, w in zip(got, want):
            assert g.read_bytes() == w.read_bytes(), f"{table}: {g.name} differs ({kills} kills, seed {seed})"
    for table in HISTORY_TABLES:
        assert (out / f"{table}.parquet").read_bytes() == (whole / f"{table}.parquet").read_bytes(), table
    assert not (out / ".receiptflow-history").exists()
