"""Reads a written table back with pyarrow, DuckDB or polars into plain row dicts (timestamps as epoch ms)."""

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

ARROW_TYPES = {
    "string": pa.string(), "int64": pa.int64(), "int32": pa.int32(), "bool": pa.bool_(),
    "timestamp": pa.timestamp("ms", tz="UTC"),
}
DUCK_TYPES = {"string": "VARCHAR", "int64": "BIGINT", "int32": "INTEGER", "bool": "BOOLEAN",
              "timestamp": "TIMESTAMPTZ"}
POLARS_TYPES = {"string": pl.String, "int64": pl.Int64, "int32": pl.Int32, "bool": pl.Boolean,
                "timestamp": pl.Datetime("ms", "UTC")}


def _arrow_rows(table, schema):
    cols = []
    for name, kind, _ in schema:
        c = table.column(name)
        if kind == "timestamp":
            c = c.cast(pa.int64())
        cols.append(c.to_pylist())
    return [dict(zip([s[0] for s in schema], vals)) for vals in zip(*cols)]


def duck_select_list(schema):
    return ", ".join(f'epoch_ms("{n}") AS "{n}"' if k == "timestamp" else f'"{n}"' for n, k, _ in schema)


def _polars_rows(df, schema):
    df = df.with_columns([pl.col(n).dt.epoch("ms").alias(n) for n, k, _ in schema if k == "timestamp"])
    return df.select([n for n, _, _ in schema]).to_dicts()


def parquet_pyarrow(path, schema):
    return _arrow_rows(pq.read_table(path), schema)


def parquet_duckdb(path, schema):
    con = duckdb.connect()
    cur = con.execute(f"SELECT {duck_select_list(schema)} FROM read_parquet('{path}')")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def parquet_polars(path, schema):
    return _polars_rows(pl.read_parquet(path), schema)


def csv_pyarrow(path, schema):
    opts = pacsv.ConvertOptions(
        column_types={n: ARROW_TYPES[k] for n, k, _ in schema}, strings_can_be_null=True,
        quoted_strings_can_be_null=False, null_values=[""], true_values=["true"], false_values=["false"])
    table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(newlines_in_values=True), convert_options=opts)
    return _arrow_rows(table, schema)


def csv_duckdb(path, schema):
    con = duckdb.connect()
    cols = "{" + ", ".join(f"'{n}': '{DUCK_TYPES[k]}'" for n, k, _ in schema) + "}"
    cur = con.execute(
        f"SELECT {duck_select_list(schema)} FROM read_csv('{path}', header=true, columns={cols}, "
        f"quote='\"', escape='\"', allow_quoted_nulls=false, strict_mode=true, new_line='\\n')")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def csv_polars(path, schema):
    df = pl.read_csv(path, schema={n: (pl.String if k == "timestamp" else POLARS_TYPES[k]) for n, k, _ in schema})
    df = df.with_columns([
        pl.col(n).str.to_datetime("%Y-%m-%dT%H:%M:%S%.3fZ", time_unit="ms", time_zone="UTC").alias(n)
        for n, k, _ in schema if k == "timestamp"])
    return _polars_rows(df, schema)
