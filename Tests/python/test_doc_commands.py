"""Every command shown in README.md and data/README.md runs, on the committed samples, and exits 0.

The ```sh blocks of each page run in order, each block as one bash script (`set -euo pipefail`), so that a later
block may read what an earlier one wrote, as a reader following the page would. How the commands are run:

- the working folder is a fresh temporary folder holding links to the checkout's `data/`, `Tests/` and
  `scripts/`, so `data/...`, `Tests/Fixtures/...` and `scripts/check-truth.py` mean what the page says and `out/`
  is written in the temporary folder;
- `receiptflow` is the binary under test (RECEIPTFLOW_BIN), first on PATH;
- `~` and `$HOME` are a temporary home, so `~/.cache/receiptflow/test-ca` is written there;
- a line whose comment holds `[not run in tests: REASON]` is left out (with the lines that continue it): the
  installs that need sudo, the commands that build the package or run the tests themselves, a timing threshold.
  Every other line runs; a page may hold only a few such lines (checked below).
"""

import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = ["README.md", "data/README.md"]
MARKER = re.compile(r"#.*\[not run in tests: [^\]]+\]")
# The marked lines of each page, at most: a new one needs a reason good enough to raise this.
MAX_MARKED = {"README.md": 5, "data/README.md": 0}


def sh_blocks(text):
    """The bodies of the ```sh fenced blocks, in page order."""
    return [m.group(1) for m in re.finditer(r"^```sh\n(.*?)^```\s*$", text, re.M | re.S)]


def runnable(block):
    """The block without its marked lines (and the lines that continue them), and how many were marked."""
    kept, marked, skipping = [], 0, False
    for line in block.splitlines():
        if skipping or MARKER.search(line):
            marked += 0 if skipping else 1
            skipping = line.rstrip().endswith("\\")
            continue
        kept.append(line)
    return "\n".join(kept) + "\n", marked


def test_the_markers_are_found_and_kept_few():
    # The test relies on both parts: the pages have blocks, and the skip list stays small and visible.
    for page in PAGES:
        blocks = sh_blocks((ROOT / page).read_text())
        assert blocks, f"{page} has no ```sh blocks: the extraction is broken"
        marked = sum(runnable(b)[1] for b in blocks)
        assert marked <= MAX_MARKED[page], f"{page} marks {marked} lines as not run"
    assert runnable("a\nb # x [not run in tests: why] \\\n  c\nd\n") == ("a\nd\n", 1)


@pytest.mark.parametrize("page", PAGES)
def test_every_command_of_the_page_runs(receiptflow, tmp_path, page):
    work = tmp_path / "work"
    work.mkdir()
    for name in ("data", "Tests", "scripts"):
        (work / name).symlink_to(ROOT / name)
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "receiptflow").symlink_to(os.path.abspath(receiptflow))
    env = dict(os.environ, HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    # `.build/test-ca` in the commands is the scripts' CA folder: a fresh one inside the working folder.
    ran = 0
    for n, block in enumerate(sh_blocks((ROOT / page).read_text()), 1):
        script, _ = runnable(block)
        if not script.strip():
            continue
        res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                             capture_output=True, text=True, timeout=600, check=False)
        assert res.returncode == 0, (f"{page}, block {n} exited {res.returncode}:\n{script}\n"
                                     f"--- stdout\n{res.stdout[-3000:]}\n--- stderr\n{res.stderr[-3000:]}")
        ran += 1
    assert ran > 0
