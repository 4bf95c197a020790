"""After a run: which mutations taught something, and handing them to the advice library.

A child teaches something when it was accepted, beat its accepted parent by the engine's
noise rule (``RunState.beats``) and is more than 5 % faster: gain = parent time / child
time − 1. Each becomes an ``evotui.memory.distill.Mutation`` with its provenance (run
directory, parent → child ids, model, backend, GPU name and arch, task name, kind, shape
and dtype); the library turns it into proposed advice (``AdviceLibrary.learn``): a template
for tunable-only changes — also when a model made them — one sentence from the model for
the rest, or the model's own description / the diff when no model answers.

On a GPU, the largest gains are first timed again, parent and child interleaved on the
same inputs (``EvaluatorPool.acompare``, at most ``CONFIRM_LIMIT`` of them): a gain that
does not hold up there (not above max(1 %, 3× spread) or not above 5 %) is not distilled,
and a confirmed one carries the interleaved figure.

On Triton's CPU interpreter the times are interpreter wall times, not kernel speed (warps,
stages and block sizes mean nothing there, and a loaded machine moves them by 2×). Such runs
never write to the advice library: their gains go to a scratch list in the run directory
(``advice-scratch.json``), which no run reads, to check on a GPU by hand.

Used at the end of ``Engine.run`` and by ``evotui advice distill RUN_DIR``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotui.engine.context import RunTask
from evotui.engine.hooks import AdviceLibrary, Evaluator
from evotui.engine.mutators import Mutator
from evotui.engine.patch import diff_text
from evotui.engine.population import Candidate
from evotui.engine.rundir import RunDir
from evotui.engine.state import EngineConfig, RunState
from evotui.engine.tunables import tunable_diff
from evotui.memory.distill import MIN_GAIN, Mutation, TaskInfo, template_text
from evotui.task.model import TaskRef

if TYPE_CHECKING:
    from evotui.llm import OllamaLLM

Ask = Callable[[str], Awaitable[str]]
UNAVAILABLE = ("server_down", "model_missing")
CONFIRM_LIMIT = 5
SCRATCH = "advice-scratch.json"
_NOT_THE_CHILDS_FAULT = ("harness_error", "timeout")


@dataclass(frozen=True)
class RunFacts:
    """Where a run's measurements come from."""

    run: str | None  # the run directory
    backend: str | None = None  # None: the child's own dialect ("triton", "cuda")
    gpu: str | None = None  # "NVIDIA H200"
    arch: str | None = None  # "sm_90"
    interpreter: bool = False


def task_info(task: TaskRef, interpreter: bool) -> TaskInfo:
    """Name, kind, tags, and the timed shape and dtype (the first input tensor's, built on
    torch's meta device: nothing is allocated)."""
    from evotui.memory.retrieve import DTYPES, normalize_dtype

    shape = dtype = None
    try:
        import torch

        from evotui.task.model import make_inputs, task_module

        module = task_module(task.path, task.sha256)
        timed = task.shapes("cpu" if interpreter else "cuda")[0]
        tensors = [t for t in make_inputs(module, timed, 0, device="meta")
                   if isinstance(t, torch.Tensor)]
        if tensors:
            shape = "x".join(str(d) for d in tensors[0].shape) or None
            floats = [t for t in tensors if t.is_floating_point()] or tensors
            dtype = normalize_dtype(str(floats[0].dtype))
    except Exception:  # a task whose inputs cannot be built on meta: no shape, that is all
        pass
    if dtype is None:
        dtype = next((t for t in task.meta.tags if t in DTYPES), None)
    return TaskInfo(task.name, task.meta.kind, shape, dtype, tuple(task.meta.tags))


def _dialect(source: str) -> str:
    try:
        from evotui.dialects import backend_for_source

        return backend_for_source(source).name
    except Exception:
        return "triton"


def _origin(state: RunState, c: Candidate) -> Candidate:
    """The original of a copy (seed copies in other islands, migrants)."""
    pop = state.population
    return pop.get(c.copy_of) if c.copy_of and c.copy_of in pop else c


def _metrics(parent: Candidate, child: Candidate, interpreter: bool) -> dict[str, Any]:
    def t(x: Candidate) -> str:
        time_ms = x.metrics.time_ms
        if time_ms is None:
            return "—"
        return f"{time_ms:.2f} ms interpreter wall time" if interpreter \
            else f"{time_ms * 1000:.2f} µs"

    out: dict[str, Any] = {"parent time": t(parent), "child time": t(child)}
    for key, label in (("speedup_eager", "child speedup vs eager"),
                       ("speedup_compile", "child speedup vs torch.compile"),
                       ("roofline_pct", "child % of roofline")):
        if getattr(child.metrics, key) is not None:
            out[label] = round(getattr(child.metrics, key), 3)
    return out


def successful_mutations(state: RunState, task: TaskInfo, facts: RunFacts,
                         min_gain: float = MIN_GAIN) -> list[Mutation]:
    """The run's children that beat their parent by more than ``min_gain``, best first."""
    out: list[Mutation] = []
    pop = state.population
    for c in state.children():
        if c.status != "accepted" or not c.parent_id or c.parent_id not in pop:
            continue
        parent = pop.get(c.parent_id)
        if parent.status != "accepted" or not parent.metrics.time_ms or not c.metrics.time_ms:
            continue
        gain = parent.metrics.time_ms / c.metrics.time_ms - 1.0
        if gain <= min_gain or not state.beats(c.metrics, parent.metrics):
            continue
        pid = _origin(state, parent).id
        changes = tunable_diff(parent.source, c.source)
        out.append(Mutation(
            task=task, gain=gain, parent=pid, child=c.id, run=facts.run, model=c.model,
            backend=facts.backend or _dialect(c.source), gpu=facts.gpu, arch=facts.arch, changes=changes,
            diff=None if changes else diff_text(parent.source, c.source, pid, c.id),
            metrics=_metrics(parent, c, facts.interpreter), interpreter=facts.interpreter,
            description=c.description, mutator=c.mutator))
    return sorted(out, key=lambda m: -m.gain)


async def confirm(mutations: list[Mutation], state: RunState, evaluator: Evaluator, task: TaskRef,
                  min_gain: float = MIN_GAIN) -> tuple[list[Mutation], dict[str, int]]:
    """Time the largest gains again, interleaved (GPU only); returns the mutations to
    distil and counts (confirmed, not confirmed, unchecked)."""
    stats = {"confirmed": 0, "not_confirmed": 0, "unchecked": 0}
    if evaluator.is_cpu:
        return mutations, {}
    pop = state.population
    out: list[Mutation] = []
    for i, m in enumerate(mutations):
        r = None
        if i < CONFIRM_LIMIT and m.parent in pop and m.child in pop:
            try:
                r = await evaluator.acompare(task, pop.get(m.parent).source,
                                             pop.get(m.child).source)
            except Exception:
                r = None
        if r is None or (not r.ok and r.reason in _NOT_THE_CHILDS_FAULT):
            stats["unchecked"] += 1
            out.append(m)
            continue
        gain = (r.gain_pct or 0.0) / 100
        if r.ok and r.significant and gain > min_gain:
            stats["confirmed"] += 1
            ab = f"{r.gain_pct:.1f} % (threshold {r.threshold_pct:.1f} %)"
            out.append(replace(m, gain=gain, metrics={**m.metrics, "interleaved A/B gain": ab}))
        else:
            stats["not_confirmed"] += 1
    return out, stats


def model_ask(llm: OllamaLLM | None) -> Ask | None:
    """``ask(prompt) -> sentence`` through a model (the run's: ``Mutator.model_side``), or
    None when there is none. After the server or model turns out to be missing, it stops
    asking (fails at once)."""
    from evotui.llm import LLMError

    if llm is None:
        return None
    chat = llm.chat
    gone: list[str] = []

    async def ask(prompt: str) -> str:
        if gone:
            raise RuntimeError(f"the model is unavailable ({gone[0]})")
        try:
            reply = await chat([{"role": "user", "content": prompt}])
        except LLMError as e:
            if e.kind in UNAVAILABLE:
                gone.append(e.kind)
            raise
        return str(reply.text)

    return ask


def off(why: str) -> dict[str, Any]:
    return {"distilled": False, "why": why, "proposed": 0, "merged": 0}


async def distill(learn: Callable[..., Awaitable[Any]], mutations: list[Mutation],
                  ask: Ask | None, facts: RunFacts, min_gain: float = MIN_GAIN,
                  checked: dict[str, int] | None = None) -> dict[str, Any]:
    """Run ``learn`` (``AdviceLibrary.learn``) and describe the outcome for ``report.json``
    (``checked``: the counts of ``confirm``). An interpreter run's mutations never reach
    ``learn``: they go to the run's scratch list."""
    from evotui.memory.learn import DistillSummary

    if facts.interpreter:
        return scratch_list(mutations, facts, min_gain)

    summary = DistillSummary()
    why = None
    try:
        await learn(mutations, ask, min_gain=min_gain, summary=summary)
    except asyncio.CancelledError:
        why = "cancelled: the advice stored before that is kept"
    except Exception as e:  # the library failing must not lose the run's report
        why = f"failed: {type(e).__name__}: {e}"
    d = summary.as_dict()
    out: dict[str, Any] = {
        "distilled": why is None, "min_gain": min_gain, "interpreter": facts.interpreter,
        "proposed": len(d["proposed"]), "merged": len(d["merged"]),
        "proposed_ids": d["proposed"], "merged_ids": d["merged"],
        **{k: d[k] for k in ("eligible", "already", "failed", "by_method", "llm_calls",
                             "items")},
    }
    if checked:
        out["interleaved_ab"] = checked
    if why:
        out["why"] = why
    return out


def scratch_line(m: Mutation) -> str:
    """What the scratch list says of one interpreter gain: the change and the wall time
    saved, in words (never a bare "+69 %", which reads as slower)."""
    what = m.description.strip() or "a code change"
    if m.changes:
        return template_text(m.task, None, m.changes, m.gain, interpreter=True)
    saved = 100 * (1 - 1 / (1 + m.gain))
    return (f"{what}: {saved:.0f} % less interpreter wall time ({1 + m.gain:.2f}× faster) on "
            f"{m.task.name} (Triton CPU interpreter, not a GPU timing)")


def scratch_list(mutations: list[Mutation], facts: RunFacts,
                 min_gain: float = MIN_GAIN) -> dict[str, Any]:
    """An interpreter run's gains → ``advice-scratch.json`` in its run directory (the user's
    library is left alone; no run reads this file). Returns the ``advice`` report section."""
    items = [{"parent": m.parent, "child": m.child, "gain": round(m.gain, 4),
              "changes": {k: list(v) for k, v in (m.changes or {}).items()},
              "text": scratch_line(m)} for m in mutations if m.gain > min_gain]
    out: dict[str, Any] = {
        **off("skipped for a CPU interpreter run: its times are interpreter wall time, not "
              "kernel speed, so nothing goes to the advice library"),
        "interpreter": True, "min_gain": min_gain, "eligible": len(items), "scratch": None,
        "items": items}
    if items and facts.run:
        path = Path(facts.run) / SCRATCH
        try:
            path.write_text(json.dumps({
                "note": "gains measured on Triton's CPU interpreter (wall time, not kernel "
                        "speed); never used by a run: check them on a GPU",
                "items": items}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            out["scratch"] = str(path)
            out["why"] += f"; {len(items)} interpreter gains listed in {SCRATCH}"
        except OSError as e:
            out["why"] += f"; the scratch list could not be written ({e})"
    return out


async def after_run(state: RunState, cfg: EngineConfig, task: RunTask, *,
                    memory: AdviceLibrary | None, evaluator: Evaluator, mutator: Mutator,
                    run_dir: RunDir | None, gpu: Mapping[str, Any]) -> dict[str, Any]:
    """The end-of-run distillation of a run (``gpu``: its "name" and "arch" when known):
    the ``advice`` report section. ``mutator`` lends its model, if any, to describe gains."""
    if not cfg.distill:
        return off("distillation is off for this run")
    if memory is None or cfg.memory_k <= 0:
        return off("the advice library is off (--memory-k 0)")
    if not memory.learns:
        return off("the attached advice library cannot distill")
    run = str(run_dir.path.resolve()) if run_dir is not None else None
    facts = RunFacts(run=run, gpu=gpu.get("name") or None, arch=gpu.get("arch"),
                     interpreter=evaluator.is_cpu)
    info = await asyncio.to_thread(task_info, task.ref, facts.interpreter)
    query = task.query()  # a file-named task: what it computes
    info = replace(info, kind=query.kind, tags=query.tags)
    mutations = successful_mutations(state, info, facts, cfg.distill_min_gain)
    mutations, checked = await confirm(mutations, state, evaluator, task.ref,
                                       cfg.distill_min_gain)
    side = mutator.model_side()
    return await distill(memory.learn, mutations, model_ask(side.llm if side else None), facts,
                         cfg.distill_min_gain, checked)


def status_line(r: Mapping[str, Any]) -> tuple[str, str] | None:
    """What a run says of its distillation (message, level), if anything."""
    if r.get("distilled") and (r.get("eligible") or r.get("proposed") or r.get("merged")):
        return (f"advice: {r['proposed']} proposed, {r['merged']} merged into existing "
                f"advice from {r['eligible']} mutations over {r['min_gain'] * 100:.0f} %",
                "info")
    if r.get("scratch"):
        return (f"advice: none for the library from a CPU interpreter run; "
                f"{r['eligible']} interpreter gains listed in {r['scratch']}", "info")
    if not r.get("distilled") and str(r.get("why", "")).startswith(("failed", "cancelled")):
        return f"advice distillation {r['why']}", "warning"
    return None


__all__ = ["RunFacts", "after_run", "confirm", "distill", "model_ask", "scratch_list",
           "status_line", "successful_mutations", "task_info"]
