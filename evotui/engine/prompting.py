"""Mutation prompts, rendered from template files.

The system prompt is the backend's dialect (``system.md``, ``pitfalls.md``, ``tunables.md`` in
``Backend.prompt_dir``) plus the engine's ``prompts/system.md``; it never changes during a run,
so Ollama can reuse its cached prefix. The user prompt (``mutate_diff.md`` or
``mutate_full.md``) holds the task, what the judge checks (``evotui.engine.task_facts``: dtypes,
tolerances, the shapes really checked, the TF32 trap), the parent's code and metrics, then
optional sections from ``prompts/sections.md``: the parent's last failure, a nudge when the
model keeps repeating itself, inspirations, advice, human hints. Generation 0 of a run with
no seed is asked for with ``write_seed.md``: the task alone, with the failures of the
earlier attempts.

Templates use ``{{name}}`` placeholders; a missing value is a bug and raises ``KeyError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotui.core.metrics import ratio_parts
from evotui.engine.population import Candidate
from evotui.engine.steering import Steer
from evotui.engine.task_facts import TaskFacts

TEMPLATE_DIR = Path(__file__).parent / "prompts"
MODES = ("diff", "full")

_PLACEHOLDER = re.compile(r"{{\s*(\w+)\s*}}")
_SECTION = re.compile(r"^<!-- section: (\w+) -->\s*$", re.MULTILINE)
MAX_MESSAGE_CHARS = 1500
MAX_DIFF_LINES = 40


def render(template: str, values: dict[str, Any]) -> str:
    """Replace every ``{{name}}``; values are inserted verbatim (never re-scanned)."""
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 20].rstrip() + "\n… (cut)"


@dataclass(frozen=True)
class Inspiration:
    id: str
    metrics: str
    description: str
    diff: str  # unified diff from the parent to this program


@dataclass(frozen=True)
class PromptContext:
    task_source: str
    parent: Candidate
    inspirations: list[Inspiration] = field(default_factory=list)
    advice_block: str = ""  # retrieved advice, already worded as optional references
    hints: list[str] = field(default_factory=list)
    last_failure: dict[str, Any] | None = None  # {"id", "reason", "message"}
    facts: TaskFacts | None = None
    steer: Steer | None = None


@dataclass(frozen=True)
class SeedAttempt:
    """One failed answer while generation 0 is written: why, and its program if it had one."""

    id: str
    attempt: int
    reason: str
    message: str
    source: str | None = None


@dataclass(frozen=True)
class SeedContext:
    task_source: str
    facts: TaskFacts | None = None
    attempts: list[SeedAttempt] = field(default_factory=list)  # oldest first
    advice_block: str = ""
    hints: list[str] = field(default_factory=list)
    steer: Steer | None = None


def describe_metrics(c: Candidate) -> str:
    """One line on how fast a candidate is, honest about the CPU interpreter."""
    if c.status != "accepted":
        return f"rejected ({c.reason})"
    m = c.metrics
    if m.time_ms is None:
        return "accepted (not timed)"
    if m.interpreter:
        return (f"correct; {m.time_ms:.1f} ms of wall time in Triton's CPU interpreter (not GPU "
                "speed: judge changes by what helps on a GPU)")
    parts = [f"median {m.time_ms * 1000:.2f} µs"
             + (f" (spread {m.spread_pct:.2f} %)" if m.spread_pct is not None else "")]
    parts += ratio_parts(m.speedup_eager, m.speedup_compile, m.roofline_pct,
                         ("eager PyTorch", "torch.compile", "% of the roofline"))
    return "correct; " + ", ".join(parts)


class PromptBuilder:
    def __init__(self, dialect_dir: Path, template_dir: Path = TEMPLATE_DIR) -> None:
        self.template_dir = template_dir
        self.templates = {m: (template_dir / f"mutate_{m}.md").read_text() for m in MODES}
        self.seed_template = (template_dir / "write_seed.md").read_text()
        self.sections = self._read_sections((template_dir / "sections.md").read_text())
        dialect = {name: self._optional(dialect_dir / f"{name}.md")
                   for name in ("system", "pitfalls", "tunables")}
        self._system = _tidy(render((template_dir / "system.md").read_text(), {
            "dialect": dialect["system"], "pitfalls": dialect["pitfalls"],
            "tunables": dialect["tunables"]}))

    @staticmethod
    def _optional(path: Path) -> str:
        return path.read_text() if path.is_file() else ""

    @staticmethod
    def _read_sections(text: str) -> dict[str, str]:
        parts = _SECTION.split(text)
        return {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}

    def system(self) -> str:
        return self._system

    def user(self, ctx: PromptContext, mode: str) -> str:
        if mode not in MODES:
            raise ValueError(f"unknown prompt mode {mode!r}")
        parent = ctx.parent
        metrics = f"How it does: {describe_metrics(parent)}."
        if parent.description:
            metrics += f" Its last change: {parent.description}."
        sections = "\n\n".join(s for s in self._sections(ctx) if s)
        # the code goes in verbatim (SEARCH blocks must match it), so tidy only the rest
        return render(self.templates[mode], {
            "task_source": ctx.task_source.strip("\n"),
            "task_facts": self._facts(ctx.facts),
            "parent_id": parent.id,
            "parent_source": parent.source.strip("\n"),
            "parent_metrics": metrics,
            "sections": _tidy(sections) + "\n" if sections else "",
        }).rstrip() + "\n"

    def messages(self, ctx: PromptContext, mode: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system()},
                {"role": "user", "content": self.user(ctx, mode)}]

    def seed_user(self, ctx: SeedContext) -> str:
        """The request for generation 0: the reference alone, and what went wrong so far."""
        s = self.sections
        out: list[str] = []
        if ctx.attempts:
            last = ctx.attempts[-1]
            program = (render(s["seed_program"], {"source": last.source.strip("\n")}) + "\n\n"
                       if last.source else "")
            out.append(render(s["seed_last"], {
                "id": last.id, "attempt": last.attempt, "reason": last.reason,
                "message": _clip(last.message, MAX_MESSAGE_CHARS), "program": program}))
            if len(ctx.attempts) > 1:
                items = "\n".join(f"- {a.id} (attempt {a.attempt}): {a.reason}: "
                                  f"{_first_line(a.message)}" for a in ctx.attempts[:-1])
                out.append(render(s["seed_earlier"], {"items": items}))
        out += self._common_sections(ctx.steer, ctx.advice_block, ctx.hints)
        sections = "\n\n".join(x for x in out if x)
        return render(self.seed_template, {
            "task_source": ctx.task_source.strip("\n"),
            "task_facts": self._facts(ctx.facts),
            "sections": _tidy(sections) + "\n" if sections else "",
        }).rstrip() + "\n"

    def seed_messages(self, ctx: SeedContext) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system()},
                {"role": "user", "content": self.seed_user(ctx)}]

    def _facts(self, facts: TaskFacts | None) -> str:
        if facts is None:
            return ""
        lines = fact_lines(facts)
        if facts.tf32_trap:
            tol = ", ".join(f"atol {a:g} / rtol {r:g}" for d, (a, r) in facts.tolerances.items()
                            if d == "float32") or "tight tolerance"
            lines.append(render(self.sections["tf32"], {"tolerance": tol}))
        return render(self.sections["task_facts"], {"lines": "\n".join(lines)}).strip() + "\n\n"

    def _sections(self, ctx: PromptContext) -> list[str]:
        s = self.sections
        out: list[str] = []
        if ctx.last_failure:
            f = ctx.last_failure
            out.append(render(s["last_failure"], {
                "id": f.get("id", "?"), "reason": f.get("reason", "?"),
                "message": _clip(str(f.get("message", "")), MAX_MESSAGE_CHARS)}))
        if ctx.steer is not None:
            out.append(steer_block(ctx.steer, s))
        if ctx.inspirations:
            items = "\n\n".join(render(s["inspiration"], {
                "id": i.id, "metrics": i.metrics,
                "description": f" — {i.description}" if i.description else "",
                "diff": _clip_lines(i.diff, MAX_DIFF_LINES)}) for i in ctx.inspirations)
            out.append(render(s["inspirations"], {"items": items}))
        return out + self._common_sections(None, ctx.advice_block, ctx.hints)

    def _common_sections(self, steer: Steer | None, advice: str, hints: list[str]) -> list[str]:
        s = self.sections
        out = [steer_block(steer, s)] if steer is not None else []
        if advice.strip():
            out.append(render(s["advice"], {"block": advice.strip()}))
        if hints:
            out.append(render(s["hints"], {"items": "\n".join(f"- {h}" for h in hints)}))
        return out


def _first_line(text: str, limit: int = 160) -> str:
    line = next((x.strip() for x in str(text).splitlines() if x.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


_FAMILY_WORDS = {"elementwise": "an element-wise kernel", "gemm": "a matrix product (GEMM)",
                 "conv": "a convolution", "attention": "attention", "softmax": "a row softmax",
                 "layernorm": "a layer norm", "rmsnorm": "an RMS norm",
                 "reduction": "a reduction", "cross_entropy": "a cross-entropy loss",
                 "pooling": "pooling", "scan": "a scan", "groupnorm": "a group norm",
                 "batchnorm": "a batch norm"}


def fact_lines(facts: TaskFacts) -> list[str]:
    """What the judge checks, one Markdown item each (the TF32 trap aside)."""
    lines: list[str] = []
    where = ("in Triton's CPU interpreter (this run has no GPU)" if facts.device_type == "cpu"
             else "on the GPU")
    if facts.inputs:
        lines.append("- Inputs (the timed shape): "
                     + "; ".join(t.describe() for t in facts.inputs) + ".")
    if facts.outputs:
        at = "" if facts.outputs_at == 0 else f" (at checked shape {facts.outputs_at + 1})"
        lines.append(f"- Output{at}: " + "; ".join(
            t.describe().split(": ", 1)[1] if len(facts.outputs) == 1 else t.describe()
            for t in facts.outputs)
            + ". Yours must have the same shape and dtype, on the same device.")
    for dtype, (atol, rtol) in facts.tolerances.items():
        lines.append(f"- Tolerance: every element of a {dtype} output must satisfy "
                     f"|yours − reference| ≤ {atol:g} + {rtol:g} × |reference|.")
    exact = sorted({t.dtype for t in facts.outputs if t.shape is not None
                    and t.dtype not in facts.tolerances})
    if exact:
        lines.append(f"- {', '.join(exact)} outputs must equal the reference exactly.")
    if len(facts.checked) == 1:
        lines.append(f"- Shapes: correctness is checked {where} at the timed shape only "
                     "(the task declares no other shape), on fresh random inputs each time. "
                     "Take sizes from the inputs all the same rather than hard-coding them.")
    elif facts.checked:
        shapes = "\n".join(f"  {i + 1}. " + "; ".join(t.describe() for t in c.inputs)
                           + (" (timed)" if i == 0 else "")
                           for i, c in enumerate(facts.checked))
        lines.append(f"- Shapes: correctness is checked {where}, on fresh random inputs, "
                     f"at these {len(facts.checked)} shapes; mask every load and store at "
                     f"the edges:\n{shapes}")
    if facts.gpu_inputs:
        lines.append("- On a GPU the task's own shape is timed: "
                     + "; ".join(t.describe() for t in facts.gpu_inputs)
                     + ". Write the kernel for that size; the interpreter runs it at the shapes above.")
    if facts.ops:
        family = _FAMILY_WORDS.get(facts.family)
        lines.append("- The reference computes (aten ops): " + ", ".join(facts.ops)
                     + (f": {family}." if family else "."))
    if facts.note:
        lines.append(f"- Not known: {facts.note}.")
    return lines


_KIND_WORDS = {"duplicate": "a program already evaluated", "no_code": "no program",
               "no_change": "the program unchanged", "patch_failed": "edits that did not apply",
               "syntax_error": "a syntax error", "truncated": "an answer cut off"}


def steer_block(steer: Steer, sections: dict[str, str]) -> str:
    kinds = list(dict.fromkeys(_KIND_WORDS.get(k, k) for k in steer.kinds))
    what = (f"Your last {steer.streak} answers gave no new program to evaluate: "
            + ", ".join(kinds) + ".")
    tried = (render(sections["steer_tried"], {"items": "\n".join(f"- {t}" for t in steer.tried)})
             if steer.tried else "")
    return _tidy(render(sections["steer"], {"what": what, "tried": tried,
                                            "kinds": "; ".join(steer.suggestions)}))


def _clip_lines(text: str, n: int) -> str:
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= n:
        return "\n".join(lines)
    return "\n".join(lines[:n] + [f"… ({len(lines) - n} more lines)"])


def format_advice_views(views: list[dict[str, Any]], template_dir: Path = TEMPLATE_DIR) -> str:
    """Advice as optional references, from plain views (used when the advice library's own
    ``evotui.memory.prompting.format_advice`` cannot format the items)."""
    if not views:
        return ""
    sections = PromptBuilder._read_sections((template_dir / "sections.md").read_text())
    return render(sections["advice_items"], {"items": "\n".join(_advice_line(a) for a in views)})


def _advice_line(a: dict[str, Any]) -> str:
    extras = []
    gain_pct = a.get("gain_pct")
    if not isinstance(gain_pct, int | float) and isinstance(a.get("gain"), int | float):
        gain_pct = a["gain"] * 100  # ``gain`` is a fraction: 0.12 is +12 %
    if isinstance(gain_pct, int | float):
        extras.append(f"measured gain {gain_pct:+.0f} %")
    tags = a.get("tags")
    if tags:
        extras.append("tags: " + ", ".join(map(str, tags)))
    tail = f" ({'; '.join(extras)})" if extras else ""
    return f"- [{a.get('id', '?')}] {a.get('text', '').strip()}{tail}"
