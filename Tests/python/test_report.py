"""The HTML report of a run, rendered by a real browser (headless Chromium): the committed samples are exported
in every format, the page is rendered to a screenshot (which must not be blank) and to its DOM, and every number
the page shows is compared with summary.json and with the tables read back by pyarrow."""

import collections
import html.parser
import json
import os
import pathlib
import shutil
import subprocess

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = [str(ROOT / "data/sample.ndjson.zst"), str(ROOT / "data/sample-jws.ndjson.zst")]
ANCHORS = ["--trust-anchor", str(ROOT / "data/test-root.pem"), "--trust-anchor", str(ROOT / "data/test-jws-root.pem")]


def _chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("chromium is missing: sudo apt-get install -y chromium (scripts/test.sh and CI install it)")
    return path


def _browser(tmp, *args):
    """Runs headless Chromium with its own profile folder (root needs --no-sandbox); its standard output."""
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--user-data-dir={tmp / 'chromium-profile'}", *args]
    res = subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr.decode(errors="replace")[-2000:]
    return res.stdout.decode()


def _export(receiptflow, out, fmt, *extra, inputs=INPUTS):
    res = subprocess.run([receiptflow, "export", *inputs, *ANCHORS, "--out", str(out), "--format", fmt, "--quiet",
                          *extra], capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    return out


@pytest.fixture(scope="module")
def runs(receiptflow, tmp_path_factory):
    """One run per format, each exported with --report."""
    tmp = tmp_path_factory.mktemp("report")
    return {fmt: _export(receiptflow, tmp / fmt, fmt, "--report") for fmt in ("parquet", "csv", "ndjson")}


class _Page(html.parser.HTMLParser):
    """What the rendered page shows: the text of every element with data-metric, and the cell texts of every
    table row with a data-* key (by attribute, then key)."""

    def __init__(self):
        super().__init__()
        self.metrics = {}
        self.rows = collections.defaultdict(dict)
        self.cells_env = []
        self._stack = []  # (tag, attrs, text parts)
        self._row = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr":
            key = next(((k, v) for k, v in attrs.items() if k.startswith("data-")), None)
            self._row = (key, []) if key else None
        self._stack.append((tag, attrs, []))

    def handle_endtag(self, tag):
        while self._stack:
            t, attrs, parts = self._stack.pop()
            text = "".join(parts).strip()
            if self._stack:
                self._stack[-1][2].append(text)
            if "data-metric" in attrs:
                self.metrics[attrs["data-metric"]] = text
            if t == "td" and self._row is not None:
                self._row[1].append((attrs.get("data-env"), text))
            if t == "tr" and self._row is not None:
                (attr, key), cells = self._row
                self.rows[attr][key] = cells
                self._row = None
            if t == tag:
                break

    def handle_data(self, data):
        if self._stack:
            self._stack[-1][2].append(data)


def _number(text):
    return int(text.replace(",", ""))


_DOMS = {}


def _rendered(tmp, run):
    """The page of `run` as the browser parsed it (each page is rendered once: the browser takes seconds to start)."""
    path = run / "report.html"
    key = (str(path), path.stat().st_mtime_ns)
    if key not in _DOMS:
        page = _Page()
        page.feed(_browser(tmp, "--dump-dom", path.as_uri()))
        _DOMS[key] = page
    return _DOMS[key]


def _counts(cells):
    """valid, rejected, records of a row whose last four cells are valid, rejected, records, valid share."""
    return tuple(_number(t) for _, t in cells[-4:-1])


def _receipts(run, fmt):
    if fmt == "parquet":
        return pq.read_table(run / "receipts.parquet").to_pylist()
    return pacsv.read_csv(run / "receipts.csv").to_pylist()


def _by(rows, key):
    out = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        out[key(r)][0 if r["status"] == 0 else 1] += 1
    return {k: (v[0], v[1], v[0] + v[1]) for k, v in out.items()}


def test_the_screenshot_shows_the_report(runs, tmp_path):
    from PIL import Image

    shot = tmp_path / "report.png"
    _browser(tmp_path, f"--screenshot={shot}", "--window-size=1100,2600", (runs["parquet"] / "report.html").as_uri())
    image = Image.open(shot).convert("RGB")
    assert image.size == (1100, 2600)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "a blank or nearly blank screenshot"
    white = sum(n for n, c in colours if min(c) > 245)
    assert white < 0.97 * image.size[0] * image.size[1], "the page is nearly all white"
    # The charts' dark bars (the valid records) are there: a good share of dark blue pixels.
    dark = sum(n for n, (r, g, b) in colours if b > r + 60 and r < 80)
    assert dark > 2000


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_the_rendered_numbers_equal_the_summary_and_the_tables(runs, tmp_path, fmt):
    run = runs[fmt]
    summary = json.loads((run / "summary.json").read_text())
    page = _rendered(tmp_path, run)
    for key in ("records", "valid", "rejected", "blank_lines", "bytes_read"):
        assert _number(page.metrics[key]) == summary[key], key
    assert _number(page.metrics["transactions"]) == summary["transactions_written"]
    assert _number(page.metrics["receipts_per_second"]) == int(summary["receipts_per_second"])
    assert page.metrics["as_of"] == summary["as_of"]
    assert _number(page.metrics["purchases"]) == summary["history"]["purchases"]
    assert _number(page.metrics["subscriptions"]) == summary["history"]["subscriptions"]
    assert page.metrics["valid_share"] == f"{summary['valid'] * 100 / summary['records']:.1f}%"

    receipts = _receipts(run, fmt)
    assert len(receipts) == summary["records"]
    # Every rejected code with its count, as the summary and the receipts table have them.
    codes = {k: _number(cells[2][1]) for k, cells in page.rows["data-code"].items()}
    assert codes == {k: v for k, v in summary["by_error_code"].items() if v > 0}
    assert codes == dict(collections.Counter(r["error_code"] for r in receipts if r["status"] != 0))

    assert {k: _counts(c) for k, c in page.rows["data-by-app"].items()} == _by(receipts, lambda r: r["bundle_id"] or "")
    assert {k: _counts(c) for k, c in page.rows["data-by-env"].items()} == _by(
        receipts, lambda r: r["receipt_type"] or "")
    assert sum(_counts(c)[2] for c in page.rows["data-app"].values()) == summary["records"]

    def month(r):
        d = r["receipt_creation_date"]
        if d is None:
            return None
        return d[:7] if isinstance(d, str) else d.strftime("%Y-%m")

    by_month = _by(receipts, month)
    undated = by_month.pop(None)
    assert {k: _counts(c) for k, c in page.rows["data-month"].items()} == by_month
    assert _number(page.metrics["undated"]) == undated[2]
    by_year = collections.defaultdict(lambda: (0, 0, 0))
    for m, c in by_month.items():
        by_year[m[:4]] = tuple(a + b for a, b in zip(by_year[m[:4]], c))
    assert {k: _counts(c) for k, c in page.rows["data-year"].items()} == dict(by_year)

    if fmt == "parquet":
        subs = pq.read_table(run / "subscriptions.parquet").to_pylist()
    else:
        subs = pacsv.read_csv(run / "subscriptions.csv").to_pylist()
    assert len(subs) == summary["history"]["subscriptions"]
    shown = {}
    for state, cells in page.rows["data-state"].items():
        for env, text in cells:
            if env and env != "all":
                shown[(env, state)] = _number(text)
    expected = collections.Counter((s["environment"], s["state"]) for s in subs)
    assert {k: v for k, v in shown.items() if v} == dict(expected)
    # With the run's `daily` table the page shows the events of each month from it.
    if fmt == "parquet":
        daily = pq.read_table(run / "daily.parquet").to_pylist()
    else:
        daily = pacsv.read_csv(run / "daily.csv").to_pylist()
    columns = ("starts", "conversions", "renewals", "refunds", "expirations")
    by_event_month = collections.defaultdict(lambda: [0] * len(columns))
    for d in daily:
        for i, c in enumerate(columns):
            by_event_month[d["day"].strftime("%Y-%m")][i] += d[c]
    shown_months = {k: tuple(_number(t) for _, t in c[1:]) for k, c in page.rows["data-event-month"].items()}
    assert shown_months == {k: tuple(v) for k, v in by_event_month.items()}
    assert sum(v[0] for v in shown_months.values()) > 0


def test_every_format_reports_the_same_numbers(runs, tmp_path):
    pages = {fmt: _rendered(tmp_path, run) for fmt, run in runs.items()}
    parquet = pages["parquet"]
    for fmt in ("csv", "ndjson"):
        for attr in ("data-code", "data-by-app", "data-by-env", "data-app", "data-month", "data-year", "data-state",
                     "data-event-month"):
            assert parquet.rows[attr], attr
            assert pages[fmt].rows[attr] == parquet.rows[attr], (fmt, attr)
        for key in ("records", "valid", "rejected", "as_of", "purchases", "subscriptions"):
            assert pages[fmt].metrics[key] == parquet.metrics[key], (fmt, key)


def test_the_page_is_self_contained_and_printable(runs):
    for run in runs.values():
        text = (run / "report.html").read_text()
        assert "<script" not in text.lower()
        assert "src=" not in text and "<link" not in text and "@import" not in text
        assert "@media print" in text
        assert "data/test-root.pem" not in text  # the anchors are shown by fingerprint
        assert json.loads((run / "report-data.json").read_text())["format_version"] == 1


def test_report_dir_writes_the_page_of_a_run_exported_without_it(receiptflow, runs, tmp_path):
    out = _export(receiptflow, tmp_path / "plain", "parquet")
    assert not (out / "report.html").exists() and (out / "report-data.json").exists()
    res = subprocess.run([receiptflow, "report", str(out)], capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    assert res.stdout.decode().strip() == str(out / "report.html")
    page, reference = _rendered(tmp_path, out), _rendered(tmp_path, runs["parquet"])
    assert page.rows == reference.rows
    assert {k: v for k, v in page.metrics.items() if k not in ("elapsed_seconds", "receipts_per_second")} == {
        k: v for k, v in reference.metrics.items() if k not in ("elapsed_seconds", "receipts_per_second")}
    # The report is one of the run's files: a new run into the folder needs --overwrite, which removes it.
    again = subprocess.run([receiptflow, "export", *INPUTS, *ANCHORS, "--out", str(out), "--quiet", "--no-history"],
                           capture_output=True, check=False)
    assert again.returncode == 2 and b"report" in again.stderr
    _export(receiptflow, out, "csv", "--overwrite", "--no-history")
    assert not (out / "report.html").exists()
    assert sorted(p.name for p in out.iterdir()) == [
        "receipts.csv", "renewals.csv", "report-data.json", "summary.json", "transactions.csv"]


def test_report_refuses_a_folder_without_a_complete_run(receiptflow, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "receipts.parquet").write_bytes(b"PAR1")
    for path in (empty, tmp_path / "missing"):
        res = subprocess.run([receiptflow, "report", str(path)], capture_output=True, check=False)
        assert res.returncode == 2
        assert b"no complete run" in res.stderr or b"not a folder" in res.stderr
    assert sorted(os.listdir(empty)) == ["receipts.parquet"]
    res = subprocess.run([receiptflow, "report"], capture_output=True, check=False)
    assert res.returncode == 2 and b"DIR" in res.stderr


def test_the_page_does_not_grow_with_the_records(receiptflow, runs, tmp_path):
    # The same inputs twice: twice the records, the same apps, months and products.
    double = _export(receiptflow, tmp_path / "double", "parquet", "--report", inputs=INPUTS * 2)
    summary = json.loads((double / "summary.json").read_text())
    assert summary["records"] == 2 * json.loads((runs["parquet"] / "summary.json").read_text())["records"]
    for name in ("report.html", "report-data.json"):
        small, large = (runs["parquet"] / name).stat().st_size, (double / name).stat().st_size
        assert abs(large - small) < 0.03 * small, name


def test_a_run_in_parts_gets_the_page_of_its_summary(receiptflow, tmp_path):
    out = _export(receiptflow, tmp_path / "parts", "parquet", "--part-records", "1000")
    assert not (out / "report-data.json").exists()
    refused = subprocess.run([receiptflow, "export", *INPUTS, *ANCHORS, "--out", str(tmp_path / "p2"),
                              "--part-records", "1000", "--report"], capture_output=True, check=False)
    assert refused.returncode == 2 and b"receiptflow report DIR" in refused.stderr
    res = subprocess.run([receiptflow, "report", str(out)], capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    summary = json.loads((out / "summary.json").read_text())
    page = _Page()
    page.feed((out / "report.html").read_text())
    for key in ("records", "valid", "rejected"):
        assert _number(page.metrics[key]) == summary[key], key
    assert {k: _number(c[2][1]) for k, c in page.rows["data-code"].items()} == {
        k: v for k, v in summary["by_error_code"].items() if v > 0}
    assert "Not recorded for this run" in (out / "report.html").read_text()
