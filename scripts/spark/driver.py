#!/usr/bin/env python3
"""Run `receiptflow export` inside Apache Spark tasks, exactly once, and write its tables with Spark's writer.

    spark-submit --files /path/to/receiptflow[,root.pem] scripts/spark/driver.py \\
        [driver options] INPUT OUTPUT [receiptflow export options]

INPUT is a comma-separated list of files, directories or globs on any filesystem Spark can list (file:, hdfs:,
s3:/s3a:, gs:). Each file keeps its identity: it is read by one receiptflow process from its first byte to its
last, so `line` is the line number in that file and `source` is the path as given (files found under a directory
are DIR/name; files matched by a glob get their full path). OUTPUT receives

    OUTPUT/receipts/part-*.parquet      + _SUCCESS   one row per input record (contract.md, "receipts")
    OUTPUT/transactions/part-*.parquet  + _SUCCESS   one row per in-app purchase of a valid receipt or JWS
    OUTPUT/renewals/part-*.parquet      + _SUCCESS   one row per valid JWS renewal info
    OUTPUT/purchases/part-00000.parquet     + _SUCCESS   one row per purchase, merged across receipts (history)
    OUTPUT/subscriptions/part-00000.parquet + _SUCCESS   one row per auto-renewable subscription, with its state
    OUTPUT/NAME/part-00000.parquet          + _SUCCESS   every other history table receiptflow writes
    OUTPUT/summary.json                                   counts and the as-of time, written last

The history tables are written by receiptflow's own engine, not restated here: each task's receiptflow keeps the
history state of its file, the task hands it back after the file's rows (extra rows of the same Arrow batches,
HISTORY_COLUMNS), and the driver runs one `receiptflow merge` over the states in input order, which numbers each
file's input after the files before it: a receipt's position is (index of its file in the input order above,
line, and for a JWS its jws_index), so the tables equal those of a single-machine `receiptflow export` of the same
files in the same order. The driver copies every table the merge wrote to OUTPUT/NAME/ through Hadoop's
filesystem.

How a task works (`run_file`): the input file is streamed into `receiptflow export - --stdin-name SOURCE --out
SCRATCH --format parquet` on standard input; the wrapper passes the executor's environment, drains standard
error, and raises when receiptflow exits non-zero or dies from a signal, so that Spark retries the task. The three Parquet tables
receiptflow wrote into the task's scratch directory are read back with pyarrow and handed to Spark as Arrow batches
(one row per record with its transactions and renewal infos nested), which Spark's Parquet writer commits per task:
a failed or retried attempt leaves no rows behind, and a table folder is complete when its `_SUCCESS` marker is
there.

Why not `--out -`: a stream carries one table, and neither stream form holds the tables losslessly (CSV cannot
tell an empty string from null; the verifyReceipt NDJSON omits `verified`, the hashes, `product_type`, zero
`web_order_line_item_id`...). Receiptflow's own Parquet holds every table with the contract's exact types, from one
pass over the input.

Driver options (before INPUT):
  --task-bytes N   pack consecutive input files into one task up to N bytes of input (default 128 MiB); a larger
                   file is a task of its own. Files are never split: their line numbers must stay whole.
  --files-per-task N
                   at most N files in one task (default: no limit but --task-bytes).
  --binary PATH    receiptflow on the executors (default: the file shipped with `--files .../receiptflow`);
                   use it when the binary is part of the container image.
  --overwrite      replace OUTPUT when it exists (default: refuse).

`--as-of DATE` (RFC 3339) and `--no-history` after OUTPUT are the driver's: the time at which subscription
states are computed, given to the merge (default: the greatest receipt_creation_date of a contributing receipt),
and skipping the history tables (given to every task: no state is kept and no merge runs).

Receiptflow options after OUTPUT are passed through (`--trust-anchor`, `--environment`, `--bundle-id`,
`--no-verify`, `--field`, `--id-field`, `--threads`); `--out`, `--format`, input paths and progress options are
the driver's. A `--trust-anchor NAME` that does not exist on the executor is looked up among the files shipped
with `--files`. `--threads` defaults to `spark.task.cpus`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

# The contract's tables (docs/contract.md, "Output files"): (name, kind, nullable), in column order.
# Kinds: string, int64, int32, bool, timestamp (milliseconds, UTC).
RECEIPTS_COLUMNS = [
    ("source", "string", False),
    ("line", "int64", False),
    ("record_id", "string", True),
    ("status", "int32", False),
    ("error_code", "string", True),
    ("error_detail", "string", True),
    ("verified", "bool", False),
    ("receipt_type", "string", True),
    ("bundle_id", "string", True),
    ("application_version", "string", True),
    ("original_application_version", "string", True),
    ("app_item_id", "int64", True),
    ("download_id", "int64", True),
    ("version_external_identifier", "int64", True),
    ("receipt_creation_date", "timestamp", True),
    ("original_purchase_date", "timestamp", True),
    ("expiration_date", "timestamp", True),
    ("in_app_count", "int32", True),
    ("digest_algorithm", "string", True),
    ("signer_sha256", "string", True),
    ("receipt_sha256", "string", True),
    ("device_hash_matches", "bool", True),
    ("record_kind", "string", False),
    ("jws_index", "int32", True),
    ("user_id", "string", True),
]

TRANSACTIONS_COLUMNS = [
    ("source", "string", False),
    ("line", "int64", False),
    ("record_id", "string", True),
    ("bundle_id", "string", False),
    ("receipt_type", "string", False),
    ("quantity", "int32", True),
    ("product_id", "string", False),
    ("transaction_id", "string", False),
    ("original_transaction_id", "string", True),
    ("purchase_date", "timestamp", True),
    ("original_purchase_date", "timestamp", True),
    ("expires_date", "timestamp", True),
    ("cancellation_date", "timestamp", True),
    ("web_order_line_item_id", "int64", True),
    ("is_trial_period", "bool", True),
    ("is_in_intro_offer_period", "bool", True),
    ("promotional_offer_id", "string", True),
    ("product_type", "int32", True),
    ("cancellation_reason", "int32", True),
    ("type", "string", True),
    ("in_app_ownership_type", "string", True),
    ("revocation_date", "timestamp", True),
    ("revocation_reason", "int32", True),
    ("is_upgraded", "bool", True),
    ("offer_type", "int32", True),
    ("offer_identifier", "string", True),
    ("storefront", "string", True),
    ("transaction_reason", "string", True),
    ("price", "int64", True),
    ("currency", "string", True),
    ("app_account_token", "string", True),
    ("subscription_group_identifier", "string", True),
    ("signed_date", "timestamp", True),
    ("environment", "string", True),
    ("jws_index", "int32", True),
    ("offer_discount_type", "string", True),
]

RENEWALS_COLUMNS = [
    ("source", "string", False),
    ("line", "int64", False),
    ("record_id", "string", True),
    ("jws_index", "int32", False),
    ("environment", "string", True),
    ("original_transaction_id", "string", True),
    ("product_id", "string", True),
    ("auto_renew_product_id", "string", True),
    ("auto_renew_status", "int32", True),
    ("expiration_intent", "int32", True),
    ("is_in_billing_retry_period", "bool", True),
    ("grace_period_expires_date", "timestamp", True),
    ("price_increase_status", "int32", True),
    ("offer_type", "int32", True),
    ("offer_identifier", "string", True),
    ("recent_subscription_start_date", "timestamp", True),
    ("renewal_date", "timestamp", True),
    ("renewal_price", "int64", True),
    ("currency", "string", True),
    ("signed_date", "timestamp", True),
]

# The nested columns that carry a record's transactions and renewal infos between the task and the table writes.
NESTED = "transactions"
NESTED_RENEWALS = "renewals"
# A record is (line, jws_index): a line of JWS has a receipts row per JWS. Its rows in the three tables are
# matched by one int64 key, line * KEY_SPAN + jws_index + 1 (0 for a receipt, whose jws_index is null).
KEY_SPAN = 1 << 24

# The extra columns of the nested schema that carry each file's history state from its task to the driver: a
# file's state rows have `history_file` set (the file's index in input order), `history_piece` 0 for the
# summary.json receiptflow wrote and 1, 2, ... for consecutive pieces of its history state, `history_bytes` the
# bytes. Record rows have the three null. Pieces keep any one value far below Spark's and Arrow's size limits.
HISTORY_COLUMNS = [("history_file", "int32", True), ("history_piece", "int32", True),
                   ("history_bytes", "binary", True)]
STATE_PIECE_BYTES = 8 << 20
# The history state receiptflow keeps in its output folder (docs/incremental.md).
STATE_FILE = ".receiptflow-state"
# The record tables; every other table receiptflow's merge writes is a history table.
RECORD_TABLES = ("receipts", "transactions", "renewals")
# The history tables `receiptflow merge` writes; with --overwrite, an earlier run's are removed before this run
# writes its own (or none, with --no-history).
HISTORY_TABLES = ("purchases", "subscriptions", "events", "daily")
# At most this many task states in one `receiptflow merge`; more are merged in consecutive groups first (a merged
# folder is a run like any other, so merging groups in order gives the same chain).
MERGE_FAN_IN = 256

DEFAULT_TASK_BYTES = 128 << 20
# Options the driver sets itself; passing them would change what a task writes or where.
RESERVED_OPTIONS = {"--out", "--format", "--progress"}
# receiptflow export options that take no value (everything else starting with -- takes one).
FLAG_OPTIONS = {"--no-verify", "--quiet", "--progress"}
STDERR_TAIL_BYTES = 64 << 10
CHUNK = 1 << 20


_UTC = __import__("datetime").timezone.utc
_EPOCH = __import__("datetime").datetime(1970, 1, 1, tzinfo=_UTC)


def format_as_of(micros):
    """`2019-08-08T05:43:20.000Z`, as receiptflow writes timestamps."""
    import datetime

    t = _EPOCH + datetime.timedelta(microseconds=micros)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class UsageError(Exception):
    """A bad command line: printed with the usage, exit status 2."""


class TaskFailure(RuntimeError):
    """Receiptflow failed on one input file. Raised inside a task so that Spark retries it."""


# MARK: - Command line (driver side)


class Config:
    """What every task needs to know, pickled into the tasks."""

    def __init__(self, inputs, output, passthrough, task_bytes, files_per_task, binary, overwrite, as_of=None,
                 history=True):
        self.inputs = inputs
        self.as_of = as_of
        self.history = history
        self.output = output
        self.passthrough = passthrough
        self.task_bytes = task_bytes
        self.files_per_task = files_per_task
        self.binary = binary
        self.overwrite = overwrite


def parse_command_line(argv):
    """Splits `[driver options] INPUT OUTPUT [receiptflow options]`."""
    task_bytes, files_per_task, binary, overwrite = DEFAULT_TASK_BYTES, None, None, False
    i = 0
    while i < len(argv) and argv[i].startswith("--"):
        name, _, value = argv[i].partition("=")
        if name == "--overwrite":
            overwrite = True
        elif name in ("--task-bytes", "--files-per-task", "--binary"):
            if not value:
                i += 1
                if i >= len(argv):
                    raise UsageError(f"{name} needs a value")
                value = argv[i]
            if name == "--binary":
                binary = value
            else:
                try:
                    n = int(value)
                except ValueError:
                    raise UsageError(f"{name} takes a whole number, got '{value}'") from None
                if n < 1:
                    raise UsageError(f"{name} must be at least 1")
                if name == "--task-bytes":
                    task_bytes = n
                else:
                    files_per_task = n
        elif name in ("-h", "--help"):
            raise UsageError("")
        else:
            raise UsageError(f"unknown driver option {name} (receiptflow options go after INPUT OUTPUT)")
        i += 1
    if len(argv) - i < 2:
        raise UsageError("INPUT and OUTPUT are required")
    inputs = [p for p in argv[i].split(",") if p]
    if not inputs:
        raise UsageError("INPUT names no path")
    output = argv[i + 1]
    passthrough, as_of, history = history_options(argv[i + 2 :])
    passthrough = check_passthrough(passthrough)
    return Config(inputs, output, passthrough, task_bytes, files_per_task, binary, overwrite, as_of, history)


def history_options(args):
    """Takes `--as-of DATE` and `--no-history` out of the receiptflow options: the history tables are computed
    here, over every file, not by each task's receiptflow. Returns (the other options, as-of datetime or None,
    whether to write the history tables)."""
    rest, as_of, history = [], None, True
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--no-history":
            history = False
        elif a == "--as-of" or a.startswith("--as-of="):
            if a == "--as-of":
                i += 1
                if i >= len(args):
                    raise UsageError("--as-of needs a value")
                value = args[i]
            else:
                value = a.partition("=")[2]
            as_of = parse_as_of(value)
        else:
            rest.append(a)
        i += 1
    return rest, as_of, history


def parse_as_of(text):
    """An RFC 3339 time (`2024-01-31T00:00:00Z`, an offset, fractional seconds) as an aware UTC datetime."""
    import datetime

    try:
        t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        t = None
    if t is None or t.tzinfo is None or "T" not in text.upper():
        raise UsageError(f"--as-of takes an RFC 3339 time such as 2024-01-31T00:00:00Z, got '{text}'")
    return t.astimezone(datetime.timezone.utc)


def check_passthrough(args):
    """Rejects receiptflow options that the driver owns, and stray positionals (inputs go in INPUT)."""
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--"):
            raise UsageError(f"unexpected argument '{a}': input paths go in INPUT (comma-separated)")
        name = a.partition("=")[0]
        if name in RESERVED_OPTIONS:
            raise UsageError(f"{name} is set by the driver; the output goes to OUTPUT as Parquet")
        if "=" not in a and name not in FLAG_OPTIONS:
            i += 1
        i += 1
    return list(args)


def task_arguments(passthrough, task_cpus, history=True):
    """Receiptflow's export arguments for one task: quiet, as many threads as Spark gave the task, and
    `--no-history` when the driver writes no history tables (otherwise each task keeps its file's history state
    for the driver's merge)."""
    args = [a for a in passthrough if a != "--quiet"]
    if not any(a == "--threads" or a.startswith("--threads=") for a in args):
        args += ["--threads", str(task_cpus)]
    return args + ([] if history else ["--no-history"]) + ["--quiet"]


# MARK: - Inputs (driver side)


def has_glob(path):
    return any(c in path for c in "*?[{")


def list_inputs(spark, inputs):
    """Every input file in order, as dicts (source, uri, local, size), listed with Spark's Hadoop filesystems."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    files = []
    for arg in inputs:
        path = jvm.org.apache.hadoop.fs.Path(arg)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path)
        if not statuses:
            raise UsageError(f"input {arg} does not exist (or the glob matches nothing)")
        schemeless = urllib.parse.urlparse(arg).scheme in ("", None) or len(urllib.parse.urlparse(arg).scheme) == 1
        found = []
        for st in sorted(statuses, key=lambda s: s.getPath().toString()):
            if st.isDirectory():
                under = []
                it = fs.listFiles(st.getPath(), True)
                while it.hasNext():
                    f = it.next()
                    rel = relative_name(st.getPath().toString(), f.getPath().toString())
                    if not hidden(rel):
                        under.append((rel, f))
                base = arg if not has_glob(arg) else display_path(st, schemeless)
                for rel, f in sorted(under, key=lambda x: x[0]):
                    found.append((base.rstrip("/") + "/" + rel, f))
            elif has_glob(arg):
                found.append((display_path(st, schemeless), st))
            else:
                found.append((arg, st))
        for source, st in found:
            p = st.getPath()
            local = p.toUri().getPath() if p.toUri().getScheme() == "file" else None
            files.append({"source": source, "uri": p.toString(), "local": local, "size": st.getLen()})
    return files


def relative_name(base, full):
    base = base.rstrip("/") + "/"
    return full[len(base) :] if full.startswith(base) else full.rsplit("/", 1)[-1]


def hidden(rel):
    """Spark and Hadoop skip names starting with `_` or `.` (markers, checksums, temporary files)."""
    return any(part.startswith(("_", ".")) for part in rel.split("/"))


def display_path(status, schemeless):
    p = status.getPath()
    return p.toUri().getPath() if schemeless else p.toString()


def pack_tasks(files, task_bytes, files_per_task=None):
    """Consecutive files into tasks of at most `task_bytes` (a larger file alone) and at most `files_per_task` files.
    Order is kept: task k holds files before task k+1's, so part files in task order hold rows in input order."""
    tasks, current, size = [], [], 0
    for f in files:
        full = files_per_task is not None and len(current) >= files_per_task
        if current and (full or size + f["size"] > task_bytes):
            tasks.append(current)
            current, size = [], 0
        current.append(f)
        size += f["size"]
    if current:
        tasks.append(current)
    return tasks


# MARK: - One input file through receiptflow (executor side)


def open_input(f):
    """A binary stream of the input file: the local file, or pyarrow's filesystem for other schemes."""
    if f["local"] is not None:
        return open(f["local"], "rb")
    import pyarrow.fs as pafs

    uri = f["uri"]
    scheme = urllib.parse.urlparse(uri).scheme
    if scheme in ("s3a", "s3n"):
        # Hadoop's S3 connectors name the same objects as pyarrow's s3: scheme.
        uri = "s3" + uri[len(scheme) :]
    fs, path = pafs.FileSystem.from_uri(uri)
    return fs.open_input_stream(path)


def resolve_binary(configured):
    """The receiptflow executable on this executor: `--binary`, or the copy shipped with `--files`."""
    if configured:
        path = configured
    else:
        from pyspark import SparkFiles

        path = SparkFiles.get("receiptflow")
    if not os.path.isfile(path):
        raise TaskFailure(
            f"receiptflow binary not found at {path}: ship it with `spark-submit --files /path/to/receiptflow` "
            f"or give its path in the image with --binary"
        )
    if not os.access(path, os.X_OK):
        # Files shipped with --files may arrive without the executable bit.
        try:
            os.chmod(path, 0o755)
        except OSError as e:
            raise TaskFailure(f"receiptflow at {path} is not executable and cannot be made so: {e}") from None
    return path


def resolve_shipped(args):
    """A `--trust-anchor NAME` that is not on the executor's disk is looked up among the `--files` shipped files."""
    out = list(args)
    for i, a in enumerate(out):
        if a == "--trust-anchor" and i + 1 < len(out):
            out[i + 1] = shipped_path(out[i + 1])
        elif a.startswith("--trust-anchor="):
            out[i] = "--trust-anchor=" + shipped_path(a.partition("=")[2])
    return out


def shipped_path(path):
    # Absolute, because receiptflow runs in the task's scratch directory, not in the worker's.
    if os.path.exists(path):
        return os.path.abspath(path)
    try:
        from pyspark import SparkFiles

        candidate = SparkFiles.get(os.path.basename(path))
    except Exception:
        return path
    return os.path.abspath(candidate) if os.path.exists(candidate) else path


def scratch_root():
    """The executor's local directory (Spark's, else the system temporary directory)."""
    for d in os.environ.get("SPARK_LOCAL_DIRS", "").split(","):
        if d and os.path.isdir(d):
            return d
    return None


class _Drain(threading.Thread):
    """Reads a pipe to its end so the child never blocks on a full pipe; keeps the last bytes for the error."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.pipe = pipe
        self.tail = bytearray()

    def run(self):
        while True:
            chunk = self.pipe.read(65536)
            if not chunk:
                break
            self.tail += chunk
            if len(self.tail) > STDERR_TAIL_BYTES:
                del self.tail[: len(self.tail) - STDERR_TAIL_BYTES]
        self.pipe.close()

    def text(self):
        return self.tail.decode("utf-8", "replace").strip()


def describe_exit(code):
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with status {code}"


def run_receiptflow(binary, args, f, scratch):
    """Streams input file `f` into `receiptflow export -` writing Parquet into `scratch/out`; raises TaskFailure on
    any failure (non-zero exit, signal, missing output). Returns the output directory."""
    out = os.path.join(scratch, "out")
    # `--stdin-name`: the history state names the input as the driver does, as the tables' `source` is.
    argv = [binary, "export", "-", "--stdin-name", f["source"], "--out", out, "--format", "parquet"] + args
    env = dict(os.environ)
    # Lets a wrapper or a log line name the file being processed (receiptflow itself sees `-`).
    env["RECEIPTFLOW_SOURCE"] = f["source"]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=scratch
    )
    drains = [_Drain(proc.stdout), _Drain(proc.stderr)]
    for d in drains:
        d.start()
    read_error = None
    try:
        with open_input(f) as src:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                proc.stdin.write(chunk)
    except BrokenPipeError:
        pass  # receiptflow stopped reading: its exit status says why.
    except OSError as e:
        read_error = e
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
    if read_error is not None:
        proc.kill()
    code = proc.wait()
    for d in drains:
        d.join()
    stdout, stderr = drains[0].text(), drains[1].text()
    if read_error is not None:
        raise TaskFailure(f"cannot read input {f['uri']}: {read_error}")
    if code != 0:
        detail = stderr or "(nothing on standard error)"
        raise TaskFailure(f"receiptflow {describe_exit(code)} on {f['source']}: {detail}\ncommand: {argv}")
    if stdout:
        raise TaskFailure(f"receiptflow wrote to standard output with --out DIR on {f['source']}: {stdout[:500]}")
    return out


# MARK: - Receiptflow's tables to Arrow batches for Spark (executor side)


def arrow_type(kind):
    import pyarrow as pa

    return {
        "string": pa.string(),
        "int64": pa.int64(),
        "int32": pa.int32(),
        "bool": pa.bool_(),
        "binary": pa.binary(),
        # Spark's Arrow bridge carries timestamps in microseconds; Parquet output goes back to milliseconds.
        "timestamp": pa.timestamp("us", tz="UTC"),
    }[kind]


def arrow_fields(columns):
    import pyarrow as pa

    return [pa.field(n, arrow_type(k), nullable=nullable) for n, k, nullable in columns]


def nested_arrow_schema():
    import pyarrow as pa

    def nested(name, columns):
        return pa.field(name, pa.list_(pa.field("element", pa.struct(arrow_fields(columns)), False)), False)

    return pa.schema(
        arrow_fields(RECEIPTS_COLUMNS)
        + [nested(NESTED, TRANSACTIONS_COLUMNS), nested(NESTED_RENEWALS, RENEWALS_COLUMNS)]
        + arrow_fields(HISTORY_COLUMNS)
    )


def read_table_parts(out, name):
    """Receiptflow's `name.parquet`, or the `name/` folder of a run written in parts, as one pyarrow ParquetFile
    sequence (in part order)."""
    import pyarrow.parquet as pq

    single = os.path.join(out, name + ".parquet")
    if os.path.isfile(single):
        return [pq.ParquetFile(single)]
    folder = os.path.join(out, name)
    if os.path.isdir(folder):
        parts = sorted(p for p in os.listdir(folder) if p.endswith(".parquet") and not hidden(p))
        return [pq.ParquetFile(os.path.join(folder, p)) for p in parts]
    raise TaskFailure(f"receiptflow exited 0 but wrote no {name} table into {out}")


def check_columns(parquet_file, columns, name):
    got = parquet_file.schema_arrow.names
    want = [c[0] for c in columns]
    if got != want:
        raise TaskFailure(
            f"receiptflow's {name} table has columns {got}, the driver expects {want}: "
            f"the binary and driver.py come from different versions"
        )


def batches_of(files, columns, name, batch_rows):
    for pf in files:
        check_columns(pf, columns, name)
        yield from pf.iter_batches(batch_size=batch_rows)


def conform(batch, columns, source):
    """A receiptflow batch with `source` set to the original input name and types as Spark's Arrow bridge takes
    them."""
    import pyarrow as pa

    arrays = []
    for (n, kind, _), col in zip(columns, batch.columns):
        if n == "source":
            col = pa.array([source] * batch.num_rows, pa.string())
        else:
            col = col.cast(arrow_type(kind))
        arrays.append(col)
    return arrays


def record_keys(table, columns, source):
    """The record key (line, jws_index) of every row of `table` (a pyarrow Table or RecordBatch of `columns`), as
    one int64 per row: line * KEY_SPAN + jws_index + 1, or line * KEY_SPAN for a receipt."""
    import numpy as np

    names = [c[0] for c in columns]
    lines = np.asarray(table.column(names.index("line")).to_numpy(zero_copy_only=False), dtype=np.int64)
    index = table.column(names.index("jws_index"))
    index = np.asarray(index.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64) + 1
    if len(lines) and (index.max() >= KEY_SPAN or lines.min() < 0 or lines.max() >= (1 << 62) // KEY_SPAN):
        raise TaskFailure(f"receiptflow's rows of {source} have a line or jws_index beyond what the driver keys")
    return lines * KEY_SPAN + index


class _Children:
    """The rows of one child table (transactions or renewals), read in order alongside the receipts and handed out
    as one list per receipts row: the rows with the record's (line, jws_index)."""

    def __init__(self, out, name, columns, source, batch_rows):
        import numpy as np

        self.name, self.columns, self.source = name, columns, source
        self.batches = batches_of(read_table_parts(out, name), columns, name, batch_rows)
        # Rows read but not yet attached (a pa.Table in receiptflow's own types, None before the first batch) and
        # their keys.
        self.pending = None
        self.pending_keys = np.array([], dtype=np.int64)
        self.exhausted = False

    def _read_through(self, last):
        """Reads batches until the pending rows go past key `last` (or to the end)."""
        import numpy as np
        import pyarrow as pa

        while not self.exhausted and (len(self.pending_keys) == 0 or self.pending_keys[-1] <= last):
            nxt = next(self.batches, None)
            if nxt is None:
                self.exhausted = True
                break
            t = pa.Table.from_batches([nxt])
            self.pending = t if self.pending is None else pa.concat_tables([self.pending, t])
            self.pending_keys = np.concatenate([self.pending_keys, record_keys(nxt, self.columns, self.source)])

    def take(self, keys, item_type):
        """A list array: for each receipts row (keys strictly increasing), its child rows, in order."""
        import numpy as np
        import pyarrow as pa

        self._read_through(keys[-1])
        take = int(np.searchsorted(self.pending_keys, keys[-1], side="right"))
        if self.pending is None:
            mine = None
        else:
            mine, self.pending = self.pending.slice(0, take), self.pending.slice(take)
        mine_keys, self.pending_keys = self.pending_keys[:take], self.pending_keys[take:]
        starts = np.searchsorted(mine_keys, keys, side="left")
        ends = np.searchsorted(mine_keys, keys, side="right")
        # Every child row must land on exactly one receipts row of this batch, in order.
        if take and (starts[0] != 0 or ends[-1] != take or np.any(starts[1:] != ends[:-1])):
            raise TaskFailure(f"receiptflow's {self.name} of {self.source} do not follow its receipts' records")
        offsets = pa.array(np.append(starts, ends[-1]).astype(np.int32))
        batch = mine.combine_chunks().to_batches()[0] if take else _empty(self.columns)
        items = pa.StructArray.from_arrays(
            conform(batch, self.columns, self.source),
            fields=list(item_type.value_type),
        )
        return pa.ListArray.from_arrays(offsets, items, type=item_type)

    def leftover(self):
        return len(self.pending_keys) + sum(b.num_rows for b in self.batches)


def nested_batches(out, source, batch_rows=8192):
    """Yields Arrow batches of the nested schema: each receipts row with the transactions and the renewal infos of
    its record in two lists, all read in input order from receiptflow's output. A child row belongs to the
    receipts row of its (line, jws_index): unique within a source, increasing in every table."""
    import numpy as np
    import pyarrow as pa

    schema = nested_arrow_schema()
    receipts = batches_of(read_table_parts(out, "receipts"), RECEIPTS_COLUMNS, "receipts", batch_rows)
    children = [
        (_Children(out, "transactions", TRANSACTIONS_COLUMNS, source, batch_rows), schema.field(NESTED).type),
        (_Children(out, "renewals", RENEWALS_COLUMNS, source, batch_rows), schema.field(NESTED_RENEWALS).type),
    ]
    previous = None
    for rb in receipts:
        if rb.num_rows == 0:
            continue
        keys = record_keys(rb, RECEIPTS_COLUMNS, source)
        if np.any(np.diff(keys) <= 0) or (previous is not None and keys[0] <= previous):
            raise TaskFailure(f"receiptflow's receipts of {source} are not in (line, jws_index) order")
        previous = keys[-1]
        lists = [c.take(keys, item_type) for c, item_type in children]
        none = [pa.nulls(rb.num_rows, arrow_type(k)) for _, k, _ in HISTORY_COLUMNS]
        yield pa.RecordBatch.from_arrays(conform(rb, RECEIPTS_COLUMNS, source) + lists + none, schema=schema)
    for c, _ in children:
        leftover = c.leftover()
        if leftover:
            raise TaskFailure(f"receiptflow wrote {leftover} {c.name} of {source} after its last receipt")


def _empty(columns):
    import pyarrow as pa

    schema = pa.schema(arrow_fields(columns))
    return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)


def check_summary(out, rows_written, source):
    """Receiptflow's own count of records must equal the rows handed to Spark: a cheap end-to-end check."""
    path = os.path.join(out, "summary.json")
    try:
        with open(path) as fh:
            summary = json.load(fh)
    except (OSError, ValueError):
        return  # No summary to compare with; the row count was already checked against the lines.
    records = summary.get("records")
    if isinstance(records, int) and records != rows_written:
        raise TaskFailure(f"receiptflow counted {records} records in {source} but its table holds {rows_written}")


def state_batches(out, f):
    """The history state receiptflow kept for file `f` (its summary.json and `.receiptflow-state`), as rows of the
    nested schema with HISTORY_COLUMNS set: piece 0 the summary, then the state in pieces of STATE_PIECE_BYTES.
    Their receipts columns hold placeholders (the driver drops these rows from every table) and empty lists."""
    import pyarrow as pa

    paths = [os.path.join(out, name) for name in ("summary.json", STATE_FILE)]
    for path in paths:
        if not os.path.isfile(path):
            raise TaskFailure(f"receiptflow exited 0 but kept no {os.path.basename(path)} for {f['source']}")
    with open(paths[0], "rb") as fh:
        pieces = [(0, fh.read())]
    with open(paths[1], "rb") as fh:
        while True:
            chunk = fh.read(STATE_PIECE_BYTES)
            if not chunk:
                break
            pieces.append((len(pieces), chunk))
    if len(pieces) == 1:
        raise TaskFailure(f"receiptflow's history state of {f['source']} is empty")
    schema = nested_arrow_schema()
    n = len(pieces)
    placeholder = {"source": f["source"], "line": 0, "status": 0, "verified": False, "record_kind": "history_state"}
    arrays = []
    for name, kind, nullable in RECEIPTS_COLUMNS:
        if nullable:
            arrays.append(pa.nulls(n, arrow_type(kind)))
        else:
            arrays.append(pa.array([placeholder[name]] * n, arrow_type(kind)))
    for nested in (NESTED, NESTED_RENEWALS):
        item = schema.field(nested).type
        arrays.append(pa.ListArray.from_arrays(pa.array([0] * (n + 1), pa.int32()),
                                               pa.array([], item.value_type), type=item))
    arrays.append(pa.array([f.get("index", 0)] * n, pa.int32()))
    arrays.append(pa.array([p for p, _ in pieces], pa.int32()))
    arrays.append(pa.array([b for _, b in pieces], pa.binary()))
    yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def run_file(f, cfg_binary, args):
    """One input file through receiptflow; yields nested Arrow batches. The scratch directory is removed whatever
    happens, so a killed attempt leaves nothing on the executor."""
    binary = resolve_binary(cfg_binary)
    scratch = tempfile.mkdtemp(prefix="receiptflow-task-", dir=scratch_root())
    try:
        started = time.monotonic()
        out = run_receiptflow(binary, resolve_shipped(args), f, scratch)
        ran = time.monotonic()
        written = transactions = 0
        for b in nested_batches(out, f["source"]):
            written += b.num_rows
            transactions += len(b.column(len(RECEIPTS_COLUMNS)).values)
            yield b
        check_summary(out, written, f["source"])
        if "--no-history" not in args:
            yield from state_batches(out, f)
        # One line per file in the executor's log: where a slow task spent its time.
        print(
            f"receiptflow task: {f['source']}: {written} receipts, {transactions} transactions; "
            f"receiptflow {ran - started:.2f} s, rows to Spark {time.monotonic() - ran:.2f} s",
            file=sys.stderr,
            flush=True,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_partition(cfg_binary, args):
    """The `mapInArrow` function: the partition's file rows in, nested receipt batches out."""

    def fn(iterator):
        for batch in iterator:
            for f in batch.to_pylist():
                yield from run_file(f, cfg_binary, args)

    return fn


# MARK: - Spark plumbing (driver side)


def spark_type(kind):
    from pyspark.sql import types as T

    return {
        "string": T.StringType(),
        "int64": T.LongType(),
        "int32": T.IntegerType(),
        "bool": T.BooleanType(),
        "binary": T.BinaryType(),
        "timestamp": T.TimestampType(),
    }[kind]


def spark_struct(columns):
    from pyspark.sql import types as T

    return T.StructType([T.StructField(n, spark_type(k), nullable) for n, k, nullable in columns])


def nested_spark_schema():
    from pyspark.sql import types as T

    return T.StructType(
        spark_struct(RECEIPTS_COLUMNS).fields
        + [T.StructField(NESTED, T.ArrayType(spark_struct(TRANSACTIONS_COLUMNS), containsNull=False), False),
           T.StructField(NESTED_RENEWALS, T.ArrayType(spark_struct(RENEWALS_COLUMNS), containsNull=False), False)]
        + spark_struct(HISTORY_COLUMNS).fields
    )


FILE_SCHEMA_COLUMNS = [("source", "string", False), ("uri", "string", False), ("local", "string", True),
                       ("size", "int64", False), ("index", "int32", False)]


def hadoop_path(spark, path):
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p, p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def write_text(spark, path, text):
    """Writes a small file through Hadoop's filesystem (temporary name, then rename), wherever OUTPUT lives."""
    p, fs = hadoop_path(spark, path)
    tmp, _ = hadoop_path(spark, path + ".tmp")
    stream = fs.create(tmp, True)
    stream.write(bytearray(text.encode("utf-8")))
    stream.close()
    fs.delete(p, False)
    if not fs.rename(tmp, p):
        raise RuntimeError(f"cannot rename {path}.tmp to {path}")


# MARK: - History tables (driver side, receiptflow merge)


def collect_states(records, count, folder):
    """Writes each file's history state, as its task kept it, to folder/r<index>/ (summary.json and the state)
    and returns the run folders in input order. The state rows come back through Spark's results, which hold one
    successful attempt of each task: a retried task's state is there exactly once, whatever filesystem OUTPUT is
    on. Partitions arrive one at a time, in task order."""
    from pyspark.sql import functions as F

    rows = records.filter(F.col("history_file").isNotNull()).select("history_file", "history_piece", "history_bytes")
    runs = [os.path.join(folder, f"r{i}") for i in range(count)]
    expected = 0  # The next file whose summary is due; files come in input order.
    state_fh, piece = None, 0
    for row in rows.toLocalIterator():
        index, p, data = row["history_file"], row["history_piece"], bytes(row["history_bytes"])
        if p == 0:
            if index != expected:
                raise RuntimeError(f"history state of input {index} came when input {expected} was due")
            if state_fh is not None:
                state_fh.close()
            os.makedirs(runs[index])
            with open(os.path.join(runs[index], "summary.json"), "wb") as fh:
                fh.write(data)
            state_fh, piece = open(os.path.join(runs[index], STATE_FILE), "wb"), 1
            expected += 1
        else:
            if index != expected - 1 or p != piece or state_fh is None:
                raise RuntimeError(f"history state of input {index}: piece {p} out of order")
            state_fh.write(data)
            piece += 1
    if state_fh is not None:
        state_fh.close()
    if expected != count:
        raise RuntimeError(f"history states came back for {expected} of {count} inputs")
    return runs


def run_merge(binary, runs, out, as_of_text=None):
    """`receiptflow merge RUN... --out out` (Parquet), in groups of at most MERGE_FAN_IN runs merged first."""
    level = 0
    while len(runs) > MERGE_FAN_IN:
        groups = [runs[i : i + MERGE_FAN_IN] for i in range(0, len(runs), MERGE_FAN_IN)]
        runs = [merge_once(binary, g, f"{out}.level{level}-{k}") for k, g in enumerate(groups)]
        level += 1
    merge_once(binary, runs, out, as_of_text)
    return out


def merge_once(binary, runs, out, as_of_text=None):
    argv = [binary, "merge", *runs, "--out", out, "--format", "parquet", "--quiet"]
    if as_of_text is not None:
        argv += ["--as-of", as_of_text]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()[-STDERR_TAIL_BYTES:]
        raise RuntimeError(f"receiptflow merge {describe_exit(done.returncode)}: {detail}")
    return out


def commit_history_tables(spark, merged, base, overwrite):
    """Copies every history table the merge wrote (merged/NAME.parquet) to OUTPUT/NAME/part-00000.parquet through
    Hadoop's filesystem, then its _SUCCESS marker. Returns {table: rows}."""
    import pyarrow.parquet as pq

    jvm = spark.sparkContext._jvm
    written = {}
    for name in sorted(os.listdir(merged)):
        if not name.endswith(".parquet") or name[: -len(".parquet")] in RECORD_TABLES:
            continue
        table = name[: -len(".parquet")]
        local = os.path.join(merged, name)
        folder, fs = hadoop_path(spark, base + "/" + table)
        if fs.exists(folder):
            if not overwrite:
                raise UsageError(f"OUTPUT {base}/{table} exists; remove it or pass --overwrite")
            fs.delete(folder, True)
        fs.mkdirs(folder)
        target, _ = hadoop_path(spark, base + "/" + table + "/part-00000.parquet")
        fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path("file://" + os.path.abspath(local)), target)
        marker, _ = hadoop_path(spark, base + "/" + table + "/_SUCCESS")
        fs.create(marker, True).close()
        written[table] = pq.ParquetFile(local).metadata.num_rows
    return written


def write_history(spark, records, files, cfg, base):
    """Gathers the tasks' history states, merges them in input order with `receiptflow merge` (the engine's own
    rules, the same code as a single-machine export) and commits the tables it wrote. Returns (the as-of time as
    receiptflow wrote it, {table: rows}, seconds spent merging, whether the history holds records nobody
    verified)."""
    binary = resolve_binary(cfg.binary)
    folder = tempfile.mkdtemp(prefix="receiptflow-merge-", dir=scratch_root())
    try:
        runs = collect_states(records, len(files), folder)
        started = time.monotonic()
        as_of_text = None
        if cfg.as_of is not None:
            delta = cfg.as_of - _EPOCH
            as_of_text = format_as_of((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)
        merged = run_merge(binary, runs, os.path.join(folder, "merged"), as_of_text)
        seconds = time.monotonic() - started
        with open(os.path.join(merged, "summary.json")) as fh:
            merged_summary = json.load(fh)
        written = commit_history_tables(spark, merged, base, cfg.overwrite)
        return (merged_summary.get("as_of"), written, seconds,
                merged_summary.get("history_from_unverified_records"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(spark, cfg):
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    started = time.time()
    sc = spark.sparkContext
    out_path, out_fs = hadoop_path(spark, cfg.output)
    if out_fs.exists(out_path) and not cfg.overwrite:
        raise UsageError(f"OUTPUT {cfg.output} exists; remove it or pass --overwrite")
    files = list_inputs(spark, cfg.inputs)
    if not files:
        raise UsageError(f"INPUT {','.join(cfg.inputs)} holds no files (names starting with _ or . are skipped)")
    for i, f in enumerate(files):
        f["index"] = i
    tasks = pack_tasks(files, cfg.task_bytes, cfg.files_per_task)
    base = cfg.output.rstrip("/")
    if cfg.overwrite:
        # summary.json says "the whole run finished": a previous run's must not outlive the tables it described.
        # Nor may its history tables outlive it: a run with --no-history writes none to replace them.
        for name in ("summary.json", *HISTORY_TABLES):
            path, fs = hadoop_path(spark, base + "/" + name)
            fs.delete(path, True)
    args = task_arguments(cfg.passthrough, int(sc.getConf().get("spark.task.cpus", "1")), cfg.history)

    # One element per task and as many slices as tasks: parallelize puts exactly one task in each partition.
    rdd = sc.parallelize(tasks, len(tasks)).flatMap(
        lambda group: [(f["source"], f["uri"], f["local"], f["size"], f["index"]) for f in group]
    )
    file_df = spark.createDataFrame(rdd, spark_struct(FILE_SCHEMA_COLUMNS))
    records = file_df.mapInArrow(run_partition(cfg.binary, args), nested_spark_schema())
    # The three tables come from one pass of receiptflow: the first write computes and keeps the records, the
    # others read them back. Should a kept block be lost, Spark recomputes it; receiptflow is deterministic, so the
    # rows are the same.
    kept = records.persist(StorageLevel.MEMORY_AND_DISK)
    # The history state rows of the tasks (HISTORY_COLUMNS) are in no table.
    records = kept.filter(F.col("history_file").isNull()).drop(*[c[0] for c in HISTORY_COLUMNS])
    mode = "overwrite" if cfg.overwrite else "errorifexists"
    records.drop(NESTED, NESTED_RENEWALS).write.mode(mode).parquet(base + "/receipts")
    records.select(F.explode(NESTED).alias("t")).select("t.*").write.mode(mode).parquet(base + "/transactions")
    records.select(F.explode(NESTED_RENEWALS).alias("r")).select("r.*").write.mode(mode).parquet(base + "/renewals")

    as_of, history_rows, merge_seconds, unverified = None, {}, None, None
    if cfg.history:
        as_of, history_rows, merge_seconds, unverified = write_history(spark, kept, files, cfg, base)

    counts = records.groupBy("status", "error_code").agg(
        F.count(F.lit(1)).alias("n"), F.sum(F.size(NESTED)).alias("t")
    ).collect()
    kept.unpersist()
    by_status, by_code = {}, {}
    total = transactions = 0
    for r in counts:
        by_status[str(r["status"])] = by_status.get(str(r["status"]), 0) + r["n"]
        if r["error_code"] is not None:
            by_code[r["error_code"]] = by_code.get(r["error_code"], 0) + r["n"]
        total += r["n"]
        transactions += r["t"] or 0
    summary = {
        "inputs": cfg.inputs,
        "files": len(files),
        "tasks": len(tasks),
        "bytes_read": sum(f["size"] for f in files),
        "records": total,
        "receipts_written": total,
        "valid": by_status.get("0", 0),
        "rejected": total - by_status.get("0", 0),
        "transactions_written": transactions,
        "by_status": dict(sorted(by_status.items())),
        "by_error_code": dict(sorted(by_code.items())),
        "receiptflow_arguments": args,
        "history": cfg.history,
        "as_of": as_of,
        "history_rows": history_rows,
        "history_from_unverified_records": unverified,
        "merge_seconds": None if merge_seconds is None else round(merge_seconds, 3),
        "elapsed_seconds": round(time.time() - started, 3),
    }
    write_text(spark, base + "/summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def main(argv):
    try:
        cfg = parse_command_line(argv)
    except UsageError as e:
        if str(e):
            print(f"driver.py: {e}\n", file=sys.stderr)
        print(__doc__, file=sys.stderr)
        return 2
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.appName("receiptflow")
        # Timestamps are instants: no session time zone may shift them on their way through Spark.
        .config("spark.sql.session.timeZone", "UTC")
        # The contract's Parquet types: INT64 TIMESTAMP(MILLIS, UTC), zstd pages.
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MILLIS")
        .config("spark.sql.parquet.compression.codec", "zstd")
        .getOrCreate()
    )
    try:
        summary = run(spark, cfg)
    except (UsageError, RuntimeError) as e:
        # RuntimeError: the driver's own checks (a history state out of order, a failed merge), said in one line.
        print(f"driver.py: {e}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    print(
        f"receiptflow on Spark: {summary['records']} receipts ({summary['valid']} valid), "
        f"{summary['transactions_written']} transactions from {summary['files']} files in {summary['tasks']} tasks, "
        f"{summary['elapsed_seconds']} s -> {cfg.output}",
        file=sys.stderr,
    )
    if summary["history_from_unverified_records"]:
        print("receiptflow on Spark: purchases and subscriptions were built from unverified records (--no-verify): "
              "anyone could have made them", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
