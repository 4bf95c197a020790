"""The command line: ``evotui TASK`` (the TUI: ``evotui run TASK``), ``evotui bench``,
``evotui run``, ``evotui advice``, ``evotui doctor``.

Contracts (DESIGN §3): exit 0 when accepted, 1 when rejected, 2 on a usage or task error;
with ``--json`` the last line of stdout is one JSON object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console
from rich.table import Table

from evotui.cli.common import allow_torch_option, fail, no_sandbox_option, shape_option
from evotui.eval.sandbox_state import SandboxState
from evotui.task.model import TaskError, TaskRef, resolve_task
from evotui.task.preflight import preflight

if TYPE_CHECKING:
    from evotui.eval import EvalResult, EvaluatorPool

DEVICE_CHOICE = click.Choice(["auto", "cuda", "cpu"])


def _fail(message: str, as_json: bool = False, reason: str = "usage_error") -> NoReturn:
    """A user mistake (``evotui.cli.common.fail``); with --json, the JSON last line too."""
    if as_json:
        print(json.dumps({"accepted": False, "reason": reason, "message": message}))
    fail(message)


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if value != value or value in (float("inf"), float("-inf")):  # nan passes FloatRange
        raise click.BadParameter("must be a finite number of seconds")
    return value


class TaskFirstGroup(click.Group):
    """``evotui TASK [OPTIONS]`` means ``evotui run TASK [OPTIONS]`` (DESIGN §3)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help",
                                                                      "--version"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=TaskFirstGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evotui")
def main() -> None:
    """evotui: evolve GPU kernels with a local model, watch it live, keep what worked.

    \b
    evotui TASK [OPTIONS]         the live TUI over a run (same options as `evotui run`)
    evotui bench TASK CANDIDATE   check and time one candidate (exit 0 accepted, 1 rejected)
    Tasks are KernelBench-format files or folders such as sample_kernels/softmax.
    """


@main.command()
@click.argument("task", type=click.Path(path_type=Path))
@click.argument("candidate", type=click.Path(path_type=Path))
@click.option("--device", type=DEVICE_CHOICE, default="auto", show_default=True,
              help="cuda: time on the GPU; cpu: check correctness with Triton's interpreter "
                   "(no kernel timings); auto: cuda when a GPU is visible.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--timeout", type=click.FloatRange(min=1), default=180.0, show_default=True,
              callback=_finite,
              help="Seconds the candidate may run (loading, checks and timing) before it is "
                   "killed and rejected as `timeout`.")
@click.option("--trials", type=click.IntRange(min=1, max=100), default=5, show_default=True,
              help="Correctness trials on fresh random inputs.")
@click.option("--sanitize/--no-sanitize", default=True, show_default=True,
              help="CUDA C candidates: run an accepted one under compute-sanitizer (memcheck) "
                   "when the tool is installed; a memory error rejects it.")
@shape_option
@allow_torch_option
@no_sandbox_option
def bench(task: Path, candidate: Path, device: str, as_json: bool, timeout: float, trials: int,
          sanitize: bool, shape: dict | None, allow_torch: list[str] | None) -> None:
    """Check CANDIDATE against TASK and time it.

    The candidate runs in a worker process; its outputs are compared with the task's
    reference in a separate process where candidate code never runs. Speedups are against
    eager PyTorch and torch.compile, both timed live on the same GPU.
    """
    from evotui.eval import EvaluatorPool

    try:
        task_ref = resolve_task(task, shape=shape, allow_torch=tuple(allow_torch or ()))
    except TaskError as e:
        _fail(str(e), as_json, "task_error")
    try:
        source = candidate.read_text()
    except OSError as e:
        _fail(f"cannot read candidate {candidate}: {e.strerror}", as_json)
    except UnicodeDecodeError:
        _fail(f"candidate {candidate} is not UTF-8 text", as_json)
    err = Console(stderr=True)
    try:
        pool = EvaluatorPool(device)
    except RuntimeError as e:
        _fail(str(e), as_json)
    try:
        with pool:
            result, report, sandbox = _bench_in(pool, task_ref, source, candidate, trials,
                                                timeout, sanitize, as_json, err)
    except KeyboardInterrupt:  # at any step, not a verdict: exit 1 would read as "rejected"
        click.echo("interrupted: no verdict", err=True)
        sys.exit(130)
    if report is not None and report.ran and not report.ok:
        from dataclasses import replace

        from evotui.core.reasons import SANITIZER_ERROR

        result = replace(result, accepted=False, reason=SANITIZER_ERROR, message=report.message)
    if report is not None:
        err.print(f"compute-sanitizer: {report.message}")
    if as_json:
        print(json.dumps({"task": task_ref.name, "candidate": str(candidate), **result.as_dict(),
                          "sandbox": sandbox.summary,
                          "sanitizer": report.as_dict() if report is not None else None}))
    else:
        _print_result(task_ref.name, candidate, result, sandbox.summary)
    sys.exit(0 if result.accepted else 1)


def _print_result(task_name: str, candidate: Path, result, sandbox: str) -> None:
    console = Console()
    verdict = "[bold green]accepted[/]" if result.accepted else f"[bold red]rejected[/] ({result.reason})"
    table = Table(title=f"{task_name} — {candidate.name}", show_header=False, title_justify="left")
    table.add_column(style="dim")
    table.add_column()
    table.add_row("verdict", verdict)
    table.add_row("why", result.message)
    table.add_row("sandbox", sandbox)
    table.add_row("device", result.device + ("  (Triton interpreter)" if result.interpreter else ""))
    if result.time_ms is not None:
        if result.interpreter:
            table.add_row("wall time", f"{result.time_ms:.1f} ms  [yellow]interpreter: not kernel speed[/]")
        else:
            table.add_row("time", f"{result.time_ms * 1000:.2f} µs  (median, spread "
                          f"{result.spread_pct:.2f} %, {result.timing_method})")
            if result.eager_ms:
                table.add_row("eager", f"{result.eager_ms * 1000:.2f} µs → speedup "
                              f"{result.speedup_eager:.2f}×")
            if result.compile_ms:
                table.add_row("torch.compile", f"{result.compile_ms * 1000:.2f} µs → speedup "
                              f"{result.speedup_compile:.2f}×")
            if result.roofline_pct is not None:
                table.add_row("roofline", f"{result.roofline_pct:.1f} % of measured peak")
            if result.copy_pct is not None:
                table.add_row("copy", f"{result.copy_pct:.1f} % of a copy of the same bytes")
    if result.launches:
        table.add_row("kernels", ", ".join(f"{k} ×{v}" for k, v in result.launches.items()))
    table.add_row("took", f"{result.wall_s:.1f} s")
    console.print(table)


from evotui.cli.advice import advice  # noqa: E402
from evotui.cli.doctor import doctor  # noqa: E402
from evotui.cli.run import run  # noqa: E402

main.add_command(run)
main.add_command(doctor)
main.add_command(advice)

from evotui.cli.distill import distill  # noqa: E402

advice.add_command(distill)

from evotui.cli.ab import ab  # noqa: E402

main.add_command(ab)

from evotui.cli.suite import suite  # noqa: E402

main.add_command(suite)


def _bench_in(pool: EvaluatorPool, task_ref: TaskRef, source: str, candidate: Path,
              trials: int, timeout: float, sanitize: bool, as_json: bool,
              err: Console) -> tuple[EvalResult, Any, SandboxState]:
    """Preflight, evaluate and (optionally) sanitize one candidate in an open pool."""
    from evotui.eval import EvalRequest

    try:
        shape_note = preflight(task_ref, pool.is_cpu)
    except TaskError as e:
        _fail(str(e), as_json, "task_error")
    if shape_note:
        click.echo(shape_note, err=True)
    sandbox = pool.sandbox_state()
    if sandbox.problem:
        _fail(sandbox.problem, as_json, "sandbox_unavailable")
    if sandbox.warning:
        err.print(f"[bold yellow]{sandbox.warning}[/]")
    where = "CPU (Triton interpreter)" if pool.is_cpu else pool.devices[0]
    with err.status(f"evaluating {candidate.name} on {where}…"):
        result = pool.evaluate(EvalRequest(task=task_ref, source=source, name=candidate.name,
                                           trials=trials, timeout_s=timeout))
    report = pool.sanitize(task_ref, source) if sanitize and result.accepted else None
    return result, report, sandbox


if __name__ == "__main__":
    main()

