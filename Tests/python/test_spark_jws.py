"""scripts/spark/driver.py under spark-submit over JWS input (transactions and renewal infos in every form, files of
JWS around a file of generated receipts): its receipts, transactions and renewals tables hold exactly the rows of a
single-machine `receiptflow export` of the same files, and its purchases and subscriptions tables the rows of that
export and of history_reference.py, the renewal-info rules included (docs/history.md, "Renewal infos (JWS)")."""

import json
import os
import subprocess
import sys

import pytest

# Spark runs in `scripts/test.sh --full` and CI, not in the quick test command (`-m "not spark"`).
pytestmark = pytest.mark.spark

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install -r Tests/python/requirements.txt)")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pandas", reason="PySpark's mapInArrow needs pandas (pip install -r Tests/python/requirements.txt)")
pytest.importorskip("cryptography", reason="the JWS test PKI needs cryptography (pip install -r requirements.txt)")

import history_reference as ref  # noqa: E402
import jws_support  # noqa: E402
from spark_support import DRIVER, receiptflow_bin  # noqa: E402
from test_spark import assert_history_tables_equal, java_available, plain, read_parts, spark_submit  # noqa: E402

# In the middle of the JWS subscriptions' periods, so that the renewal infos give every refined state.
AS_OF = "2024-05-15T00:00:00Z"


def test_jws_input_gives_the_tables_of_a_single_machine_run(tmp_path):
    if not java_available():
        pytest.fail("Java is not installed (Spark needs Java 17): install openjdk-17-jre-headless")
    submit = spark_submit()
    if submit is None:
        pytest.fail("spark-submit not found next to the pyspark package")
    binary = receiptflow_bin()

    pki = jws_support.TestPKI()
    jws_root = tmp_path / "jws-root.pem"
    jws_root.write_bytes(pki.root_pem)
    lines = jws_support.subscription_lines(pki, 60)
    half = len(lines) // 2
    inputs = [str(tmp_path / "jws-a.ndjson"), str(tmp_path / "receipts.ndjson"), str(tmp_path / "jws-b.ndjson")]
    for path, part in ((inputs[0], lines[:half]), (inputs[2], lines[half:])):
        with open(path, "w") as fh:
            fh.write("\n".join(part) + "\n")
    subprocess.run([binary, "generate", "--customers", "15", "--seed", "3", "--ca-dir", str(tmp_path / "ca"),
                    "--out", inputs[1], "--quiet"], check=True)
    anchors = ["--trust-anchor", str(jws_root), "--trust-anchor", str(tmp_path / "ca" / "root.pem")]

    # The single-machine runs: Parquet for the rows, CSV for history_reference.py.
    single = {}
    for fmt in ("parquet", "csv"):
        single[fmt] = tmp_path / f"single-{fmt}"
        subprocess.run([binary, "export", *inputs, "--out", str(single[fmt]), "--format", fmt, "--as-of", AS_OF,
                        *anchors, "--quiet"], check=True)
    purchases, subscriptions, _ = ref.tables(str(single["csv"]), inputs, ref.parse_time(AS_OF))
    want = {
        "purchases": ref.render(purchases, ref.PURCHASE_COLUMNS),
        "subscriptions": ref.render(subscriptions, ref.SUBSCRIPTION_COLUMNS),
    }
    states = {s["state"] for s in subscriptions}
    assert {"active", "grace_period", "billing_retry", "expired", "unknown"} <= states, states

    out = tmp_path / "out"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_DIRS=str(tmp_path))
    command = [
        submit, "--master", "local[2]",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
        "--conf", "spark.log.level=WARN",
        DRIVER, "--binary", binary, "--files-per-task", "1", ",".join(inputs), str(out), *anchors, "--as-of", AS_OF,
    ]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]

    for table in ("receipts", "transactions", "renewals"):
        assert (out / table / "_SUCCESS").exists()
        rows, schema = read_parts(out / table)
        reference = pq.read_table(single["parquet"] / f"{table}.parquet")
        assert schema.remove_metadata().equals(reference.schema.remove_metadata()), table
        assert rows == reference.to_pylist(), table
        assert rows, table

    for table, columns in (("purchases", ref.PURCHASE_COLUMNS), ("subscriptions", ref.SUBSCRIPTION_COLUMNS)):
        assert (out / table / "_SUCCESS").exists()
        rows, schema = read_parts(out / table)
        assert schema.names == columns
        got = ref.render([{k: plain(v) for k, v in r.items()} for r in rows], columns)
        mine = ref.render([{k: plain(v) for k, v in r.items()}
                           for r in pq.read_table(single["parquet"] / f"{table}.parquet").to_pylist()], columns)
        assert got == mine, f"the single-machine export's {table} differ from Spark's"
        assert got == want[table], f"history_reference.py's {table} differ from Spark's"
    assert_history_tables_equal(out, single["parquet"])
    with open(out / "summary.json") as fh:
        assert json.load(fh)["as_of"] == ref.format_time(ref.parse_time(AS_OF))
