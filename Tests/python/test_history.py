"""The `purchases` and `subscriptions` tables of `export`, checked against the rules of docs/history.md
recomputed independently in DuckDB SQL from the per-receipt tables of the same run, read back through pyarrow,
DuckDB and polars in Parquet and CSV; and byte-identical files whatever the thread count, spill budget, part
size, or a kill -9 and --resume in between."""

import datetime
import filecmp
import os
import shutil
import signal
import subprocess
import time

import duckdb
import polars as pl
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

HISTORY = ("purchases", "subscriptions", "events", "daily")


@pytest.fixture(scope="module")
def corpus(receiptflow, tmp_path_factory):
    """Two generated inputs and a copy of the first under another name: every receipt of it is sent twice."""
    tmp = tmp_path_factory.mktemp("history")
    ca = tmp / "ca"
    inputs = []
    for name, count, seed in (("a.ndjson", 1500, 71), ("b.ndjson.zst", 900, 72)):
        out = tmp / name
        subprocess.run([receiptflow, "generate", "--count", str(count), "--seed", str(seed), "--bad-fraction", "0.1",
                        "--out", str(out), "--ca-dir", str(ca), "--quiet"], check=True)
        inputs.append(str(out))
    shutil.copy(inputs[0], tmp / "again.ndjson")
    inputs.append(str(tmp / "again.ndjson"))
    return {"tmp": tmp, "inputs": inputs, "anchor": str(ca / "root.pem")}


def _export(receiptflow, corpus, name, fmt, *extra, env=None):
    out = corpus["tmp"] / name
    if out.exists():
        shutil.rmtree(out)
    cmd = [receiptflow, "export", *corpus["inputs"], "--trust-anchor", corpus["anchor"], "--format", fmt,
           "--quiet", "--out", str(out), *extra]
    res = subprocess.run(cmd, capture_output=True, env={**os.environ, **(env or {})}, check=False)
    assert res.returncode == 0, res.stderr.decode()
    return out


@pytest.fixture(scope="module")
def parquet_run(receiptflow, corpus):
    return _export(receiptflow, corpus, "parquet", "parquet")


@pytest.fixture(scope="module")
def csv_run(receiptflow, corpus):
    return _export(receiptflow, corpus, "csv", "csv")


def _expected(out, inputs):
    """Both tables from receipts.parquet and transactions.parquet, by the rules, in the contract's row order."""
    con = duckdb.connect()
    sources = ", ".join(f"('{p}', {i})" for i, p in enumerate(inputs))
    con.sql(f"""
        CREATE TABLE occ AS
        WITH t AS (SELECT *, file_row_number AS k FROM read_parquet('{out}/transactions.parquet', file_row_number=true)),
        src(source, input) AS (VALUES {sources}),
        r AS (SELECT * FROM read_parquet('{out}/receipts.parquet'))
        SELECT t.* EXCLUDE (environment), r.receipt_creation_date AS created, src.input,
               row_number() OVER (PARTITION BY t.source, t.line ORDER BY t.k) - 1 AS entry,
               CASE WHEN t.receipt_type LIKE '%Sandbox' THEN 'Sandbox' ELSE 'Production' END AS environment
        FROM t JOIN r USING (source, line) JOIN src USING (source)
        WHERE r.status = 0 AND coalesce(r.receipt_type, '') NOT IN ('Xcode', 'LocalTesting')""")
    horizon = con.sql(f"""SELECT max(receipt_creation_date) FROM read_parquet('{out}/receipts.parquet')
                          WHERE status = 0 AND coalesce(receipt_type, '') NOT IN ('Xcode', 'LocalTesting')""").fetchall()[0][0]
    recency = "created DESC NULLS LAST, input DESC, line DESC, entry DESC"
    con.sql(f"""
        CREATE TABLE purchases AS
        WITH newest AS (SELECT *, row_number() OVER (PARTITION BY environment, bundle_id, transaction_id
                                                      ORDER BY {recency}) AS n FROM occ),
        cancel AS (SELECT environment, bundle_id, transaction_id, cancellation_date, cancellation_reason,
                          row_number() OVER (PARTITION BY environment, bundle_id, transaction_id ORDER BY {recency}) AS n
                   FROM occ WHERE cancellation_date IS NOT NULL),
        agg AS (SELECT environment, bundle_id, transaction_id, min(created) AS first_seen, max(created) AS last_seen,
                       count(*) AS occurrences FROM occ GROUP BY ALL)
        SELECT w.environment, w.bundle_id, w.transaction_id, w.original_transaction_id, w.product_id, w.quantity,
               w.purchase_date, w.original_purchase_date, w.expires_date, w.web_order_line_item_id,
               w.is_trial_period, w.is_in_intro_offer_period, w.promotional_offer_id, w.product_type,
               c.cancellation_date, c.cancellation_reason, a.first_seen, a.last_seen, a.occurrences, w.source, w.line
        FROM newest w JOIN agg a USING (environment, bundle_id, transaction_id)
        LEFT JOIN (SELECT * FROM cancel WHERE n = 1) c USING (environment, bundle_id, transaction_id)
        WHERE w.n = 1
        ORDER BY w.environment, w.bundle_id, w.original_transaction_id NULLS FIRST, w.purchase_date NULLS FIRST,
                 w.transaction_id""")
    a = f"TIMESTAMP '{horizon}'" if not isinstance(horizon, datetime.datetime) or horizon.tzinfo is None \
        else f"TIMESTAMPTZ '{horizon.isoformat()}'"
    subscriptions = con.sql(f"""
        WITH p AS (SELECT *, coalesce(original_transaction_id, transaction_id) AS sk,
                          purchase_date <= {a} AS counted,
                          cancellation_date IS NOT NULL AND cancellation_date <= {a} AS cancelled_at_a
                   FROM purchases WHERE expires_date IS NOT NULL),
        ranked AS (SELECT *, row_number() OVER (PARTITION BY environment, bundle_id, sk
                                                ORDER BY purchase_date NULLS FIRST, transaction_id) AS up,
                             row_number() OVER (PARTITION BY environment, bundle_id, sk
                                                ORDER BY purchase_date DESC NULLS LAST, transaction_id DESC) AS down,
                             row_number() OVER (PARTITION BY environment, bundle_id, sk, counted
                                                ORDER BY purchase_date DESC, transaction_id DESC) AS counted_down
                   FROM p),
        agg AS (SELECT environment, bundle_id, sk,
                       max(product_id) FILTER (WHERE up = 1) AS first_product_id,
                       max(product_id) FILTER (WHERE down = 1) AS latest_product_id,
                       min(purchase_date) AS first_purchase_date, max(purchase_date) AS latest_purchase_date,
                       max(expires_date) FILTER (WHERE cancellation_date IS NULL) AS latest_expires_date,
                       count(*) AS periods, count(*) FILTER (WHERE is_trial_period) AS trial_periods,
                       count(*) FILTER (WHERE is_in_intro_offer_period) AS intro_periods,
                       count(*) FILTER (WHERE cancellation_date IS NOT NULL) AS cancelled_periods,
                       max(last_seen) AS observed_through,
                       coalesce(bool_or(counted), false) AS any_counted,
                       coalesce(bool_or(counted AND NOT cancelled_at_a AND {a} < expires_date), false) AS active,
                       coalesce(bool_or(counted AND counted_down = 1 AND cancelled_at_a), false) AS revoked,
                       max(expires_date) FILTER (WHERE counted AND NOT cancelled_at_a) AS counted_expires
                FROM ranked GROUP BY ALL)
        SELECT environment, bundle_id, sk AS original_transaction_id, first_product_id, latest_product_id,
               first_purchase_date, latest_purchase_date, latest_expires_date, periods, trial_periods, intro_periods,
               cancelled_periods, observed_through,
               CASE WHEN NOT any_counted THEN 'not_started' WHEN active THEN 'active' WHEN revoked THEN 'revoked'
                    WHEN observed_through >= counted_expires THEN 'expired' ELSE 'unknown' END AS state,
               -- Receipts carry no renewal info: its six columns are null.
               NULL AS renewal_signed_date, NULL AS auto_renew_status, NULL AS auto_renew_product_id,
               NULL AS expiration_intent, NULL AS is_in_billing_retry_period, NULL AS grace_period_expires_date
        FROM agg ORDER BY environment, bundle_id, original_transaction_id""").fetchall()
    return con.sql("SELECT * FROM purchases").fetchall(), subscriptions


def _rows(arrow_table):
    return [tuple(r.values()) for r in arrow_table.to_pylist()]


def test_tables_follow_the_rules(parquet_run, corpus):
    want_p, want_s = _expected(parquet_run, corpus["inputs"])
    got_p = duckdb.sql(f"SELECT * FROM read_parquet('{parquet_run}/purchases.parquet')").fetchall()
    got_s = duckdb.sql(f"SELECT * FROM read_parquet('{parquet_run}/subscriptions.parquet')").fetchall()
    assert len(got_p) == len(want_p) > 1000
    assert got_p == want_p
    assert len(got_s) == len(want_s) > 100
    assert got_s == want_s
    # Every purchases row with an expires_date is a period of a subscription: the events name them.
    got_e = duckdb.sql(f"SELECT * FROM read_parquet('{parquet_run}/events.parquet')").fetchall()
    assert len(got_e) > 100
    # The copied input makes every receipt of a.ndjson count twice.
    assert max(r[18] for r in got_p) >= 2
    states = {r[13] for r in got_s}
    assert {"expired", "unknown"} <= states


@pytest.mark.parametrize("table", HISTORY)
def test_pyarrow_polars_and_duckdb_agree(parquet_run, table):
    path = f"{parquet_run}/{table}.parquet"
    arrow = pq.read_table(path)
    assert arrow.num_rows > 0
    assert pl.read_parquet(path).to_arrow().equals(pl.from_arrow(arrow).to_arrow())
    assert duckdb.sql(f"SELECT * FROM read_parquet('{path}')").fetchall() == _rows(arrow)


def _csv_text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    if isinstance(value, str) and value == "":
        return '""'
    if isinstance(value, str) and value.startswith(("=", "+", "-", "@", "\t", "\r")):
        return "'" + value  # contract.md, Formats: a cell a spreadsheet would run as a formula
    return str(value)


@pytest.mark.parametrize("table", HISTORY)
def test_csv_holds_the_parquet_rows(parquet_run, csv_run, table):
    arrow = pq.read_table(f"{parquet_run}/{table}.parquet")
    lines = (csv_run / f"{table}.csv").read_text().splitlines()
    assert lines[0].split(",") == arrow.schema.names
    rendered = [",".join(_csv_text(v) for v in row) for row in _rows(arrow)]
    assert lines[1:] == rendered
    # pyarrow and polars read the CSV with the same row count and keys.
    keys = ["environment", "bundle_id", "product_id" if table == "daily" else "original_transaction_id"]
    assert pacsv.read_csv(csv_run / f"{table}.csv").num_rows == arrow.num_rows
    assert pl.read_csv(csv_run / f"{table}.csv", infer_schema=False).select(keys).rows() == \
        [tuple(r[k] if r[k] is not None else None for k in keys) for r in arrow.select(keys).to_pylist()]


def _same(a, b, fmt):
    for t in HISTORY:
        assert filecmp.cmp(a / f"{t}.{fmt}", b / f"{t}.{fmt}", shallow=False), f"{t}.{fmt} differs"


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_identical_across_threads_batches_and_spill(receiptflow, corpus, fmt):
    base = _export(receiptflow, corpus, f"base-{fmt}", fmt)
    one = _export(receiptflow, corpus, f"one-{fmt}", fmt, "--threads", "1")
    spill = _export(receiptflow, corpus, f"spill-{fmt}", fmt, env={"RECEIPTFLOW_HISTORY_MEMORY": "65536"})
    parts = _export(receiptflow, corpus, f"parts-{fmt}", fmt, "--part-records", "37")
    for other in (one, spill, parts):
        _same(base, other, fmt)
    summary = (spill / "summary.json").read_text()
    assert '"spilled_bytes" : 0' not in summary
    for out in (base, spill, parts):
        assert not [n for n in os.listdir(out) if n.startswith(".receiptflow-history")]


def test_resume_after_kill_equals_a_clean_run(receiptflow, corpus):
    clean = _export(receiptflow, corpus, "clean-resume", "parquet")
    out = corpus["tmp"] / "killed"
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "RECEIPTFLOW_HISTORY_MEMORY": "65536"}
    common = [*corpus["inputs"], "--trust-anchor", corpus["anchor"], "--format", "parquet", "--quiet",
              "--out", str(out), "--threads", "2"]
    kills = 0
    for attempt in range(30):
        resume = (out / "manifest.json").exists()
        args = [receiptflow, "export", *common, *(["--resume"] if resume else ["--part-records", "150"])]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if kills < 3:
            # Kill once a part or two more are committed, so the committed spill is what a resume merges.
            target = len(list((out / "receipts").glob("part-*"))) + 2 if (out / "receipts").exists() else 2
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                if (out / "receipts").exists() and len(list((out / "receipts").glob("part-*"))) >= target:
                    break
                time.sleep(0.002)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
        _, err = proc.communicate(timeout=300)
        if proc.returncode == -signal.SIGKILL:
            continue
        assert proc.returncode == 0, err.decode()
        break
    assert kills >= 1
    _same(clean, out, "parquet")
    assert not (out / ".receiptflow-history").exists()
