"""Figure output for the CLI: checks the path first, then draws (matplotlib imported lazily)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from renyi.cli._common import EXIT_FAIL, EXIT_USER, CLIError

SUFFIXES = (".png", ".svg", ".pdf")


def check_output(path: Path) -> None:
    """Fail early (before any long computation) if ``path`` cannot be a figure file."""
    if path.suffix.lower() not in SUFFIXES:
        raise CLIError(f"plot file must end in .png, .svg or .pdf; got {str(path)!r}", EXIT_USER)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise CLIError(f"cannot write plot {str(path)!r}: it is a directory", EXIT_FAIL)
    if not parent.is_dir():
        raise CLIError(f"cannot write plot {str(path)!r}: directory {str(parent)!r} does not exist", EXIT_FAIL)
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CLIError(f"cannot write plot {str(path)!r}: permission denied", EXIT_FAIL)


def save_figure(kind: str, path: Path, **kwargs: Any) -> Path:
    """Draw figure ``kind`` (see :func:`renyi.plots.figure_for`) and write it to ``path``."""
    check_output(path)
    try:
        from renyi import plots
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise CLIError(f"plotting needs matplotlib: pip install 'renyi[plot]' ({e})", EXIT_FAIL) from None
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError("plotting needs matplotlib: pip install 'renyi[plot]'", EXIT_FAIL) from None
    fig = plots.figure_for(kind, **kwargs)
    try:
        plots.save_figure(fig, path)
    except OSError as e:
        raise CLIError(f"cannot write plot {str(path)!r}: {e.strerror or e}", EXIT_FAIL) from None
    return path
