"""scripts/spark/driver.py under spark-submit on `local[2,3]` (2 threads, up to 3 attempts per task), with
receiptflow SIGKILLed once in the middle of a task: the job must succeed, its receipts and transactions tables must
hold exactly the rows of a single-machine `receiptflow export` of the same files, in the same order, with no
duplicates, and its purchases and subscriptions tables the rows the history rules give for those files
(history_reference.py over the single-machine export, itself checked against the generator's expected tables)."""

import datetime
import glob
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

# Spark runs in `scripts/test.sh --full` and CI, not in the quick test command (`-m "not spark"`).
pytestmark = pytest.mark.spark

pyspark = pytest.importorskip(
    "pyspark", reason="PySpark is not installed (pip install -r Tests/python/requirements.txt)"
)
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pandas", reason="PySpark's mapInArrow needs pandas (pip install -r Tests/python/requirements.txt)")
pytest.importorskip("numpy")

import history_reference as ref  # noqa: E402
from spark_support import DRIVER, generate_split_corpus, receiptflow_bin, reference_tables  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = 6
FILES_PER_TASK = 2
# The second file of the second task: by the time it is killed, its task has already handed the first file's rows
# to Spark's writer, so the retry must not let them be written twice.
KILLED = 3
# Simulated customers of the corpus (about 13 receipts each), and the as-of time passed through to the driver: in
# the middle of the simulated years, so that every state, not_started included, occurs.
CUSTOMERS = 120
AS_OF = "2021-09-01T00:00:00Z"


def java_available():
    if os.environ.get("JAVA_HOME") and os.access(os.path.join(os.environ["JAVA_HOME"], "bin", "java"), os.X_OK):
        return True
    return shutil.which("java") is not None


def spark_submit():
    path = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    return path if os.access(path, os.X_OK) else shutil.which("spark-submit")


def read_parts(folder):
    """A Spark output folder's part files in name (task) order, as one list of rows."""
    parts = sorted(glob.glob(os.path.join(folder, "part-*.parquet")))
    assert parts, f"no part files in {folder}"
    return [row for p in parts for row in pq.read_table(p).to_pylist()], pq.read_schema(parts[0])


def plain(value):
    """A Parquet value as history_reference holds it: timestamps as epoch milliseconds."""
    if isinstance(value, datetime.datetime):
        return ref.parse_time(value.isoformat())
    return value


RECORD_TABLES = ("receipts", "transactions", "renewals")


def assert_history_tables_equal(out, single):
    """Every history table the single-machine export wrote into `single` (each NAME.parquet but the record tables)
    is a committed OUTPUT/NAME/ folder of Spark's with the same schema and the same rows in the same order, and
    Spark wrote no table the single-machine run did not."""
    tables = sorted(n[: -len(".parquet")] for n in os.listdir(single) if n.endswith(".parquet"))
    history = [t for t in tables if t not in RECORD_TABLES]
    assert {"purchases", "subscriptions"} <= set(history), tables
    written = sorted(n for n in os.listdir(out) if (out / n).is_dir() and not n.startswith(("_", ".")))
    assert written == sorted(tables), (written, tables)
    for table in history:
        assert (out / table / "_SUCCESS").exists(), table
        rows, schema = read_parts(out / table)
        reference = pq.read_table(single / f"{table}.parquet")
        assert schema.remove_metadata().equals(reference.schema.remove_metadata()), table
        assert rows == reference.to_pylist(), f"the single-machine export's {table} differ from Spark's"


# The generated records carry their customer's user id; the expected tables are those of an export naming it.
USER_FIELD = ("--user-field", "user_id")


def expected_history(binary, tmp_path, inputs, anchor):
    """The history tables of `inputs` at AS_OF as CSV lines, from history_reference.py over a single-machine CSV
    export of them. First the reference is held to the generator's expected tables for the whole corpus (one
    file): equal row for row; and the split's purchases differ from them only in `source` and `line`."""
    corpus = str(tmp_path / "corpus.ndjson")
    generated = tmp_path / "at"
    generated.mkdir()
    subprocess.run(
        [binary, "generate", "--customers", str(CUSTOMERS), "--seed", "7", "--ca-dir", str(tmp_path / "ca"),
         "--out", str(generated / "corpus.ndjson"), "--as-of", AS_OF, "--expected-source", corpus, "--quiet"],
        check=True,
    )
    want_p = (generated / "corpus.purchases.csv").read_text().splitlines()
    want_s = (generated / "corpus.subscriptions.csv").read_text().splitlines()
    as_of = ref.parse_time(AS_OF)

    whole = reference_tables(binary, [corpus], anchor, str(tmp_path / "whole"), fmt="csv", extra=USER_FIELD)
    p, s, _ = ref.tables(whole, [corpus], as_of, user_field=True)
    assert ref.render(p, ref.PURCHASE_COLUMNS) == want_p
    assert ref.render(s, ref.SUBSCRIPTION_COLUMNS) == want_s

    split = reference_tables(binary, inputs, anchor, str(tmp_path / "split"), fmt="csv", extra=USER_FIELD)
    p, s, _ = ref.tables(split, inputs, as_of, user_field=True)
    purchases = ref.render(p, ref.PURCHASE_COLUMNS)
    subscriptions = ref.render(s, ref.SUBSCRIPTION_COLUMNS)
    assert subscriptions == want_s
    assert [r.rsplit(",", 2)[0] for r in purchases] == [r.rsplit(",", 2)[0] for r in want_p]
    assert {r["state"] for r in s} == {"not_started", "active", "revoked", "expired", "unknown"}
    return purchases, subscriptions


def test_killed_task_is_retried_and_rows_equal_a_single_machine_run(tmp_path):
    if not java_available():
        pytest.fail("Java is not installed (Spark needs Java 17): install openjdk-17-jre-headless")
    submit = spark_submit()
    if submit is None:
        pytest.fail("spark-submit not found next to the pyspark package")
    binary = receiptflow_bin()

    inputs, anchor = generate_split_corpus(binary, str(tmp_path), 0, FILES, compress=(1, 4), customers=CUSTOMERS)
    # The single-machine export at the same as-of time as the Spark job, so its history tables compare row for row.
    ref_receipts, ref_transactions = reference_tables(binary, inputs, anchor, str(tmp_path / "reference"),
                                                      extra=("--as-of", AS_OF, *USER_FIELD))
    expected_purchases, expected_subscriptions = expected_history(binary, tmp_path, inputs, anchor)
    with open(tmp_path / "corpus.ndjson", "rb") as fh:
        records = fh.read().count(b"\n")

    # The binary Spark ships is the fault-injecting wrapper, named receiptflow so that SparkFiles finds it.
    ship = tmp_path / "ship"
    ship.mkdir()
    wrapper = ship / "receiptflow"
    shutil.copy(os.path.join(HERE, "kill_once.py"), wrapper)
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    shutil.copy(anchor, ship / "root.pem")
    marker = tmp_path / "killed"
    local = tmp_path / "spark-local"
    local.mkdir()
    out = tmp_path / "out"
    env = dict(
        os.environ,
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_LOCAL_DIRS=str(local),
        RECEIPTFLOW_REAL=binary,
        KILL_SOURCE=inputs[KILLED],
        KILL_MARKER=str(marker),
        KILL_AFTER_BYTES="300000",
    )
    command = [
        submit,
        "--master", "local[2,3]",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.ui.showConsoleProgress=false",
        "--conf", "spark.log.level=WARN",
        "--files", f"{wrapper},{ship / 'root.pem'}",
        DRIVER,
        "--files-per-task", str(FILES_PER_TASK),
        ",".join(inputs),
        str(out),
        # A bare name: the driver finds it among the files shipped with --files.
        "--trust-anchor", "root.pem",
        "--as-of", AS_OF,
        *USER_FIELD,
    ]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-6000:]

    # The kill happened, mid-file, and Spark saw receiptflow's death as a task failure.
    assert marker.exists(), "the wrapper never killed receiptflow: the fault was not injected"
    assert marker.read_text().startswith(f"killed receiptflow on {inputs[KILLED]} after 300000 bytes")
    assert f"receiptflow was killed by SIGKILL on {inputs[KILLED]}" in log, log[-6000:]

    for table in ("receipts", "transactions"):
        assert (out / table / "_SUCCESS").exists()
    receipts, receipts_schema = read_parts(out / "receipts")
    transactions, transactions_schema = read_parts(out / "transactions")
    assert receipts_schema.remove_metadata().equals(ref_receipts.schema.remove_metadata())
    assert transactions_schema.remove_metadata().equals(ref_transactions.schema.remove_metadata())

    # Exactly the single-machine rows, in input order: nothing duplicated by the retry, nothing lost.
    keys = [(r["source"], r["line"]) for r in receipts]
    assert len(keys) == len(set(keys)) == records
    assert receipts == ref_receipts.to_pylist()
    assert transactions == ref_transactions.to_pylist()
    statuses = {r["status"] for r in receipts}
    assert {0, 21002, 21003} <= statuses and len(transactions) > records

    # The history tables: the rows of the rules over these files, in the contract's order.
    for table, columns, expected in (
        ("purchases", ref.PURCHASE_COLUMNS, expected_purchases),
        ("subscriptions", ref.SUBSCRIPTION_COLUMNS, expected_subscriptions),
    ):
        assert (out / table / "_SUCCESS").exists()
        rows, schema = read_parts(out / table)
        assert schema.names == columns
        got = ref.render([{k: plain(v) for k, v in r.items()} for r in rows], columns)
        assert len(got) == len(expected)
        for i, (g, w) in enumerate(zip(got, expected)):
            assert g == w, f"{table} row {i}"
    assert_history_tables_equal(out, tmp_path / "reference")
    with open(out / "summary.json") as fh:
        summary = json.load(fh)
    assert summary["as_of"] == ref.format_time(ref.parse_time(AS_OF))
    assert summary["history_from_unverified_records"] is False
    assert {r["source"] for r in receipts} == set(inputs)

    # No task left its scratch directory behind, killed attempt included.
    assert glob.glob(str(local / "**" / "receiptflow-task-*"), recursive=True) == []

    # Run again into the same OUTPUT with --overwrite and --no-history over two of the files: the record tables and
    # summary.json are the new run's, and the first run's history tables are gone rather than left beside them.
    history_tables = ("purchases", "subscriptions", "events", "daily")
    assert all((out / table / "_SUCCESS").exists() for table in history_tables)
    again = [*command[: command.index(DRIVER) + 1], "--overwrite", "--files-per-task", str(FILES_PER_TASK),
             ",".join(inputs[:2]), str(out), "--trust-anchor", "root.pem", "--no-history"]
    run = subprocess.run(again, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    receipts, _ = read_parts(out / "receipts")
    assert {r["source"] for r in receipts} == set(inputs[:2])
    with open(out / "summary.json") as fh:
        summary = json.load(fh)
    assert summary["history"] is False and summary["records"] == len(receipts)
    assert summary["history_from_unverified_records"] is None
    for table in history_tables:
        assert not (out / table).exists(), table
