"""The generator's expected `purchases` and `subscriptions` tables (`receiptflow generate --customers`) against
history_reference.py computing them from an export of the same file, row for row; and, once the export writes
the two tables itself, the export's own tables against both."""

import json
import os
import subprocess
from collections import Counter

import pytest

import history_reference as ref

CUSTOMERS = 400
SEED = 11


def generate(binary, directory, customers, seed, *extra, name="customers.ndjson.zst"):
    out = os.path.join(directory, name)
    subprocess.run(
        [binary, "generate", "--customers", str(customers), "--years", "3", "--seed", str(seed),
         "--ca-dir", os.path.join(directory, "ca"), "--out", out, "--quiet", *extra],
        check=True,
    )
    stem = out[: -len(".ndjson.zst")] if out.endswith(".ndjson.zst") else out[: -len(".ndjson")]
    return out, stem


def lines(path):
    with open(path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    assert text.endswith("\n")
    return text[:-1].split("\n")


@pytest.fixture(scope="module")
def corpus(receiptflow, tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("customers"))
    out, stem = generate(receiptflow, directory, CUSTOMERS, SEED)
    export = os.path.join(directory, "export")
    subprocess.run(
        [receiptflow, "export", out, "--format", "csv", "--out", export, "--quiet",
         "--trust-anchor", os.path.join(directory, "ca", "root.pem")],
        check=True, stderr=subprocess.DEVNULL,
    )
    with open(stem + ".history.json") as fh:
        summary = json.load(fh)
    return {"dir": directory, "out": out, "stem": stem, "export": export, "summary": summary}


def test_reference_equals_the_generators_expected_tables(corpus):
    purchases, subscriptions, as_of = ref.tables(corpus["export"], [corpus["out"]])
    assert ref.format_time(as_of) == corpus["summary"]["as_of"]
    want_p = lines(corpus["stem"] + ".purchases.csv")
    want_s = lines(corpus["stem"] + ".subscriptions.csv")
    got_p = ref.render(purchases, ref.PURCHASE_COLUMNS)
    got_s = ref.render(subscriptions, ref.SUBSCRIPTION_COLUMNS)
    assert len(got_p) == len(want_p) == corpus["summary"]["purchases"] + 1
    assert len(got_s) == len(want_s) == corpus["summary"]["subscriptions"] + 1
    for i, (g, w) in enumerate(zip(got_p, want_p)):
        assert g == w, f"purchases row {i}"
    for i, (g, w) in enumerate(zip(got_s, want_s)):
        assert g == w, f"subscriptions row {i}"


def test_the_corpus_holds_every_case_the_rules_name(corpus):
    receipts = list(ref.read_csv(os.path.join(corpus["export"], "receipts.csv")))
    purchases, subscriptions, _ = ref.tables(corpus["export"], [corpus["out"]])
    states = Counter(s["state"] for s in subscriptions)
    assert all(states[s] > 0 for s in ("active", "revoked", "expired", "unknown")), states
    assert dict(states) == {k: v for k, v in corpus["summary"]["states"].items() if v}
    # Invalid receipts of every status and valid Xcode receipts, none of which may contribute.
    assert {21002, 21003} <= {r["status"] for r in receipts}
    assert any(r["status"] == 0 and r["receipt_type"] == "Xcode" for r in receipts)
    assert not any(p["transaction_id"] == "0" for p in purchases)
    # Receipts sent twice: the same record id on two lines.
    ids = Counter(r["record_id"] for r in receipts)
    assert any(n == 2 for n in ids.values())
    # Sandbox and Production purchases sharing an app and a transaction id.
    by_key = Counter((p["bundle_id"], p["transaction_id"]) for p in purchases)
    assert any(n == 2 for n in by_key.values())
    assert {p["environment"] for p in purchases} == {"Production", "Sandbox"}
    # Null original transaction ids, which make a subscription of their own.
    assert any(p["original_transaction_id"] is None for p in purchases)
    # Refunds, and upgrades: a cancelled period that is not its subscription's latest.
    assert any(p["cancellation_reason"] is not None for p in purchases)
    assert any(s["cancelled_periods"] > 0 and s["state"] != "revoked" for s in subscriptions)
    assert any(s["first_product_id"] != s["latest_product_id"] for s in subscriptions)
    # Restores: a non-consumable bought once and restored as a new transaction of the same original.
    restored = Counter(p["original_transaction_id"] for p in purchases if p["product_type"] == 0)
    assert any(n > 1 for n in restored.values())
    # Renewals accumulate: purchases seen in many receipts.
    assert max(p["occurrences"] for p in purchases) > 5


def test_as_of_moves_only_the_state(receiptflow, corpus, tmp_path):
    as_of = "2021-06-01T00:00:00Z"
    out, stem = generate(receiptflow, str(tmp_path), CUSTOMERS, SEED, "--as-of", as_of,
                         "--expected-source", corpus["out"])
    with open(out, "rb") as a, open(corpus["out"], "rb") as b:
        assert a.read() == b.read()
    assert lines(stem + ".purchases.csv") == lines(corpus["stem"] + ".purchases.csv")
    purchases, subscriptions, used = ref.tables(corpus["export"], [corpus["out"]], ref.parse_time(as_of))
    got = ref.render(subscriptions, ref.SUBSCRIPTION_COLUMNS)
    assert got == lines(stem + ".subscriptions.csv")
    states = Counter(s["state"] for s in subscriptions)
    assert states["not_started"] > 0 and states["active"] > 0, states
    before = lines(corpus["stem"] + ".subscriptions.csv")
    state = ref.SUBSCRIPTION_COLUMNS.index("state") - len(ref.SUBSCRIPTION_COLUMNS)

    def without_state(row):
        fields = row.rsplit(",", -state)
        return fields[:state] + fields[state + 1:]

    assert [without_state(r) for r in got] == [without_state(r) for r in before]
    assert got != before


def test_same_seed_same_bytes(receiptflow, tmp_path):
    files = []
    for run in ("a", "b"):
        d = tmp_path / run
        d.mkdir()
        out, stem = generate(receiptflow, str(d), 60, 3, "--expected-source", "c.ndjson", name="c.ndjson")
        files.append([open(p, "rb").read() for p in
                      (out, stem + ".purchases.csv", stem + ".subscriptions.csv", stem + ".history.json")])
    assert files[0] == files[1]
    other, _ = generate(receiptflow, str(tmp_path), 60, 4, name="d.ndjson")
    assert open(other, "rb").read() != files[0][0]


def test_the_exports_own_history_tables_equal_the_expected_ones(corpus):
    for table in ("purchases", "subscriptions", "events", "daily"):
        exported = os.path.join(corpus["export"], table + ".csv")
        assert os.path.exists(exported), f"the export wrote no {table}.csv"
        assert lines(exported) == lines(corpus["stem"] + f".{table}.csv"), table
    events = Counter(line.split(",")[4] for line in lines(corpus["stem"] + ".events.csv")[1:])
    assert all(events[e] > 0 for e in ("subscribe", "start_trial", "convert", "renew", "product_change", "refund",
                                       "expire", "reactivate")), events


def test_the_exports_events_and_daily_at_a_planted_as_of_equal_the_expected_ones(receiptflow, corpus, tmp_path):
    as_of = "2021-06-01T07:30:00Z"
    out, stem = generate(receiptflow, str(tmp_path), CUSTOMERS, SEED, "--as-of", as_of,
                         "--expected-source", corpus["out"])
    export = str(tmp_path / "export")
    subprocess.run(
        [receiptflow, "export", corpus["out"], "--format", "csv", "--out", export, "--quiet", "--as-of", as_of,
         "--trust-anchor", os.path.join(corpus["dir"], "ca", "root.pem")],
        check=True, stderr=subprocess.DEVNULL,
    )
    for table in ("subscriptions", "events", "daily"):
        assert lines(os.path.join(export, table + ".csv")) == lines(stem + f".{table}.csv"), table
    # The events do not depend on the as-of time; the days stop at its day.
    assert lines(stem + ".events.csv") == lines(corpus["stem"] + ".events.csv")
    assert lines(stem + ".daily.csv")[-1].startswith("2021-06-01,")


def test_summary_counts_the_events_and_daily_rows_and_no_history_leaves_them_out(receiptflow, corpus, tmp_path):
    with open(os.path.join(corpus["export"], "summary.json")) as fh:
        history = json.load(fh)["history"]
    for table in ("purchases", "subscriptions", "events", "daily"):
        assert history[table] == len(lines(os.path.join(corpus["export"], table + ".csv"))) - 1, table
    out = str(tmp_path / "no-history")
    subprocess.run(
        [receiptflow, "export", corpus["out"], "--format", "csv", "--out", out, "--quiet", "--no-history",
         "--trust-anchor", os.path.join(corpus["dir"], "ca", "root.pem")],
        check=True, stderr=subprocess.DEVNULL,
    )
    assert not [n for n in os.listdir(out) if n.split(".")[0] in ("purchases", "subscriptions", "events", "daily")]
