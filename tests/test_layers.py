"""The package's import structure: layers import only downward, and no module imports itself
back through a circle (every import counts, at module level or inside a function).

docs/architecture.md describes the layers; this test is their definition. Imports under
``if TYPE_CHECKING:`` are annotations only (never executed), so they count for the layer rule
but not as circles: two value types may name each other in their signatures.
"""

from __future__ import annotations

import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "renyi"

#: bottom to top; a module may import modules of its own package or of a strictly lower rank.
LAYERS: list[tuple[str, ...]] = [
    ("renyi.core", "renyi._version"),
    ("renyi.divergences",),
    ("renyi.guarantees",),
    ("renyi.mechanisms",),
    ("renyi.sampling",),
    ("renyi.accounting",),
    ("renyi.budget",),
    ("renyi.pipeline", "renyi.report"),
    ("renyi.training", "renyi.release", "renyi.audit"),
]
#: presentation and the old module paths (thin re-exports): may import anything below.
TOP = "top"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def all_modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in SRC.rglob("*.py") if "examples" not in p.relative_to(SRC).parts}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id in ("TYPE_CHECKING", "_TYPE_CHECKING")) or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str, path: pathlib.Path, mods: dict[str, pathlib.Path]) -> list[tuple[str, int, bool]]:
    """(imported module, line, type-only) for every renyi import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    out: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "renyi":
                    out.append((_existing(alias.name, mods), node.lineno, type_only))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "renyi":
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                if len(subs) < len(node.names):  # names taken from the module itself
                    out.append((_existing(target, mods), node.lineno, type_only))
                out.extend((s, node.lineno, type_only) for s in subs)
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(tree, False)
    return [(m, line, t) for m, line, t in out if m != name]


def _existing(name: str, mods: dict[str, pathlib.Path]) -> str:
    while name not in mods and "." in name:
        name = name.rpartition(".")[0]
    return name


def rank(name: str) -> tuple[int, str]:
    """(layer rank, owning package) of a module; presentation and old paths rank on top."""
    for i, layer in enumerate(LAYERS):
        for pkg in layer:
            if name == pkg or name.startswith(pkg + "."):
                return i, layer[0] if layer[0] in ("renyi.pipeline",) else pkg
    return len(LAYERS), TOP


def graph() -> dict[str, list[tuple[str, int, bool]]]:
    mods = all_modules()
    return {m: imports_of(m, p, mods) for m, p in mods.items()}


def test_every_import_points_down() -> None:
    """No module imports a module of a higher layer, or of another package on its own layer."""
    bad = []
    for mod, deps in graph().items():
        r, pkg = rank(mod)
        for dep, line, _ in deps:
            rd, pkg_d = rank(dep)
            if pkg == TOP:
                continue
            if rd > r or (rd == r and pkg_d != pkg):
                bad.append(f"{mod}:{line} imports {dep}")
    assert bad == []


def test_no_import_circle() -> None:
    """The runtime import graph between modules (type-only imports aside) has no cycle."""
    g = {m: sorted({d for d, _, t in deps if not t}) for m, deps in graph().items()}
    colour: dict[str, int] = {}
    cycles: list[list[str]] = []

    def dfs(node: str, stack: list[str]) -> None:
        colour[node] = 1
        stack.append(node)
        for dep in g.get(node, []):
            if colour.get(dep, 0) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif colour.get(dep, 0) == 0:
                dfs(dep, stack)
        stack.pop()
        colour[node] = 2

    for m in sorted(g):
        if colour.get(m, 0) == 0:
            dfs(m, [])
    assert cycles == []


def test_the_test_sees_an_upward_import(tmp_path: pathlib.Path) -> None:
    """The checker itself can fail: a function-level import from a higher layer is found."""
    f = tmp_path / "x.py"
    f.write_text("def f():\n    from renyi.accounting import routes\n")
    found = imports_of("renyi.core.x", f, {"renyi.accounting.routes": f, "renyi.accounting": f})
    assert found == [("renyi.accounting.routes", 2, False)]
    assert rank("renyi.core.x")[0] < rank("renyi.accounting.routes")[0]
