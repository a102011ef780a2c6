"""``renyi examples``: list the example files shipped with renyi, or print one."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from renyi.cli._common import console, print_json, user_errors


def examples(
    name: Annotated[Optional[str], typer.Argument(help="Print this example's file (to copy and edit).",
                                                  show_default=False)] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the list as one JSON object.")] = False,
) -> None:
    """List the shipped example pipelines and scripts, or print one of them.

    Every pipeline example runs with ``renyi report --example NAME``; print it with
    ``renyi examples NAME > my.toml`` to start a pipeline of your own.

    Examples:

        renyi examples

        renyi examples dpsgd > my-training.toml

        renyi report --example census
    """
    with user_errors():
        from renyi._examples import example_path, examples as shipped

        if name is not None:
            sys.stdout.write(example_path(name).read_text(encoding="utf-8"))
            return
        found = shipped()
        if json_:
            print_json({"examples": [{"name": e.name, "kind": e.kind, "path": str(e.path), "summary": e.summary}
                                     for e in found]})
            return
        from rich.table import Table

        t = Table(title="Shipped examples (renyi report --example NAME; renyi examples NAME prints one)",
                  title_justify="left")
        t.add_column("name")
        t.add_column("kind")
        t.add_column("summary")
        for e in found:
            t.add_row(e.name, e.kind, e.summary)
        console().print(t)
