"""Shared CLI plumbing: error handling, JSON output, consoles, delayed progress bars.

Imports only the standard library, typer and rich, so ``renyi --help`` stays fast; the
library itself is imported inside the commands.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:  # pragma: no cover - rich is imported when a console is first needed
    from rich.console import Console

EXIT_USER = 2  # bad input: pipeline file, parameter out of domain, impossible conversion
EXIT_FAIL = 1  # could not complete (unwritable output, budget refused, ...)

#: Mechanism names accepted on the command line (hyphens; pipeline files use underscores).
MECHANISMS = ("gaussian", "laplace", "randomized-response", "discrete-gaussian", "discrete-laplace", "exponential")


class CLIError(Exception):
    """An error to report as one line with a given exit code."""

    def __init__(self, message: str, code: int = EXIT_FAIL) -> None:
        super().__init__(message)
        self.code = code


def fail(message: str, code: int) -> typer.Exit:
    """Print ``error: message`` on stderr and return the Exit to raise."""
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    return typer.Exit(code)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn library and user errors into one line on stderr and an exit code (no traceback).

    ``DomainError`` (including pipeline errors), ``ConversionError`` and wrong-type errors in
    parameters exit 2; other renyi errors and unwritable outputs exit 1.
    """
    try:
        yield
    except typer.Exit:
        raise
    except CLIError as e:
        raise fail(str(e), e.code) from None
    except Exception as e:  # classify without importing renyi at module import time
        from renyi.core.errors import ConversionError, DomainError, RenyiError

        if isinstance(e, (DomainError, ConversionError)):
            raise fail(str(e), EXIT_USER) from None
        if isinstance(e, RenyiError):
            raise fail(str(e), EXIT_FAIL) from None
        if isinstance(e, TypeError) and _from_validation(e):
            raise fail(str(e), EXIT_USER) from None
        raise


def one_line_warnings() -> None:
    """Show renyi's warnings as one ``warning: ...`` line on stderr, without source lines.

    A user of the command line cannot act on a file name and line number inside renyi;
    numpy's floating-point RuntimeWarnings (handled where they arise) are not shown.
    """
    import warnings

    def show(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
             line: Any = None) -> None:
        if issubclass(category, RuntimeWarning) and category.__name__ != "RenyiNumericalWarning":
            return
        sys.stderr.write(f"warning: {message}\n")

    warnings.showwarning = show


def one_line_usage_errors() -> None:
    """Show click's usage errors (a bad option value, an unknown option) as one ``error: ...``
    line on stderr, naming the option, the value and where help is, with click's exit code 2.

    click prints four lines (usage, hint, a blank line, the error); renyi's rule for every user
    error on the command line is one line and a non-zero exit.
    """
    import typer.core

    def show(self: Any, file: Any = None) -> None:
        ctx = self.ctx
        hint = ""
        if ctx is not None and ctx.help_option_names:
            hint = f" (see '{ctx.command_path} {ctx.help_option_names[0]}')"
        message = " ".join(self.format_message().split())
        (file or sys.stderr).write(f"error: {message}{hint}\n")

    # typer 0.29 raises the usage errors of its own bundled copy of click (typer.core._click) and
    # need not install click at all; older typer imports click itself. Patch whichever is loaded
    # (never import click here: it may be absent, and the CLI keeps its imports light).
    bundled = getattr(getattr(getattr(typer.core, "_click", None), "exceptions", None), "UsageError", None)
    plain = getattr(getattr(sys.modules.get("click"), "exceptions", None), "UsageError", None)
    for cls in {bundled, plain} - {None}:
        setattr(cls, "show", show)  # (on the class: click calls e.show() on the instance)


def _from_validation(e: BaseException) -> bool:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and "_validation" in tb.tb_frame.f_code.co_filename


def jsonable(obj: Any) -> Any:
    """Replace non-finite floats by strings so the output is strict JSON."""
    if isinstance(obj, float):
        if math.isnan(obj):
            return "nan"
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


def print_json(obj: Any) -> None:
    """One JSON object on stdout (strict JSON: no NaN/Infinity literals)."""
    sys.stdout.write(json.dumps(jsonable(obj), ensure_ascii=False, indent=2, allow_nan=False) + "\n")
    sys.stdout.flush()


def console(stderr: bool = False) -> Console:
    """A rich console on the *current* stdout/stderr (wide when not a terminal)."""
    from rich.console import Console

    c = Console(stderr=stderr, highlight=False)
    if not c.is_terminal:
        c = Console(stderr=stderr, highlight=False, width=120)
    return c


class DelayedProgress:
    """A rich progress bar on stderr that appears only if the work lasts longer than ``delay``.

    Call the instance with a label to mark the start of each step. Nothing is drawn when
    stderr is not a terminal (pipes, tests) or when the work finishes within ``delay``.
    """

    def __init__(self, description: str, total: int | None = None, delay: float = 1.0) -> None:
        self.description = description
        self.total = total
        self.delay = delay
        self._lock = threading.Lock()
        self._progress: Any = None
        self._task: Any = None
        self._timer: threading.Timer | None = None
        self._done = 0
        self._label = ""

    def __enter__(self) -> DelayedProgress:
        c = console(stderr=True)
        if c.is_terminal:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            columns = [SpinnerColumn(), TextColumn("[progress.description]{task.description}")]
            if self.total is not None:
                columns.append(BarColumn())
            columns.append(TimeElapsedColumn())
            self._progress = Progress(*columns, console=c, transient=True)
            self._task = self._progress.add_task(self.description, total=self.total)
            self._timer = threading.Timer(self.delay, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _start(self) -> None:
        with self._lock:
            if self._progress is not None:
                self._progress.start()
                self._started = True

    def __call__(self, label: str = "") -> None:
        if self._progress is None:
            return
        with self._lock:
            if self._label:
                self._done += 1
            self._label = label
            self._progress.update(self._task, completed=self._done,
                                  description=f"{self.description}: {label}" if label else self.description)

    def __exit__(self, *exc: Any) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            if self._progress is not None and getattr(self, "_started", False):
                self._progress.stop()
            self._progress = None
