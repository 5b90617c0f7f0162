"""x_pst (America/Los_Angeles) and x (Etc/GMT) renderings checked against Python's zoneinfo."""

import datetime
import json
import random
import subprocess
import zoneinfo

import pytest

import tables
from conftest import sink_harness, write_tables

LA = zoneinfo.ZoneInfo("America/Los_Angeles")
UTC = datetime.timezone.utc


def _render(receiptflow, values):
    res = subprocess.run([sink_harness(receiptflow), "pst"], input="\n".join(map(str, values)).encode(),
                         capture_output=True, check=True)
    lines = res.stdout.decode().splitlines()
    assert len(lines) == len(values)
    return [line.split("\t") for line in lines]


def _expected(ms):
    dt = datetime.datetime(1970, 1, 1, tzinfo=UTC) + datetime.timedelta(milliseconds=ms)
    return [dt.strftime("%Y-%m-%d %H:%M:%S Etc/GMT"), str(ms),
            dt.astimezone(LA).strftime("%Y-%m-%d %H:%M:%S America/Los_Angeles")]


def _transitions(first_year, last_year):
    """Every UTC instant in the range at which zoneinfo's offset for Los Angeles changes (found by bisection)."""
    out = []
    t = int(datetime.datetime(first_year, 1, 1, tzinfo=UTC).timestamp())
    end = int(datetime.datetime(last_year + 1, 1, 1, tzinfo=UTC).timestamp())
    step = 6 * 3600

    def off(s):
        return datetime.datetime.fromtimestamp(s, LA).utcoffset()

    while t < end:
        if off(t) != off(t + step):
            lo, hi = t, t + step
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if off(mid) == off(lo) else (lo, mid)
            out.append(hi)
        t += step
    return out


def test_every_dst_change_2008_to_2030_matches_zoneinfo(receiptflow):
    changes = _transitions(2008, 2030)
    assert len(changes) == 2 * 23
    values = []
    for s in changes:
        for d in (-3601, -3600, -1, 0, 1, 3599, 3600):
            values.append((s + d) * 1000 + 999)
            values.append((s + d) * 1000)
    got = _render(receiptflow, values)
    assert got == [_expected(ms) for ms in values]


def test_random_instants_2008_to_2030_match_zoneinfo(receiptflow):
    rnd = random.Random(7)
    values = [rnd.randrange(tables.TS_2008, tables.TS_2031) for _ in range(20000)]
    assert _render(receiptflow, values) == [_expected(ms) for ms in values]


def test_every_rule_era_1884_to_2100_matches_zoneinfo(receiptflow):
    # The rules changed in 1918, 1942-45, 1948-49, 1950-66, 1967-86, 1974-75, 1987 and 2007: check every change
    # since railroad time, one second before and at each.
    values = []
    for s in _transitions(1884, 2100):
        values += [(s - 1) * 1000, s * 1000]
    rnd = random.Random(8)
    values += [rnd.randrange(-2_700_000_000_000, 4_000_000_000_000) for _ in range(5000)]
    assert _render(receiptflow, values) == [_expected(ms) for ms in values]


def test_ndjson_objects_render_dates_and_ids(receiptflow, dataset, tmp_path):
    receipts, transactions = dataset
    receipts, transactions = receipts[:300], [t for t in transactions if t["line"] <= 300]
    out = write_tables(receiptflow, tmp_path, "ndjson", receipts, transactions)
    assert sorted(p.name for p in out.iterdir()) == ["receipts.ndjson"]
    lines = (out / "receipts.ndjson").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(receipts)
    for line, row in zip(lines, receipts):
        o = json.loads(line)
        assert o["status"] == row["status"]
        assert (o["source"], o["line"], o["record_id"]) == (row["source"], row["line"], row["record_id"])
        assert o.get("error_code") == row["error_code"]
        if row["receipt_type"] is None:
            assert "receipt" not in o
            continue
        r = o["receipt"]
        assert o["environment"] == {"ProductionSandbox": "Sandbox", "Xcode": "Xcode"}.get(row["receipt_type"],
                                                                                            "Production")
        assert r.get("app_item_id") == row["app_item_id"] and r.get("adam_id") == row["app_item_id"]
        assert r.get("download_id") == row["download_id"]  # exact, even beyond 2**53
        for key, col in [("receipt_creation_date", "receipt_creation_date"),
                         ("original_purchase_date", "original_purchase_date"), ("expiration_date", "expiration_date")]:
            ms = row[col]
            if ms is None:
                assert key not in r and key + "_ms" not in r
            else:
                assert [r[key], r[key + "_ms"], r[key + "_pst"]] == _expected(ms)
        inapp = [t for t in transactions if (t["source"], t["line"]) == (row["source"], row["line"])]
        assert len(r["in_app"]) == len(inapp)
        for got, t in zip(r["in_app"], inapp):
            assert got["is_trial_period"] == ("true" if t["is_trial_period"] else "false")
            assert ("web_order_line_item_id" in got) == (t["web_order_line_item_id"] not in (None, 0))
            assert ("expires_date" in got) == (t["expires_date"] is not None)
            assert "product_type" not in got
