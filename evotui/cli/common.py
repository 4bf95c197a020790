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


# friendly names for --allow-torch: what the op policy sees once torch has dispatched them
TORCH_OP_ALIASES = {
    "conv": "convolution", "conv1d": "convolution", "conv2d": "convolution",
    "conv3d": "convolution", "conv_transpose1d": "convolution",
    "conv_transpose2d": "convolution", "conv_transpose3d": "convolution",
    "linear": "addmm", "matmul": "mm",
}


def _shapes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
            ) -> dict[str, Any] | None:
    if not values:
        return None
    out: dict[str, Any] = {}
    for text in values:
        name, sep, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name.isidentifier() or not value:
            fail(f"--shape {text!r}: give NAME=VALUE, e.g. --shape batch_size=64")
        try:
            parts = [int(v) for v in value.split(",") if v.strip()]
        except ValueError:
            fail(f"--shape {text!r}: {value!r} is not an integer (or integers separated by commas)")
        if not parts or any(p < 1 for p in parts):
            fail(f"--shape {text!r}: sizes must be positive integers")
        out[name] = tuple(parts) if "," in value else parts[0]
    return out


def _torch_ops(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
               ) -> list[str] | None:
    ops: list[str] = []
    for text in values:
        for raw in text.split(","):
            name = raw.strip().removeprefix("aten::").removeprefix("torch.")
            name = name.removeprefix("nn.functional.").removeprefix("F.").split(".")[0]
            if not name:
                continue
            if not name.replace("_", "").isalnum():
                fail(f"--allow-torch {raw.strip()!r}: give aten op names such as "
                     "aten::convolution or conv2d")
            ops.append("aten::" + TORCH_OP_ALIASES.get(name.lower(), name))
    return list(dict.fromkeys(ops)) or None


shape_option = click.option(
    "--shape", "shape", multiple=True, metavar="NAME=VALUE", callback=_shapes,
    help="Set one of the task file's size constants (batch_size, N, dim, ...; "
         "repeatable). On the CPU the others are still shrunk to fit the interpreter.")

allow_torch_option = click.option(
    "--allow-torch", "allow_torch", multiple=True, metavar="OPS", callback=_torch_ops,
    help="Torch ops a candidate may call in forward (comma-separated aten names such as "
         "aten::convolution, or conv2d, ...; repeatable). Default: none: the arithmetic "
         "must be in the candidate's own kernels.")
