"""JWS records through export: the real Apple-signed samples (Tests/Fixtures/jws) as NDJSON records, written
as Parquet and CSV and read back by pyarrow and DuckDB. Expected values come from the samples' expected.json."""

import json
import pathlib
import subprocess

import duckdb
import pyarrow.parquet as pq
import pytest

import tables

JWS_DIR = pathlib.Path(__file__).resolve().parents[1] / "Fixtures" / "jws"
G3 = JWS_DIR.parent / "certs" / "AppleRootCA-G3.cer"


def _samples():
    out = []
    for path in sorted(JWS_DIR.glob("*.jws")):
        expected = json.loads(path.with_name(path.stem + ".expected.json").read_text())
        out.append((path.stem, path.read_text().strip(), expected))
    return out


@pytest.fixture(scope="module")
def exported(receiptflow, tmp_path_factory):
    samples = _samples()
    tmp = tmp_path_factory.mktemp("jws")
    lines = []
    for name, jws, _ in samples:
        key = "signedPayload" if name.startswith("notification") else "receipt"
        lines.append(json.dumps({"id": name, key: jws}))
    src = tmp / "in.ndjson"
    src.write_text("\n".join(lines) + "\n")
    outs = {}
    for fmt in ("parquet", "csv"):
        out = tmp / fmt
        subprocess.run([receiptflow, "export", str(src), "--out", str(out), "--format", fmt, "--quiet",
                        "--trust-anchor", str(G3)], check=True, capture_output=True)
        outs[fmt] = out
    return samples, outs


def _transactions_expected(samples):
    """Every transaction payload of the samples (their own, or nested in a notification), by transaction id."""
    found = []
    for name, _, e in samples:
        if name.startswith("transaction"):
            found.append(e["payload"])
        for key, nested in (e.get("nested") or {}).items():
            if key == "signedTransactionInfo":
                found.append(nested["payload"])
    return found


def test_parquet_schemas_end_with_the_jws_columns(exported):
    _, outs = exported
    names = pq.read_schema(outs["parquet"] / "receipts.parquet").names
    assert names == [c[0] for c in tables.RECEIPTS]
    names = pq.read_schema(outs["parquet"] / "transactions.parquet").names
    assert names == [c[0] for c in tables.TRANSACTIONS]


def test_every_jws_has_a_valid_receipts_row_with_its_index(exported):
    samples, outs = exported
    rows = pq.read_table(outs["parquet"] / "receipts.parquet").to_pylist()
    want = []
    for i, (name, _, e) in enumerate(samples):
        want.append((i + 1, 0))
        want += [(i + 1, k + 1) for k in range(len(e.get("nested") or {}))]
    assert [(r["line"], r["jws_index"]) for r in rows] == want
    assert all(r["status"] == 0 and r["verified"] for r in rows)
    kinds = duckdb.sql(f"SELECT record_kind, count(*) FROM read_parquet('{outs['parquet']}/receipts.parquet') "
                       "GROUP BY 1 ORDER BY 1").fetchall()
    n_notifications = sum(1 for n, _, _ in samples if n.startswith("notification"))
    assert dict(kinds)["jws_notification"] == n_notifications


def test_transactions_hold_the_signed_fields(exported):
    samples, outs = exported
    want = sorted(_transactions_expected(samples), key=lambda p: (p["transactionId"], p["signedDate"]))
    got = duckdb.sql(
        f"SELECT transaction_id, product_id, price, currency, storefront, epoch_ms(signed_date), environment, "
        f"offer_type, offer_discount_type, app_account_token "
        f"FROM read_parquet('{outs['parquet']}/transactions.parquet') ORDER BY 1, 6").fetchall()
    assert got == [(p["transactionId"], p["productId"], p.get("price"), p.get("currency"), p.get("storefront"),
                    p["signedDate"], p["environment"], p.get("offerType"), p.get("offerDiscountType"),
                    p.get("appAccountToken")) for p in want]
    # The CSV file holds the same rows.
    csv_rows = duckdb.sql(f"SELECT transaction_id, price FROM read_csv('{outs['csv']}/transactions.csv', "
                          "header=true, all_varchar=true) ORDER BY 1, price").fetchall()
    assert sorted(csv_rows) == sorted((p["transactionId"], str(p["price"])) for p in want)


def test_renewals_hold_each_renewal_info(exported):
    samples, outs = exported
    want = []
    for name, _, e in samples:
        if name.startswith("renewal"):
            want.append(e["payload"])
        for key, nested in (e.get("nested") or {}).items():
            if key == "signedRenewalInfo":
                want.append(nested["payload"])
    got = pq.read_table(outs["parquet"] / "renewals.parquet").to_pylist()
    assert len(got) == len(want) > 0
    assert sorted((r["original_transaction_id"], r["auto_renew_product_id"], r["auto_renew_status"]) for r in got) == \
        sorted((p["originalTransactionId"], p["autoRenewProductId"], p["autoRenewStatus"]) for p in want)
    csv_count = duckdb.sql(f"SELECT count(*) FROM read_csv('{outs['csv']}/renewals.csv', header=true)").fetchall()
    assert csv_count == [(len(want),)]
