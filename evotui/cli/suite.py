"""``evotui suite PROBLEMS...``: many tasks, each an ordinary run, scored with KernelBench's
fast_p."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource
from rich.console import Console

from evotui.cli.common import (
    NonEmptyPath,
    allow_torch_option,
    fail,
    no_sandbox_option,
    shape_option,
)

if TYPE_CHECKING:
    from evotui.eval.evaluator import Evaluator

SUITE_HELP = """Run every problem of PROBLEMS headless, one ordinary run directory each, and
score the suite with KernelBench's fast_p.

\b
PROBLEMS are task files, folders, or list files:
  - a folder holding task.py is one problem (as for `evotui run`);
  - any other folder gives every *.py task in it and every sub-folder holding a
    task.py, in natural order (2_x before 10_x);
  - a list file (not *.py) names one task per line, optionally followed by a seed
    file (`TASK [SEED]`, relative to the list or to the current folder, #
    comments).

Each problem gets --budget evaluated children (the seed does not count) and/or
--time-budget of wall time, and leaves a run directory DIR/NAME that the TUI opens
(`evotui run --resume DIR/NAME`). DIR/suite.json and DIR/suite.md give per problem the
status, the seed's origin, the best speedup against eager PyTorch and torch.compile, % of
roofline and evaluations; then fast_p for p in 0, 0.5, 0.8, 1, 1.5, 2 (the fraction of
ALL problems that are correct AND faster than p times the baseline, as KernelBench
defines it) and the geometric mean speedup over the accepted problems. On the CPU
interpreter no speedup is measured: those columns read n/a.

\b
Ctrl-C (or a crash) loses nothing: the same command again (the same --out, or none:
the default folder is the same for the same problems), or `evotui suite --resume DIR`,
skips the finished problems and resumes the interrupted one from its checkpoint.
Problems that could not start are tried again; a finished problem is not, even with a
larger --budget (continue its run: `evotui run --resume DIR/NAME --iterations N`).

--allow-torch and --shape apply to every problem; suite.md marks each problem whose
reference calls an op allowed in torch (by --allow-torch or by the task's own EVOTUI
metadata): a GEMM problem is not marked for a convolution the suite allowed.

Locally, problems run one after another, each spreading its evaluations over every GPU of
the host. With --scheduler, one problem per GPU worker of the Dask cluster runs at once
(one problem a job), its evaluations placed on whichever GPU is free. --jobs N runs N
problems at once, each with a share of the GPUs.
"""


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    from evotui.suite.spec import SpecError, parse_duration

    if value is None:
        return None
    try:
        return parse_duration(value)
    except SpecError as e:
        raise click.BadParameter(str(e)) from None


def _default_out(args: tuple[Path, ...], problems: list) -> Path:
    """$EVOTUI_HOME/suites/NAME-HASH, the same for the same problems: the same command
    again continues the suite."""
    from evotui import config

    try:
        root = config.home() / "suites"
    except config.HomeError as e:
        fail(f"{e}; or pass --out DIR")
    label = args[0].resolve().name if len(args) == 1 else "suite"
    digest = hashlib.sha256("\n".join(f"{p.task}\t{p.seed}" for p in problems).encode())
    return root / f"{label or 'suite'}-{digest.hexdigest()[:8]}"


@click.command("suite", help=SUITE_HELP)
@click.argument("problems", nargs=-1, type=NonEmptyPath(path_type=Path))
@click.option("--budget", type=click.IntRange(min=0), default=None,
              help="Evaluated children per problem (default 20, or unlimited when only "
                   "--time-budget is given).")
@click.option("--time-budget", "time_budget", default=None, metavar="DURATION",
              callback=_duration,
              help="Wall time per problem for the search, such as 90s, 10m or 1h30m, counted "
                   "from the seed's verdict (its first judgement also times eager PyTorch and "
                   "torch.compile); with --budget: whichever comes first.")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto",
              show_default=True,
              help="cuda: every visible GPU; cpu: Triton's interpreter (checks correctness, "
                   "no speedups); auto: cuda when a GPU is visible.")
@click.option("--mutator", type=click.Choice(["auto", "llm", "param", "mixed"]),
              default="param", show_default=True, help="How children are made (as `run`).")
@click.option("--out", type=NonEmptyPath(path_type=Path, file_okay=False), default=None,
              help="Suite folder (default: $EVOTUI_HOME/suites/NAME-HASH, one per list of "
                   "problems); the same folder again continues the suite.")
@click.option("--resume", type=NonEmptyPath(path_type=Path, file_okay=False, exists=True),
              default=None, help="Continue the suite in this folder, with its own problems "
                                 "and options.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Evaluate on the GPU workers of a Dask cluster (tcp://host:8786; needs "
                   "evotui[dask]; see docs/distributed.md).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Problems run at once, each with a share of the GPUs (default 1; with "
                   "--scheduler, one per GPU worker).")
@allow_torch_option
@shape_option
@click.option("--model", default=None, help="Ollama model for --mutator llm/mixed/auto (as `run`).")
@click.option("--ollama-host", default=None, metavar="URL",
              help="Ollama server (default: $OLLAMA_HOST, else http://127.0.0.1:11434).")
@click.option("--eval-timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds one candidate's evaluation may take (default 180).")
@click.option("--memory-k", type=click.IntRange(0, 5), default=None,
              help="Pieces of advice per prompt (default 3; 0 turns the advice library off, "
                   "so that no problem learns from an earlier one).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary of suite.json as one JSON object, the last line of stdout.")
@no_sandbox_option
def suite(problems: tuple[Path, ...], budget: int | None, time_budget: float | None,
          device: str, mutator: str, out: Path | None, resume: Path | None,
          scheduler: str | None, jobs: int | None, allow_torch: list[str] | None,
          shape: dict[str, Any] | None, model: str | None, ollama_host: str | None,
          eval_timeout: float | None, memory_k: int | None, as_json: bool) -> None:
    from evotui.suite.record import SuiteSettings, locked
    from evotui.suite.runner import open_suite, save
    from evotui.suite.spec import Budget, SpecError, discover

    if resume is not None and (problems or out is not None):
        fail("--resume DIR continues the suite in DIR with its own problems: give no "
             "PROBLEMS and no --out")
    if resume is not None:
        _refuse_with_resume(click.get_current_context(), resume)
    if resume is None and not problems:
        raise click.UsageError("give PROBLEMS (task files, folders or a list file), or "
                               "--resume DIR")
    try:
        if resume is not None:
            run = open_suite(resume, None, None)
        else:
            settings = SuiteSettings(
                Budget(budget if budget is not None or time_budget is not None else 20,
                       time_budget),
                device, mutator, scheduler, jobs, tuple(allow_torch or ()), shape or {}, model,
                ollama_host, eval_timeout, memory_k)
            found = discover([str(p) for p in problems])
            run = open_suite(out or _default_out(problems, found), found, settings)
    except SpecError as e:
        fail(str(e))
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(locked(run.folder))
            save(run)
        except SpecError as e:
            fail(str(e))
        except OSError as e:
            fail(f"cannot write the suite folder {run.folder}: {e.strerror or e}")
        _run_suite(run, Console(stderr=True), as_json)


_SETTINGS = ("budget", "time_budget", "device", "mutator", "scheduler", "jobs", "allow_torch",
             "shape", "model", "ollama_host", "eval_timeout", "memory_k")


def _refuse_with_resume(ctx: click.Context, resume: Path) -> None:
    """A resumed suite keeps its own options: one given now would be ignored."""
    given = [p.opts[0] for p in ctx.command.params if p.name in _SETTINGS
             and ctx.get_parameter_source(p.name) not in (None, ParameterSource.DEFAULT)]
    if given:
        fail(f"{', '.join(given)} cannot be combined with --resume (the suite in {resume} keeps "
             "its own; give the same PROBLEMS and --out instead to change them)")


def _run_suite(run, err: Console, as_json: bool) -> None:
    from evotui.engine.session import SetupError
    from evotui.suite.runner import open_evaluator

    if all(r.done for r in run.results):
        err.print(f"every problem of {run.folder} is finished", highlight=False)
        _print_summary(run, as_json)
        return
    try:
        with err.status("starting the evaluator…"):
            evaluator, warning = open_evaluator(run.settings)
    except SetupError as e:
        fail(str(e))
    if warning:
        err.print(f"[bold yellow]{warning}[/]")
    try:
        complete = asyncio.run(_run(run, evaluator, err))
        _print_summary(run, as_json)
    finally:
        _close(evaluator)
    if not complete:
        click.echo(f"interrupted: continue with `evotui suite --resume {run.folder}`", err=True)
        sys.exit(130)


def _close(evaluator: Evaluator) -> None:
    """Close the pool; a Ctrl-C meanwhile only makes it quicker (suite.json is written)."""
    try:
        evaluator.close()
    except KeyboardInterrupt:
        evaluator.close()


async def _run(run, evaluator, err: Console) -> bool:
    from evotui.suite.display import SuiteDisplay
    from evotui.suite.runner import SuiteRunner

    done = sum(r.done for r in run.results)
    where = f"Dask cluster {run.settings.scheduler}" if run.settings.scheduler else \
        ", ".join(evaluator.devices)
    n = len(run.results)
    err.print(f"suite of {n} problem{'' if n == 1 else 's'} ({done} done) on {where}: "
              f"{run.settings.budget.describe()} → {run.folder}", style="bold", highlight=False)
    display = SuiteDisplay(err, len(run.results), done, run.settings.budget.evaluations)
    runner = SuiteRunner(run, evaluator, display)
    loop = asyncio.get_running_loop()
    presses = 0

    def on_signal() -> None:
        nonlocal presses
        presses += 1
        err.print("stopping the suite: the running problem is checkpointed (press Ctrl-C "
                  "again to stop at once)…" if presses == 1 else "stopping now…", style="yellow")
        runner.stop()

    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        with display:
            return await runner.run_all()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def _print_summary(run, as_json: bool = False) -> None:
    from evotui.suite import report
    from evotui.suite.record import SUITE_JSON, SUITE_MD

    s = report.summary(run.results)
    print(f"accepted {s['accepted']} of {s['problems']}; could not start "
          f"{len(s['could_not_start'])}")
    for base, label in report.BASELINE_NAMES.items():
        table = s["fast_p"][base]
        if table is None:
            print(f"fast_p vs {label}: n/a ({s['na'].get(base, '')})")
        else:
            cells = ", ".join(f"{k} {v:.0%}" for k, v in table.items())
            g = s["geomean_speedup"][base]
            print(f"fast_p vs {label}: {cells}; geomean "
                  f"{'—' if g is None else f'{g:.2f}×'}")
    print(f"suite: {run.folder / SUITE_JSON}")
    print(f"suite: {run.folder / SUITE_MD}")
    if as_json:
        print(json.dumps({"suite": str(run.folder / SUITE_JSON), **s}))
