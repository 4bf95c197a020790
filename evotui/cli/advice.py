"""``evotui advice``: list, show, add, accept, veto, edit, rm, merge, export, import, audit.

Contract (DESIGN §3): ``add`` prints the new id as its last line; an unknown id (or a
damaged library) is a one-line ``error: ...`` on stderr and exit code 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evotui.cli.common import NonEmptyPath, fail
from evotui.memory.atomic import CorruptLibrary
from evotui.memory.model import STATUSES, Advice
from evotui.memory.store import AdviceError, AdviceStore

F = TypeVar("F", bound=Callable[..., Any])


def _pieces(n: int) -> str:
    return "1 piece of advice" if n == 1 else f"{n} pieces of advice"


def _errors(fn: F) -> F:
    """Library problems → one line on stderr, exit 2."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (AdviceError, CorruptLibrary) as e:
            fail(str(e))
        except OSError as e:
            fail(f"{e.filename or 'advice library'}: {e.strerror or e}")

    return wrapper  # type: ignore[return-value]


def _store() -> AdviceStore:
    return AdviceStore()


def _warn_damaged(store: AdviceStore) -> None:
    """Records a hand edit broke are left out of listings, said on stderr (exit code 0)."""
    bad = store.damaged()
    if bad:
        which = "; ".join(f"{i} ({why})" for i, why in bad)
        click.echo(f"warning: {len(bad)} damaged record{'s' if len(bad) > 1 else ''} in "
                   f"{store.path} left out: {which}", err=True)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:+.1f} %"


def _win(a: Advice) -> str:
    return "—" if not a.shown else f"{a.improved}/{a.shown} ({a.improved / a.shown * 100:.0f} %)"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def advice() -> None:
    """The advice library: what worked, with its measured effect and provenance.

    \b
    Stored in $EVOTUI_HOME/advice.json (safe to use from the TUI, the CLI and several runs
    at once). Statuses: proposed (distilled or cold-start), accepted, vetoed (never shown
    to the model again), authored (written by you).
    """


@advice.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON array of advice objects.")
@click.option("--status", type=click.Choice(STATUSES), help="Only advice with this status.")
@click.option("--kind", help="Only advice of this kind.")
@_errors
def list_(as_json: bool, status: str | None, kind: str | None) -> None:
    """List the advice (newest last)."""
    store = _store()
    _warn_damaged(store)
    items = [a for a in store.all()
             if (status is None or a.status == status) and (kind is None or a.kind == kind)]
    if as_json:
        click.echo(json.dumps([a.to_doc() for a in items], ensure_ascii=False))
        return
    table = Table(title=_pieces(len(items)), title_justify="left",
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("id", no_wrap=True, min_width=8)
    table.add_column("status", no_wrap=True, min_width=8)
    table.add_column("kind", no_wrap=True, max_width=10)
    table.add_column("gain", no_wrap=True, justify="right")
    table.add_column("helped", no_wrap=True, justify="right")
    table.add_column("advice", overflow="fold", ratio=1, min_width=24)
    style = {"vetoed": "dim strike", "accepted": "green", "authored": "cyan"}
    for a in items:
        tags = f"\n[dim]{', '.join(a.tags)}[/]" if a.tags else ""
        table.add_row(a.id, a.status, a.kind, _pct(a.gain), _win(a), escape(a.text) + tags,
                      style=style.get(a.status))
    Console().print(table)


@advice.command()
@click.argument("advice_id")
@click.option("--json", "as_json", is_flag=True, help="The advice as one JSON object.")
@_errors
def show(advice_id: str, as_json: bool) -> None:
    """Show one piece of advice: text, win rate, provenance."""
    a = _store().get(advice_id)
    if as_json:
        click.echo(json.dumps(a.to_doc(), ensure_ascii=False))
        return
    table = Table(show_header=False, title=f"advice {a.id}", title_justify="left")
    table.add_column(style="dim")
    table.add_column(overflow="fold")
    rate = "never shown" if not a.shown else (
        f"{a.improved} of {a.shown} children improved ({a.improved / a.shown * 100:.0f} %)")
    for k, v in (
        ("text", a.text), ("status", a.status), ("kind", a.kind), ("tags", ", ".join(a.tags) or "—"),
        ("arch", a.arch or "any"), ("gain", _pct(a.gain)), ("win rate", rate),
        ("conditions", json.dumps({k: v for k, v in a.conditions.items() if k != "template"})
         if a.conditions else "—"),
        ("created", a.created), ("updated", a.updated),
    ):
        table.add_row(k, escape(v))
    for i, p in enumerate(a.provenance, 1):
        bits = [p.source]
        if p.run:
            bits.append(f"run {p.run}")
        if p.parent or p.child:
            bits.append(f"{p.parent or '?'} → {p.child or '?'}")
        bits += [x for x in (p.task, p.model, p.backend, p.gpu) if x]
        if p.gain is not None:
            bits.append(_pct(p.gain))
        if p.date:
            bits.append(p.date[:19].replace("T", " "))
        table.add_row(f"provenance {i}", escape(", ".join(bits)))
    Console().print(table)


@advice.command()
@click.argument("text")
@click.option("--kind", default="general", show_default=True,
              help="Kernel kind it applies to (softmax, gemm, reduction...).")
@click.option("--tags", default="", help="Comma-separated tags, e.g. num_warps,reduction.")
@click.option("--arch", default=None, help="GPU arch it is valid on (sm_90, H200...); default any.")
@_errors
def add(text: str, kind: str, tags: str, arch: str | None) -> None:
    """Write a piece of advice yourself (status: authored). Prints its id last."""
    store = _store()
    before = store.find_text(text)
    a = store.new(text, kind=kind, tags=tags.split(","), arch=arch)
    if before is not None:
        click.echo(f"already in the library ({a.status}): {a.text}")
    else:
        click.echo(f"added: {a.text}")
    click.echo(a.id)


@advice.command()
@click.argument("advice_id")
@_errors
def accept(advice_id: str) -> None:
    """Accept: the advice is boosted in retrieval."""
    a = _store().accept(advice_id)
    click.echo(f"{a.id} accepted")


@advice.command()
@click.argument("advice_id")
@_errors
def veto(advice_id: str) -> None:
    """Veto: the advice is never shown to the model again (accept undoes it)."""
    a = _store().veto(advice_id)
    click.echo(f"{a.id} vetoed")


_EDIT_HELP = "# Edit, save and close. Lines starting with # are ignored; an empty text cancels.\n"


def _to_editable(a: Advice) -> str:
    return (f"{_EDIT_HELP}# id: {a.id}   status: {a.status}\n"
            f"text: {a.text}\nkind: {a.kind}\ntags: {', '.join(a.tags)}\narch: {a.arch or ''}\n")


def _from_editable(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    key = None
    for line in raw.splitlines():
        if line.lstrip().startswith("#"):
            continue
        head, sep, rest = line.partition(":")
        if sep and head.strip() in ("text", "kind", "tags", "arch"):
            key = head.strip()
            out[key] = rest.strip()
        elif key == "text" and line.strip():
            out["text"] += " " + line.strip()
    return out


@advice.command()
@click.argument("advice_id")
@click.option("--text", default=None, help="New text.")
@click.option("--tags", default=None, help="New comma-separated tags (replace the old ones).")
@click.option("--kind", default=None, help="New kind.")
@click.option("--arch", default=None, help="New arch ('any' for all GPUs).")
@_errors
def edit(advice_id: str, text: str | None, tags: str | None, kind: str | None,
         arch: str | None) -> None:
    """Change a piece of advice; without options, opens it in $EDITOR."""
    from evotui.memory.text import normalize_arch, normalize_tags

    store = _store()
    a = store.get(advice_id)
    if text is None and tags is None and kind is None and arch is None:
        edited = click.edit(_to_editable(a), extension=".txt")
        if edited is None:
            click.echo("no change")
            return
        fields = _from_editable(edited)
        if not fields.get("text", "").strip():
            click.echo("empty text: no change")
            return
        text, tags, kind, arch = (fields.get("text"), fields.get("tags"), fields.get("kind"),
                                  fields.get("arch"))
    changes: dict[str, Any] = {}
    if text is not None:
        text = " ".join(text.split())
        if not text:
            fail("advice text is empty")
        changes["text"] = text
    if tags is not None:
        changes["tags"] = tuple(normalize_tags(tags))
    if kind is not None:
        changes["kind"] = kind.strip() or "general"
    if arch is not None:
        changes["arch"] = normalize_arch(arch)
    new = store.update(a.id, **changes)
    click.echo(f"{new.id} {'updated' if new is not a and new != a else 'unchanged'}")


@advice.command()
@click.argument("advice_id")
@_errors
def rm(advice_id: str) -> None:
    """Remove a piece of advice for good (veto keeps it, out of the prompts)."""
    a = _store().remove(advice_id)
    click.echo(f"{advice_id} removed (a damaged record)" if a is None
               else f"{a.id} removed: {a.text}")


@advice.command()
@click.argument("keep_id")
@click.argument("drop_id")
@_errors
def merge(keep_id: str, drop_id: str) -> None:
    """Fold DROP into KEEP (provenance, counters, tags) and remove DROP."""
    store = _store()
    drop = store.get(drop_id)
    a = store.merge_into(keep_id, drop.id)
    click.echo(f"{drop.id} merged into {a.id}")


@advice.command("export")
@click.argument("file", type=NonEmptyPath(dir_okay=False, path_type=Path))
@_errors
def export_(file: Path) -> None:
    """Write the whole library to FILE as JSON ('-' for stdout), to share it."""
    from evotui.memory.atomic import atomic_write_bytes

    store = _store()
    _warn_damaged(store)
    data = store.export_data()
    body = json.dumps(data, ensure_ascii=False, indent=1)
    if str(file) == "-":
        click.echo(body)
        return
    atomic_write_bytes(file, (body + "\n").encode())
    click.echo(f"exported {_pieces(len(data['advice']))} to {file}")


@advice.command("import")
@click.argument("file", type=NonEmptyPath(dir_okay=False, path_type=Path))
@_errors
def import_(file: Path) -> None:
    """Merge an exported library into this one (same advice is merged, not repeated)."""
    raw = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        fail(f"{file} is not JSON: {e}")
    r = _store().import_data(data)
    click.echo(f"imported from {file}: {len(r.added)} added, {len(r.merged)} merged, "
               f"{r.unchanged} already there")


@advice.command()
@click.option("--json", "as_json", is_flag=True, help="Findings as one JSON array.")
@_errors
def audit(as_json: bool) -> None:
    """Find weak, long, untagged, useless, duplicate and contradictory advice, with fixes."""
    from evotui.memory.audit import audit as run_audit

    store = _store()
    _warn_damaged(store)
    findings = run_audit(store.all())
    if as_json:
        click.echo(json.dumps([f.__dict__ for f in findings], ensure_ascii=False))
        return
    if not findings:
        click.echo(f"no findings in {_pieces(len(store))}")
        return
    console = Console()
    table = Table(title=f"{len(findings)} findings", title_justify="left")
    for col in ("finding", "id", "why", "fix"):
        table.add_column(col, overflow="fold")
    for f in findings:
        table.add_row(f.code, f.advice_id, escape(f.message), f"[bold]{escape(f.fix)}[/]")
    console.print(table)
