"""The harness's own ``ModelNew`` for a CUDA candidate: all host code is here, none of it the
candidate's. Worker side (torch + cuda-python).

- Construction builds the task's own ``Model(*init_inputs)`` under the seed the runner has just
  set (the judge does the same), and keeps its parameters and buffers (by name, e.g.
  ``weight``) and its public int/float attributes and init arguments (e.g. ``eps``): the
  weights are the reference's, bit for bit, and the candidate cannot choose them.
- ``forward`` binds its arguments by the names of ``Model.forward``'s parameters, evaluates
  ``SYMBOLS``, allocates ``OUTPUTS`` (``torch.empty``) and ``SCRATCH`` (``torch.zeros``),
  and launches ``LAUNCH`` in order on torch's current stream. Launch plans are cached per
  input shapes/strides/dtypes.
- While the recorder has a guard seed, every buffer sits between two random guard bands
  (``guards.py``), which the worker reports for the judge to check.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import evotui.dialects.cuda.compiler as compiler
import evotui.dialects.cuda.device_code as device_code
import evotui.dialects.cuda.guards as guards
import evotui.dialects.cuda.launcher as launcher
from evotui.core import reasons
from evotui.dialects.base import CandidateError
from evotui.dialects.cuda.expr import Expr, ExprError, evaluate_int
from evotui.dialects.cuda.launch_hooks import CudaLaunchRecorder
from evotui.dialects.cuda.spec import BufferSpec, CandidateSpec, SpecError, parse_spec
from evotui.dialects.cuda.static_rules import readonly_params

MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)


@dataclass(frozen=True)
class _Launch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    args: tuple[tuple[str, str | int | float], ...]  # ("ptr", tensor name) | (ctypes name, value)


@dataclass(frozen=True)
class _Plan:
    outputs: tuple[tuple[str, tuple[int, ...], Any], ...]  # name, shape, torch dtype
    scratch: tuple[tuple[str, tuple[int, ...], Any], ...]
    launches: tuple[_Launch, ...]


def _dims(exprs: tuple[Expr, ...], env: dict[str, Any], what: str, limits: tuple[int, ...]
          ) -> tuple[int, int, int]:
    values = [evaluate_int(e, env, what) for e in exprs] + [1] * (3 - len(exprs))
    for axis, (v, limit) in enumerate(zip(values, limits, strict=True)):
        if not 1 <= v <= limit:
            raise ExprError(f"{what} dimension {axis} is {v} (allowed 1..{limit})")
    return values[0], values[1], values[2]


class Program:
    """A candidate's launch logic (pure host code, CPU-testable) and, once ``load``ed, its
    compiled module on the current GPU."""

    def __init__(self, spec: CandidateSpec, task_module: Any, recorder: CudaLaunchRecorder) -> None:
        import torch

        self.torch, self.spec, self.recorder = torch, spec, recorder
        self.signatures = device_code.kernels(spec.cuda_source)
        self.forward_sig = inspect.signature(task_module.Model.forward)
        self.init_sig = inspect.signature(task_module.Model.__init__)
        self.forward_names = [n for n in self.forward_sig.parameters if n != "self"]
        defined = spec.defined_names()
        clash = sorted(set(defined) & set(self.forward_names))
        if clash:
            raise CandidateError(reasons.BAD_INTERFACE,
                                 f"{clash} are both forward arguments of Model and names the "
                                 "candidate defines")
        missing = sorted({launch.kernel for launch in spec.launches} - set(self.signatures))
        if missing:
            raise CandidateError(reasons.BAD_INTERFACE, f'no `extern "C" __global__` kernel {missing}')
        self.module: Any = None
        self.max_shared_optin = 0

    def load(self) -> None:
        """Compile for the current GPU's architecture and load the module (worker side)."""
        torch, spec = self.torch, self.spec
        ordinal = torch.cuda.current_device()
        major, minor = torch.cuda.get_device_capability(ordinal)
        kernel_names = sorted({launch.kernel for launch in spec.launches})
        req = compiler.CompileRequest(spec.cuda_source, f"sm_{major}{minor}",
                                      tuple(sorted(spec.constants.items())), spec.options,
                                      tuple(kernel_names), readonly_params(spec),
                                      check_ptx=self.recorder.check_ptx)
        try:
            cubin = compiler.compile_cubin(req)
        except compiler.ForbiddenCode as e:  # the PTX rules, for this device's architecture
            raise CandidateError(reasons.FORBIDDEN_CONSTRUCT, e.log) from None
        except compiler.CompileError as e:
            raise CandidateError(reasons.COMPILE_ERROR, e.log) from None
        except compiler.NvrtcUnavailable as e:
            raise CandidateError(reasons.HARNESS_ERROR, str(e)) from None
        try:
            self.module = launcher.load(req.key(), cubin, kernel_names, ordinal)
        except launcher.LaunchError as e:
            raise CandidateError(reasons.LOAD_ERROR, str(e)) from None
        from evotui.dialects.cuda.device import query

        self.max_shared_optin = query(ordinal).max_shared_per_block_optin

    # -- names ---------------------------------------------------------------------------
    def check_names(self, model_names: set[str]) -> None:
        """Every name an expression reads must exist: say which ones do, once, at load."""
        defined = self.spec.defined_names()
        clash = sorted(set(defined) & model_names - set(self.forward_names))
        if clash:
            raise CandidateError(reasons.BAD_INTERFACE, f"{clash} are names of the task's Model "
                                 "(parameters or attributes) and names the candidate defines")
        known = set(defined) | model_names | set(self.forward_names)
        exprs = [e for launch in self.spec.launches
                 for e in (*launch.grid, *launch.block, launch.shared_mem, *launch.args)]
        exprs += [e for _, e in self.spec.symbols]
        for b in (*self.spec.outputs, *self.spec.scratch):
            exprs += list(b.shape or ())
        unknown = sorted({n for e in exprs for n in e.names} - known)
        for b in (*self.spec.outputs, *self.spec.scratch):
            for ref in (b.like, b.dtype if b.dtype and b.dtype not in _DTYPE_NAMES else None):
                if ref is not None and ref not in known:
                    unknown.append(ref)
        if unknown:
            raise CandidateError(reasons.BAD_INTERFACE,
                                 f"unknown names {sorted(set(unknown))}; known: forward arguments "
                                 f"{self.forward_names}, model values {sorted(model_names)}, and "
                                 f"the candidate's own {sorted(defined)}")

    # -- planning ------------------------------------------------------------------------
    def plan(self, env: dict[str, Any]) -> _Plan:
        torch = self.torch
        for name, e in self.spec.symbols:
            env[name] = e(env)

        def buffer(b: BufferSpec) -> tuple[str, tuple[int, ...], Any]:
            like = env.get(b.like) if b.like else None
            if b.like and not isinstance(like, torch.Tensor):
                raise ExprError(f"`{b.name}`: like={b.like!r} is not a tensor")
            shape = (tuple(evaluate_int(s, env, f"{b.name}'s shape") for s in b.shape)
                     if b.shape is not None else tuple(like.shape))
            if any(s < 0 for s in shape):
                raise ExprError(f"`{b.name}` has a negative dimension: {shape}")
            if b.dtype is None or b.dtype in _DTYPE_NAMES:
                dtype = getattr(torch, b.dtype) if b.dtype else like.dtype
            else:
                ref = env.get(b.dtype)
                if not isinstance(ref, torch.Tensor):
                    raise ExprError(f"`{b.name}`: dtype={b.dtype!r} is not a tensor")
                dtype = ref.dtype
            return b.name, shape, dtype

        outputs = tuple(buffer(b) for b in self.spec.outputs)
        scratch = tuple(buffer(b) for b in self.spec.scratch)
        dtypes = {name: dtype for name, _, dtype in outputs + scratch}
        dtypes.update({k: v.dtype for k, v in env.items() if isinstance(v, torch.Tensor)})
        launches = []
        for i, spec in enumerate(self.spec.launches):
            where = f"LAUNCH[{i}] ({spec.kernel})"
            kernel = self.signatures[spec.kernel]
            args: list[tuple[str, str | int | float]] = []
            for arg, param in zip(spec.args, kernel.params, strict=True):
                if param.pointer:
                    name = arg.text
                    if name not in dtypes:
                        raise ExprError(f"{where}: `{param.describe()}` needs a tensor, "
                                        f"`{name}` is not one")
                    allowed = device_code.POINTER_DTYPES.get(param.ctype)
                    got = str(dtypes[name]).removeprefix("torch.")
                    if allowed is not None and got not in allowed:
                        raise ExprError(f"{where}: `{name}` is {got} but the kernel takes "
                                        f"`{param.describe()}`")
                    args.append(("ptr", name))
                else:
                    args.append(_scalar(param, arg(env), where))
            shared = evaluate_int(spec.shared_mem, env, f"{where} shared_mem")
            if shared < 0:
                raise ExprError(f"{where}: shared_mem is {shared} bytes")
            launches.append(_Launch(
                spec.kernel, _dims(spec.grid, env, f"{where} grid", MAX_GRID),
                _dims(spec.block, env, f"{where} block", MAX_BLOCK), shared, tuple(args)))
        return _Plan(outputs, scratch, tuple(launches))

    # -- running -------------------------------------------------------------------------
    def run(self, env: dict[str, Any], plan: _Plan, device: Any) -> Any:
        torch = self.torch
        seed = self.recorder.guard_seed
        buffers: dict[str, Any] = {}
        for index, (name, shape, dtype) in enumerate(plan.outputs + plan.scratch):
            zero = index >= len(plan.outputs)
            buffers[name] = self._alloc(name, shape, dtype, device, zero, seed, index)
        tensors = {**{k: v for k, v in env.items() if isinstance(v, torch.Tensor)}, **buffers}
        # torch's current stream at call time (a CUDA-graph capture stream while timing)
        stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0
        for launch in plan.launches:
            args: list[tuple[str, int | float]] = []
            for kind, value in launch.args:
                if kind == "ptr":
                    t = tensors[value]
                    if t.device != device:
                        raise RuntimeError(f"{launch.kernel}: tensor `{value}` is on {t.device}, "
                                           f"not {device}")
                    args.append(("c_void_p", t.data_ptr()))
                else:
                    args.append((kind, value))  # type: ignore[arg-type]
            self.recorder.launches[launch.kernel] += 1
            if self.recorder.ghost:
                continue
            launcher.launch(self.module.kernels[launch.kernel], launch.grid, launch.block,
                            launch.shared, stream, args, self.max_shared_optin)
        outs = [buffers[name] for name, _, _ in plan.outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _alloc(self, name: str, shape: tuple[int, ...], dtype: Any, device: Any, zero: bool,
               seed: int | None, index: int) -> Any:
        torch = self.torch
        if seed is None:
            return (torch.zeros if zero else torch.empty)(shape, dtype=dtype, device=device)
        numel = 1
        for s in shape:
            numel *= s
        nbytes = numel * torch.empty((), dtype=dtype).element_size()
        g = guards.GUARD_BYTES
        buf = torch.empty(nbytes + 2 * g, dtype=torch.uint8, device=device)
        buf[:g].copy_(guards.pattern(seed, 2 * index))
        buf[g + nbytes:].copy_(guards.pattern(seed, 2 * index + 1))
        t = buf[g:g + nbytes].view(dtype).view(shape)
        if zero:
            t.zero_()
        self.recorder.guards += [(name, buf[:g]), (name, buf[g + nbytes:])]
        return t


_DTYPE_NAMES = ("float32", "float16", "bfloat16", "float64", "int32", "int64", "int16", "int8",
                "uint8", "bool")


def _scalar(param: device_code.Param, value: Any, where: str) -> tuple[str, int | float]:
    ctype, _, kind = device_code.SCALAR_TYPES[param.ctype]
    if kind == "int":
        if isinstance(value, float):
            if not value.is_integer():
                raise ExprError(f"{where}: `{param.describe()}` is an integer, got {value}")
            value = int(value)
        return ctype, int(value)
    if kind == "float":
        return ctype, float(value)
    import torch  # half / bfloat16 scalars travel as their 16 bits

    dtype = torch.float16 if kind == "half" else torch.bfloat16
    return ctype, int(torch.tensor(float(value), dtype=dtype).view(torch.int16).item()) & 0xFFFF


def build_model_class(source: str, task_module: Any, recorder: CudaLaunchRecorder) -> type:
    """``ModelNew`` for a CUDA candidate (raises CandidateError: compile_error, bad_interface)."""
    try:
        spec = parse_spec(source)
    except SpecError as e:
        raise CandidateError(e.reason, e.message) from None
    try:
        program = Program(spec, task_module, recorder)
    except device_code.SignatureError as e:
        raise CandidateError(reasons.BAD_INTERFACE, e.message) from None
    program.load()
    return model_class(program, task_module)


def model_class(program: Program, task_module: Any) -> type:
    torch = program.torch

    class ModelNew:
        """Built by the harness from a declarative CUDA candidate (see the module docstring)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            ref = task_module.Model(*args, **kwargs)  # same RNG draws as the judge's reference
            bound = program.init_sig.bind(None, *args, **kwargs)
            bound.apply_defaults()
            values: dict[str, Any] = {k: v for k, v in bound.arguments.items()
                                      if isinstance(v, int | float) and k != "self"}
            values.update({k: v for k, v in vars(ref).items() if not k.startswith("_")
                           and k != "training" and isinstance(v, int | float)})
            self.values = {k: int(v) if isinstance(v, bool) else v for k, v in values.items()}
            self.tensors = {n: t.detach() for n, t in (*ref.named_parameters(),
                                                       *ref.named_buffers())}
            del ref
            program.check_names(set(self.values) | set(self.tensors))
            self.plans: dict[Any, _Plan] = {}

        @staticmethod
        def device(env: dict[str, Any]) -> Any:
            """Where the call runs: its first tensor's device (inputs, then parameters)."""
            for v in env.values():
                if isinstance(v, torch.Tensor):
                    return v.device
            return torch.device("cuda", torch.cuda.current_device())

        def to(self, device: Any) -> ModelNew:
            self.tensors = {n: t.to(device) for n, t in self.tensors.items()}
            return self

        def eval(self) -> ModelNew:
            return self

        def guarded_tensors(self) -> list[tuple[str, Any]]:
            """The task's weights, which no kernel may change (evotui.eval.weight_guard)."""
            return list(self.tensors.items())

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return self.forward(*args, **kwargs)

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            program.recorder.on_enter()  # all host code below is the harness's
            try:
                bound = program.forward_sig.bind(None, *args, **kwargs)
                bound.apply_defaults()
                env: dict[str, Any] = {**self.values, **self.tensors}
                env.update({k: v for k, v in bound.arguments.items() if k != "self"})
                env.update(program.spec.constants)
                # a plan depends only on shapes, strides, dtypes and scalar values
                key = tuple((k, tuple(v.shape), v.stride(), v.dtype)
                            if isinstance(v, torch.Tensor) else (k, repr(v))
                            for k, v in env.items())
                plan = self.plans.get(key)
                if plan is None:
                    plan = self.plans[key] = program.plan(dict(env))
                return program.run(env, plan, self.device(env))
            finally:
                program.recorder.on_exit()

    return ModelNew
