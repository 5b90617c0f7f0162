"""The history tables of the committed samples, both exported in one run as data/README.md shows, equal byte for
byte their golden copies `data/samples.<table>.csv.zst` (rewritten by `scripts/make-data.sh history`). The golden
copies are checked in their own right too: their headers, the purchases and subscriptions history_reference.py
computes from the same export's per-receipt tables, and the events and daily rows against each other."""

import csv
import io
import json
import os
import pathlib
import subprocess
from collections import Counter

import pytest

import history_reference as ref

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = ["data/sample.ndjson.zst", "data/sample-jws.ndjson.zst"]
ANCHORS = ["--trust-anchor", "data/test-root.pem", "--trust-anchor", "data/test-jws-root.pem"]
HISTORY = ("purchases", "subscriptions", "events", "daily")
NEWLINE = b"\n"
# Each table's columns in order (docs/history.md).
HEADERS = {
    "purchases": ref.PURCHASE_COLUMNS,
    "subscriptions": ref.SUBSCRIPTION_COLUMNS,
    "events": [
        "environment", "bundle_id", "original_transaction_id", "event_date", "event", "transaction_id", "product_id",
        "previous_product_id", "offer", "period", "cancellation_reason", "user_id",
    ],
    "daily": [
        "day", "environment", "bundle_id", "product_id", "active", "active_trial", "active_intro", "grace_period",
        "billing_retry", "unknown", "starts", "reactivations", "conversions", "renewals", "product_changes",
        "refunds", "expirations",
    ],
}
# The `daily` column that counts each event (history.md, "Daily activity"); `starts` counts the four start events.
DAILY_COUNT_OF = {
    "start_trial": "starts", "start_intro_offer": "starts", "start_promotional_offer": "starts", "subscribe": "starts",
    "reactivate": "reactivations", "convert": "conversions", "renew": "renewals",
    "product_change": "product_changes", "refund": "refunds", "expire": "expirations",
}


def golden_path(table):
    return ROOT / "data" / f"samples.{table}.csv.zst"


@pytest.fixture(scope="module")
def export(receiptflow, tmp_path_factory):
    """The CSV export of both samples. It runs in the checkout's root with the inputs named as data/README.md names
    them, because `purchases.source` holds each input path exactly as given."""
    out = tmp_path_factory.mktemp("samples") / "out"
    cmd = [os.path.abspath(receiptflow), "export", *INPUTS, *ANCHORS, "--format", "csv", "--quiet", "--out", str(out)]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    return out


@pytest.fixture(scope="module")
def golden():
    """Each golden table's CSV bytes, decompressed with the zstd command (scripts/test.sh requires it)."""
    tables = {}
    for table in HISTORY:
        res = subprocess.run(["zstd", "-dc", str(golden_path(table))], capture_output=True, check=False)
        assert res.returncode == 0, f"{golden_path(table)}: {res.stderr.decode()}"
        tables[table] = res.stdout
    return tables


def first_difference(got, want):
    """The first line (1-based) where two CSV texts differ, with both lines (None past the end of one)."""
    a, b = got.split(NEWLINE), want.split(NEWLINE)
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            return i + 1, x, y
    return None


def rows(text):
    """A CSV text as dicts of strings, the header's names as keys."""
    return list(csv.DictReader(io.StringIO(text.decode("utf-8"), newline="")))


def test_the_check_names_the_first_differing_line():
    assert first_difference(b"h\na\nb\n", b"h\na\nb\n") is None
    assert first_difference(b"h\na\nb\n", b"h\na\nc\n") == (3, b"b", b"c")
    assert first_difference(b"h\na\n", b"h\na\nb\n") == (3, b"", b"b")
    assert first_difference(b"h\na\nb\n", b"h\na") == (3, b"b", None)


@pytest.mark.parametrize("table", HISTORY)
def test_the_samples_history_tables_equal_the_golden_copies(export, golden, table):
    got = (export / f"{table}.csv").read_bytes()
    want = golden[table]
    if got != want:
        line, ours, theirs = first_difference(got, want)
        # pytest.fail rather than `assert got == want`: pytest's own diff of two texts of megabytes is unreadable.
        pytest.fail(
            f"{table}.csv of the samples' export differs from {golden_path(table).relative_to(ROOT)} at line {line}:\n"
            f"  export: {ours!r}\n  golden: {theirs!r}\n"
            f"({got.count(NEWLINE)} lines against {want.count(NEWLINE)}; when the change is meant, rewrite the "
            "golden copies with `scripts/make-data.sh history` and compare the old and new tables)",
            pytrace=False,
        )


@pytest.mark.parametrize("table", HISTORY)
def test_each_golden_table_has_its_header_and_rows(export, golden, table):
    text = golden[table]
    assert text.endswith(NEWLINE)
    lines = text[:-1].split(NEWLINE)
    assert lines[0].decode().split(",") == HEADERS[table]
    assert len(lines) > 1, f"the golden {table} has no rows"
    with open(export / "summary.json") as fh:
        assert json.load(fh)["history"][table] == len(lines) - 1


def test_the_golden_purchases_and_subscriptions_follow_the_reference(export, golden):
    # history_reference.py computes purchases and subscriptions (receipts, JWS and renewal infos) from the export's
    # receipts, transactions and renewals tables; it has no events or daily, which the next test checks otherwise.
    purchases, subscriptions, as_of = ref.tables(str(export), INPUTS)
    with open(export / "summary.json") as fh:
        assert ref.format_time(as_of) == json.load(fh)["as_of"]
    for table, computed, columns in (("purchases", purchases, ref.PURCHASE_COLUMNS),
                                     ("subscriptions", subscriptions, ref.SUBSCRIPTION_COLUMNS)):
        want = ref.render(computed, columns)
        got = golden[table].decode("utf-8")[:-1].split("\n")
        assert len(got) == len(want), f"{table}: {len(got) - 1} golden rows, {len(want) - 1} from the reference"
        for i, (g, w) in enumerate(zip(got, want, strict=True), 1):
            assert g == w, f"{table} line {i}: golden {g!r}, reference {w!r}"
    # Both samples contribute: receipts and JWS transactions, and subscriptions of several states.
    assert {p["source"] for p in purchases} == set(INPUTS)
    assert len({s["state"] for s in subscriptions}) >= 3


def test_the_golden_events_and_daily_agree_with_the_subscriptions(export, golden):
    subscriptions = rows(golden["subscriptions"])
    events = rows(golden["events"])
    daily = rows(golden["daily"])
    keys = {(s["environment"], s["bundle_id"], s["original_transaction_id"]) for s in subscriptions}
    assert {(e["environment"], e["bundle_id"], e["original_transaction_id"]) for e in events} <= keys
    assert {e["event"] for e in events} <= set(DAILY_COUNT_OF)
    # One start event per subscription that has one: history.md, "Subscription events".
    starts = Counter((e["environment"], e["bundle_id"], e["original_transaction_id"])
                     for e in events if DAILY_COUNT_OF[e["event"]] == "starts")
    assert set(starts.values()) == {1}
    # The days run to the as-of time's day; summed over products, the last day's counted states are the
    # subscriptions in those states, and each day's event counts add up to the events at or before the as-of time.
    with open(export / "summary.json") as fh:
        as_of = json.load(fh)["as_of"]
    assert daily[-1]["day"] == as_of[:10]
    last = [d for d in daily if d["day"] == daily[-1]["day"]]
    by_state = Counter(s["state"] for s in subscriptions)
    for state in ("active", "grace_period", "billing_retry", "unknown"):
        assert sum(int(d[state]) for d in last) == by_state[state], state
    a = ref.parse_time(as_of)
    happened = Counter(DAILY_COUNT_OF[e["event"]] for e in events if ref.parse_time(e["event_date"]) <= a)
    for column in set(DAILY_COUNT_OF.values()):
        assert sum(int(d[column]) for d in daily) == happened[column], column
