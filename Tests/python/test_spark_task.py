"""The task side of scripts/spark/driver.py without Spark: how one input file goes through receiptflow, how failures
surface (so that Spark retries), and how receiptflow's two tables become the nested batches Spark writes."""

import os
import subprocess
import stat
import textwrap

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

from spark_support import generate_split_corpus, receiptflow_bin, reference_tables  # noqa: E402

import driver  # noqa: E402


def fake_binary(tmp_path, body):
    """A shell script standing in for receiptflow."""
    path = tmp_path / "fake-receiptflow"
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def input_file(tmp_path, data=b'{"id":"a","receipt-data":"AAAA"}\n'):
    path = tmp_path / "in.ndjson"
    path.write_bytes(data)
    return {"source": "in.ndjson", "uri": "file:" + str(path), "local": str(path), "size": len(data)}


def run(binary, f, args=()):
    return list(driver.run_file(f, binary, list(args)))


@pytest.fixture(autouse=True)
def local_dirs(tmp_path, monkeypatch):
    """Scratch directories go under a folder of their own so that tests can see that they are removed."""
    d = tmp_path / "local"
    d.mkdir()
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(d))
    return d


def test_non_zero_exit_raises_with_receiptflow_stderr(tmp_path, local_dirs):
    binary = fake_binary(tmp_path, "cat >/dev/null\necho 'cannot read trust anchor x.pem: no such file' >&2\nexit 1\n")
    with pytest.raises(driver.TaskFailure) as e:
        run(binary, input_file(tmp_path))
    assert "exited with status 1 on in.ndjson" in str(e.value)
    assert "cannot read trust anchor x.pem: no such file" in str(e.value)
    assert os.listdir(local_dirs) == []


def test_death_by_signal_raises(tmp_path, local_dirs):
    binary = fake_binary(tmp_path, "kill -9 $$\n")
    with pytest.raises(driver.TaskFailure, match="was killed by SIGKILL on in.ndjson"):
        run(binary, input_file(tmp_path, b"x\n" * 500_000))
    assert os.listdir(local_dirs) == []


def test_early_exit_reports_the_exit_status_not_a_broken_pipe(tmp_path):
    binary = fake_binary(tmp_path, "echo 'usage error' >&2\nexit 2\n")
    with pytest.raises(driver.TaskFailure, match="exited with status 2 .*usage error"):
        run(binary, input_file(tmp_path, b"y" * (8 << 20)))


def test_large_stderr_does_not_block_the_child(tmp_path):
    # 2 MB on standard error before reading any input: without a drain the pipe fills and both sides wait forever.
    binary = fake_binary(
        tmp_path, "head -c 2000000 /dev/zero | tr '\\0' e >&2\necho last-words >&2\ncat >/dev/null\nexit 3\n"
    )
    with pytest.raises(driver.TaskFailure) as e:
        run(binary, input_file(tmp_path, b"z" * (4 << 20)))
    assert "exited with status 3" in str(e.value)
    assert "last-words" in str(e.value)
    assert len(str(e.value)) < driver.STDERR_TAIL_BYTES + 2000


def test_environment_and_source_reach_receiptflow(tmp_path, monkeypatch):
    seen = tmp_path / "seen"
    monkeypatch.setenv("RECEIPTFLOW_TEST_PROBE", "from-the-executor")
    binary = fake_binary(
        tmp_path,
        f'echo "$RECEIPTFLOW_TEST_PROBE|$RECEIPTFLOW_SOURCE|$*" > {seen}\ncat >/dev/null\nexit 1\n',
    )
    with pytest.raises(driver.TaskFailure):
        run(binary, input_file(tmp_path), ["--no-verify", "--quiet"])
    probe, source, args = seen.read_text().strip().split("|")
    assert probe == "from-the-executor"
    assert source == "in.ndjson"
    assert args.startswith("export - --stdin-name in.ndjson --out ")
    assert args.endswith("--format parquet --no-verify --quiet")


def test_relative_trust_anchor_is_found_from_the_scratch_directory(tmp_path, monkeypatch):
    (tmp_path / "root.pem").write_text("anchor")
    monkeypatch.chdir(tmp_path)
    seen = tmp_path / "seen"
    # The fake opens the anchor as receiptflow does: relative to its own working directory (the task's scratch).
    binary = fake_binary(
        tmp_path,
        f'while [ "$1" != "--trust-anchor" ]; do shift; done\ncat "$2" > {seen} 2>&1\ncat >/dev/null\nexit 1\n',
    )
    with pytest.raises(driver.TaskFailure):
        run(binary, input_file(tmp_path), ["--trust-anchor", "root.pem"])
    assert seen.read_text() == "anchor"


def test_exit_zero_without_tables_is_a_failure(tmp_path):
    binary = fake_binary(tmp_path, "cat >/dev/null\nexit 0\n")
    with pytest.raises(driver.TaskFailure, match="wrote no receipts table"):
        run(binary, input_file(tmp_path))


def test_writing_to_stdout_is_a_failure(tmp_path):
    binary = fake_binary(tmp_path, "cat >/dev/null\necho stray\nexit 0\n")
    with pytest.raises(driver.TaskFailure, match="wrote to standard output"):
        run(binary, input_file(tmp_path))


def flatten(batches, renewals=None, states=None):
    """Nested batches back to (receipts rows, transactions rows); the renewal infos go to `renewals`, the history
    state rows' (file, piece, bytes) to `states`."""
    receipts, transactions = [], []
    for b in batches:
        for row in b.to_pylist():
            history = tuple(row.pop(c[0]) for c in driver.HISTORY_COLUMNS)
            if history[0] is not None:
                assert states is not None, "a history state row where none was expected"
                states.append(history)
                continue
            transactions.extend(row.pop(driver.NESTED))
            got = row.pop(driver.NESTED_RENEWALS)
            if renewals is not None:
                renewals.extend(got)
            else:
                assert got == []
            receipts.append(row)
    return receipts, transactions


def test_real_receiptflow_rows_equal_a_direct_export(tmp_path, local_dirs, monkeypatch):
    binary = receiptflow_bin()
    paths, anchor = generate_split_corpus(binary, str(tmp_path), 300, 2, compress=(1,))
    ref_receipts, ref_transactions = reference_tables(binary, paths, anchor, str(tmp_path / "ref"))
    got_receipts, got_transactions = [], []
    # A small batch size makes receipts batches end between a receipt and its transactions' neighbours.
    monkeypatch.setattr(driver, "nested_batches", _small_batches(driver.nested_batches))
    for p in paths:
        f = {"source": p, "uri": "file:" + p, "local": p, "size": os.path.getsize(p)}
        args = driver.task_arguments(["--trust-anchor", anchor], 1, history=False)
        r, t = flatten(driver.run_file(f, binary, args))
        got_receipts += r
        got_transactions += t
    # Timestamps come back in microseconds (Spark's Arrow bridge), the reference in milliseconds: the same instants.
    assert got_receipts == ref_receipts.to_pylist()
    assert got_transactions == ref_transactions.to_pylist()
    assert len(got_transactions) > 0 and {r["status"] for r in got_receipts} >= {0, 21002, 21003}
    assert os.listdir(local_dirs) == []


def test_jws_records_keep_their_transactions_and_renewal_infos(tmp_path, local_dirs, monkeypatch):
    """A line of JWS has a receipts row per JWS (a notification body and its nested transaction and renewal info,
    a page of several): each receipts row gets exactly the transactions and renewal infos of its (line,
    jws_index)."""
    jws_support = pytest.importorskip("jws_support", reason="the JWS test PKI needs cryptography")
    pq = pytest.importorskip("pyarrow.parquet")
    binary = receiptflow_bin()
    pki = jws_support.TestPKI()
    anchor = tmp_path / "root.pem"
    anchor.write_bytes(pki.root_pem)
    path = tmp_path / "jws.ndjson"
    path.write_text("\n".join(jws_support.subscription_lines(pki, 40)) + "\n")
    ref = tmp_path / "ref"
    reference_tables(binary, [str(path)], str(anchor), str(ref))
    monkeypatch.setattr(driver, "nested_batches", _small_batches(driver.nested_batches))
    f = {"source": str(path), "uri": "file:" + str(path), "local": str(path), "size": os.path.getsize(path)}
    renewals = []
    receipts, transactions = flatten(
        driver.run_file(f, binary, driver.task_arguments(["--trust-anchor", str(anchor)], 1, history=False)),
        renewals)
    assert receipts == pq.read_table(ref / "receipts.parquet").to_pylist()
    assert transactions == pq.read_table(ref / "transactions.parquet").to_pylist()
    assert renewals == pq.read_table(ref / "renewals.parquet").to_pylist()
    # Lines with several JWS, each with its own rows.
    lines = [r["line"] for r in receipts]
    assert len(lines) > len(set(lines)) and len(renewals) > 40 and len(transactions) > 40
    assert os.listdir(local_dirs) == []


def test_history_states_of_the_files_merged_in_order_equal_a_direct_export(tmp_path, local_dirs, monkeypatch):
    """Each file's task hands back its history state (the summary, then the state in pieces, named by the driver's
    source); written back as run folders and merged in file order by the driver's merge, they give every history
    table of a single-machine export of the files, byte for byte in CSV, and no record row is lost to them."""
    binary = receiptflow_bin()
    paths, anchor = generate_split_corpus(binary, str(tmp_path), 0, 3, compress=(1,), customers=40)
    reference_tables(binary, paths, anchor, str(tmp_path / "ref"), fmt="csv", extra=("--as-of", "2021-09-01"))
    monkeypatch.setattr(driver, "STATE_PIECE_BYTES", 1000)
    runs = []
    for i, p in enumerate(paths):
        f = {"source": p, "uri": "file:" + p, "local": p, "size": os.path.getsize(p), "index": i}
        states = []
        receipts, _ = flatten(driver.run_file(f, binary, driver.task_arguments(["--trust-anchor", anchor], 1)),
                              states=states)
        assert receipts and {s[0] for s in states} == {i}
        assert [s[1] for s in states] == list(range(len(states))) and len(states) > 2
        run = tmp_path / "runs" / f"r{i}"
        run.mkdir(parents=True)
        (run / "summary.json").write_bytes(states[0][2])
        (run / driver.STATE_FILE).write_bytes(b"".join(s[2] for s in states[1:]))
        runs.append(str(run))
    merged = tmp_path / "merged"
    subprocess.run([binary, "merge", *runs, "--out", str(merged), "--format", "csv", "--as-of", "2021-09-01",
                    "--quiet"], check=True)
    tables = sorted(n for n in os.listdir(tmp_path / "ref")
                    if n.endswith(".csv") and n[:-4] not in driver.RECORD_TABLES)
    assert {"purchases.csv", "subscriptions.csv"} <= set(tables)
    for name in tables:
        assert (merged / name).read_bytes() == (tmp_path / "ref" / name).read_bytes(), name
    assert os.listdir(local_dirs) == []


def test_more_states_than_one_merge_takes_are_merged_in_groups_to_the_same_tables(tmp_path, monkeypatch):
    """With more file states than MERGE_FAN_IN, the driver merges consecutive groups first, then their merges (here
    5 runs in groups of at most 2 into 3, those into 2, then the last merge): the history tables equal those of a
    single-machine export of the files in order, row for row."""
    import pyarrow.parquet as pq

    binary = receiptflow_bin()
    paths, anchor = generate_split_corpus(binary, str(tmp_path), 0, 5, customers=40)
    reference_tables(binary, paths, anchor, str(tmp_path / "ref"), extra=("--as-of", "2021-09-01"))
    runs = []
    for i, p in enumerate(paths):
        run = tmp_path / "runs" / f"r{i}"
        subprocess.run([binary, "export", p, "--out", str(run), "--trust-anchor", anchor, "--quiet"], check=True)
        runs.append(str(run))
    made = []
    real_merge = driver.merge_once

    def counting(binary, group, out, as_of_text=None):
        made.append((len(group), os.path.basename(out)))
        return real_merge(binary, group, out, as_of_text)

    monkeypatch.setattr(driver, "MERGE_FAN_IN", 2)
    monkeypatch.setattr(driver, "merge_once", counting)
    merged = driver.run_merge(binary, runs, str(tmp_path / "merged"), "2021-09-01T00:00:00Z")
    assert made == [(2, "merged.level0-0"), (2, "merged.level0-1"), (1, "merged.level0-2"),
                    (2, "merged.level1-0"), (1, "merged.level1-1"), (2, "merged")]
    for table in driver.HISTORY_TABLES:
        got = pq.read_table(os.path.join(merged, table + ".parquet"))
        want = pq.read_table(tmp_path / "ref" / (table + ".parquet"))
        assert got.num_rows > 0, table
        assert got.to_pylist() == want.to_pylist(), table


def _small_batches(real):
    def nested(out, source, batch_rows=8192):
        return real(out, source, batch_rows=7)

    return nested


def test_command_line_splits_driver_and_receiptflow_options():
    cfg = driver.parse_command_line(
        ["--files-per-task", "2", "--task-bytes=1000", "a,b/", "out", "--trust-anchor", "r.pem", "--no-verify"]
    )
    assert (cfg.inputs, cfg.output, cfg.files_per_task, cfg.task_bytes) == (["a", "b/"], "out", 2, 1000)
    assert cfg.passthrough == ["--trust-anchor", "r.pem", "--no-verify"]
    assert driver.task_arguments(cfg.passthrough, 3) == [
        "--trust-anchor", "r.pem", "--no-verify", "--threads", "3", "--quiet"]
    assert driver.task_arguments(["--threads=2"], 3) == ["--threads=2", "--quiet"]


def test_as_of_and_no_history_are_the_drivers():
    import datetime

    cfg = driver.parse_command_line(["a", "out", "--as-of", "2024-01-31T02:00:00+02:00", "--trust-anchor", "r.pem"])
    assert cfg.as_of == datetime.datetime(2024, 1, 31, tzinfo=datetime.timezone.utc)
    assert cfg.history and cfg.passthrough == ["--trust-anchor", "r.pem"]
    cfg = driver.parse_command_line(["a", "out", "--no-history", "--as-of=2024-01-31T00:00:00.250Z"])
    assert not cfg.history and cfg.passthrough == []
    assert driver.format_as_of(1_706_659_200_250_000) == "2024-01-31T00:00:00.250Z"
    assert cfg.as_of == datetime.datetime(2024, 1, 31, 0, 0, 0, 250_000, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["in", "out", "--out", "x"], "--out is set by the driver"),
        (["in", "out", "--format", "csv"], "--format is set by the driver"),
        (["in", "out", "--trust-anchor", "r.pem", "more.ndjson"], "input paths go in INPUT"),
        (["in"], "INPUT and OUTPUT are required"),
        (["--task-bytes", "0", "in", "out"], "at least 1"),
        (["--threads", "2", "in", "out"], "unknown driver option --threads"),
        (["in", "out", "--as-of", "2024-01-31"], "RFC 3339"),
        (["in", "out", "--as-of"], "--as-of needs a value"),
    ],
)
def test_command_line_rejects_what_the_driver_owns(argv, message):
    with pytest.raises(driver.UsageError, match=message):
        driver.parse_command_line(argv)


def test_tasks_keep_file_order_and_limits():
    files = [{"source": str(i), "size": s} for i, s in enumerate([5, 5, 20, 1, 1, 1, 1])]
    tasks = driver.pack_tasks(files, task_bytes=10)
    assert [[f["source"] for f in t] for t in tasks] == [["0", "1"], ["2"], ["3", "4", "5", "6"]]
    tasks = driver.pack_tasks(files, task_bytes=100, files_per_task=3)
    assert [[f["source"] for f in t] for t in tasks] == [["0", "1", "2"], ["3", "4", "5"], ["6"]]
