"""``evotui ab``: does the advice library pay? The same budget with memory off and on.

1. A private home (``OUT/home``) gets a copy of the user's library (or a fresh one with
   only the cold-start pack): the user's library is never written unless ``save_advice``.
2. Optionally a learning run on a related task (another shape or dtype) fills that library
   through the usual end-of-run distillation.
3. For every RNG seed, TASK runs once with memory off (``memory_k=0``) and once with memory
   on, each "on" run with its own copy of the library (so seeds stay independent) and no
   distillation; off and on alternate so that drifting machine conditions hit both.
4. Figures (``evotui.ab.report``): evaluations to reach the target and the best result per
   arm, written to ``OUT/ab.json`` and ``OUT/ab.md``.

One evaluator pool serves every run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evotui.ab import report as ab_report
from evotui.ab.report import RunRecord
from evotui.engine.events import CandidateEvaluated, Event
from evotui.engine.hooks import Evaluator
from evotui.engine.loop import Engine
from evotui.engine.rundir import atomic_write
from evotui.engine.session import RunOptions, open_session

Progress = Callable[[str], None]


@dataclass
class ABSpec:
    task: str
    out: Path
    learn: str | None = None
    seed: str | None = None  # TASK's seed candidate for every run of both arms (default seed.py)
    seeds: int = 3
    iterations: int = 20
    learn_iterations: int | None = None  # default: iterations
    target_pct: float = 98.0
    target_speedup: float | None = None  # instead of target_pct: × the seed's speed
    device: str = "auto"
    mutator: str = "param"
    model: str | None = None
    ollama_host: str | None = None
    memory_k: int = 3
    fresh_library: bool = False  # the cold-start pack only, not a copy of the user's library
    save_advice: bool = False  # import what the learning run distilled into the user's library
    eval_timeout: float | None = None
    concurrency: int = 0  # iterations in flight per run; 0: the engine's default


def user_library() -> Path:
    """The user's library file, without creating anything."""
    env = os.environ.get("EVOTUI_HOME")
    if env:
        return Path(env).expanduser() / "advice.json"
    from platformdirs import user_data_dir

    return Path(user_data_dir("evotui", appauthor=False)) / "advice.json"


@contextlib.contextmanager
def private_home(path: Path) -> Iterator[None]:
    old = os.environ.get("EVOTUI_HOME")
    os.environ["EVOTUI_HOME"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("EVOTUI_HOME", None)
        else:
            os.environ["EVOTUI_HOME"] = old


def prepare_library(home: Path, user: Path, fresh: bool) -> dict[str, Any]:
    from evotui.memory.store import AdviceStore

    home.mkdir(parents=True, exist_ok=True)
    lib = home / "advice.json"
    source = "fresh: the cold-start pack"
    if not fresh and user.is_file():
        shutil.copyfile(user, lib)
        source = f"a copy of {user}"
    store = AdviceStore(lib)  # fills a fresh one with the cold-start pack
    n = len(store)
    store.close()
    return {"path": str(lib), "source": source, "size_before": n}


def record_of(engine: Engine, arm: str, seed: int) -> RunRecord:
    """The run's best-so-far curve over evaluated children (in the order verdicts came)."""
    state = engine.state
    pop = state.population
    seed_c = pop.get(state.seed_id) if state.seed_id and state.seed_id in pop else None
    best = seed_c.metrics.time_ms if seed_c is not None and seed_c.status == "accepted" else None
    best_c = seed_c if best is not None else None
    curve: list[float | None] = [best]
    for c in state.children():
        time_ms = c.metrics.time_ms
        if c.status == "accepted" and time_ms and (best is None or time_ms < best):
            best, best_c = time_ms, c
        curve.append(best)
    report = engine.report()
    adv = engine.advice_report or {}
    return RunRecord(
        arm=arm, seed=seed, task=engine.task.name,
        run_dir=str(engine.run_dir.path) if engine.run_dir else "", outcome=str(state.outcome),
        evaluated=state.evaluated, iterations=engine.config.iterations,
        seed_time_ms=curve[0], best_time_ms=best,
        best_speedup_eager=best_c.metrics.speedup_eager if best_c is not None else None, curve=curve,
        llm_calls=int(report["llm"]["calls"]),
        children_with_advice=int(report["advice"]["children_with_advice"]),
        improved_with_advice=int(report["advice"]["improved_with_advice"]),
        advice={k: v for k, v in adv.items() if k != "items"})


class ABRunner:
    """Runs the experiment; ``stop()`` (from a signal handler) ends the current run cleanly
    and skips the rest."""

    def __init__(self, spec: ABSpec, evaluator: Evaluator, progress: Progress | None = None) -> None:
        self.spec = spec
        self.evaluator = evaluator
        self.progress = progress or (lambda line: None)
        self.stopped = False
        self._engine: Engine | None = None
        self.arch: str | None = None
        self.gpu: str | None = None

    def stop(self) -> None:
        self.stopped = True
        if self._engine is not None:
            self._engine.stop(5.0)

    async def _memory(self, library: Path, task_meta: Any) -> Any:
        from evotui.memory.hook import MemoryHook
        from evotui.memory.store import AdviceStore

        embedder = None
        if self.spec.mutator in ("llm", "mixed"):
            from evotui.memory.embed import OllamaEmbedder

            embedder = OllamaEmbedder(host=self.spec.ollama_host)
        hook = MemoryHook(AdviceStore(library), k=self.spec.memory_k, arch=self.arch,
                          embedder=embedder)
        if embedder is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(hook.warm(task_meta), 60)
        return hook

    async def run_one(self, arm: str, task: str, seed: int, library: Path | None,
                      iterations: int, label: str) -> RunRecord:
        from evotui.task.model import resolve_task

        s = self.spec
        memory = await self._memory(library, resolve_task(task).meta) if library else None
        opts = RunOptions(task=task, seed=s.seed if arm != "learn" else None, device=s.device,
                          iterations=iterations, mutator=s.mutator, model=s.model,
                          ollama_host=s.ollama_host,
                          out=str(s.out / "runs" / f"{arm}-seed{seed}"),
                          memory_k=s.memory_k if library else 0, random_seed=seed,
                          distill=arm == "learn", eval_timeout=s.eval_timeout)
        session = await open_session(opts, evaluator=self.evaluator, memory=memory)
        engine = self._engine = session.engine
        if s.concurrency:
            engine.config.concurrency = s.concurrency

        def on_event(ev: Event) -> None:
            if isinstance(ev, CandidateEvaluated) and ev.parent_id is not None:
                self.progress(f"{label}: {engine.state.evaluated}/{iterations} evaluated")

        engine.subscribe(on_event)
        try:
            await engine.run()
        finally:
            self._engine = None
            await session.aclose()
        return record_of(engine, arm, seed)

    async def run(self) -> dict[str, Any]:
        s = self.spec
        s.out.mkdir(parents=True, exist_ok=True)
        home = s.out / "home"
        user = user_library()
        library = prepare_library(home, user, s.fresh_library)
        if not self.evaluator.is_cpu:
            facts = await asyncio.to_thread(self.evaluator.device_facts) or {}
            self.arch, self.gpu = facts.get("arch"), facts.get("name")
        runs: list[RunRecord] = []
        seeds = list(range(1, s.seeds + 1))
        lib_path = Path(library["path"])
        with private_home(home):
            if s.learn:
                learn = await self.run_one("learn", s.learn, 0, lib_path,
                                           s.learn_iterations or s.iterations, "learning")
                runs.append(learn)
                self.progress(f"learned on {learn.task}: {learn.advice.get('proposed', 0)} "
                              f"proposed, {learn.advice.get('merged', 0)} merged")
            for seed in seeds:
                for arm in ab_report.ARMS:
                    if self.stopped:
                        break
                    copy = None
                    if arm == "on":
                        copy = s.out / "libraries" / f"on-seed{seed}.json"
                        copy.parent.mkdir(exist_ok=True)
                        shutil.copyfile(lib_path, copy)
                    runs.append(await self.run_one(arm, s.task, seed, copy, s.iterations,
                                                   f"{ab_report.ARM_TITLES[arm]}, seed {seed}"))
        if s.save_advice and s.learn and not self.stopped:
            library["saved"] = save_learned(lib_path, user, runs[0].run_dir)
        return self.result(runs, seeds, library)

    def result(self, runs: list[RunRecord], seeds: list[int],
               library: dict[str, Any]) -> dict[str, Any]:
        s = self.spec
        target = ab_report.apply_target(runs, s.target_pct, s.target_speedup)
        summary = ab_report.summarize(ab_report.paired_runs(runs, self.stopped))
        learn = next((r for r in runs if r.arm == "learn"), None)
        return {
            "task": runs[-1].task if runs else s.task, "task_path": s.task,
            "learn": asdict(learn) if learn else None, "mutator": s.mutator, "model": s.model,
            "device": ", ".join(self.evaluator.devices), "gpu": self.gpu, "arch": self.arch,
            "interpreter": self.evaluator.is_cpu, "iterations": s.iterations, "seeds": seeds,
            "memory_k": s.memory_k, "target": target, "summary": summary,
            "verdict": ab_report.verdict(summary, s.iterations), "library": library,
            "stopped": self.stopped, "runs": [asdict(r) for r in runs],
        }


def save_learned(library: Path, user: Path, learn_run: str) -> int:
    """Import the advice the learning run distilled into the user's library."""
    from evotui.memory.store import AdviceStore

    run = str(Path(learn_run).resolve())
    mine = AdviceStore(library).export_data()
    mine["advice"] = [d for d in mine["advice"]
                      if any(p.get("run") == run for p in d.get("provenance") or [])]
    user.parent.mkdir(parents=True, exist_ok=True)
    got = AdviceStore(user).import_data(mine)
    return len(got.added) + len(got.merged)


def write_results(out: Path, data: dict[str, Any]) -> None:
    atomic_write(out / "ab.json", json.dumps(data, indent=2) + "\n")
    atomic_write(out / "ab.md", ab_report.render_markdown(data))


__all__ = ["ABRunner", "ABSpec", "prepare_library", "record_of", "user_library",
           "write_results"]
