"""The candidate side of an evaluation: runs inside a worker process that candidate code may
have corrupted. It only *produces* bytes (outputs, inputs after the call, timings, launch
counts); it decides nothing. The judge process compares.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import evotui.eval.failures as failures
import evotui.eval.outbox as outbox
from evotui.core import reasons
from evotui.eval.ab_phase import ABPhase
from evotui.eval.control import RESERVE, SHARE
from evotui.eval.failures import CandidateFailure, harness_failure, named_reason, short_traceback
from evotui.eval.leftovers import child_processes, harness_code
from evotui.eval.leftovers import replaced as find_replaced
from evotui.eval.lockdown import lock_down
from evotui.eval.messages import GhostReport, Meta, Report, Request, TrialReport
from evotui.eval.op_policy import OpPolicy
from evotui.eval.pending_inputs import PendingInputs
from evotui.eval.perturb import write_quietly
from evotui.eval.protocol import dump_tensor
from evotui.eval.timed_calls import as_outputs
from evotui.eval.timed_phase import TimedPhase
from evotui.task.model import TaskChanged, make_init_inputs, make_inputs, task_module

CANDIDATE_MODULE = "evotui_candidate"


class CandidateRunner(TimedPhase, ABPhase):
    """State kept across requests in one worker: the launch hooks and the device timer."""

    def __init__(self, device: str,
                 tasks: dict[str, types.ModuleType] | None = None) -> None:
        import torch

        self.torch = torch
        self.device = torch.device(device)
        from evotui.dialects import get_backend

        self.backend = get_backend("triton")
        self.recorder = self.backend.launch_recorder()
        self.recorder.install()
        # re-read after every candidate: still ours? (the reader itself held from here, so a
        # candidate that rebinds `leftovers.harness_code` does not answer for it)
        self._read_harness_code = harness_code
        import torch._dynamo  # noqa: F401 - it rebinds torch.manual_seed when first imported

        lock_down()
        self.harness_code = harness_code()
        # and as Triton copies a launch's arguments with the policy suspended: a patch put
        # back before the next output is read ran there (a patched `Tensor.new_empty` did)
        self.recorder.verify_harness = self._verify_harness
        # one recorder per dialect; ``self.recorder`` is the current candidate's (set on load)
        self.recorders: dict[str, Any] = {"triton": self.recorder}
        self.timer = None
        if self.device.type == "cuda":
            from evotui.eval.timing import CudaTimer

            torch.cuda.set_device(self.device)
            self.timer = CudaTimer(self.device)
        # loaded before the sandbox closed: a confined candidate cannot read the task file
        self.tasks: dict[str, types.ModuleType] = dict(tasks or {})
        self._pending_inputs = PendingInputs(self.torch, self.device)

    # -- helpers ---------------------------------------------------------------------------
    @staticmethod
    def load_tasks(path: str, sha256: str | None) -> dict[str, types.ModuleType]:
        """The request's task module, keyed as ``_task`` looks it up (before confinement)."""
        try:
            return {f"{path}:{sha256}": task_module(path, sha256)}
        except TaskChanged as e:
            raise CandidateFailure(reasons.TAMPERED, str(e)) from None

    def _task(self, path: str, sha256: str | None) -> types.ModuleType:
        key = f"{path}:{sha256}"
        if key not in self.tasks:
            self.tasks.update(self.load_tasks(path, sha256))
        return self.tasks[key]

    def _to_device(self, values: list[Any]) -> list[Any]:
        torch = self.torch
        return [v.to(self.device) if isinstance(v, torch.Tensor) else v for v in values]

    def _timing_inputs(self, req: Request, task: types.ModuleType,
                       shape: dict[str, Any]) -> tuple[list[int], list[list[Any]]]:
        """The timed input sets and their seeds: those the request names (the pool chose how
        many fit on the device: ``timing.timing_set_count``); the judge expects exactly those."""
        seeds = req.timed_seeds
        return seeds, [self._to_device(make_inputs(task, shape, s, self.device)) for s in seeds]

    def _call(self, model: Any, inputs: list[Any], policy: OpPolicy | None) -> tuple[list[Any], int]:
        torch = self.torch
        self.recorder.reset()
        if policy is not None:
            self.recorder.on_enter, self.recorder.on_exit = policy.enter_kernel, policy.exit_kernel
            with policy:
                out = model(*inputs)
        else:
            out = model(*inputs)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return as_outputs(out), self.recorder.total

    def _load_model_class(self, cand_path: str, task: types.ModuleType,
                          static_checks: bool = True) -> type:
        from evotui.dialects import backend_for_source
        from evotui.dialects.base import CandidateError
        from evotui.dialects.triton.text_rules import check_text, decode, pin

        data = Path(cand_path).read_bytes()
        try:  # the very string the parent checked: UTF-8, newlines as written, no BOM
            source = decode(data)
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise CandidateFailure(reasons.AMBIGUOUS_SOURCE, f"line {line}: the file is not "
                                   "UTF-8 text: candidates are UTF-8") from None
        backend = backend_for_source(source)
        if backend.name not in self.recorders:
            self.recorders[backend.name] = backend.launch_recorder()
        self.recorder = self.recorders[backend.name]
        if backend.needs_gpu and self.device.type != "cuda":
            raise CandidateFailure(reasons.NEEDS_GPU, f"{backend.name} candidates need a GPU")
        self.recorder.check_ptx = static_checks  # CUDA C: the PTX rules at the worker's compile
        try:  # a declarative dialect (CUDA C): nothing of the candidate is executed as Python;
            # the backend builds ModelNew (compiling its device code) from the task's Model
            built = backend.model_class(source, task, self.recorder)
        except CandidateError as e:
            raise CandidateFailure(e.reason, e.message) from None
        if built is not None:
            return built
        issue = check_text(source) if static_checks else None
        if issue is not None:  # (the parent refused these already: this is the same string)
            raise CandidateFailure(issue.reason, f"line {issue.line}: {issue.message}")
        try:  # the launch hooks run only the defs the static rules checked
            self.recorder.approve(cand_path, source)
        except SyntaxError as e:
            raise CandidateFailure(reasons.SYNTAX_ERROR, f"line {e.lineno}: {e.msg}") from None
        # what inspect, and so Triton, reads for this file from now on: the text compiled
        # below, never the file again (nor the file in the encoding its cookie names)
        pin(cand_path, source)
        module = types.ModuleType(CANDIDATE_MODULE)
        module.__file__ = cand_path
        # registered while it runs: dataclasses look their module up there (string
        # annotations); and compiled without this file's `from __future__` flags
        sys.modules[CANDIDATE_MODULE] = module
        try:
            code = compile(self._checked_tree(source) if static_checks else source, cand_path,
                           "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except BaseException as e:  # noqa: BLE001 - anything a candidate raises is its failure
            raise harness_failure(e) or CandidateFailure(
                reasons.LOAD_ERROR, short_traceback(e, cand_path)) from None
        model_cls = module.__dict__.get("ModelNew")
        if not isinstance(model_cls, type):
            raise CandidateFailure(reasons.BAD_INTERFACE, "ModelNew is not a class")
        return model_cls

    @staticmethod
    def _checked_tree(source: str) -> Any:
        """The candidate as the static rules judged it: without the `if __name__ ==
        "__main__":` block they skip (a `match` capture once ran it)."""
        import ast

        from evotui.dialects.triton.ast_paths import without_main_block

        return without_main_block(ast.parse(source))

    def _watcher(self, allow: tuple[str, ...], violations: dict[str, int],
                 poison: bool = False) -> Any:
        """A callable that runs a call under its own op policy and adds what it recorded to
        ``violations`` (the timed calls a candidate cannot tell from the others)."""
        def watched(fn: Any) -> None:
            policy = OpPolicy(allow, poison=poison)
            self.recorder.on_enter, self.recorder.on_exit = policy.enter_kernel, policy.exit_kernel
            with policy:
                fn()
            for op, n in policy.violations.items():
                violations[op] = violations.get(op, 0) + n
        return watched

    def _guarded_call(self, model: Any, inputs: list[Any], policy: OpPolicy | None,
                      cand_path: str) -> tuple[list[Any], int]:
        try:
            return self._call(model, inputs, policy)
        except BaseException as e:  # noqa: BLE001 - anything a candidate raises is its failure
            raise self._failure(e, cand_path) from None

    def _failure(self, e: BaseException, cand_path: str, when: str = "") -> CandidateFailure:
        """What the candidate raised, as its failure: a runtime error, or a CUDA error (and a
        new worker) when the context did not survive it."""
        own = harness_failure(e)
        if own is not None:  # a check of ours that fired inside the call (a patched harness)
            return own
        healthy = self._cuda_healthy()
        reason = named_reason(e) or (reasons.RUNTIME_ERROR if healthy else reasons.CUDA_ERROR)
        return CandidateFailure(reason, when + short_traceback(e, cand_path), restart=not healthy)

    def _refill(self, inputs: list[Any], task: types.ModuleType, shape: dict[str, Any],
                seed: int) -> None:
        """New values, those of input set ``seed``, in the same tensors (version counters
        unmoved, as between timed calls)."""
        write_quietly(inputs, self._to_device(make_inputs(task, shape, seed, self.device)))

    def _verify_harness(self, when: str = "before an output was read") -> None:
        replaced = find_replaced(self.harness_code, self._read_harness_code())
        if replaced:
            raise CandidateFailure(reasons.TIMER_TAMPERED, "the harness's checks' code were "
                                   f"replaced {when}: {', '.join(replaced[:5])}", restart=True)

    def _dump(self, values: list[Any], scratch: Path, prefix: str) -> list[Meta]:
        torch = self.torch
        # reading the outputs calls tensor methods outside the op policy: a patch put back
        # before the end of the request (where the report compares) computed them
        self._verify_harness()
        for i, v in enumerate(values):  # what cannot be read back is the candidate's doing
            if isinstance(v, torch.Tensor) and type(v) is not torch.Tensor:
                # a subclass (its __torch_function__ would run on every attribute we read)
                raise CandidateFailure(reasons.NOT_A_TENSOR,
                                       f"value {i} is a {type(v).__name__}, not a plain torch.Tensor")
            if isinstance(v, torch.Tensor) and (v.layout != torch.strided or v.device.type == "meta"):
                raise CandidateFailure(reasons.NOT_A_TENSOR,
                                       f"value {i} is a {v.layout} tensor on {v.device.type}: "
                                       "it cannot be read back as a dense tensor")
        return [dump_tensor(v, scratch / f"{prefix}_{i}.bin") for i, v in enumerate(values)]

    def _prepare_handover(self, req: Request, shape: int, outs: list[Any], trials_done: int) -> None:
        """Memfds ready for the outputs still to come at ``shape`` (``outs``: one call's), made
        before the device is asked for where a gate is used, so that dumping them while it
        is held is one copy."""
        if not outbox.has_channel():
            return
        cuda = self.device.type == "cuda"
        outbox.prepare(as_outputs(outs), req.calls_dumped_at(shape, trials_done, audited=cuda),
                       pin_for=self.torch.cuda.current_device() if cuda else None)

    def _inputs_after(self, values: list[Any], scratch: Path, prefix: str) -> list[Meta]:
        """What the judge checks of inputs after a call: their bytes on the CPU; on a GPU
        their fingerprints (``evotui.eval.digest``), filled in by ``_settle_inputs`` once the
        key is given, after the last timed call."""
        if self.device.type != "cuda" or not outbox.has_channel():
            return self._dump(values, scratch, prefix)
        return self._pending_inputs.add(values)

    def _settle_inputs(self) -> None:
        if self._pending_inputs:
            self._verify_harness()
            self._pending_inputs.settle(outbox.ask_key())

    # -- the request -----------------------------------------------------------------------
    def evaluate(self, req: Request) -> Report:
        try:
            return self._evaluate(req)
        except CandidateFailure as f:
            return Report.failed(f.reason, f.message, f.restart or not self._cuda_healthy())
        finally:
            outbox.drop_prepared()  # what was made ready and never used

    def _release_previous(self) -> None:
        if self.device.type == "cuda":
            # what the previous candidate left cached (a cache of outputs per call grows with
            # the samples) goes back to the device: other workers, the judge and the
            # baselines share it (a GPU test ran out of memory beside a worker holding 124 GB)
            gc.collect()
            self.torch.cuda.empty_cache()

    def _cuda_healthy(self) -> bool:
        if self.device.type != "cuda":
            return True
        try:
            self.torch.cuda.synchronize(self.device)
            self.torch.empty(1, device=self.device).fill_(1.0).item()
            return True
        except Exception:
            return False

    def _evaluate(self, req: Request) -> Report:
        torch = self.torch
        self._release_previous()
        phases: dict[str, float] = {}
        clock = time.perf_counter()
        threads_before = threading.active_count()
        scratch = Path(req.scratch)
        cand_path = req.candidate
        task = self._task(req.task, req.task_sha256)
        shapes = list(req.shapes)
        allow = req.allow_torch

        model_cls = self._load_model_class(cand_path, task, req.static_checks)

        models: dict[int, Any] = {}

        def model_for(shape_index: int) -> Any:
            if shape_index not in models:
                init = make_init_inputs(task, shapes[shape_index])
                torch.manual_seed(req.init_seed)
                try:
                    models[shape_index] = model_cls(*init).to(self.device)
                except BaseException as e:  # noqa: BLE001
                    raise harness_failure(e) or CandidateFailure(
                        reasons.LOAD_ERROR, short_traceback(e, cand_path)) from None
            return models[shape_index]

        def run(shape_index: int, seed: int, policy: OpPolicy | None) -> tuple[list[Any], list[Any], int]:
            model = model_for(shape_index)
            inputs = self._to_device(make_inputs(task, shapes[shape_index], seed, self.device))
            outs, launches = self._guarded_call(model, inputs, policy, cand_path)
            return inputs, outs, launches

        policy_ops: dict[str, int] = {}
        launches_by_kernel: dict[str, int] = {}
        trials: list[list[Any]] = []  # TrialReport's fields (_settle_inputs fills some in)
        phases["load"], clock = time.perf_counter() - clock, time.perf_counter()
        # dialects whose harness allocates the buffers (CUDA C) put guard bands around them
        # during the trials; their bytes go to the judge, which checks them (out_of_bounds)
        guarded = self.recorder.guards_buffers
        damaged = False
        if req.gate and outbox.has_channel():
            # compiled and loaded while another candidate of this device may be timed; then
            # the device shared with others' untimed work for the trials (alone for timing)
            first = req.trials[0]
            _, warm_outs, _ = run(first.shape, first.seed if req.warm_seed is None
                                  else req.warm_seed, OpPolicy(allow))
            if self.device.type == "cuda":  # its warm-up ends at the first ask: all done
                self.torch.cuda.synchronize(self.device)
            phases["warm"], clock = time.perf_counter() - clock, time.perf_counter()
            outbox.ask_gate(RESERVE)  # the host memory first: the memfds are made ready
            self._prepare_handover(req, first.shape, warm_outs, 0)  # without the device
            del warm_outs
            phases["prepare"], clock = time.perf_counter() - clock, time.perf_counter()
            outbox.ask_gate(SHARE)
            phases["gate_wait"], clock = time.perf_counter() - clock, time.perf_counter()
        for i, trial in enumerate(req.trials):
            policy = OpPolicy(allow, poison=True)  # unwritten outputs read as NaN
            if guarded:
                self.recorder.arm_guards(trial.seed)
            try:
                inputs, outs, launches = run(trial.shape, trial.seed, policy)
            finally:
                bands = self.recorder.take_guards() if guarded else []
            for op, n in policy.violations.items():
                policy_ops[op] = policy_ops.get(op, 0) + n
            trials.append([trial.seed, trial.shape, launches,
                           self._dump(outs, scratch, f"t{i}_out"),
                           self._inputs_after(inputs, scratch, f"t{i}_in"), None])
            if i == 0 and not policy.violations:  # (ready already if a warm-up call ran)
                self._prepare_handover(req, trial.shape, outs, 1)
            if guarded:
                trials[-1][-1] = [{"label": label, **self._dump([band], scratch, f"t{i}_g{k}")[0]}
                                  for k, (label, band) in enumerate(bands)]
                damaged = damaged or failures.bands_damaged(bands, trial.seed)
            for name, count in self.recorder.launches.items():
                launches_by_kernel[name] = launches_by_kernel.get(name, 0) + count
            del inputs, outs  # (on a GPU the inputs wait for their fingerprints in a list)

        phases["trials"], clock = time.perf_counter() - clock, time.perf_counter()
        # Not a verdict (the judge checks the bands itself): a kernel that wrote past a
        # guarded buffer would write past an exact-size one while being timed and could kill
        # the context before the judge sees the evidence, so it is not timed.
        timing = None
        if req.time and not policy_ops and not damaged:
            timing = self._time(req, run, model_for, task, shapes, scratch, allow, phases)
        self._settle_inputs()  # (after the timed calls, if any: then it is done already)
        phases["timing"], clock = time.perf_counter() - clock, time.perf_counter()

        # ghost replay: the same call with every kernel launch skipped
        self.recorder.ghost = True
        try:
            _, ghost_outs, _ = run(req.ghost_shape, req.ghost_seed, None)
            ghost = GhostReport(req.ghost_seed, req.ghost_shape,
                                tuple(self._dump(ghost_outs, scratch, "ghost")))
        except CandidateFailure as f:
            ghost = GhostReport(req.ghost_seed, error=f.message)
        finally:
            self.recorder.ghost = False

        phases["ghost"] = time.perf_counter() - clock
        threads_started = threading.active_count() - threads_before
        children = child_processes()
        replaced = find_replaced(self.harness_code, self._read_harness_code())
        timer_intact = (self.timer.intact() if self.timer else True) and not replaced
        if not self._cuda_healthy():
            raise CandidateFailure(reasons.CUDA_ERROR, "the CUDA context is broken after the run",
                                   restart=True)
        return Report(
            ok=True, phases=phases, policy=policy_ops, launches=launches_by_kernel,
            trials=tuple(TrialReport(*(tuple(v) if isinstance(v, list) else v for v in t))
                         for t in trials), timing=timing, ghost=ghost,
            threads_started=threads_started, children=tuple(children),
            replaced=tuple(replaced[:5]), timer_intact=timer_intact,
            # a worker left with foreign threads, processes or patched code is not reused
            restart=bool(threads_started > 0 or children or not timer_intact))
