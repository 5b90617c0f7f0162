"""scripts/spark/driver.py under spark-submit on `local[2,3]` (2 threads, up to 3 attempts per task), with
receiptflow SIGKILLed once in the middle of a task: the job must succeed and its two tables must hold exactly the
rows of a single-machine `receiptflow export` of the same files, in the same order, with no duplicates."""

import glob
import os
import shutil
import stat
import subprocess
import sys

import pytest

pyspark = pytest.importorskip(
    "pyspark", reason="PySpark is not installed (pip install -r Tests/python/requirements.txt)"
)
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pandas", reason="PySpark's mapInArrow needs pandas (pip install -r Tests/python/requirements.txt)")
pytest.importorskip("numpy")

from spark_support import DRIVER, generate_split_corpus, receiptflow_bin, reference_tables  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = 6
FILES_PER_TASK = 2
# The second file of the second task: by the time it is killed, its task has already handed the first file's rows
# to Spark's writer, so the retry must not let them be written twice.
KILLED = 3


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


def test_killed_task_is_retried_and_rows_equal_a_single_machine_run(tmp_path):
    if not java_available():
        pytest.skip("Java is not installed (Spark needs Java 17): install openjdk-17-jre-headless")
    submit = spark_submit()
    if submit is None:
        pytest.skip("spark-submit not found next to the pyspark package")
    binary = receiptflow_bin()

    inputs, anchor = generate_split_corpus(binary, str(tmp_path), 2000, FILES, compress=(1, 4))
    ref_receipts, ref_transactions = reference_tables(binary, inputs, anchor, str(tmp_path / "reference"))

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
    assert len(keys) == len(set(keys)) == 2000
    assert receipts == ref_receipts.to_pylist()
    assert transactions == ref_transactions.to_pylist()
    statuses = {r["status"] for r in receipts}
    assert {0, 21002, 21003} <= statuses and len(transactions) > 2000
    assert {r["source"] for r in receipts} == set(inputs)

    # No task left its scratch directory behind, killed attempt included.
    assert glob.glob(str(local / "**" / "receiptflow-task-*"), recursive=True) == []
