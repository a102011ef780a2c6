"""MkDocs hooks: generate the API reference pages, and keep the nav complete.

* One API page per public module of ``src/renyi`` (``api/renyi.<module>.md``, rendered by
  mkdocstrings from the docstrings), so a new module is documented without editing anything.
* ``changelog.md`` is generated from the top-level ``CHANGELOG.md`` (one source).
* Every Markdown page under ``docs/`` that ``mkdocs.yml`` does not list is appended to the
  section of its folder (top-level pages to "Topics"), so no page is ever unreachable.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "renyi"
#: packages documented elsewhere (the CLI has its own pages) or not code (shipped examples)
SKIP = {"renyi.cli", "renyi.examples"}
SECTIONS = {"concepts": "Concepts", "howto": "How-to", "cli": "Command line", "api": "API reference"}


def public_modules() -> list[str]:
    """Dotted names of the public modules and packages of renyi (no leading underscore)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") for p in parts[1:]):
            continue
        name = ".".join(parts)
        if any(name == s or name.startswith(s + ".") for s in SKIP):
            continue
        if path.read_text(encoding="utf-8").startswith('"""Moved to :mod:'):
            continue  # an old path kept as a thin re-export: documented at the module's new home
        found.append(name)
    return found


def _listed(nav: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(nav, str):
        out.add(nav)
    elif isinstance(nav, list):
        for item in nav:
            out |= _listed(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            out |= _listed(value)
    return out


def _section(nav: list[Any], title: str) -> list[Any]:
    for item in nav:
        if isinstance(item, dict) and title in item and isinstance(item[title], list):
            return item[title]  # type: ignore[no-any-return]
    new: list[Any] = []
    nav.append({title: new})
    return new


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#\s+(.*)", line)
        if m:
            return m.group(1).strip()
    return path.stem.replace("_", " ").replace("-", " ").capitalize()


def on_config(config: Any) -> Any:
    nav = config["nav"]
    listed = _listed(nav)
    api = _section(nav, SECTIONS["api"])
    for name in public_modules():
        uri = f"api/{name}.md"
        if uri not in listed:
            api.append({name: uri})
    docs = Path(config["docs_dir"])
    for path in sorted(docs.rglob("*.md")):
        uri = path.relative_to(docs).as_posix()
        if uri in listed or uri.startswith("api/") and uri != "api/index.md":
            continue
        top = uri.split("/")[0] if "/" in uri else ""
        _section(nav, SECTIONS.get(top, "Topics")).append({_title(path): uri})
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for name in public_modules():
        content = f"# `{name}`\n\n::: {name}\n    options:\n      show_root_heading: false\n"
        files.append(File.generated(config, f"api/{name}.md", content=content))
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "changelog.md", content=changelog))
    return files
