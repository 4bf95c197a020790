"""``evotui advice distill RUN_DIR``: a finished run's successful mutations → proposed advice.

Runs distil by themselves when they end; this is for a run made with the library off, one
whose end was cut short, or to let a model that is available now write the sentences.
Children already distilled are skipped, so running it twice adds nothing.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click

from evotui.cli.common import fail
from evotui.memory.atomic import CorruptLibrary
from evotui.memory.store import AdviceError


async def _model(name: str | None, host: str | None) -> tuple[Any, str]:
    """(an OllamaLLM, "") when the model answers, else (None, why not)."""
    if not name:
        return None, "the run used no model"
    from evotui.engine.session import LLM_OPTIONS
    from evotui.llm import OllamaLLM, has_model, probe

    status = await probe(host)
    if not status.reachable or status.error is not None:
        return None, f"no Ollama server answers ({status.error or 'unreachable'})"
    if not has_model(status, name):
        return None, f"model {name} is not on the Ollama server (`ollama pull {name}`)"
    return OllamaLLM(name, host=host, timeout=120.0, options=LLM_OPTIONS), ""


async def distill_run_dir(run_dir: Path, *, model: str | None = None, host: str | None = None,
                          use_llm: bool = True, min_gain: float = 0.05,
                          notes: list[str] | None = None) -> dict[str, Any]:
    """Distil the run in ``run_dir`` into the library at ``$EVOTUI_HOME``; returns the
    ``advice`` report section. Raises ``RunDirError``/``TaskError`` for a bad run."""
    from evotui.engine import distillation as dist
    from evotui.engine.rundir import CHECKPOINT, RunDirError, load_checkpoint
    from evotui.engine.state import EngineConfig, RunState
    from evotui.memory.hook import MemoryHook
    from evotui.memory.store import AdviceStore
    from evotui.task.model import resolve_task

    notes = notes if notes is not None else []
    ck = load_checkpoint(run_dir)
    state = RunState.from_dict(ck, EngineConfig.from_dict(ck.get("config") or {}))
    if not ck.get("task"):
        raise RunDirError(f"{run_dir / CHECKPOINT} is damaged ('task' is missing)")
    task = resolve_task(ck["task"])
    report_file = run_dir / "report.json"
    report = json.loads(report_file.read_text()) if report_file.is_file() else {}
    interpreter = bool(report["interpreter"]) if "interpreter" in report else any(
        c.metrics.interpreter for c in state.population.candidates())
    gpu = report.get("gpu") or {}
    facts = dist.RunFacts(run=str(run_dir.resolve()), gpu=gpu.get("name"), arch=gpu.get("arch"),
                          interpreter=interpreter)
    info = await asyncio.to_thread(dist.task_info, task, interpreter)
    mutations = dist.successful_mutations(state, info, facts, min_gain)
    llm = None
    if use_llm and any(not m.changes for m in mutations):
        llm, why = await _model(model or (ck.get("mutator") or {}).get("model"), host)
        if llm is None:
            notes.append(f"no model ({why}): sentences come from the mutations' own "
                         "descriptions or diffs")
    hook = MemoryHook(AdviceStore(), k=3)
    try:
        return await dist.distill(hook.learn, mutations, dist.model_ask(llm), facts, min_gain)
    finally:
        if llm is not None:
            await llm.aclose()


@click.command("distill")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--model", default=None, help="Ollama model for the sentences (default: the run's).")
@click.option("--ollama-host", default=None, metavar="URL",
              help="Ollama server (default: $OLLAMA_HOST, else http://127.0.0.1:11434).")
@click.option("--no-llm", is_flag=True, help="No model: templates, descriptions and diffs only.")
@click.option("--min-gain", type=click.FloatRange(min=0), default=5.0, show_default=True,
              help="Only mutations more than this many percent faster than their parent.")
@click.option("--json", "as_json", is_flag=True, help="The summary as one JSON object.")
def distill(run_dir: Path, model: str | None, ollama_host: str | None, no_llm: bool,
            min_gain: float, as_json: bool) -> None:
    """Turn RUN_DIR's successful mutations into proposed advice (with provenance).

    Tunable-only changes get a template ("NUM_WARPS 8→4: +12 % on softmax 8192×8192 fp32,
    H200"), other changes one sentence from the model. A run on Triton's CPU interpreter
    is refused (its times are interpreter wall time): its gains are listed in its own
    advice-scratch.json, never in the library.
    """
    from evotui.engine.rundir import RunDirError
    from evotui.task.model import TaskError

    notes: list[str] = []
    try:
        summary = asyncio.run(distill_run_dir(run_dir, model=model, host=ollama_host,
                                              use_llm=not no_llm, min_gain=min_gain / 100,
                                              notes=notes))
    except (RunDirError, TaskError, AdviceError, CorruptLibrary) as e:
        fail(str(e))
    if as_json:
        click.echo(json.dumps(summary, ensure_ascii=False))
        return
    for note in notes:
        click.echo(note, err=True)
    if not summary.get("distilled"):
        fail(f"distillation {summary.get('why')}")
    click.echo(f"{summary['eligible']} mutations over {min_gain:g} %: {summary['proposed']} "
               f"proposed, {summary['merged']} merged into existing advice, "
               f"{summary['already']} distilled before")
    if summary.get("note"):
        click.echo(f"note: {summary['note']}")
    for item in summary["items"]:
        if item.get("text"):
            click.echo(f"  {item['advice']}  {item['parent']} → {item['child']} "
                       f"({item['method']}{', merged' if item.get('merged') else ''}): "
                       f"{item['text']}")
