"""CSV written by receiptflow, read back by pyarrow, DuckDB and polars and compared with the ground truth."""

import csv
import io
import subprocess

import pytest

import readers
import tables
from conftest import write_tables

READERS = {"pyarrow": readers.csv_pyarrow, "duckdb": readers.csv_duckdb, "polars": readers.csv_polars}
TABLES = {"receipts": tables.RECEIPTS, "transactions": tables.TRANSACTIONS}


# contract.md, Formats: a string cell beginning with one of these is written with a leading apostrophe.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _neutralized(v):
    return "'" + v if isinstance(v, str) and v.startswith(FORMULA_START) else v


def _neutralized_rows(rows, schema):
    """The rows as a CSV written without --csv-raw holds them: string cells that begin like a formula get the
    apostrophe, other values are unchanged."""
    strings = [n for n, k, _ in schema if k == "string"]
    return [{**r, **{n: _neutralized(r[n]) for n in strings}} for r in rows]


@pytest.fixture(scope="module")
def written(receiptflow, dataset, tmp_path_factory):
    receipts, transactions = dataset
    out = write_tables(receiptflow, tmp_path_factory.mktemp("csv"), "csv", receipts, transactions,
                       ["--batch-rows", "777"])
    return out, {"receipts": receipts, "transactions": transactions}


@pytest.fixture(scope="module")
def written_raw(receiptflow, dataset, tmp_path_factory):
    receipts, transactions = dataset
    out = write_tables(receiptflow, tmp_path_factory.mktemp("csv-raw"), "csv", receipts, transactions,
                       ["--batch-rows", "777", "--csv-raw"])
    return out, {"receipts": receipts, "transactions": transactions}


def _text(v, kind, raw=False):
    """The field text contract.md prescribes, before quoting."""
    if v is None:
        return None
    if kind == "bool":
        return "true" if v else "false"
    if kind == "timestamp":
        import datetime
        dt = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=v)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)
    if kind == "string" and not raw:
        return _neutralized(v)
    return str(v)


def test_the_dataset_holds_cells_a_spreadsheet_would_run(dataset):
    receipts, _ = dataset
    strings = [n for n, k, _ in tables.RECEIPTS if k == "string"]
    starts = {r[n][0] for r in receipts for n in strings if isinstance(r[n], str) and r[n][:1] in FORMULA_START}
    assert set(FORMULA_START) <= starts


@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("table", TABLES)
def test_bytes_follow_rfc4180_and_the_contract(written, written_raw, table, raw):
    out, truth = written_raw if raw else written
    data = (out / f"{table}.csv").read_bytes()
    schema = TABLES[table]
    lines = []
    lines.append(",".join(n for n, _, _ in schema))
    for row in truth[table]:
        fields = []
        for n, k, _ in schema:
            t = _text(row[n], k, raw)
            if t is None:
                fields.append("")
            elif t == "" or any(c in t for c in ',"\r\n'):
                fields.append('"' + t.replace('"', '""') + '"')
            else:
                fields.append(t)
        lines.append(",".join(fields))
    assert data.decode("utf-8") == "\n".join(lines) + "\n"


@pytest.mark.parametrize("table", TABLES)
def test_python_csv_module_reads_every_field(written, table):
    out, truth = written
    with open(out / f"{table}.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    schema = TABLES[table]
    assert rows[0] == [n for n, _, _ in schema]
    assert len(rows) == len(truth[table]) + 1
    for got, want in zip(rows[1:], truth[table]):
        assert got == [_text(want[n], k) or "" for n, k, _ in schema]


@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("table", TABLES)
def test_every_value_matches_ground_truth(written, written_raw, table, reader, raw):
    out, truth = written_raw if raw else written
    got = READERS[reader](out / f"{table}.csv", TABLES[table])
    want = truth[table] if raw else _neutralized_rows(truth[table], TABLES[table])
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{reader} {table} row {i}"


@pytest.mark.parametrize("reader", READERS)
def test_empty_input_gives_header_only_files(receiptflow, tmp_path, reader):
    out = write_tables(receiptflow, tmp_path, "csv", [], [])
    for table, schema in TABLES.items():
        assert (out / f"{table}.csv").read_text() == ",".join(n for n, _, _ in schema) + "\n"
        assert READERS[reader](out / f"{table}.csv", schema) == []


def test_stream_to_stdout_equals_the_receipts_file(receiptflow, dataset, written, tmp_path):
    out, _ = written
    receipts, transactions = dataset
    streamed = write_tables(receiptflow, tmp_path, "csv", receipts, transactions, ["--batch-rows", "500"], out="-")
    assert streamed == (out / "receipts.csv").read_bytes()
