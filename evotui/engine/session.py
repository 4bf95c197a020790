"""Putting a run together from options: task, seed, mutator, evaluator, run directory,
advice library, engine. ``open_session`` is the one factory every face opens its run with
(headless, the TUI's engine process, the suite, A/B runs); what the faces share about a run
(how long a stop lets evaluations finish, the closing summary) lives here too, so that no
face imports another.

Setup problems (a bad task, no seed, ``--mutator llm`` without a server, a run directory in
use, no GPU for ``--device cuda``) raise ``SetupError``: one line for the user, exit code 2.
``--mutator auto`` never fails for want of a model: it falls back to the parameter mutator and
says, in one line, how to enable the model.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from evotui import config as evoconfig
from evotui.engine.hooks import AdviceLibrary, Evaluator
from evotui.engine.loop import Engine
from evotui.engine.mutators import LLMMutator, MixedMutator, Mutator, ParamMutatorAdapter
from evotui.engine.rundir import RunDir, RunDirError, load_checkpoint
from evotui.engine.state import EngineConfig
from evotui.task.model import TaskError, TaskRef, resolve_task
from evotui.task.preflight import preflight

MUTATOR_MODES = ("auto", "llm", "param", "mixed")
DEFAULT_ITERATIONS = 20
DEFAULT_MEMORY_K = 3
LLM_OPTIONS = {"num_ctx": 8192, "temperature": 0.7}
STOP_GRACE_S = 5.0  # seconds in-flight evaluations get on a clean stop (Ctrl-C, q, a budget)


class SetupError(Exception):
    """Why a run cannot start: one line for the user (exit code 2)."""


@dataclass
class RunOptions:
    """What ``evotui run`` was asked. ``None`` means "not given": the default for a new run,
    the stored value for ``resume``."""

    task: str | None = None
    seed: str | None = None
    device: str | None = None  # auto | cuda | cpu
    iterations: int | None = None
    mutator: str | None = None  # auto | llm | param | mixed
    model: str | None = None
    ollama_host: str | None = None
    out: str | None = None
    resume: str | None = None
    memory_k: int | None = None
    random_seed: int | None = None
    llm_timeout: float | None = None
    llm_backoff: float | None = None  # seconds before the first retry (doubles each time)
    eval_timeout: float | None = None
    distill: bool | None = None  # end of run: successful mutations → proposed advice (default on)
    scheduler: str | None = None  # a Dask scheduler (tcp://host:8786): evaluate on its GPU workers
    shape: dict[str, Any] | None = None  # --shape: the task's size constants set by the user
    allow_torch: list[str] | None = None  # --allow-torch: torch ops candidates may call
    seed_origin: str | None = None  # where the seed came from (set when the run starts)

    def merged(self, stored: dict[str, Any]) -> RunOptions:
        """These options over the ones a checkpoint stored."""
        known = {f.name for f in fields(self)}
        base = {k: v for k, v in stored.items() if k in known}
        mine = {k: v for k, v in asdict(self).items() if v is not None}
        return RunOptions(**{**base, **mine})


@dataclass
class Session:
    engine: Engine
    evaluator: Evaluator
    run_dir: RunDir
    options: RunOptions
    mode: str  # the mutator actually used
    notes: list[str] = field(default_factory=list)  # one-line messages for the user
    owns_evaluator: bool = True

    async def aclose(self) -> None:
        self.run_dir.close()
        if self.owns_evaluator:
            await asyncio.to_thread(self.evaluator.close)


SessionFactory = Callable[[], Awaitable[Session]]  # e.g. ``lambda: open_session(options)``


def summary_lines(outcome: str, message: str, report: dict[str, Any]) -> list[str]:
    """What a face prints when the run is over: its outcome and its best candidate."""
    from evotui.engine.report import best_summary

    return [f"{outcome}: {message}", f"best {best_summary(report)}"]


async def resolve_mutator(mode: str, model: str, host: str | None, llm_timeout: float,
                          llm_backoff: float = 1.0, dialect: str = "triton"
                          ) -> tuple[Mutator, list[str]]:
    """The mutator for ``mode``; ``auto`` probes Ollama and falls back to parameters."""
    if mode not in MUTATOR_MODES:
        raise SetupError(f"unknown mutator {mode!r} (choose from {', '.join(MUTATOR_MODES)})")
    if mode == "param":
        return ParamMutatorAdapter(), []
    from evotui.dialects import get_backend
    from evotui.engine.prompting import PromptBuilder
    from evotui.llm import OllamaLLM, has_model, probe

    llm = OllamaLLM(model, host=host, timeout=llm_timeout, backoff=llm_backoff,
                    options=LLM_OPTIONS)
    where = llm.display_host
    status = await probe(llm.host)
    if status.bad_address:
        why, fix = status.error, "give a server address such as http://127.0.0.1:11434"
    elif not status.reachable:
        why = f"no Ollama server answers at {where}"
        fix = f"`ollama serve`, then `ollama pull {model}`"
    elif status.error is not None:
        why, fix = f"the Ollama server at {where} failed: {status.error}", "`ollama serve`"
    elif not has_model(status, model):
        why, fix = f"model {model} is not on the Ollama server at {where}", f"`ollama pull {model}`"
    else:
        builder = PromptBuilder(get_backend(dialect).prompt_dir)
        llm_mutator = LLMMutator(llm, builder)
        if mode == "mixed":
            return MixedMutator(llm_mutator, ParamMutatorAdapter()), [f"model: {model} at {where}"]
        return llm_mutator, [f"model: {model} at {where}"]
    if mode == "auto":
        return ParamMutatorAdapter(), [
            f"No LLM ({why}): using the parameter mutator. To enable the LLM: {fix}."]
    raise SetupError(f"--mutator {mode}: {why}. Fix: {fix}, or point --ollama-host / OLLAMA_HOST "
                     "at a running server (or use --mutator param).")


async def open_memory(k: int, arch: str | None, task: TaskRef, host: str | None,
                      use_embeddings: bool) -> tuple[AdviceLibrary | None, str | None]:
    """The advice library's engine hook (``evotui.memory.hook.MemoryHook``), or why not."""
    if k <= 0:
        return None, None
    try:
        from evotui.memory.hook import MemoryHook as LibraryHook
        from evotui.memory.store import AdviceStore
    except ImportError as e:
        return None, f"advice library unavailable ({e}): running without advice"
    try:
        embedder = None
        if use_embeddings:
            from evotui.memory.embed import OllamaEmbedder

            embedder = OllamaEmbedder(host=host)
        hook = LibraryHook(AdviceStore(), k=k, arch=arch, embedder=embedder)
        if embedder is not None:
            await asyncio.wait_for(hook.warm(task.meta), 60)
    except Exception as e:
        return None, (f"advice library could not be opened ({type(e).__name__}: {e}): "
                      "running without advice")
    return hook, None


async def _device_facts(evaluator: Evaluator) -> dict[str, Any]:
    """GPU name and architecture from the evaluator's judge (never from this process, which
    must not open a CUDA context); empty on the CPU."""
    if evaluator.is_cpu:
        return {}
    try:
        return dict(await asyncio.to_thread(evaluator.device_facts) or {})
    except Exception:
        return {}


def _dialect(opts: RunOptions, task: TaskRef, seed_source: str | None) -> str:
    """The kernel dialect of the run: its seed's (read again from disk when resuming)."""
    from evotui.dialects import backend_for_source

    if seed_source is None:
        path = Path(opts.seed) if opts.seed else task.seed_path
        try:
            seed_source = path.read_text() if path is not None else ""
        except OSError:
            seed_source = ""
    return backend_for_source(seed_source).name


def _task_and_seed(opts: RunOptions, resuming: bool) -> tuple[TaskRef, str | None]:
    if not opts.task:
        raise SetupError("no TASK given (a task file or folder such as sample_kernels/softmax)")
    shape = {k: tuple(v) if isinstance(v, list) else v for k, v in (opts.shape or {}).items()}
    try:
        task = resolve_task(opts.task, shape=shape, allow_torch=tuple(opts.allow_torch or ()))
    except TaskError as e:
        raise SetupError(str(e)) from None
    if resuming:
        return task, None
    seed_path = Path(opts.seed) if opts.seed else task.seed_path
    if seed_path is None:
        if (opts.mutator or "auto") == "llm":
            opts.seed_origin = "written by the model from the reference"
            return task, _generation_zero(task)
        source, opts.seed_origin = _derived_seed(task)
        return task, source
    opts.seed_origin = f"file {seed_path}"
    try:
        return task, seed_path.read_text()
    except OSError as e:
        raise SetupError(f"cannot read seed {seed_path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise SetupError(f"seed {seed_path} is not UTF-8 text") from None


def _generation_zero(task: TaskRef) -> str | None:
    """A task with no seed and the model as mutator: generation 0 is written by the model
    from the reference (``evotui.engine.bootstrap``), so there is no seed source."""
    return None


def _derived_seed(task: TaskRef) -> tuple[str, str]:
    """A seed derived from the task's reference Model, and the line that says so."""
    from evotui.seed import derive_seed

    try:
        derived = derive_seed(task)
    except TaskError as e:
        raise SetupError(str(e)) from None
    if not derived.ok:
        raise SetupError(f"task {task.name} has no seed candidate and none can be derived from "
                         f"its reference: {derived.reason}")
    return derived.source, f"derived from the reference ({derived.family} template)"


def _seed_note(opts: RunOptions, checkpoint: dict[str, Any] | None) -> str | None:
    if checkpoint is None and opts.seed_origin and opts.seed_origin.startswith("derived"):
        return f"seed: {opts.seed_origin}"
    return None


async def _dask_pool(address: str, device: str) -> Evaluator:
    from evotui.eval.dask_pool import DaskEvaluatorPool

    try:
        return await asyncio.to_thread(DaskEvaluatorPool, address, device=device)
    except ValueError as e:  # distributed's verdict on a malformed address
        raise SetupError(f"--scheduler {address!r} is not a scheduler address ({e}): give one "
                         "such as tcp://host:8786") from None


def _run_dir_path(opts: RunOptions, task: TaskRef) -> Path:
    if opts.resume:
        return Path(opts.resume)
    if opts.out:
        return Path(opts.out)
    try:
        runs = evoconfig.runs_dir()
    except evoconfig.HomeError as e:
        raise SetupError(f"{e}; or pass --out DIR") from None
    return runs / f"{task.name}-{time.strftime('%Y%m%d-%H%M%S')}"


async def open_session(options: RunOptions, *, evaluator: Evaluator | None = None,
                       memory: AdviceLibrary | None = None) -> Session:
    checkpoint: dict[str, Any] | None = None
    opts = options
    if options.resume:
        try:
            checkpoint = load_checkpoint(Path(options.resume))
        except RunDirError as e:
            raise SetupError(str(e)) from None
        stored = {**(checkpoint.get("run") or {}), "task": checkpoint.get("task")}
        opts = options.merged(stored)
        opts.scheduler = options.scheduler  # a cluster is not part of the run: given again or not
        if options.task:
            try:
                given = str(resolve_task(options.task).path)
            except TaskError as e:
                raise SetupError(str(e)) from None
            if given != checkpoint.get("task"):
                raise SetupError(f"{options.resume} is a run of {checkpoint.get('task')}, "
                                 f"not of {given}")
    task, seed_source = _task_and_seed(opts, checkpoint is not None)
    out = _run_dir_path(opts, task)  # before the slow parts: a bad EVOTUI_HOME fails here

    mode = opts.mutator or "auto"
    model = opts.model or evoconfig.DEFAULT_MODEL
    dialect = _dialect(opts, task, seed_source)
    mutator, notes = await resolve_mutator(mode, model, opts.ollama_host,
                                           opts.llm_timeout or 300.0,
                                           1.0 if opts.llm_backoff is None else opts.llm_backoff,
                                           dialect)

    if checkpoint is not None:
        cfg = EngineConfig.from_dict(checkpoint.get("config") or {})
        if options.iterations is not None:
            cfg.iterations = options.iterations
        if options.memory_k is not None:
            cfg.memory_k = options.memory_k
    else:
        cfg = EngineConfig(
            iterations=opts.iterations if opts.iterations is not None else DEFAULT_ITERATIONS,
            seed=opts.random_seed or 0,
            memory_k=opts.memory_k if opts.memory_k is not None else DEFAULT_MEMORY_K)
    if opts.eval_timeout:
        cfg.eval_timeout_s = opts.eval_timeout
    if opts.distill is not None:
        cfg.distill = opts.distill

    owns = evaluator is None
    if evaluator is None:
        from evotui.eval import EvaluatorPool

        try:
            if opts.scheduler:
                evaluator = await _dask_pool(opts.scheduler, opts.device or "auto")
            else:
                evaluator = EvaluatorPool(opts.device or "auto")
        except RuntimeError as e:
            raise SetupError(str(e)) from None
    problem = None
    if dialect == "cuda" and evaluator.is_cpu:  # CUDA C has no CPU interpreter
        problem = ("the seed is a CUDA C candidate: it needs a GPU (--device cuda); "
                   "on the CPU only Triton candidates run, in Triton's interpreter")
    else:
        try:
            shape_note = await asyncio.to_thread(preflight, task, evaluator.is_cpu)
        except TaskError as e:
            problem = str(e)
        else:
            notes.extend(n for n in (shape_note, _seed_note(opts, checkpoint)) if n)
    if problem is None and owns:
        sandbox = await asyncio.to_thread(evaluator.sandbox_state)
        problem = sandbox.problem
        if sandbox.warning:
            notes.append(sandbox.warning)
    if problem is not None:
        if owns:
            await asyncio.to_thread(evaluator.close)
        raise SetupError(problem)
    facts = await _device_facts(evaluator)
    if memory is None:
        memory, note = await open_memory(cfg.memory_k, facts.get("arch"), task,
                                         opts.ollama_host, mutator.model is not None)
        if note:
            notes.append(note)

    try:
        run_dir = RunDir(out, resume=checkpoint is not None)
    except RunDirError as e:
        if owns:
            await asyncio.to_thread(evaluator.close)
        raise SetupError(str(e)) from None

    run_info = {**asdict(opts), "task": str(task.path), "out": str(out), "resume": None}
    engine = Engine(task, evaluator, mutator, cfg, seed_source=seed_source, memory=memory,
                    run_dir=run_dir, checkpoint=checkpoint, run_info=run_info)
    engine.device_info = {k: facts[k] for k in ("name", "arch") if k in facts}
    if checkpoint is not None:
        notes.append(f"resuming {out}: {engine.state.evaluated} of {cfg.iterations} children "
                     f"evaluated, generation {engine.state.generation}")
    return Session(engine, evaluator, run_dir, opts, mutator.name, notes, owns)
