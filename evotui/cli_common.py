"""What the commands share for reporting a user's mistake: one line on stderr, exit code 2."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


class NonEmptyPath(click.Path):
    """``click.Path`` that refuses ''. click turns '' into Path('.'), so ``--out ''`` would
    quietly mean the current directory."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            fail(f"{_name(param)} is empty: give a path")
        return super().convert(value, param, ctx)


def _name(param: click.Parameter | None) -> str:
    if isinstance(param, click.Option) and param.opts:
        return max(param.opts, key=len)
    return param.human_readable_name if param is not None else "path"


def _no_sandbox(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:  # read by every evaluator pool this process (or a TUI host it starts) makes
        os.environ["EVOTUI_NO_SANDBOX"] = "1"


no_sandbox_option = click.option(
    "--no-sandbox", is_flag=True, expose_value=False, callback=_no_sandbox,
    help="Evaluate candidates WITHOUT the operating system's sandbox (each still in a fresh "
         "process). Only for machines whose kernel cannot confine them: `evotui doctor` says "
         "which part is missing. Candidate code can then read and write your files.")
