"""Runs on a base (`export NEW_INPUTS --out NEW --base PREV`, docs/incremental.md): a corpus of receipts and JWS
cut into daily pieces and exported run by run, each on the one before, gives the history tables of one run over
every piece in order (CSV byte for byte, Parquet row for row), with --as-of, and with a piece exported in parts,
killed and resumed; the per-receipt tables hold each run's own records; and every base that cannot be continued is
refused with exit status 2 and nothing written."""

import fcntl
import filecmp
import gzip
import json
import os
import shutil
import signal
import subprocess
import time

import pyarrow.parquet as pq
import pytest

PER_RECORD = {"receipts", "transactions", "renewals"}
DAYS = 4


@pytest.fixture(scope="module")
def corpus(receiptflow, tmp_path_factory):
    """Customers' receipts and StoreKit 2 JWS (a share of the customers moved to it) plus notifications with
    renewal infos, each cut into DAYS consecutive pieces; day i's inputs are its customer piece (gzip for day 1)
    and its JWS piece, and the last day also gets day 0's customer piece again (a record given twice)."""
    tmp = tmp_path_factory.mktemp("base")
    ca = tmp / "ca"
    customers = tmp / "customers.ndjson"
    jws = tmp / "jws.ndjson"
    subprocess.run([receiptflow, "generate", "--customers", "220", "--years", "2", "--seed", "27",
                    "--jws-fraction", "0.4", "--ca-dir", str(ca), "--out", str(customers), "--quiet"], check=True)
    subprocess.run([receiptflow, "generate", "--jws", "--count", "240", "--seed", "28", "--ca-dir", str(ca),
                    "--out", str(jws), "--quiet"], check=True)
    days = [[] for _ in range(DAYS)]
    for source, stem in ((customers, "c"), (jws, "j")):
        lines = source.read_bytes().split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        n = len(lines)
        for i in range(DAYS):
            body = b"\n".join(lines[i * n // DAYS:(i + 1) * n // DAYS]) + b"\n"
            path = tmp / f"{stem}{i}.ndjson"
            if stem == "c" and i == 1:
                path = tmp / f"{stem}{i}.ndjson.gz"
                path.write_bytes(gzip.compress(body))
            else:
                path.write_bytes(body)
            days[i].append(str(path))
    days[-1].append(days[0][0])
    anchors = ["--trust-anchor", str(ca / "root.pem"), "--trust-anchor", str(ca / "jws-root.pem")]
    return {"tmp": tmp, "days": days, "anchors": anchors}


def _run(receiptflow, corpus, inputs, out, *extra, env=None, check=True):
    cmd = [receiptflow, "export", *inputs, *corpus["anchors"], "--quiet", "--out", str(out), *extra]
    res = subprocess.run(cmd, capture_output=True, env={**os.environ, **(env or {})}, check=False)
    if check:
        assert res.returncode == 0, res.stderr.decode()
    return res


def _fresh(corpus, name):
    out = corpus["tmp"] / name
    shutil.rmtree(out, ignore_errors=True)
    return out


def _chain(receiptflow, corpus, name, fmt, last=(), middle=None):
    """Exports day by day, each run on the one before; `last` are extra options of the last run, `middle(i, inputs,
    out, base)` runs day i itself when given and returns True. Returns the runs' folders."""
    outs = []
    for i, inputs in enumerate(corpus["days"]):
        out = _fresh(corpus, f"{name}-{i}")
        base = ["--base", str(outs[-1])] if outs else []
        extra = list(last) if i == len(corpus["days"]) - 1 else []
        if not (middle and middle(i, inputs, out, base)):
            _run(receiptflow, corpus, inputs, out, "--format", fmt, *base, *extra)
        outs.append(out)
    return outs


def _one_shot(receiptflow, corpus, name, fmt, *extra):
    out = _fresh(corpus, name)
    _run(receiptflow, corpus, [p for day in corpus["days"] for p in day], out, "--format", fmt, *extra)
    return out


def _history_tables(out, fmt):
    names = {n.rsplit(".", 1)[0] for n in os.listdir(out) if n.endswith("." + fmt)}
    return sorted(names - PER_RECORD)


def _same_history(one, chained, fmt):
    tables = _history_tables(one, fmt)
    assert {"purchases", "subscriptions"} <= set(tables)
    assert tables == _history_tables(chained, fmt)
    for t in tables:
        assert filecmp.cmp(one / f"{t}.{fmt}", chained / f"{t}.{fmt}", shallow=False), f"{t}.{fmt} differs"


def test_a_chain_of_csv_runs_equals_one_run_byte_for_byte(receiptflow, corpus):
    one = _one_shot(receiptflow, corpus, "one-csv", "csv")
    outs = _chain(receiptflow, corpus, "chain-csv", "csv")
    _same_history(one, outs[-1], "csv")
    # The history is rich enough to mean something: renewal infos, cancellations, repeats across runs.
    assert len((one / "renewals.csv").read_text().splitlines()) > 20
    assert len((one / "purchases.csv").read_text().splitlines()) > 500
    # Every run's own tables hold its records only: those of a run over its inputs alone.
    for i, out in enumerate(outs):
        alone = _fresh(corpus, f"alone-{i}")
        _run(receiptflow, corpus, corpus["days"][i], alone, "--format", "csv")
        for t in sorted(PER_RECORD):
            assert filecmp.cmp(alone / f"{t}.csv", out / f"{t}.csv", shallow=False), f"day {i}: {t}.csv differs"


def test_a_chain_of_parquet_runs_equals_one_run_row_for_row(receiptflow, corpus):
    one = _one_shot(receiptflow, corpus, "one-parquet", "parquet")
    outs = _chain(receiptflow, corpus, "chain-parquet", "parquet")
    for t in _history_tables(one, "parquet"):
        want = pq.read_table(one / f"{t}.parquet")
        got = pq.read_table(outs[-1] / f"{t}.parquet")
        assert got.schema.names == want.schema.names
        assert got.num_rows == want.num_rows > 0
        assert got.to_pylist() == want.to_pylist(), t


def test_as_of_on_the_last_run_equals_one_run_with_it(receiptflow, corpus):
    as_of = ["--as-of", "2021-03-01T00:00:00Z"]
    one = _one_shot(receiptflow, corpus, "one-asof", "csv", *as_of)
    outs = _chain(receiptflow, corpus, "chain-asof", "csv", last=as_of)
    _same_history(one, outs[-1], "csv")
    assert json.loads((outs[-1] / "summary.json").read_text())["as_of"] == "2021-03-01T00:00:00.000Z"


def test_without_as_of_the_horizon_is_the_whole_chains(receiptflow, corpus):
    one = _one_shot(receiptflow, corpus, "one-horizon", "csv")
    # The default as-of time is the newest contributing receipt of the whole chain, not of the last run alone.
    outs = _chain(receiptflow, corpus, "chain-horizon", "csv")
    assert json.loads((outs[-1] / "summary.json").read_text())["as_of"] == \
        json.loads((one / "summary.json").read_text())["as_of"]


def _killed_and_resumed(receiptflow, corpus, inputs, out, base, fmt="csv"):
    """Exports `inputs` in parts of 40 receipts with a small history memory, SIGKILLed twice once parts are
    committed, then resumed with the same command until it completes."""
    env = {**os.environ, "RECEIPTFLOW_HISTORY_MEMORY": "65536"}
    common = [receiptflow, "export", *inputs, *corpus["anchors"], "--format", fmt, "--quiet", "--out", str(out),
              "--threads", "2", *base]
    kills = 0
    for _ in range(30):
        resume = (out / "manifest.json").exists()
        proc = subprocess.Popen([*common, *(["--resume"] if resume else ["--part-records", "40"])], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if kills < 2:
            parts = out / "receipts"
            target = (len(list(parts.glob("part-*"))) if parts.exists() else 0) + 2
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                if parts.exists() and len(list(parts.glob("part-*"))) >= target:
                    break
                time.sleep(0.002)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
        _, err = proc.communicate(timeout=300)
        if proc.returncode == -signal.SIGKILL:
            continue
        assert proc.returncode == 0, err.decode()
        return kills
    raise AssertionError("the parts run never completed")


def test_a_parts_run_on_a_base_killed_and_resumed_continues_the_chain(receiptflow, corpus):
    one = _one_shot(receiptflow, corpus, "one-parts", "csv")
    kills = []

    def middle(i, inputs, out, base):
        if i not in (1, 2):
            return False
        kills.append(_killed_and_resumed(receiptflow, corpus, inputs, out, base))
        return True

    outs = _chain(receiptflow, corpus, "chain-parts", "csv", middle=middle)
    assert sum(kills) >= 1
    _same_history(one, outs[-1], "csv")
    # The parts run's own history equals that of a plain run on the same base.
    plain = _fresh(corpus, "plain-day2")
    _run(receiptflow, corpus, corpus["days"][2], plain, "--format", "csv", "--base", str(outs[1]))
    _same_history(plain, outs[2], "csv")
    summary = json.loads((outs[2] / "summary.json").read_text())
    assert summary["base"]["folder"] == str(outs[1])
    assert not (outs[2] / ".receiptflow-history").exists()


def test_the_summary_names_the_base_and_its_state(receiptflow, corpus):
    outs = _chain(receiptflow, corpus, "chain-summary", "csv")
    first = json.loads((outs[0] / "summary.json").read_text())
    assert "base" not in first
    for i in range(1, len(outs)):
        base = json.loads((outs[i] / "summary.json").read_text())["base"]
        assert base["folder"] == str(outs[i - 1])
        assert base["run"] == i
        assert len(base["state_sha256"]) == 64
        # The state's identity is the checksum at the end of the base's state file.
        assert base["state_sha256"] == (outs[i - 1] / ".receiptflow-state").read_bytes()[-32:].hex()


@pytest.fixture(scope="module")
def day0(receiptflow, corpus):
    out = _fresh(corpus, "day0")
    _run(receiptflow, corpus, corpus["days"][0], out, "--format", "csv")
    return out


def _copy_with(corpus, day0, name, change):
    copy = _fresh(corpus, name)
    shutil.copytree(day0, copy)
    change(copy)
    return copy


def _flip(path, offset):
    data = bytearray(path.read_bytes())
    data[offset if offset >= 0 else len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


REFUSALS = {
    "missing": (lambda c, d: c["tmp"] / "no-such-run", "no such folder"),
    "incomplete": (lambda c, d: _copy_with(c, d, "incomplete", lambda p: (p / "summary.json").unlink()),
                   "no complete run"),
    "foreign-version": (lambda c, d: _copy_with(c, d, "foreign", lambda p: _flip(p / ".receiptflow-state", 8)),
                        "cannot read"),
    "no-state": (lambda c, d: _copy_with(c, d, "stateless", lambda p: (p / ".receiptflow-state").unlink()),
                 "cannot read"),
    "flipped-byte": (lambda c, d: _copy_with(c, d, "flipped", lambda p: _flip(p / ".receiptflow-state", -1)),
                     "fails its checksum"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_base_that_cannot_be_continued_is_refused_and_nothing_is_written(receiptflow, corpus, day0, case):
    make, words = REFUSALS[case]
    base = make(corpus, day0)
    out = _fresh(corpus, f"refused-{case}")
    res = _run(receiptflow, corpus, corpus["days"][1], out, "--format", "csv", "--base", str(base), check=False)
    assert res.returncode == 2, res.stderr.decode()
    assert words in res.stderr.decode()
    assert not out.exists()


def test_a_base_written_with_no_history_is_refused(receiptflow, corpus):
    base = _fresh(corpus, "no-history-base")
    _run(receiptflow, corpus, corpus["days"][0], base, "--format", "csv", "--no-history")
    assert not (base / ".receiptflow-state").exists()
    out = _fresh(corpus, "on-no-history")
    res = _run(receiptflow, corpus, corpus["days"][1], out, "--base", str(base), check=False)
    assert res.returncode == 2
    assert "--no-history" in res.stderr.decode()
    assert not out.exists()


def test_no_history_with_base_is_a_usage_error(receiptflow, corpus, day0):
    out = _fresh(corpus, "no-history-and-base")
    res = _run(receiptflow, corpus, corpus["days"][1], out, "--base", str(day0), "--no-history", check=False)
    assert res.returncode == 2
    assert "--no-history" in res.stderr.decode()
    assert not out.exists()


def test_the_base_as_output_folder_is_refused_and_left_as_it_was(receiptflow, corpus, day0):
    link = corpus["tmp"] / "day0-link"
    if not link.exists():
        link.symlink_to(day0)
    before = {n: (day0 / n).read_bytes() for n in os.listdir(day0)}
    for out in (day0, link):
        res = _run(receiptflow, corpus, corpus["days"][1], out, "--format", "csv", "--base", str(day0),
                   check=False)
        assert res.returncode == 2
        assert "same folder" in res.stderr.decode()
    assert {n: (day0 / n).read_bytes() for n in os.listdir(day0)} == before


def test_overwrite_replaces_the_state_with_the_run(receiptflow, corpus):
    out = _fresh(corpus, "overwritten")
    _run(receiptflow, corpus, corpus["days"][0], out, "--format", "csv")
    assert (out / ".receiptflow-state").exists()
    _run(receiptflow, corpus, corpus["days"][1], out, "--format", "csv", "--overwrite", "--no-history")
    assert not (out / ".receiptflow-state").exists()


def test_merge_of_separate_runs_equals_one_run_and_continues_as_a_base(receiptflow, corpus):
    """`receiptflow merge` of runs made separately (no --base), in order, writes the history of one run over
    their inputs in order; its folder is a base like any run's."""
    one = _one_shot(receiptflow, corpus, "one-merge", "csv")
    runs = []
    for i, inputs in enumerate(corpus["days"][:-1]):
        out = _fresh(corpus, f"separate-{i}")
        _run(receiptflow, corpus, inputs, out, "--format", "csv")
        runs.append(str(out))
    merged = _fresh(corpus, "merged")
    res = subprocess.run([receiptflow, "merge", *runs, "--out", str(merged), "--format", "csv", "--quiet"],
                         capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    summary = json.loads((merged / "summary.json").read_text())
    assert [m["folder"] for m in summary["merged"]] == runs
    last = _fresh(corpus, "after-merge")
    _run(receiptflow, corpus, corpus["days"][-1], last, "--format", "csv", "--base", str(merged))
    _same_history(one, last, "csv")
    # Merging a chain's last run with a separate run continues the chain too.
    tail = _fresh(corpus, "separate-last")
    _run(receiptflow, corpus, corpus["days"][-1], tail, "--format", "csv")
    again = _fresh(corpus, "merged-again")
    res = subprocess.run([receiptflow, "merge", str(merged), str(tail), "--out", str(again), "--format", "csv",
                          "--quiet"], capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    _same_history(one, again, "csv")
    merged_counts = json.loads((again / "summary.json").read_text())["history"]
    one_counts = json.loads((one / "summary.json").read_text())["history"]
    for table in ("purchases", "subscriptions", "events", "daily"):
        assert merged_counts[table] == one_counts[table], table


def test_merge_refuses_a_run_it_cannot_read_and_writes_nothing(receiptflow, corpus, day0):
    flipped = _copy_with(corpus, day0, "merge-flipped", lambda p: _flip(p / ".receiptflow-state", -1))
    out = _fresh(corpus, "merge-refused")
    res = subprocess.run([receiptflow, "merge", str(day0), str(flipped), "--out", str(out)], capture_output=True,
                         check=False)
    assert res.returncode == 2
    assert "fails its checksum" in res.stderr.decode()
    assert not out.exists()


def test_merge_into_a_folder_another_run_holds_is_refused(receiptflow, corpus, day0):
    out = _fresh(corpus, "merge-locked")
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        res = subprocess.run([receiptflow, "merge", str(day0), "--out", str(out)], capture_output=True, check=False)
    finally:
        os.close(fd)
    assert res.returncode == 1
    assert "nothing was written" in res.stderr.decode()
    assert os.listdir(out) == []


def test_resume_on_another_base_is_refused(receiptflow, corpus, day0):
    other = _fresh(corpus, "other-base")
    _run(receiptflow, corpus, corpus["days"][2], other, "--format", "csv")
    out = _fresh(corpus, "parts-on-day0")
    _run(receiptflow, corpus, corpus["days"][1], out, "--format", "csv", "--base", str(day0), "--part-records", "50")
    res = _run(receiptflow, corpus, corpus["days"][1], out, "--format", "csv", "--base", str(other), "--resume",
               check=False)
    assert res.returncode == 2
    assert "--base is" in res.stderr.decode()
    res = _run(receiptflow, corpus, corpus["days"][1], out, "--format", "csv", "--base", str(day0), "--resume",
               check=False)
    assert res.returncode == 0, res.stderr.decode()


def test_history_over_an_unverified_run_says_so_on_every_run_after_it(receiptflow, corpus, day0):
    """A run with --no-verify marks its state; a verified run on it, a run on that one and a merge with it all say
    that their history holds records nobody verified (summary.json and standard error); a verified chain does not."""
    unverified = _fresh(corpus, "unverified-0")
    _run(receiptflow, corpus, corpus["days"][0], unverified, "--format", "csv", "--no-verify")
    on = _fresh(corpus, "unverified-1")
    res = subprocess.run([receiptflow, "export", *corpus["days"][1], *corpus["anchors"], "--out", str(on),
                          "--format", "csv", "--base", str(unverified)], capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    assert b"built from unverified records" in res.stderr
    after = _fresh(corpus, "unverified-2")
    _run(receiptflow, corpus, corpus["days"][2], after, "--format", "csv", "--base", str(on))
    merged = _fresh(corpus, "unverified-merged")
    res = subprocess.run([receiptflow, "merge", str(day0), str(unverified), "--out", str(merged), "--format", "csv"],
                         capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    assert b"built from unverified records" in res.stderr
    for out in (unverified, on, after, merged):
        assert json.loads((out / "summary.json").read_text())["history_from_unverified_records"] is True, out
    verified = _fresh(corpus, "verified-1")
    res = subprocess.run([receiptflow, "export", *corpus["days"][1], *corpus["anchors"], "--out", str(verified),
                          "--format", "csv", "--base", str(day0)], capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    assert b"unverified" not in res.stderr
    clean = _fresh(corpus, "verified-merged")
    res = subprocess.run([receiptflow, "merge", str(day0), str(verified), "--out", str(clean), "--format", "csv",
                          "--quiet"], capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    for out in (day0, verified, clean):
        assert json.loads((out / "summary.json").read_text())["history_from_unverified_records"] is False, out
