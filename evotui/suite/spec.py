"""What a suite is made of: its problems (from folders, task files or list files) and the
budget each problem gets.

A folder that holds a ``task.py`` is one problem, as for ``evotui run``. Any other folder
gives every task file in it (``*.py`` other than seed files and names starting with ``_``)
and every sub-folder that holds a ``task.py``, in natural order (``2_`` before ``10_``).
A list file (any file not ending in ``.py``) names one task per line, optionally followed
by a seed file; paths are relative to the list file (or else to the current folder), ``#``
starts a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from evotui.task.model import SEED_NAMES

# a problem that only ran out of time is not starved by the evaluation count
UNLIMITED_EVALUATIONS = 100_000
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(h|m|s)?", re.IGNORECASE)
_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, None: 1.0}


class SpecError(Exception):
    """A user mistake in the suite's problems or budget: one line, exit code 2."""


@dataclass(frozen=True)
class Problem:
    name: str  # unique in the suite; also the run directory's name
    task: str  # the task file or folder, absolute
    seed: str | None = None  # a seed file named in a list file (as ``run --seed``)

    def as_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "task": self.task, "seed": self.seed}


@dataclass(frozen=True)
class Budget:
    """Per problem: evaluated children (the seed does not count) and/or wall seconds."""

    evaluations: int | None = None
    seconds: float | None = None

    @property
    def iterations(self) -> int:
        return self.evaluations if self.evaluations is not None else UNLIMITED_EVALUATIONS

    def describe(self) -> str:
        parts = []
        if self.evaluations is not None:
            parts.append(f"{self.evaluations} evaluation{'' if self.evaluations == 1 else 's'}")
        if self.seconds is not None:
            parts.append(format_duration(self.seconds))
        return " or ".join(parts) + " per problem"

    def as_dict(self) -> dict[str, float | int | None]:
        return {"evaluations": self.evaluations, "seconds": self.seconds}


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``1.5h``, ``1h30m`` → seconds."""
    s = text.strip().replace(" ", "")
    pos, total = 0, 0.0
    for m in _DURATION.finditer(s):
        if m.start() != pos or not m.group(0):
            break
        total += float(m.group(1)) * _SECONDS[(m.group(2) or "").lower() or None]
        pos = m.end()
    if not s or pos != len(s) or total <= 0:
        raise SpecError(f"time budget {text!r} is not a duration: give one such as 90s, 10m "
                        "or 1h30m")
    return total


def format_duration(seconds: float) -> str:
    if seconds >= 3600 and seconds % 60 == 0:
        h, m = divmod(int(seconds) // 60, 60)
        return f"{h}h{m:02d}m" if m else f"{h}h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds) // 60}m"
    return f"{seconds:g}s"


def natural_key(name: str) -> list[int | str]:
    """``2_x`` before ``10_x``: digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


def _folder_problems(folder: Path) -> list[tuple[Path, Path | None]]:
    if (folder / "task.py").is_file():
        return [(folder, None)]
    found = [p for p in folder.iterdir()
             if (p.is_file() and p.suffix == ".py" and p.name not in SEED_NAMES
                 and not p.name.startswith(("_", ".")))
             or (p.is_dir() and (p / "task.py").is_file())]
    if not found:
        raise SpecError(f"no task files in {folder} (expected *.py task files or folders "
                        "holding a task.py)")
    return [(p, None) for p in sorted(found, key=lambda p: natural_key(p.name))]


def _listed(listing: Path, word: str) -> Path:
    """A path in a list file: relative to the list's folder, else to the current one."""
    p = Path(word).expanduser()
    if p.is_absolute():
        return p
    beside = listing.parent / p
    return beside if beside.exists() or not p.exists() else p


def _list_problems(listing: Path) -> list[tuple[Path, Path | None]]:
    try:
        lines = listing.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(f"cannot read the problem list {listing}: {e}") from None
    out: list[tuple[Path, Path | None]] = []
    for n, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > 2:
            raise SpecError(f"{listing}:{n}: expected `TASK [SEED]`, got {line.strip()!r}")
        task = _listed(listing, words[0])
        seed = _listed(listing, words[1]) if len(words) == 2 else None
        if not task.exists():
            raise SpecError(f"{listing}:{n}: task not found: {task}")
        if seed is not None and not seed.is_file():
            raise SpecError(f"{listing}:{n}: seed file not found: {seed}")
        out.append((task, seed))
    if not out:
        raise SpecError(f"the problem list {listing} names no task")
    return out


def discover(paths: list[str]) -> list[Problem]:
    """The suite's problems, in the order given (each folder's in natural order)."""
    entries: list[tuple[Path, Path | None]] = []
    for raw in paths:
        p = Path(raw).expanduser()
        if not p.exists():
            raise SpecError(f"not found: {p} (give task files, folders or a list file)")
        if p.is_dir():
            entries += _folder_problems(p)
        elif p.suffix == ".py":
            entries.append((p, None))
        else:
            entries += _list_problems(p)
    problems: list[Problem] = []
    seen_tasks: set[str] = set()
    names: set[str] = set()
    for task, seed in entries:
        key = str(task.resolve())
        if key in seen_tasks:
            continue
        seen_tasks.add(key)
        base = task.name if task.is_dir() else task.stem
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.add(name)
        problems.append(Problem(name, key, str(seed.resolve()) if seed else None))
    return problems
