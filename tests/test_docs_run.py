"""Every Python block in README.md and docs/ runs, as written, against this checkout.

The blocks of one page run in order in one namespace (a page builds on its earlier blocks), in
a fresh temporary directory. A block written as a doctest (``>>>`` lines) is checked as one:
its printed output must match, and a block that shows an error shows it as a doctest
traceback (``Traceback (most recent call last):`` ... ``renyi.errors.DomainError: ...``), so
the error is checked too. Numbers the docs quote are therefore the code's numbers: a stale
one fails here. A page whose block needs an optional package that is not installed
(torch, opacus, duckdb, dp-accounting, matplotlib) is skipped with the package named.
"""

from __future__ import annotations

import doctest
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
OPTIONAL = {"torch", "opacus", "duckdb", "dp_accounting", "matplotlib", "jax", "pyarrow", "pandas"}
_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def blocks(page: Path) -> list[tuple[int, str]]:
    """(first line number, code) of every ```python block of a page."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)]


#: pages whose blocks fail for a known, open reason (each one a defect to fix, not to hide)
KNOWN: dict[str, str] = {}


def _pages() -> list[object]:
    out = []
    for p in PAGES:
        if blocks(p):
            rel = p.relative_to(ROOT).as_posix()
            marks = [pytest.mark.xfail(reason=KNOWN[rel], strict=False)] if rel in KNOWN else []
            out.append(pytest.param(p, id=rel, marks=marks))
    return out


def test_the_docs_have_python_blocks():
    """The extraction finds the blocks (a broken pattern would make every page pass)."""
    assert sum(len(blocks(p)) for p in PAGES) >= 30


def _run_doctest(code: str, name: str, line: int, globs: dict) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(code, globs, name, name, line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    runner.run(test, out=out.append, clear_globs=False)
    globs.update(test.globs)  # (DocTest copies its globals) later blocks see these names
    if runner.failures:
        raise AssertionError(f"{name}:{line}: doctest failed\n" + "".join(out))


@pytest.mark.parametrize("page", _pages())
def test_every_python_block_runs(page: Path, tmp_path, monkeypatch):
    # a copy of the examples: pages run them by their paths from the repository's root
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RENYI_LEDGER_KEY", raising=False)
    rel = page.relative_to(ROOT).as_posix()
    globs: dict = {"__name__": "__docs__"}
    for line, code in blocks(page):
        try:
            if re.search(r"^\s*>>> ", code, re.M):
                _run_doctest(code, rel, line, globs)
            else:
                exec(compile(code, f"{rel}:{line}", "exec"), globs)  # noqa: S102 - the docs' own code
        except ModuleNotFoundError as e:
            if (e.name or "").split(".")[0] in OPTIONAL:
                pytest.skip(f"{rel}:{line} needs {e.name}")
            raise


def test_ci_runs_the_readme_test_command():
    """.ci/run runs the README's test command (pip's --quiet aside), including the CPU index
    for torch (without it a public index gives the CUDA build of torch)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (cmd,) = [ln for ln in readme.splitlines() if ln.startswith("python -m pip install torch")]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in cmd
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert cmd in [ln.replace(" --quiet", "") for ln in ci.splitlines()]
