"""``evotui ab TASK``: the same budget with the advice library off and on, side by side."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table

from evotui.cli.common import NonEmptyPath, fail

if TYPE_CHECKING:
    from evotui.eval.evaluator import Evaluator

AB_HELP = """Does memory pay? Solve TASK with the same budget with the advice library off and
on, over several RNG seeds, and compare evaluations to reach a target and the best result.

\b
With --learn TASK2, a run on a related task (another shape or dtype, e.g.
sample_kernels/rmsnorm_fp16 for sample_kernels/rmsnorm) fills the library first.
Everything happens in a private copy of your library under OUT/home: yours is not
changed unless you pass --save-advice. Writes OUT/ab.json and OUT/ab.md.

\b
The target is --target-pct % of the best result of all runs (default 98), or with
--target-speedup X, X times the seed's speed. On the CPU interpreter the times are
interpreter wall times: the comparison shows the mechanics, not kernel speed.
"""


def _open_pool(device: str) -> Evaluator:
    """The evaluator pool for all runs (tests replace this)."""
    from evotui.eval import EvaluatorPool

    return EvaluatorPool(device)


def print_table(console: Console, data: dict[str, Any]) -> None:
    from evotui.ab import report as ab_report

    table = Table(title=f"{data['task']}: memory off vs on", title_justify="left")
    table.add_column("")
    table.add_column("memory off", justify="right")
    table.add_column("memory on", justify="right")
    for what, off, on in ab_report.rows(data):
        table.add_row(what, off, on)
    console.print(table)
    console.print(ab_report.target_line(data), highlight=False)
    console.print(f"[bold]{data['verdict']}[/]", highlight=False)
    if data["interpreter"]:
        console.print("CPU interpreter: wall times, not kernel speed; this shows the mechanics "
                      "only, measure on a GPU", style="yellow", highlight=False)


@click.command("ab", help=AB_HELP)
@click.argument("task", type=NonEmptyPath(exists=True, path_type=Path))
@click.option("--seed", "seed", type=NonEmptyPath(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Seed candidate of TASK for every run (default: seed.py next "
                                 "to the task).")
@click.option("--learn", "learn", type=NonEmptyPath(exists=True, path_type=Path), default=None,
              help="Run this related task first to fill the library (from its own seed.py).")
@click.option("--seeds", type=click.IntRange(1, 100), default=3, show_default=True,
              help="RNG seeds (runs per arm).")
@click.option("--iterations", type=click.IntRange(min=1), default=20, show_default=True,
              help="Evaluated children per run (the budget).")
@click.option("--learn-iterations", type=click.IntRange(min=1), default=None,
              help="Evaluated children of the learning run (default: --iterations).")
@click.option("--target-pct", type=click.FloatRange(1, 100), default=98.0, show_default=True,
              help="Target: this % of the best result of all runs.")
@click.option("--target-speedup", type=click.FloatRange(min=1), default=None,
              help="Target instead: this many times the seed's speed.")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto",
              show_default=True,
              help="cuda: every visible GPU; cpu: Triton's interpreter (times are not kernel "
                   "speed); auto: cuda when a GPU is visible.")
@click.option("--mutator", type=click.Choice(["param", "llm", "mixed"]), default="param",
              show_default=True,
              help="How children are made: param (block sizes, num_warps, … without a model), "
                   "llm (a local Ollama model) or mixed (both).")
@click.option("--model", default=None, help="Ollama model for llm/mixed.")
@click.option("--ollama-host", default=None, metavar="URL",
              help="Ollama server for llm/mixed (default: $OLLAMA_HOST, else "
                   "http://127.0.0.1:11434).")
@click.option("--memory-k", type=click.IntRange(1, 5), default=3, show_default=True,
              help="Pieces of advice per mutation when memory is on.")
@click.option("--out", type=NonEmptyPath(file_okay=False, path_type=Path), default=None,
              help="Where runs and results go (default: $EVOTUI_HOME/ab/TASK-TIMESTAMP).")
@click.option("--fresh-library", is_flag=True,
              help="Start from the cold-start pack instead of a copy of your library.")
@click.option("--save-advice", is_flag=True,
              help="Afterwards, import the advice the learning run distilled into your library.")
@click.option("--eval-timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds one evaluation may take (default 180).")
def ab(task: Path, seed: Path | None, learn: Path | None, seeds: int, iterations: int,
       learn_iterations: int | None, target_pct: float, target_speedup: float | None,
       device: str, mutator: str, model: str | None, ollama_host: str | None, memory_k: int,
       out: Path | None, fresh_library: bool, save_advice: bool,
       eval_timeout: float | None) -> None:
    from evotui import config
    from evotui.ab import run as experiment
    from evotui.engine.session import SetupError
    from evotui.memory.atomic import CorruptLibrary
    from evotui.memory.store import AdviceError
    from evotui.task.model import TaskError

    try:
        _check_seeds(task, seed, learn)
        if out is None:
            out = config.home() / "ab" / f"{task.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    except (TaskError, config.HomeError) as e:
        fail(str(e))
    if (out / "ab.json").exists() or (out / "runs").exists():
        fail(f"{out} already holds an A/B experiment: choose another --out")
    spec = experiment.ABSpec(
        task=str(task), out=out, learn=str(learn) if learn else None,
        seed=str(seed) if seed else None, seeds=seeds,
        iterations=iterations, learn_iterations=learn_iterations, target_pct=target_pct,
        target_speedup=target_speedup, device=device, mutator=mutator, model=model,
        ollama_host=ollama_host, memory_k=memory_k, fresh_library=fresh_library,
        save_advice=save_advice, eval_timeout=eval_timeout)
    err = Console(stderr=True)
    try:
        pool = _open_pool(device)
    except RuntimeError as e:
        fail(str(e))
    runs = (1 if learn else 0) + 2 * seeds
    err.print(f"A/B on {task}: {runs} runs of {iterations} evaluations → {out}", highlight=False)
    if pool.is_cpu:
        err.print("CPU interpreter: times are interpreter wall times, not kernel speed",
                  style="yellow")
    with err.status("starting…") as status:
        runner = experiment.ABRunner(spec, pool, lambda line: status.update(line))
        try:
            data = asyncio.run(_run(runner))
        except (SetupError, TaskError, AdviceError, CorruptLibrary) as e:
            fail(str(e))
        finally:
            pool.close()
    experiment.write_results(out, data)
    print_table(Console(), data)
    if data["stopped"]:
        err.print("stopped early: the figures cover the runs that finished", style="yellow")
    if data["library"].get("saved") is not None:
        click.echo(f"{data['library']['saved']} pieces of learned advice saved to your library")
    click.echo(f"results: {out / 'ab.json'}, {out / 'ab.md'}")


def _check_seeds(task: Path, seed: Path | None, learn: Path | None) -> None:
    """Before the pool starts: every run needs a seed candidate (raises ``TaskError``)."""
    from evotui.task.model import resolve_task

    ref = resolve_task(task)
    if seed is None and ref.seed_path is None:
        fail(f"task {ref.name} has no seed candidate (seed.py next to it): pass --seed FILE")
    if learn is not None and resolve_task(learn).seed_path is None:
        fail(f"--learn task {learn} has no seed candidate: put a seed.py next to it")


async def _run(runner: Any) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    installed = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, runner.stop)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
    try:
        return await runner.run()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
