"""Does each KernelBench-format file start with no edit? On the CPU (Triton's interpreter):
the task is resolved, its size constants shrunk, a seed derived from the reference and
judged, exactly as `evotui run TASK --mutator param` starts; or the one-line reason why not.

    python bench/kernelbench_start.py FILES_OR_FOLDERS... [--out FILE.md] [--trials 2]
        [--allow-torch OPS]

Point it at your own files, or at KernelBench's (e.g. a checkout's KernelBench/level1:
kept outside this repository). Prints a Markdown table; with --out, writes it there too.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotui.eval import EvalRequest, EvaluatorPool  # noqa: E402
from evotui.seed import derive_seed  # noqa: E402
from evotui.task.model import TaskError, resolve_task  # noqa: E402
from evotui.task.preflight import preflight  # noqa: E402


@dataclass
class Row:
    name: str
    status: str  # accepted | rejected | no seed | task error
    family: str = ""
    shape: str = ""
    detail: str = ""
    seconds: float = 0.0


def files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.glob("*.py")) if p.is_dir() else [p]

    def number(f: Path) -> tuple[int, str]:
        m = re.match(r"(\d+)_", f.name)
        return (int(m.group(1)) if m else 10**9, f.name)

    return sorted(out, key=number)


def start(pool: EvaluatorPool, path: Path, trials: int, allow: tuple[str, ...]) -> Row:
    t0 = time.perf_counter()
    row = Row(path.stem, "task error")
    try:
        task = resolve_task(path, allow_torch=allow)
        preflight(task, cpu=True)
        shape = task.shapes("cpu")[0]
        row.shape = ", ".join(f"{k}={v}" for k, v in shape.items())
    except TaskError as e:
        row.detail = str(e).replace(str(path), path.name)
        return row
    derived = derive_seed(task)
    if not derived.ok:
        row.status, row.detail = "no seed", derived.reason or ""
    else:
        row.family = derived.family or ""
        result = pool.evaluate(EvalRequest(task=task, source=derived.source, name="derived",
                                           time=False, trials=trials, timeout_s=300))
        row.status = "accepted" if result.accepted else "rejected"
        row.detail = "" if result.accepted else f"{result.reason}: {result.message}"
    row.seconds = time.perf_counter() - t0
    return row


def table(rows: list[Row], title: str) -> str:
    count = {s: sum(r.status == s for r in rows) for s in ("accepted", "rejected", "no seed",
                                                         "task error")}
    judged = count["accepted"] + count["rejected"]
    lines = [f"# {title}", "",
             f"{len(rows)} files, none edited: {judged} derived seeds judged "
             f"(**{count['accepted']} accepted**, {count['rejected']} rejected); "
             f"{count['no seed']} say in one line why no seed can be derived; "
             f"{count['task error']} are refused in one line before any seed (the task itself: "
             "too big for the interpreter, or its own code fails).", "",
             "| file | start | template | CPU shape | why / verdict | s |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        detail = r.detail.replace("|", "\\|").replace("\n", " ")[:220]
        lines.append(f"| {r.name} | {r.status} | {r.family} | {r.shape} | {detail} | "
                     f"{r.seconds:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--allow-torch", default="")
    ap.add_argument("--title", default="KernelBench-format files on the CPU: do they start?")
    args = ap.parse_args()
    allow = tuple(a for a in args.allow_torch.split(",") if a)
    rows = []
    with EvaluatorPool("cpu") as pool:
        for path in files(args.paths):
            row = start(pool, path, args.trials, allow)
            print(f"{row.name}: {row.status} {row.family} {row.detail[:120]}", file=sys.stderr,
                  flush=True)
            rows.append(row)
            if args.out:  # after every file: a long run can be read while it goes
                args.out.write_text(table(rows, args.title))
    text = table(rows, args.title)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
