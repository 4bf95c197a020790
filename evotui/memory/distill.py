"""Successful mutations → one sentence of proposed advice, merged instead of repeated.

Two ways, as the seed asks:

- ``template_text``/``distill_params``: for a change of tunables only, no model needed —
  ``"BLOCK_SIZE 1024→4096, num_warps 4→8: +12 % on softmax 8192×8192 fp32, H200"``;
- ``distill_llm``: the model reads the diff, the metrics and the task (the prompt is
  ``prompts/distill.txt``) and answers with one sentence, which ``clean_sentence`` cuts out
  of whatever came back (thinking sections, labels, quotes, code, extra sentences).

``merge_or_add`` folds a near-duplicate into the advice already there (same kind and arch;
same tunable changes on the same task, or token Jaccard ≥ 0.8 for sentences): provenance
and gains accumulate instead of the library repeating itself. ``distill_run`` does all of
that for the mutations of a run with gain > 5 %.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evotui.memory.merge import merge
from evotui.memory.model import Advice, Provenance, new_id, now_iso
from evotui.memory.prompting import load_prompt, pct
from evotui.memory.store import AdviceStore
from evotui.memory.text import (
    content_words,
    first_sentence,
    jaccard,
    normalize_arch,
    normalize_tags,
    suggest_tags,
)

MIN_GAIN = 0.05  # the seed: only mutations with more than 5 % gain become advice
NEAR_DUPLICATE = 0.8
MAX_WORDS = 40
MAX_DIFF_CHARS = 6000

Ask = Callable[[str], Awaitable[str]]


@dataclass(frozen=True)
class TaskInfo:
    name: str
    kind: str = "general"
    shape: str | None = None  # "8192x8192"
    dtype: str | None = None  # "fp32"
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mutation:
    """One successful parent → child step of a run, as the engine saw it."""

    task: TaskInfo
    gain: float  # fraction: 0.12 = the child is 12 % faster than its parent
    parent: str | None = None
    child: str | None = None
    run: str | None = None
    model: str | None = None  # the LLM that wrote the child, or None for the param mutator
    backend: str | None = None
    gpu: str | None = None  # "NVIDIA H200"
    changes: Mapping[str, tuple[int, int]] | None = None  # tunables only: name → (old, new)
    diff: str | None = None
    metrics: Mapping[str, Any] = field(default_factory=dict)
    arch: str | None = None  # "sm_90"; from ``gpu`` when not given
    interpreter: bool = False  # Triton's CPU interpreter: the gain is wall time, not speed
    description: str = ""  # what the mutator said it changed
    mutator: str | None = None  # "llm" | "param"


def gpu_label(gpu: str | None) -> str | None:
    """"NVIDIA H200" → "H200"; "cpu" / interpreter → None."""
    if not gpu:
        return None
    g = re.sub(r"^(nvidia|tesla|geforce|amd|instinct)\s+", "", gpu.strip(), flags=re.I)
    g = re.sub(r"^(nvidia|tesla|geforce)\s+", "", g, flags=re.I)
    return None if g.lower() in ("cpu", "interpreter", "") else g


def _shape(shape: str | None) -> str | None:
    return re.sub(r"\s*[x*,]\s*", "×", shape.strip()) if shape else None


INTERPRETER = "Triton CPU interpreter"
INTERPRETER_NOTE = ("measured on Triton's CPU interpreter: the gain is interpreter wall time, "
                    "not kernel speed; check it on a GPU before accepting it")


def task_label(task: TaskInfo) -> str:
    return " ".join(x for x in (task.name, _shape(task.shape), task.dtype) if x)


def template_text(task: TaskInfo, gpu: str | None, changes: Mapping[str, tuple[int, int]],
                  gain: float, interpreter: bool = False) -> str:
    """``"BLOCK_SIZE 1024→4096, num_warps 4→8: +12 % on softmax 8192×8192 fp32, H200"``."""
    what = ", ".join(f"{name} {old}→{new}" for name, (old, new) in changes.items())
    if interpreter:  # in words: "+69 % interpreter wall time" reads as slower
        saved = 100 * (1 - 1 / (1 + gain))
        return (f"{what}: {saved:.0f} % less interpreter wall time ({1 + gain:.2f}× faster) on "
                f"{task_label(task)} ({INTERPRETER}, not a GPU timing)")
    where = gpu_label(gpu)
    return f"{what}: {pct(gain)} on {task_label(task)}" + (f", {where}" if where else "")


def _tags(m: Mutation, extra: Iterable[str]) -> tuple[str, ...]:
    base = [m.task.kind] if m.task.kind not in ("general", "") else []
    if m.task.dtype:
        base.append(m.task.dtype)
    return tuple(normalize_tags([*base, *extra, *m.task.tags])[:8])


def _conditions(m: Mutation) -> dict[str, Any]:
    cond: dict[str, Any] = {}
    if m.task.dtype:
        cond["dtypes"] = [m.task.dtype]
    if m.task.shape:
        cond["shapes"] = [_shape(m.task.shape)]
    return cond


def _arch(m: Mutation) -> str | None:
    """``"cpu"`` for the interpreter: such advice is never retrieved for a GPU run."""
    return "cpu" if m.interpreter else normalize_arch(m.arch or m.gpu)


def _provenance(m: Mutation) -> Provenance:
    return Provenance(source="distilled", run=m.run, parent=m.parent, child=m.child,
                      task=m.task.name, model=m.model, backend=m.backend,
                      gpu=INTERPRETER if m.interpreter else m.gpu,
                      gain=round(float(m.gain), 6), date=now_iso(), kind=m.task.kind,
                      shape=m.task.shape, dtype=m.task.dtype, arch=_arch(m),
                      interpreter=True if m.interpreter else None)


def make_advice(m: Mutation, text: str, tags: Iterable[str] = (),
                conditions: dict[str, Any] | None = None) -> Advice:
    """Proposed advice for ``m`` with its provenance; interpreter measurements are tagged,
    scoped to the CPU (``arch="cpu"``) and carry a note."""
    extra_tags = [*tags, "interpreter"] if m.interpreter else list(tags)
    cond = {**_conditions(m), **(conditions or {})}
    extra: dict[str, Any] = {}
    if m.interpreter:
        cond["interpreter"] = True
        extra["note"] = INTERPRETER_NOTE
    return Advice(
        id=new_id(), text=text, kind=m.task.kind, tags=_tags(m, extra_tags), conditions=cond,
        arch=_arch(m), gain=float(m.gain), provenance=(_provenance(m),), status="proposed",
        extra=extra,
    )


def distill_params(m: Mutation) -> Advice:
    """Proposed advice for a change of tunables, from the template. The changes are kept
    structured (``conditions["template"]["changes"]``) for the parameter mutator."""
    if not m.changes:
        raise ValueError("distill_params needs the tunable changes")
    changes = {str(k): (int(v[0]), int(v[1])) for k, v in m.changes.items()}
    template: dict[str, Any] = {
        "changes": {k: list(v) for k, v in changes.items()},
        "task": m.task.name, "shape": m.task.shape, "dtype": m.task.dtype, "gpu": m.gpu,
    }
    if m.interpreter:
        template["interpreter"] = True
    names = [k.lower() for k in changes]
    text = template_text(m.task, m.gpu, changes, m.gain, m.interpreter)
    return make_advice(m, text, ["tuning", *names], {"template": template})


# -- with a model ---------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"```.*?(```|$)", re.S)
_LABEL = re.compile(r"^\s*(?:[-*•>]|\d+[.)]|#+)?\s*(?:\*\*)?\s*(?:advice|sentence|answer|tip|"
                    r"recommendation|final answer)\s*(?:\*\*)?\s*[:：-]\s*", re.I)


def clean_sentence(raw: str) -> str | None:
    """One sentence of advice out of a model's answer, or None when there is none."""
    text = _THINK.sub(" ", raw or "")
    if "</think>" in text.lower():  # an unopened closing tag: everything before is thinking
        text = text[text.lower().rindex("</think>") + len("</think>"):]
    text = re.sub(r"<think>.*", " ", text, flags=re.S | re.I)  # unclosed thinking
    text = _FENCE.sub(" ", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    candidate = ""
    for ln in lines:
        ln = _LABEL.sub("", ln)
        ln = re.sub(r"^(?:[-*•>]|\d+[.)])\s+", "", ln).strip()
        if re.fullmatch(r"[\w\s]{0,30}:", ln) or not ln:
            continue  # a heading such as "Here is the advice:"
        candidate = ln
        break
    candidate = candidate.strip().strip("*_`\"'“”‘’ ").strip()
    if not candidate:
        return None
    sentence = first_sentence(candidate)
    words = sentence.split()
    if len(words) > MAX_WORDS:
        sentence = " ".join(words[:MAX_WORDS]).rstrip(",;:") + "…"
    if len(words) < 3:
        return None
    if sentence[-1] not in ".!?…":
        sentence += "."
    return sentence


def distill_prompt(m: Mutation) -> str:
    diff = (m.diff or "(no diff given)").strip()
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n… (diff cut)"
    context = ", ".join(x for x in (m.task.kind, _shape(m.task.shape), m.task.dtype) if x)
    metrics = "\n".join(f"- {k}: {v}" for k, v in m.metrics.items()) or "- (none given)"
    where = INTERPRETER + " (wall time)" if m.interpreter else gpu_label(m.gpu) or "the GPU"
    return load_prompt("distill.txt").format(
        backend=m.backend or "GPU", task=m.task.name, context=context, gain=pct(m.gain).lstrip("+"),
        gpu=where, parent=m.parent or "?", child=m.child or "?",
        metrics=metrics, diff=diff,
    )


async def distill_llm(ask: Ask, m: Mutation) -> Advice | None:
    """Proposed advice in the model's words (``ask(prompt) -> answer``), or None when the
    answer holds no usable sentence."""
    sentence = clean_sentence(await ask(distill_prompt(m)))
    if sentence is None:
        return None
    return make_advice(m, sentence, suggest_tags(sentence))


# -- merging ---------------------------------------------------------------------------------------

def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in content_words(text) if not re.fullmatch(r"[+-]?\d+(\.\d+)?", w))


def same_advice(a: Advice, b: Advice, threshold: float = NEAR_DUPLICATE) -> bool:
    """Near-duplicates: same kind and arch, and the same tunable change on the same task or
    nearly the same words (figures aside)."""
    if a.kind != b.kind or normalize_arch(a.arch) != normalize_arch(b.arch):
        return False
    ta, tb = a.conditions.get("template"), b.conditions.get("template")
    if ta or tb:
        keys = ("changes", "task", "shape", "dtype")
        return bool(ta and tb) and all(ta.get(k) == tb.get(k) for k in keys)
    return jaccard(_words(a.text), _words(b.text)) >= threshold


def _rerender(a: Advice) -> Advice:
    t = a.conditions.get("template")
    if not t or a.gain is None:
        return a
    task = TaskInfo(name=t.get("task") or "", shape=t.get("shape"), dtype=t.get("dtype"))
    changes = {k: (int(v[0]), int(v[1])) for k, v in (t.get("changes") or {}).items()}
    measured = [p for p in a.provenance if p.gain is not None]
    runs = len({p.run for p in measured})
    text = template_text(task, t.get("gpu"), changes, a.gain, bool(t.get("interpreter")))
    if len(measured) > 1:
        what = f"{runs} runs" if runs > 1 else f"{len(measured)} measurements"
        pos = f"{pct(a.gain)} "
        text = text.replace(pos, f"{pct(a.gain)} (median of {what}) ", 1)
    return a.with_(text=text)


def merge_or_add(store: AdviceStore, advice: Advice,
                 threshold: float = NEAR_DUPLICATE) -> tuple[Advice, bool]:
    """Add ``advice``, or fold it into a near-duplicate already there (not a vetoed one:
    vetoed advice stays vetoed and the new evidence is added to it). Returns (stored, merged)."""
    def find(docs: list[dict]) -> Advice | None:
        for d in docs:
            if d.get("kind") == advice.kind:
                other = Advice.from_doc(d)
                if same_advice(other, advice, threshold):
                    return other
        return None

    with store.locked():
        existing = find(store.snapshot().docs)
        if existing is None:
            return store.add(advice), False
        merged = _rerender(merge(existing, advice, counters="sum")).with_(updated=now_iso())
        store.replace(merged)
        return merged, True


async def distill_run(store: AdviceStore, mutations: Iterable[Mutation], ask: Ask | None = None,
                      min_gain: float = MIN_GAIN) -> list[Advice]:
    """Proposed advice from every mutation with gain > ``min_gain``: the template for tunable
    changes, the model (when ``ask`` is given) for the rest. Model failures are skipped, and
    so are gains measured on the CPU interpreter: they never enter a library."""
    out: list[Advice] = []
    for m in mutations:
        if not (m.gain > min_gain) or m.interpreter:
            continue
        advice: Advice | None = None
        if m.changes:
            advice = distill_params(m)
        elif ask is not None:
            try:
                advice = await distill_llm(ask, m)
            except Exception:  # one failed distillation must not stop the rest
                advice = None
        if advice is not None:  # file lock + fsync: off the event loop
            out.append((await asyncio.to_thread(merge_or_add, store, advice))[0])
    return out


