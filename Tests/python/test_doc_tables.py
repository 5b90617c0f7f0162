"""The Markdown tables of the docs render as tables: none is cut in two by a blank line (the rows after the blank
line would render as a paragraph of pipes, having no header row of their own)."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = sorted({ROOT / "README.md", ROOT / "data" / "README.md", *(ROOT / "docs").glob("*.md")})
DELIMITER = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")


def cut_tables(lines):
    """Line numbers (1-based) of blank lines between a table row and a row that starts no new table."""
    cuts = []
    for i in range(1, len(lines) - 1):
        if lines[i].strip() or not lines[i - 1].startswith("|") or not lines[i + 1].startswith("|"):
            continue
        if i + 2 < len(lines) and DELIMITER.match(lines[i + 2]):
            continue  # a new table with its own header
        cuts.append(i + 1)
    return cuts


def test_the_check_finds_a_cut_table():
    assert cut_tables(["| a |", "|---|", "| 1 |", "", "| 2 |"]) == [4]
    assert cut_tables(["| a |", "|---|", "| 1 |", "", "| b |", "|---|", "| 2 |"]) == []


def test_no_table_of_the_docs_is_cut_by_a_blank_line():
    assert len(PAGES) > 5
    found = {str(p.relative_to(ROOT)): cut_tables(p.read_text().split("\n")) for p in PAGES}
    assert {p: c for p, c in found.items() if c} == {}
