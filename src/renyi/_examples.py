"""The example files shipped inside the package (``renyi/examples/``).

The repository's top-level ``examples/`` directory is the single source of these files; the
package reaches it through ``src/renyi/examples`` (a link), and the wheel carries copies as
package data. So ``renyi report --example dpsgd`` works after ``pip install renyi`` with no
checkout at hand.

Imports only the standard library (the CLI lists examples without loading numpy).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["Example", "examples", "example_path", "examples_dir"]

#: suffixes of the files that count as examples (others in the directory are ignored)
_SUFFIXES = (".toml", ".json", ".py")


@dataclass(frozen=True, slots=True)
class Example:
    """One shipped example file.

    Attributes:
        name: the file name without its suffix (what ``--example`` accepts).
        path: where the file is on this machine.
        summary: the first sentence of the file's leading comment or docstring.
    """

    name: str
    path: Path
    summary: str

    @property
    def kind(self) -> str:
        """``"pipeline"`` for TOML/JSON pipeline files, ``"python"`` for scripts."""
        return "python" if self.path.suffix == ".py" else "pipeline"


def examples_dir() -> Path:
    """The directory holding the shipped examples."""
    return Path(str(resources.files("renyi").joinpath("examples")))


def examples() -> list[Example]:
    """Every shipped example, sorted by name.

    Examples:
        >>> [e.name for e in examples() if e.kind == "pipeline"][:3]
        ['census', 'dpsgd', 'mixed']
    """
    root = examples_dir()
    if not root.is_dir():
        return []
    found = [Example(p.stem, p, _summary(p)) for p in root.iterdir() if p.suffix in _SUFFIXES and p.is_file()]
    return sorted(found, key=lambda e: (e.name, e.path.suffix))


def example_path(name: str) -> Path:
    """The path of the shipped example ``name`` (with or without its suffix).

    Raises:
        DomainError: no shipped example has that name (the message lists the names).
    """
    for e in examples():
        if name in (e.name, e.path.name):
            return e.path
    from renyi.core.errors import DomainError

    names = ", ".join(e.name for e in examples()) or "none"
    raise DomainError(f"example must be one of {names}; got {name!r}", name="example", value=name)


def _summary(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return ""
    if path.suffix == ".py":
        try:
            doc = ast.get_docstring(ast.parse(text)) or ""
        except SyntaxError:
            doc = ""
        paragraph = doc.strip().split("\n\n")[0].split()
    else:
        paragraph = []
        for line in text.splitlines():
            stripped = line.strip()
            if not stripped.startswith("#") or not stripped.lstrip("#").strip():
                break
            paragraph += stripped.lstrip("#").split()
    sentence = " ".join(paragraph)
    end = sentence.find(". ")
    return sentence if end < 0 else sentence[: end + 1]
