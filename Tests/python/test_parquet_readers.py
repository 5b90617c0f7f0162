"""Parquet written by receiptflow, read back by pyarrow, DuckDB and polars and compared with the ground truth."""

import datetime
import math

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import readers
import tables
from conftest import write_tables

READERS = {"pyarrow": readers.parquet_pyarrow, "duckdb": readers.parquet_duckdb, "polars": readers.parquet_polars}
TABLES = {"receipts": tables.RECEIPTS, "transactions": tables.TRANSACTIONS}
ROW_GROUP_ROWS = 1000
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
# Small pages force several pages per chunk; a tiny dictionary limit forces the PLAIN fallback mid-chunk.
CONFIGS = {
    "small-pages": ["--row-group-rows", str(ROW_GROUP_ROWS), "--page-bytes", "4096", "--batch-rows", "700"],
    "dictionary-fallback": ["--row-group-rows", str(ROW_GROUP_ROWS), "--dictionary-bytes", "200",
                            "--batch-rows", "333", "--max-rows-per-page", "150"],
}


@pytest.fixture(scope="module", params=list(CONFIGS))
def written(request, receiptflow, dataset, tmp_path_factory):
    receipts, transactions = dataset
    extra = CONFIGS[request.param] + ["--input", "in/a.ndjson", "--input", "b,c.zst",
                                      "--trust-anchor-sha256", "B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024"]
    out = write_tables(receiptflow, tmp_path_factory.mktemp(request.param), "parquet", receipts, transactions, extra)
    return out, {"receipts": receipts, "transactions": transactions}


def _expected_arrow_schema(schema):
    return pa.schema([pa.field(n, readers.ARROW_TYPES[k], nullable) for n, k, nullable in schema])


@pytest.mark.parametrize("table", TABLES)
def test_pyarrow_schema_and_types(written, table):
    out, _ = written
    got = pq.read_schema(out / f"{table}.parquet").remove_metadata()
    assert got == _expected_arrow_schema(TABLES[table])


@pytest.mark.parametrize("table", TABLES)
def test_duckdb_schema_and_types(written, table):
    out, _ = written
    rows = duckdb.connect().execute(f"DESCRIBE SELECT * FROM read_parquet('{out / (table + '.parquet')}')").fetchall()
    want = {"string": "VARCHAR", "int64": "BIGINT", "int32": "INTEGER", "bool": "BOOLEAN",
            "timestamp": "TIMESTAMP WITH TIME ZONE"}
    assert [(r[0], r[1]) for r in rows] == [(n, want[k]) for n, k, _ in TABLES[table]]


@pytest.mark.parametrize("table", TABLES)
def test_polars_schema_and_types(written, table):
    out, _ = written
    got = pl.read_parquet_schema(out / f"{table}.parquet")
    assert list(got.items()) == [(n, readers.POLARS_TYPES[k]) for n, k, _ in TABLES[table]]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("table", TABLES)
def test_every_value_matches_ground_truth(written, table, reader):
    out, truth = written
    got = READERS[reader](out / f"{table}.parquet", TABLES[table])
    want = truth[table]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{reader} {table} row {i}"


@pytest.mark.parametrize("table", TABLES)
def test_several_row_groups_with_exact_statistics(written, table):
    out, truth = written
    rows = truth[table]
    md = pq.ParquetFile(out / f"{table}.parquet").metadata
    assert md.num_rows == len(rows)
    assert md.num_row_groups == math.ceil(len(rows) / ROW_GROUP_ROWS)
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        part = rows[g * ROW_GROUP_ROWS:(g + 1) * ROW_GROUP_ROWS]
        assert rg.num_rows == len(part)
        for c, (name, kind, _) in enumerate(TABLES[table]):
            st = rg.column(c).statistics
            assert st is not None, name
            values = [r[name] for r in part if r[name] is not None]
            assert st.null_count == len(part) - len(values), name
            if not values:
                assert not st.has_min_max, name
                continue
            if kind == "string":
                longest = max(max(values, key=lambda s: s.encode()), min(values, key=lambda s: s.encode()),
                              key=lambda s: len(s.encode()))
                if len(longest.encode()) > 1024:
                    assert not st.has_min_max, name  # too long to store exactly: omitted
                    continue
                assert st.has_min_max, name
                assert st.min.encode() == min(v.encode() for v in values), name
                assert st.max.encode() == max(v.encode() for v in values), name
            else:
                assert st.has_min_max, name
                lo, hi = st.min, st.max
                if kind == "timestamp":
                    lo, hi = _epoch_ms(lo), _epoch_ms(hi)
                assert (lo, hi) == (min(values), max(values)), name


def test_file_metadata_names_the_run(written):
    out, _ = written
    f = pq.ParquetFile(out / "receipts.parquet")
    assert f.metadata.created_by == "receiptflow version 0.1.0 (build none)"
    kv = f.schema_arrow.metadata
    assert kv[b"receiptflow.version"] == b"0.1.0"
    assert kv[b"receiptflow.inputs"] == '["in/a.ndjson","b,c.zst"]'.encode()
    assert kv[b"receiptflow.trust_anchors_sha256"] == \
        b'["B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024"]'
    duck = dict(duckdb.connect().execute(
        f"SELECT decode(key), decode(value) FROM parquet_kv_metadata('{out / 'receipts.parquet'}')").fetchall())
    assert duck["receiptflow.version"] == "0.1.0"


def test_dictionary_and_zstd_are_used(written):
    out, _ = written
    md = pq.ParquetFile(out / "transactions.parquet").metadata
    names = [n for n, _, _ in tables.TRANSACTIONS]
    col = md.row_group(0).column(names.index("bundle_id"))
    assert col.compression == "ZSTD"
    assert col.has_dictionary_page
    assert "RLE_DICTIONARY" in col.encodings
    plain = md.row_group(0).column(names.index("transaction_id"))
    assert not plain.has_dictionary_page


def _epoch_ms(dt):
    return (dt - EPOCH) // datetime.timedelta(milliseconds=1)


def _duck(con, sql):
    return [r[0] for r in con.execute(sql).fetchall()]


@pytest.mark.parametrize("cut", [1262304000000, 1500000000000, 1700000000123])
def test_duckdb_timestamp_pushdown_matches_ground_truth(written, cut):
    out, truth = written
    path = out / "receipts.parquet"
    con = duckdb.connect()
    where = f"receipt_creation_date > make_timestamptz({cut} * 1000)"
    got = _duck(con, f"SELECT line FROM read_parquet('{path}') WHERE {where}")
    full = _duck(con, f"SELECT line FROM (SELECT * FROM read_parquet('{path}') LIMIT 100000000) WHERE {where}")
    want = [r["line"] for r in truth["receipts"] if r["receipt_creation_date"] is not None
            and r["receipt_creation_date"] > cut]
    assert got == want
    assert full == want


@pytest.mark.parametrize("column,value", [("bundle_id", "com.whitepaek.apps"), ("source", "b,comma.ndjson.zst"),
                                          ("receipt_sha256", None), ("error_code", "bad_signature")])
def test_duckdb_string_pushdown_matches_ground_truth(written, column, value):
    out, truth = written
    rows = truth["receipts"]
    if value is None:  # a PLAIN column: pick a real value from the middle of the file
        value = next(r[column] for r in rows[2500:] if r[column] is not None)
    path = out / "receipts.parquet"
    con = duckdb.connect()
    got = _duck(con, f"SELECT line FROM read_parquet('{path}') WHERE {column} = ?".replace("?", f"'{value}'"))
    want = [r["line"] for r in rows if r[column] == value]
    assert got == want and want
    got_range = _duck(con, f"SELECT count(*) FROM read_parquet('{path}') WHERE {column} >= '{value}'")
    assert got_range == [sum(1 for r in rows if r[column] is not None and r[column].encode() >= value.encode())]


def test_polars_predicate_pushdown_matches_ground_truth(written):
    out, truth = written
    cut = 1600000000000
    got = (pl.scan_parquet(out / "transactions.parquet")
           .filter(pl.col("purchase_date").dt.epoch("ms") > cut)
           .filter(pl.col("product_id") == "pro.yearly")
           .select("line").collect()["line"].to_list())
    want = [r["line"] for r in truth["transactions"]
            if r["purchase_date"] is not None and r["purchase_date"] > cut and r["product_id"] == "pro.yearly"]
    assert got == want and want


@pytest.mark.parametrize("reader", READERS)
def test_empty_input_gives_valid_files_with_zero_rows(receiptflow, tmp_path, reader):
    out = write_tables(receiptflow, tmp_path, "parquet", [], [])
    # The renewals table (JWS renewal infos only) is written too, empty here.
    assert pq.read_table(out / "renewals.parquet").num_rows == 0
    for table, schema in TABLES.items():
        assert READERS[reader](out / f"{table}.parquet", schema) == []
        assert pq.read_schema(out / f"{table}.parquet").remove_metadata() == _expected_arrow_schema(schema)
    assert sorted(p.name for p in out.iterdir()) == ["receipts.parquet", "renewals.parquet", "transactions.parquet"]


def test_no_temporary_files_are_left(written):
    out, _ = written
    assert sorted(p.name for p in out.iterdir()) == ["receipts.parquet", "renewals.parquet", "transactions.parquet"]
