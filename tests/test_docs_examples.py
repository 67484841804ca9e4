"""Every ```python block of README.md and docs/*.md runs (docs/testing.md, "Documentation
examples").

Each block runs on its own, in a fresh namespace, so it must import and build what it uses. A
page runs in a child process of its own, in an empty temporary folder (blocks may write files),
its blocks in order. A comment line directly above a block's opening fence changes that:

- ``<!-- doc-test: continue -->``: the block runs in the namespace the page's previous block
  left (a walk-through split by prose);
- ``<!-- doc-test: gpu -->``: the block needs an NVIDIA GPU; it runs on its own in
  ``test_gpu_blocks_run`` (marker ``gpu``), which skips without one;
- ``<!-- doc-test: skip: REASON -->``: the block is not run, for a reason no test machine can
  meet (a cluster that is not there); the reason is required.

Blocks in other languages (```bash, ```text, ```c) are not run; the ``coiter`` commands of
docs/cli.md's and README.md's shell blocks are run by tests/test_cli.py.
"""

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import coiter as ct

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_MARKER = re.compile(r"<!--\s*doc-test:\s*([a-z]+)\b:?\s*(.*?)\s*-->[ \t]*\n\Z")
_MODES = ("continue", "gpu", "skip")


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    code: str
    mode: str  # "run", or a marker's mode
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()]
        marker = _MARKER.search(before[before.rfind("\n", 0, len(before) - 1) + 1 :])
        mode, reason = (marker.group(1), marker.group(2)) if marker else ("run", "")
        found.append(Block(page, line, match.group(1), mode, reason))
    return found


# Runs the blocks given as JSON on stdin, each in a fresh namespace or the previous one's; the
# first failure is printed with its page and line (the code is compiled under that name, so
# tracebacks point into the page) and ends the run with status 1.
_RUNNER = textwrap.dedent(
    """
    import json, sys, traceback
    namespace = None
    for block in json.load(sys.stdin):
        if not block["continue"] or namespace is None:
            namespace = {"__name__": "__main__"}
        print(f"--- {block['where']}", flush=True)
        try:
            exec(compile(block["code"], block["where"], "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            print(f"FAILED: the block at {block['where']}", file=sys.stderr)
            sys.exit(1)
    """
)


def run_blocks(chosen: list[Block], folder: Path) -> None:
    payload = json.dumps(
        [{"where": b.where, "code": b.code, "continue": b.mode == "continue"} for b in chosen]
    )
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=payload,
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]


def test_markers_are_known_and_skips_say_why():
    for page in PAGES:
        previous = None
        for block in blocks(page):
            assert block.mode in ("run", *_MODES), f"{block.where}: unknown marker {block.mode}"
            if block.mode == "skip":
                assert block.reason, f"{block.where}: a skipped block must say why"
            if block.mode == "continue":
                assert previous is not None and previous.mode in ("run", "continue"), (
                    f"{block.where}: continues no block that runs"
                )
            previous = block


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(page, tmp_path):
    chosen = [b for b in blocks(page) if b.mode in ("run", "continue")]
    if not chosen:
        pytest.skip("no Python blocks that run without a GPU or a cluster")
    run_blocks(chosen, tmp_path)


@pytest.mark.gpu
def test_gpu_blocks_run(tmp_path):
    if not ct.cuda.is_available():
        pytest.skip("no usable NVIDIA GPU")
    chosen = [b for page in PAGES for b in blocks(page) if b.mode == "gpu"]
    assert chosen
    for block in chosen:
        run_blocks([block], tmp_path)


def test_the_api_reference_lists_every_public_name():
    """docs/api.rst generates the reference from docstrings: it must name all of
    ``coiter.__all__``, and each of those has a docstring to show."""
    text = (ROOT / "docs" / "api.rst").read_text()
    documented = set(
        re.findall(r"^\.\. auto(?:class|function|exception|data|module):: (\S+)", text, re.M)
    )
    for match in re.finditer(r"^\.\. py:data:: (.*?)\n   :type:", text, re.S | re.M):
        documented |= set(match.group(1).split())
    documented = {name.removeprefix("coiter.") for name in documented}
    assert set(ct.__all__) - documented == set()
    for name in ct.__all__:
        assert (getattr(ct, name).__doc__ or "").strip(), f"ct.{name} has no docstring"


def test_the_docstring_examples_run():
    """The ``>>>`` examples of the public names' docstrings (and their methods'), as doctests,
    with ``ct`` and ``np`` imported."""
    import doctest

    import numpy as np

    finder = doctest.DocTestFinder(recurse=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    seen = set()
    examples = 0
    for name in ct.__all__:
        obj = getattr(ct, name)
        for test in finder.find(obj, f"coiter.{name}", globs={"ct": ct, "np": np}):
            if test.examples and test.name not in seen:
                seen.add(test.name)
                examples += len(test.examples)
                runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0
    assert examples >= 20  # the examples exist (a finder that found nothing would pass)
