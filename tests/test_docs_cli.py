"""The command lines the docs show, run: numbers in the docs come from the code.

* Every ``console`` block: each ``$ renyi ...`` command runs (exit 0) and prints the lines the
  block shows after it (whitespace aside).
* Every ``renyi ...`` line of a ``bash`` block whose comment quotes a number (``# σ = 3.73064``,
  ``# ε ≤ 5.222``): the command runs (exit 0) and prints that number (to the digits shown).

Commands that write files run in a temporary directory with a copy of ``examples/``; lines
needing data the docs make elsewhere (``spend.db``, ``scores.csv``) have no quoted number and
are not run here.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from renyi.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^```(console|bash)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:,\d{3})*\.\d+(?:e[-+]?\d+)?|(?<![\w.])\d+(?:,\d{3})+(?![\d.])", re.I)


def _lines(text: str) -> list[str]:
    """Logical lines: backslash continuations joined."""
    return re.sub(r"\\\n\s*", " ", text).splitlines()


def _cases() -> list[object]:
    out: list[object] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(ROOT).as_posix()
        for m in _FENCE.finditer(text):
            line0 = text.count("\n", 0, m.start(2)) + 1
            lines = _lines(m.group(2))
            if m.group(1) == "console":
                i = 0
                while i < len(lines):
                    if lines[i].startswith("$ renyi "):
                        j = i + 1
                        while j < len(lines) and not lines[j].startswith("$ "):
                            j += 1
                        out.append(pytest.param(lines[i][2:], None, lines[i + 1:j], id=f"{rel}:{line0 + i}"))
                        i = j
                    else:
                        i += 1
            else:
                for k, ln in enumerate(lines):
                    cmd, _, comment = ln.partition("#")
                    if cmd.startswith("renyi ") and _NUMBER.search(comment):
                        out.append(pytest.param(cmd.strip(), comment, [], id=f"{rel}:{line0 + k}"))
    return out


CASES = _cases()


def test_the_docs_have_command_lines_with_numbers():
    """The extraction finds them (a broken pattern would make this file pass vacuously)."""
    assert len(CASES) >= 10


def _numbers(text: str) -> list[tuple[float, int]]:
    """(value, decimals shown) of every number with a decimal point or thousands separators."""
    out = []
    for tok in _NUMBER.findall(text):
        mant = tok.lower().split("e")[0].replace(",", "")
        out.append((float(tok.replace(",", "")), len(mant.partition(".")[2])))
    return out


def _shown(value: float, decimals: int, output: str) -> bool:
    """The output prints ``value`` to the digits shown (rounded or cut)."""
    if "e" in f"{value}" and abs(value) < 1e-3:
        return any(abs(y - value) <= 1e-3 * abs(value) for y, _ in _numbers(output))
    tol = 10.0 ** -decimals
    return any(abs(y - value) <= tol * (1 + 1e-9) for y, _ in _numbers(output))


@pytest.mark.parametrize(("cmd", "comment", "expected"), CASES)
def test_a_documented_command_line_prints_what_the_docs_say(cmd, comment, expected, tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    args = shlex.split(cmd)[1:]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "200", "NO_COLOR": "1"})
    out = r.output
    assert r.exit_code == 0, f"{cmd}\n{out}"
    if comment is not None:
        for value, decimals in _numbers(comment):
            assert _shown(value, decimals, out), f"{cmd}: the docs quote {value} ({comment.strip()!r}); it printed:\n{out}"
    squash = " ".join(out.split())
    for line in expected:
        if line.strip():
            assert " ".join(line.split()) in squash, f"{cmd}: the docs show {line!r}; it printed:\n{out}"
