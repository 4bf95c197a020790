"""The judge: a worker process where candidate code never runs (invariant 2).

It regenerates every input from its seed, computes the reference with the task's own
``Model``, reads the bytes the candidate worker produced, and decides the verdict. It also
times the baselines (eager and ``torch.compile``) itself, so a candidate cannot slow them,
and measures the device's copy bandwidth and matmul rate for the roofline."""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any

from evotui.core import reasons
from evotui.eval.compare import compare_float, describe_worst
from evotui.eval.digest import fingerprint
from evotui.eval.judge_figures import JudgeFigures
from evotui.eval.messages import (
    ABReport,
    Audited,
    Details,
    Meta,
    Report,
    Request,
    TimingReport,
    Verdict,
)
from evotui.eval.op_policy import as_bits
from evotui.eval.part_times import PartTimes
from evotui.eval.perturb import graph_check_seed, values_seed
from evotui.eval.precision import exact_float32
from evotui.eval.protocol import TamperedOutput, TensorMeta, load_tensor
from evotui.eval.read_ahead import ReadAhead
from evotui.eval.verdict_checks import Reject, check_request_answered, check_weights
from evotui.task.model import TaskChanged, make_init_inputs, make_inputs, task_module


class Judge(JudgeFigures):
    def __init__(self, device: str) -> None:
        import torch

        self.torch = torch
        exact_float32(torch)
        self.device = torch.device(device)
        self.timer = None
        if self.device.type == "cuda":
            from evotui.eval.timing import CudaTimer

            torch.cuda.set_device(self.device)
            self.timer = CudaTimer(self.device)
        self.models: dict[tuple[str, str, int], Any] = {}
        super().__init__()
        self.blobs: list[str | None] = []  # where the report being judged left its bytes
        self.digest_key: int | None = None  # the key its inputs' fingerprints were made with
        self.parts = PartTimes()  # where the request's time goes (reset by each ``judge``)
        self.read_ahead = ReadAhead(self.device)  # a report's bytes, read before the device

    # -- task and reference ----------------------------------------------------------------
    def _task(self, path: str, sha256: str | None) -> tuple[str, types.ModuleType]:
        """The task module (loaded once for its text: ``task_module``) and a key naming
        that text, for what the judge keeps of it (models, baselines)."""
        try:
            module = task_module(path, sha256)
        except TaskChanged as e:  # between evaluations only candidate code ran
            raise Reject(reasons.TAMPERED, str(e)) from None
        return f"{path}:{module.__evotui_sha256__}", module

    def _pristine(self, req: Request, shape_index: int, seed: int,
                  perturbed: int = 0) -> list[Any]:
        """Inputs generated from ``seed``, after ``perturbed`` changes of all its values (the
        state a timed set was left in, evotui.eval.perturb)."""
        _, task = self._task(req.task, req.task_sha256)
        with self.parts.part("inputs"):
            return [v.to(self.device) if isinstance(v, self.torch.Tensor) else v
                    for v in make_inputs(task, req.shapes[shape_index],
                                         values_seed(seed, perturbed), self.device)]

    def _reference(self, req: Request, shape_index: int, seed: int,
                   perturbed: int = 0) -> tuple[list[Any], list[Any]]:
        """The inputs of ``_pristine`` and the task's ``Model`` output on them."""
        torch = self.torch
        key, task = self._task(req.task, req.task_sha256)
        shape = req.shapes[shape_index]
        mkey = (key, repr(shape), req.init_seed)
        if mkey not in self.models:
            # one set of weights at a time: every request draws a new init seed, and keeping
            # old models would fill the GPU over a long run
            for old in [k for k in self.models if k[2] != req.init_seed]:
                del self.models[old]
            init = make_init_inputs(task, shape)
            torch.manual_seed(req.init_seed)
            self.models[mkey] = task.Model(*init).to(self.device).eval()
        inputs = self._pristine(req, shape_index, seed, perturbed)
        with torch.no_grad(), self.parts.part("reference"):
            out = self.models[mkey](*[v.clone() if isinstance(v, torch.Tensor) else v for v in inputs])
        outs = list(out) if isinstance(out, tuple | list) else [out]
        return inputs, outs

    # -- comparisons -----------------------------------------------------------------------
    def _tolerance(self, req: Request, dtype: str) -> tuple[float, float]:
        from evotui.dialects import get_backend

        atol, rtol = get_backend(req.dialect or "triton").tolerances(dtype)
        return (atol if req.atol is None else float(req.atol),
                rtol if req.rtol is None else float(req.rtol))

    def _compare(self, req: Request, metas: Sequence[Meta], refs: list[Any],
                 what: str, mismatch_reason: str = reasons.MISMATCH) -> dict[str, float]:
        torch = self.torch
        if len(metas) != len(refs):
            raise Reject(reasons.SHAPE_MISMATCH, f"{what}: {len(metas)} outputs, expected {len(refs)}")
        worst: dict[str, float] = {"max_abs_err": 0.0, "max_rel_err": 0.0}
        for i, (raw, ref) in enumerate(zip(metas, refs, strict=True)):
            meta = TensorMeta.from_dict(raw)
            label = f"{what} output {i}" if len(refs) > 1 else f"{what} output"
            if not isinstance(ref, torch.Tensor):
                continue
            if meta.type_name != "torch.Tensor":
                raise Reject(reasons.NOT_A_TENSOR, f"{label} is a {meta.type_name}, not a plain torch.Tensor")
            if meta.device != ref.device.type:
                raise Reject(reasons.DEVICE_MISMATCH, f"{label} is on {meta.device}, expected {ref.device.type}")
            if meta.dtype != str(ref.dtype):
                raise Reject(reasons.DTYPE_MISMATCH, f"{label} has dtype {meta.dtype}, expected {ref.dtype}")
            if tuple(meta.shape) != tuple(ref.shape):
                raise Reject(reasons.SHAPE_MISMATCH,
                             f"{label} has shape {list(meta.shape)}, expected {list(ref.shape)}")
            with self.parts.part("load"):
                got = self._load(meta)
            with self.parts.part("compare"):
                if ref.is_floating_point():
                    self._compare_float(req, got, ref, label, mismatch_reason, worst)
                elif not torch.equal(got, ref):
                    raise Reject(mismatch_reason, f"{label} differs from the reference")
        return worst

    def _compare_float(self, req, got, ref, label, mismatch_reason, worst) -> None:
        atol, rtol = self._tolerance(req, str(ref.dtype))
        c = compare_float(self.torch, got, ref, atol, rtol)
        if c.nonfinite:
            if 2 * c.unwritten > c.nonfinite:
                raise Reject(reasons.UNWRITTEN_OUTPUT,
                             f"{label}: {c.nonfinite} of {c.elements} elements were never written")
            raise Reject(reasons.NAN_INF,
                         f"{label}: {c.nonfinite} of {c.elements} elements are NaN or Inf")
        worst["max_abs_err"] = max(worst["max_abs_err"], c.max_abs_err)
        worst["max_rel_err"] = max(worst["max_rel_err"], c.max_rel_err)
        if c.beyond:
            raise Reject(mismatch_reason,
                         f"{label}: {c.beyond} of {c.elements} elements beyond tolerance "
                         f"(max abs err {c.max_abs_err:.3g}, atol {atol:g}, rtol {rtol:g}); worst: "
                         + describe_worst(got, ref, c.worst),
                         Details(max_abs_err=c.max_abs_err, bad_elements=c.beyond))

    def _check_inputs(self, metas: Sequence[Meta], pristine: list[Any], what: str) -> None:
        torch = self.torch
        if len(metas) != len(pristine):
            raise Reject(reasons.TAMPERED, f"{what}: {len(metas)} inputs reported after the "
                         f"call, the task has {len(pristine)}")
        for i, (raw, ref) in enumerate(zip(metas, pristine, strict=True)):
            if not isinstance(ref, torch.Tensor):
                continue
            meta = TensorMeta.from_dict(raw)
            digest = meta.digest
            if (meta.file is None and meta.blob is None and digest is None) \
                    or tuple(meta.shape) != tuple(ref.shape) or meta.dtype != str(ref.dtype):
                raise Reject(reasons.MODIFIED_INPUTS, f"{what}: input {i} changed shape or type")
            if digest is not None:
                if not isinstance(self.digest_key, int):
                    raise Reject(reasons.TAMPERED, f"{what}: input {i} has a fingerprint, but "
                                 "no key was given for it")
                with self.parts.part("fingerprint"):
                    same = fingerprint(ref, self.digest_key) == digest
                if not same:
                    raise Reject(reasons.MODIFIED_INPUTS,
                                 f"{what}: input {i} was modified by the candidate")
                continue
            with self.parts.part("load"):
                got = self._load(meta)
            with self.parts.part("compare"):
                same = torch.equal(as_bits(got), as_bits(ref))
            if not same:
                raise Reject(reasons.MODIFIED_INPUTS, f"{what}: input {i} was modified by the candidate")

    def _check_guards(self, seed: int, bands: Sequence[Meta] | None, n_outputs: int,
                      what: str) -> None:
        """The random bands around each buffer must come back as the trial's ``seed`` made
        them (``evotui.dialects.cuda.guards``); a changed byte is an out-of-bounds write."""
        from evotui.dialects.cuda.guards import GUARD_BYTES, describe_damage, pattern

        if bands is None or len(bands) < 2 * n_outputs or len(bands) % 2:
            raise Reject(reasons.TAMPERED, f"{what}: the guard bands are missing from the report")
        for k, raw in enumerate(bands):
            try:
                got = self._load(TensorMeta.from_dict(raw)).cpu()
            except (KeyError, ValueError, RuntimeError) as e:
                raise Reject(reasons.TAMPERED, f"{what}: unreadable guard band: {e}") from None
            expected = pattern(seed, k, GUARD_BYTES)
            if got.numel() != GUARD_BYTES or got.dtype != expected.dtype:
                raise Reject(reasons.TAMPERED, f"{what}: a guard band has the wrong size")
            if not self.torch.equal(got, expected):
                damage = describe_damage(expected, got, k, str(raw.get("label", "?")))
                raise Reject(reasons.OUT_OF_BOUNDS, f"{what}: {damage}")

    def _load(self, meta: TensorMeta) -> Any:
        return load_tensor(meta, str(self.device), self.blobs, self.read_ahead.take)

    # -- the verdict -----------------------------------------------------------------------
    def read(self, report: Report) -> None:
        """Read the report's handed-over bytes ahead of its verdict (no device needed)."""
        self.read_ahead.read(list(report.blobs))

    def release_memory(self) -> None:
        """Hand the GPU memory cached by this process back to the device after each request:
        the judge lives as long as the pool, beside candidates that need the memory (it held
        79 GB of an H200 after one big problem, and the next problem's candidate ran out)."""
        if self.device.type == "cuda":
            self.torch.cuda.empty_cache()

    def judge(self, req: Request, report: Report) -> Verdict:
        self.blobs = list(report.blobs)
        self.digest_key = report.digest_key
        self.parts = PartTimes(self.torch.cuda.synchronize if self.device.type == "cuda" else None)
        try:
            details = self._judge(req, report)
        except Reject as r:
            return Verdict(False, r.reason, r.message, r.details, phases=self.parts.seconds)
        except TamperedOutput as e:  # before the ValueErrors the checks below turn into reasons
            return Verdict(False, reasons.TAMPERED, f"a dumped output was rewritten: {e}",
                           phases=self.parts.seconds)
        finally:
            self.read_ahead.clear()
        return Verdict(True, reasons.ACCEPTED, reasons.DESCRIPTIONS[reasons.ACCEPTED], details,
                       phases=self.parts.seconds)

    def _judge(self, req: Request, report: Report) -> Details:
        if not report.ok:
            raise Reject(report.reason or reasons.HARNESS_ERROR, report.message)
        if report.policy:
            ops = ", ".join(f"{op} ×{n}" for op, n in sorted(report.policy.items()))
            raise Reject(reasons.TORCH_FALLBACK, f"forward computes with torch: {ops}")
        check_request_answered(req, report)
        worst = {"max_abs_err": 0.0, "max_rel_err": 0.0}
        for i, trial in enumerate(report.trials):
            if trial.launches == 0:
                raise Reject(reasons.NO_KERNEL, f"trial {i + 1}: no kernel was launched")
            inputs, refs = self._reference(req, trial.shape, trial.seed)
            shape_note = f"trial {i + 1} (shape {req.shapes[trial.shape] or 'benchmark'})"
            if req.dialect == "cuda":  # the harness allocated guarded buffers
                self._check_guards(trial.seed, trial.guards, len(refs), shape_note)
            trial_worst = self._compare(req, trial.outputs, refs, shape_note)
            self._check_inputs(trial.inputs_after, inputs, shape_note)
            for k in worst:
                worst[k] = max(worst[k], trial_worst[k])
        timing = report.timing
        if req.time and timing is None:  # only trials that failed a check go untimed
            raise Reject(reasons.TAMPERED, "the report holds no timing")
        if timing:
            self._judge_timing(req, timing)
        ghost = report.ghost
        if ghost is not None and ghost.outputs is not None:
            _, refs = self._reference(req, ghost.shape, ghost.seed)
            try:
                self._compare(req, ghost.outputs, refs, "ghost")
            except Reject:
                pass
            else:
                raise Reject(reasons.KERNELS_NOT_USED,
                             "with every kernel launch skipped the output is still correct: "
                             "the kernels do not compute the result")
        if report.threads_started > 0:
            raise Reject(reasons.THREADS_SPAWNED, f"{report.threads_started} thread(s) left running")
        if report.children:
            raise Reject(reasons.SUBPROCESS_SPAWNED, f"child processes: {list(report.children)}")
        if not report.timer_intact:
            names = ", ".join(report.replaced)
            raise Reject(reasons.TIMER_TAMPERED,
                         "the harness's timing functions or its checks' code were replaced"
                         + (f": {names}" if names else ""))
        with self.parts.part("figures"):
            figures = self._figures(req, timing) if timing else {}
        return Details(**worst, launches=report.launches, timing=timing and timing.figures,
                       **figures)

    def _judge_timing(self, req: Request, timing: TimingReport) -> None:
        if timing.watched_policy:
            ops = ", ".join(sorted(timing.watched_policy))
            raise Reject(reasons.TORCH_FALLBACK, f"while being timed, forward computed with torch: {ops}")
        if timing.method != "graph" and timing.calls and timing.launches_per_call:
            per_call = timing.launches / timing.calls
            if per_call < timing.launches_per_call:
                raise Reject(reasons.STALE_OUTPUT,
                             f"launched {per_call:.2f} kernels per timed call but "
                             f"{timing.launches_per_call} per checked call")
        _, refs = self._reference(req, 0, timing.seed, timing.perturbed)
        self._compare(req, timing.outputs, refs, "last timed call", reasons.STALE_OUTPUT)
        check_weights(timing.weights_changed)
        earlier = timing.earlier_outputs
        if timing.method == "interpreter" and len(earlier) != timing.calls - 1:
            raise Reject(reasons.TAMPERED, "the report lacks the outputs of the timed calls")
        for i, entry in enumerate(earlier):  # the CPU's timed calls, every one
            _, refs = self._reference(req, 0, entry.seed, entry.perturbed)
            self._compare(req, entry.outputs, refs, f"timed call {i + 1}", reasons.STALE_OUTPUT)
        if timing.method in ("events", "coarse"):  # a GPU's prepared calls
            self._check_audited(req, timing.audited, "")
        for entry in timing.inputs_after:
            pristine = self._pristine(req, 0, entry.seed, entry.perturbed)
            self._check_inputs(entry.inputs, pristine, "timing")
        check = timing.fresh_check
        if check is not None and check.looks_cached(interpreter=timing.method == "interpreter"):
            patch = "" if check.patch_ms is None else f", with one element changed {check.patch_ms:.4g} ms"
            raise Reject(reasons.CACHED_RESULTS,
                         f"calls on new input values take {check.fresh_ms:.4g} ms, on the "
                         f"same values written again {check.same_ms:.4g} ms{patch} "
                         f"({check.rounds} rounds; the timed calls {timing.median_ms:.4g} "
                         "ms): results are cached or patched across calls")
        if timing.method == "graph":
            replayed = timing.graph_replay
            seed = graph_check_seed(req.recheck_seed)
            if replayed is None or replayed.seed != seed:
                raise Reject(reasons.TAMPERED, "the report lacks the timed graph's replay on new values")
            _, grefs = self._reference(req, 0, seed)
            self._compare(req, replayed.outputs, grefs,
                          "a replay of the timed graph on new values", reasons.STALE_OUTPUT)
        _, rrefs = self._reference(req, 0, timing.recheck.seed)
        self._compare(req, timing.recheck.outputs, rrefs, "call with new values in the timed tensors",
                      reasons.STALE_OUTPUT)
        _, vrefs = self._reference(req, 0, timing.verify.seed)
        self._compare(req, timing.verify.outputs, vrefs, "call after timing", reasons.STALE_OUTPUT)
        tail = timing.synced_tail_ms
        if tail is not None and tail > 2 * timing.median_ms + 0.05:
            raise Reject(reasons.UNSYNCED_WORK,
                         f"events say {timing.median_ms:.4f} ms per call, but after a call "
                         f"returned the device still worked {tail:.4f} ms: work escapes the "
                         "timed stream")

    def check_ab(self, req: Request, report: ABReport) -> Verdict:
        """The outputs of an A/B timing must be right too (a candidate cannot be fast only
        when it is being compared)."""
        self.blobs = list(report.blobs)
        if not report.ok:
            return Verdict(False, report.reason or reasons.HARNESS_ERROR, report.message)
        if report.watched_policy:
            ops = ", ".join(sorted(report.watched_policy))
            return Verdict(False, reasons.TORCH_FALLBACK,
                           f"while being compared, forward computed with torch: {ops}")
        answers = (report.outputs, report.audited, report.weights_changed)
        if {len(a) for a in (*answers, report.timings)} != {len(req.candidates)}:
            return Verdict(False, reasons.TAMPERED, "the A/B report does not answer for each "
                           f"of its {len(req.candidates)} candidates")
        _, refs = self._reference(req, 0, report.seed)
        for k, (outputs, audited, weights) in enumerate(zip(*answers, strict=True)):
            try:
                self._compare(req, outputs, refs, f"A/B candidate {k}", reasons.STALE_OUTPUT)
                self._check_audited(req, audited, f"A/B candidate {k}, ")
                check_weights(weights)
            except Reject as r:
                return Verdict(False, r.reason, r.message, index=k)
        return Verdict(True, reasons.ACCEPTED, "")

    def _check_audited(self, req: Request, entry: Audited | None, label: str) -> None:
        """The timed call picked at random (evotui.eval.timed_calls.Audit) must be right."""
        if entry is None or entry.seed not in req.timed_seeds:
            raise Reject(reasons.TAMPERED, "the report lacks the timed call picked for a check")
        _, refs = self._reference(req, 0, entry.seed, entry.perturbed)
        self._compare(req, entry.outputs, refs,
                      f"{label}a timed call picked at random (of {entry.of})", reasons.STALE_OUTPUT)
