"""``evotui run``: evolve a task's kernel, in the TUI or headless (DESIGN §3)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from evotui.cli.common import (
    NonEmptyPath,
    allow_torch_option,
    fail,
    no_sandbox_option,
    shape_option,
)
from evotui.config import DEFAULT_MODEL

RUN_HELP = f"""Evolve the kernel of TASK (a KernelBench-format file or a folder such as
sample_kernels/softmax), starting from its seed candidate: --seed FILE, else seed.py next to
the task, else (param mutator) a seed derived from the reference Model.

On the CPU, a task without small CPU shapes has its size constants shrunk to fit the
interpreter (the run says which); --shape NAME=VALUE sets one yourself.

\b
Mutators: llm (a local Ollama model), param (block sizes, num_warps, … without a model),
mixed (both), auto (default: llm when Ollama answers and has the model, else param).
The default model is {DEFAULT_MODEL}.

The run directory (--out) receives report.json, report.md, best.py, events.jsonl and a
checkpoint every generation: `evotui run --resume DIR` continues after Ctrl-C or a crash.
"""


@click.command("run", help=RUN_HELP)
@click.argument("task", required=False, type=NonEmptyPath(path_type=Path))
@click.option("--seed", "seed", type=NonEmptyPath(path_type=Path, dir_okay=False),
              help="Seed candidate (default: seed.py next to the task).")
@click.option("--headless", is_flag=True, help="No TUI: a progress line on stderr.")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default=None,
              help="cuda: every visible GPU; cpu: Triton's interpreter (checks correctness, "
                   "times are not kernel speed); auto (default): cuda when a GPU is visible.")
@click.option("--iterations", type=click.IntRange(min=0), default=None,
              help="Evaluated children to run for (default 20; with --resume: the new total).")
@click.option("--mutator", type=click.Choice(["auto", "llm", "param", "mixed"]), default=None,
              help="How children are made (default auto).")
@click.option("--model", default=None, help=f"Ollama model (default {DEFAULT_MODEL}).")
@click.option("--ollama-host", default=None, metavar="URL",
              help="Ollama server (default: $OLLAMA_HOST, else http://127.0.0.1:11434).")
@click.option("--out", type=NonEmptyPath(path_type=Path, file_okay=False), default=None,
              help="Run directory (default: $EVOTUI_HOME/runs/TASK-TIMESTAMP).")
@click.option("--resume", type=NonEmptyPath(path_type=Path, file_okay=False, exists=True),
              default=None, help="Continue the run in this directory.")
@click.option("--memory-k", type=click.IntRange(0, 5), default=None,
              help="Pieces of advice per prompt (default 3; 0 turns the advice library off).")
@click.option("--random-seed", type=int, default=None, help="Seed of the engine's RNG (default 0).")
@click.option("--llm-timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds one model answer may take (default 300).")
@click.option("--eval-timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds one candidate's evaluation may take (default 180).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Evaluate on the GPU workers of a Dask cluster (tcp://host:8786; needs "
                   "evotui[dask]; see docs/distributed.md). --device then applies on the workers.")
@shape_option
@allow_torch_option
@no_sandbox_option
def run(task: Path | None, seed: Path | None, headless: bool, device: str | None,
        iterations: int | None, mutator: str | None, model: str | None, ollama_host: str | None,
        out: Path | None, resume: Path | None, memory_k: int | None, random_seed: int | None,
        llm_timeout: float | None, eval_timeout: float | None, scheduler: str | None,
        shape: dict | None, allow_torch: list[str] | None) -> None:
    from evotui.engine.session import RunOptions

    if task is None and resume is None:
        raise click.UsageError("give a TASK, or --resume DIR")
    if resume is not None:
        _check_resume(resume, {"--out": out, "--seed": seed, "--random-seed": random_seed,
                               "--shape": shape, "--allow-torch": allow_torch})
    options = RunOptions(
        task=str(task) if task else None, seed=str(seed) if seed else None, device=device,
        iterations=iterations, mutator=mutator, model=model, ollama_host=ollama_host,
        out=str(out) if out else None, resume=str(resume) if resume else None,
        memory_k=memory_k, random_seed=random_seed, llm_timeout=llm_timeout,
        eval_timeout=eval_timeout, scheduler=scheduler, shape=shape, allow_torch=allow_torch)
    if not headless:
        try:
            from evotui.tui import NotATerminal, run_tui
        except ImportError as e:  # textual missing or broken
            click.echo(f"The TUI cannot be loaded ({e}): running headless.", err=True)
        else:
            try:
                sys.exit(run_tui(options))
            except NotATerminal:  # nothing to draw on
                click.echo("not a terminal: running headless", err=True)
    from evotui import headless as runner

    sys.exit(runner.run(options))


def _check_resume(resume: Path, given: dict[str, object]) -> None:
    """A resumed run keeps its directory, seed and RNG: these options would be ignored."""
    clash = [name for name, value in given.items() if value is not None]
    if clash:
        fail(f"{', '.join(clash)} cannot be combined with --resume (the run in {resume} keeps "
             "its own)")
