"""The analyst queries of README.md ("Subscription analytics") run in DuckDB on an export of generated customers,
and their totals agree with the generator's expected events and with an export at a month end's `--as-of`."""

import csv
import pathlib
import re
import subprocess

import duckdb
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def readme_queries():
    text = (ROOT / "README.md").read_text()
    section = text.split("### Subscription analytics", 1)[1].split("\n## ", 1)[0]
    blocks = [m.group(1) for m in re.finditer(r"^```sql\n(.*?)^```\s*$", section, re.M | re.S)]
    return blocks[0], blocks[1:]


def export(receiptflow, data, out, anchor, *extra):
    subprocess.run([receiptflow, "export", data, "--format", "parquet", "--out", out, "--quiet",
                    "--trust-anchor", anchor, *extra], check=True, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def run(receiptflow, tmp_path_factory):
    d = tmp_path_factory.mktemp("readme-queries")
    data = str(d / "customers.ndjson.zst")
    subprocess.run([receiptflow, "generate", "--customers", "300", "--years", "3", "--seed", "5",
                    "--ca-dir", str(d / "ca"), "--out", data, "--quiet"], check=True)
    out = str(d / "customers")
    export(receiptflow, data, out, str(d / "ca" / "root.pem"))
    with open(d / "customers.events.csv", newline="") as fh:
        expected = [r for r in csv.DictReader(fh) if r["environment"] == "Production"]
    return {"dir": d, "data": data, "out": out, "expected_events": expected}


def connect(out):
    setup, _ = readme_queries()
    con = duckdb.connect()
    con.execute(setup.replace("out/customers/", out + "/"))
    return con


def test_the_section_holds_the_setup_and_six_queries():
    setup, queries = readme_queries()
    assert "CREATE VIEW daily" in setup and "CREATE VIEW events" in setup
    assert len(queries) == 6


def test_every_query_runs_and_answers(run):
    con = connect(run["out"])
    _, queries = readme_queries()
    for q in queries:
        rows = con.execute(q).fetchall()
        assert rows, q


def test_the_totals_agree_with_the_expected_events(run):
    con = connect(run["out"])
    _, (active, new, trials, churn, refunds, cohorts) = readme_queries()
    events = run["expected_events"]

    def count(*kinds):
        return sum(1 for e in events if e["event"] in kinds)

    # Every event of the generated corpus happened by the horizon, on or after the first day.
    assert sum(r[1] for r in con.execute(new).fetchall()) == count(
        "subscribe", "start_trial", "start_intro_offer", "start_promotional_offer")
    assert sum(r[2] for r in con.execute(refunds).fetchall()) == count("refund") > 0
    assert sum(r[1] for r in con.execute(trials).fetchall()) == count("start_trial") > 0
    converted = sum(r[2] for r in con.execute(trials).fetchall())
    assert 0 < converted <= count("convert")
    assert sum(r[1] for r in con.execute(churn).fetchall()) == count("expire") > 0
    assert max(r[1] for r in con.execute(cohorts).fetchall()) > 6


def test_active_at_a_month_end_is_an_as_of_exports_active_count(receiptflow, run):
    con = connect(run["out"])
    _, (active, *_) = readme_queries()
    rows = con.execute(active).fetchall()
    month_ends = sorted({r[0] for r in rows})
    month_end = month_ends[len(month_ends) // 2]
    got = sum(r[2] for r in rows if r[0] == month_end)
    out = str(run["dir"] / "at-month-end")
    # A day's snapshot is taken at its end: the next day's midnight.
    as_of = month_end.fromordinal(month_end.toordinal() + 1).isoformat() + "T00:00:00Z"
    export(receiptflow, run["data"], out, str(run["dir"] / "ca" / "root.pem"), "--as-of", as_of)
    want = duckdb.execute(f"""SELECT count(*) FROM '{out}/subscriptions.parquet'
                              WHERE state = 'active' AND environment = 'Production'""").fetchall()[0][0]
    assert got == want > 0, as_of
