"""Mutation prompts, rendered from template files.

The system prompt is the backend's dialect (``system.md``, ``pitfalls.md``, ``tunables.md`` in
``Backend.prompt_dir``) plus the engine's ``prompts/system.md``; it never changes during a run,
so Ollama can reuse its cached prefix. The user prompt (``mutate_diff.md`` or
``mutate_full.md``) holds the task, the parent's code and metrics, then optional sections from
``prompts/sections.md``: the parent's last failure, inspirations, advice, human hints.

Templates use ``{{name}}`` placeholders; a missing value is a bug and raises ``KeyError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotui.engine.population import Candidate

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


def describe_metrics(c: Candidate) -> str:
    """One line on how fast a candidate is, honest about the CPU interpreter."""
    if c.status != "accepted":
        return f"rejected ({c.reason})"
    if c.time_ms is None:
        return "accepted (not timed)"
    if c.extra.get("interpreter"):
        return (f"correct; {c.time_ms:.1f} ms of wall time in Triton's CPU interpreter (not GPU "
                "speed: judge changes by what helps on a GPU)")
    spread = c.extra.get("spread_pct")
    parts = [f"median {c.time_ms * 1000:.2f} µs"
             + (f" (spread {spread:.2f} %)" if spread is not None else "")]
    if c.speedup_eager is not None:
        parts.append(f"{c.speedup_eager:.2f}× eager PyTorch")
    if c.speedup_compile is not None:
        parts.append(f"{c.speedup_compile:.2f}× torch.compile")
    if c.roofline_pct is not None:
        parts.append(f"{c.roofline_pct:.0f} % of the roofline")
    return "correct; " + ", ".join(parts)


class PromptBuilder:
    def __init__(self, dialect_dir: Path, template_dir: Path = TEMPLATE_DIR) -> None:
        self.template_dir = template_dir
        self.templates = {m: (template_dir / f"mutate_{m}.md").read_text() for m in MODES}
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
            "parent_id": parent.id,
            "parent_source": parent.source.strip("\n"),
            "parent_metrics": metrics,
            "sections": _tidy(sections) + "\n" if sections else "",
        }).rstrip() + "\n"

    def messages(self, ctx: PromptContext, mode: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system()},
                {"role": "user", "content": self.user(ctx, mode)}]

    def _sections(self, ctx: PromptContext) -> list[str]:
        s = self.sections
        out: list[str] = []
        if ctx.last_failure:
            f = ctx.last_failure
            out.append(render(s["last_failure"], {
                "id": f.get("id", "?"), "reason": f.get("reason", "?"),
                "message": _clip(str(f.get("message", "")), MAX_MESSAGE_CHARS)}))
        if ctx.inspirations:
            items = "\n\n".join(render(s["inspiration"], {
                "id": i.id, "metrics": i.metrics,
                "description": f" — {i.description}" if i.description else "",
                "diff": _clip_lines(i.diff, MAX_DIFF_LINES)}) for i in ctx.inspirations)
            out.append(render(s["inspirations"], {"items": items}))
        if ctx.advice_block.strip():
            out.append(render(s["advice"], {"block": ctx.advice_block.strip()}))
        if ctx.hints:
            out.append(render(s["hints"], {"items": "\n".join(f"- {h}" for h in ctx.hints)}))
        return out


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
