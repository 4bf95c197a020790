"""What the judge will hold a candidate to, read from the task itself: the dtypes and shapes
of the inputs and outputs, the tolerances the comparison uses, the shapes that are really
checked, and what the reference computes (its aten ops, hence a kernel family).

The reference runs once on PyTorch's ``meta`` device (shapes and dtypes, no memory, no
arithmetic), under a dispatch mode that records every aten op it calls. A reference the meta
device cannot run (data-dependent code, ``.item()``) runs once on the CPU at its smallest
checked shape instead, when that is small; otherwise the facts say what is missing.
Never raises for the task's sake: the run must not fail over a prompt's facts.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from evotui.task.model import TaskMeta, TaskRef, make_init_inputs, shape_overrides, task_module

# layout and allocation: they say nothing of what the reference computes
_VIEWS = frozenset("""view _unsafe_view reshape t transpose permute expand contiguous clone
    detach alias _to_copy to empty empty_like empty_strided new_empty zeros zeros_like ones
    ones_like full full_like fill fill_ copy_ slice select unsqueeze squeeze flatten unbind
    split split_with_sizes chunk narrow as_strided lift_fresh _reshape_alias unflatten
    expand_as view_as resolve_conj resolve_neg arange scalar_tensor""".split())
# checked in order: the first family whose ops the reference calls is the task's
FAMILIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("attention", frozenset({"_scaled_dot_product_flash_attention", "scaled_dot_product_attention",
                             "_scaled_dot_product_efficient_attention",
                             "_scaled_dot_product_attention_math"})),
    ("conv", frozenset({"convolution", "_convolution", "conv1d", "conv2d", "conv3d",
                        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"})),
    ("gemm", frozenset({"mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear", "dot",
                        "einsum", "_scaled_mm", "mv", "addmv", "tensordot"})),
    ("cross_entropy", frozenset({"nll_loss", "nll_loss_forward", "nll_loss2d_forward",
                                 "cross_entropy_loss"})),
    ("layernorm", frozenset({"native_layer_norm", "layer_norm"})),
    ("rmsnorm", frozenset({"rms_norm", "_fused_rms_norm"})),
    ("groupnorm", frozenset({"native_group_norm", "group_norm"})),
    ("batchnorm", frozenset({"native_batch_norm", "_native_batch_norm_legit",
                             "_native_batch_norm_legit_no_training", "batch_norm",
                             "_native_batch_norm_legit_functional"})),
    ("softmax", frozenset({"_softmax", "_log_softmax", "softmax", "log_softmax"})),
    ("pooling", frozenset({"max_pool1d", "max_pool2d_with_indices", "max_pool3d_with_indices",
                           "avg_pool1d", "avg_pool2d", "avg_pool3d", "_adaptive_avg_pool2d",
                           "_adaptive_avg_pool3d", "adaptive_max_pool2d", "max_pool2d"})),
    ("scan", frozenset({"cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"})),
    ("reduction", frozenset({"sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "norm",
                             "linalg_vector_norm", "var", "std", "var_mean", "std_mean",
                             "logsumexp", "any", "all", "max", "min"})),
)
FAMILY_TAGS: dict[str, tuple[str, ...]] = {
    "attention": ("attention", "tl.dot", "online-softmax"),
    "conv": ("conv", "tl.dot", "tiling"),
    "gemm": ("gemm", "matmul", "tl.dot", "tiling"),
    "cross_entropy": ("loss", "logsumexp", "row-wise", "reduction"),
    "layernorm": ("normalization", "layernorm", "row-wise", "reduction"),
    "rmsnorm": ("normalization", "rmsnorm", "row-wise", "reduction"),
    "groupnorm": ("normalization", "groupnorm", "reduction"),
    "batchnorm": ("normalization", "batchnorm", "reduction"),
    "softmax": ("softmax", "row-wise", "reduction"),
    "pooling": ("pooling", "memory-bound"),
    "scan": ("scan", "cumsum"),
    "reduction": ("reduction", "row-wise"),
    "elementwise": ("elementwise", "memory-bound"),
}
ACTIVATIONS = frozenset({"relu", "gelu", "silu", "sigmoid", "tanh", "elu", "leaky_relu",
                         "hardtanh", "hardsigmoid", "hardswish", "softplus", "mish", "selu",
                         "celu", "softsign", "threshold", "relu6", "log_sigmoid_forward"})
_NORMS = dict(FAMILIES)["layernorm"] | dict(FAMILIES)["groupnorm"] | dict(FAMILIES)["batchnorm"]
DOT_FAMILIES = frozenset({"gemm", "conv", "attention"})
TIGHT_TOLERANCE = 1e-3  # at or under this, TF32 (about 1e-3 relative error) fails the check


@dataclass(frozen=True)
class TensorFact:
    name: str
    shape: tuple[int, ...] | None  # None: not a tensor
    dtype: str  # "float32", or the Python type of a non-tensor argument

    def describe(self) -> str:
        if self.shape is None:
            return f"{self.name}: {self.dtype}"
        return f"{self.name}: {self.dtype} [{', '.join(map(str, self.shape))}]"


@dataclass(frozen=True)
class CheckedShape:
    overrides: dict[str, Any]  # the task's module constants set for it ({}: as in the file)
    inputs: tuple[TensorFact, ...]


@dataclass(frozen=True)
class QueryMeta:
    """A task as the advice library's retrieval sees it (``evotui.memory.retrieve.Query``)."""

    name: str
    kind: str
    tags: tuple[str, ...] = ()
    dtype: str | None = None
    ops: tuple[str, ...] = ()
    sizes: str = ""


@dataclass(frozen=True)
class TaskFacts:
    device_type: str  # "cpu" (the interpreter) or "cuda"
    checked: tuple[CheckedShape, ...] = ()  # the first is the timed one
    outputs: tuple[TensorFact, ...] = ()
    outputs_at: int = 0  # the checked shape the outputs were computed at
    gpu_inputs: tuple[TensorFact, ...] = ()  # on the CPU: the inputs a GPU run times, if other
    tolerances: dict[str, tuple[float, float]] = field(default_factory=dict)  # dtype → (atol, rtol)
    ops: tuple[str, ...] = ()  # aten ops the reference calls, first call first, no views
    family: str = "general"
    note: str = ""  # what could not be found out, and why

    @property
    def inputs(self) -> tuple[TensorFact, ...]:
        return self.checked[0].inputs if self.checked else ()

    @property
    def dtypes(self) -> tuple[str, ...]:
        seen = [t.dtype for t in (*self.inputs, *self.outputs) if t.shape is not None]
        return tuple(dict.fromkeys(seen))

    @property
    def uses_dot(self) -> bool:
        """Whether a kernel for it is a matrix product (``tl.dot``), fused or not."""
        dot_ops = set().union(*(members for name, members in FAMILIES if name in DOT_FAMILIES))
        return self.family in DOT_FAMILIES or bool(dot_ops & set(self.ops))

    @property
    def tf32_trap(self) -> bool:
        """fp32 matrix products judged at a tolerance TF32 cannot meet."""
        fp32 = "float32" in self.dtypes
        tight = any(min(atol, rtol) <= TIGHT_TOLERANCE
                    for d, (atol, rtol) in self.tolerances.items() if d == "float32")
        return self.uses_dot and fp32 and (tight or not self.tolerances)

    def query_meta(self, meta: TaskMeta) -> QueryMeta:
        """The advice library's query for this task: the declared kind and tags, or, where
        the task declares none (a KernelBench file is named ``19_ReLU``), those of what the
        reference computes; plus its op names, dtype and sizes."""
        name, kind = meta.name, meta.kind
        declared = bool(kind) and kind != name
        words = [op.lstrip("_").replace("native_", "") for op in self.ops]
        tags = list(meta.tags)
        tags += FAMILY_TAGS.get(self.family, ())
        if any(op in ACTIVATIONS for op in self.ops):
            tags.append("activation")
        timed = self.gpu_inputs or self.inputs  # the GPU's size, not the interpreter's
        numel = max((_numel(t.shape) for t in timed if t.shape is not None), default=0)
        if 0 < numel <= 1 << 18:
            tags.append("small-shapes")
        dtype = next((d for d in self.dtypes if d.startswith(("float", "bfloat"))), None)
        return QueryMeta(name, kind if declared else self.family, tuple(dict.fromkeys(tags)),
                         dtype, tuple(dict.fromkeys(words)), self.sizes_text())

    def sizes_text(self) -> str:
        parts = [" x ".join(map(str, t.shape)) for t in (self.gpu_inputs or self.inputs)
                 if t.shape]
        return ", ".join(dict.fromkeys(parts))


def _numel(shape: tuple[int, ...] | None) -> int:
    n = 1
    for s in shape or ():
        n *= int(s)
    return n


def _dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _facts_of(values: Any, names: list[str]) -> tuple[TensorFact, ...]:
    import torch

    items = list(values) if isinstance(values, list | tuple) else [values]
    out = []
    for i, v in enumerate(items):
        name = names[i] if i < len(names) else f"input {i}"
        if isinstance(v, torch.Tensor):
            out.append(TensorFact(name, tuple(int(s) for s in v.shape), _dtype_name(v.dtype)))
        else:
            out.append(TensorFact(name, None, f"{type(v).__name__} {v!r}"[:60]))
    return tuple(out)


def _forward_names(module: Any) -> list[str]:
    try:
        params = list(inspect.signature(module.Model.forward).parameters)
    except (TypeError, ValueError):
        return []
    return [p for p in params if p != "self"]


def _judge_tolerance(meta: TaskMeta, dtype: str) -> tuple[float, float]:
    """The judge's (atol, rtol) for an output dtype: the task's, else the backend default."""
    from evotui.dialects import get_backend

    atol, rtol = get_backend("triton").tolerances(f"torch.{dtype}")
    if meta.atol is not None:
        atol = float(meta.atol)
    if meta.rtol is not None:
        rtol = float(meta.rtol)
    return atol, rtol


def _recording_mode() -> Any:
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: list[str] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            self.ops.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    return Recorder()


def _run_reference(module: Any, shape: dict[str, Any], device: str) -> tuple[Any, list[str]]:
    import torch

    recorder = _recording_mode()
    with torch.device(device):
        init = make_init_inputs(module, shape)
        torch.manual_seed(0)
        model = module.Model(*init).to(device)  # a factory that ignores the device context
        with shape_overrides(module, shape):
            inputs = [v.to(device) if isinstance(v, torch.Tensor) else v
                      for v in module.get_inputs()]
    with torch.no_grad(), recorder:
        out = model(*inputs)
    return out, recorder.ops


def family_of(ops: tuple[str, ...]) -> str:
    found = set(ops)
    if {"rsqrt", "mean"} <= found and not found & _NORMS:  # x * rsqrt(mean(x²) + eps)
        return "rmsnorm"
    for name, members in FAMILIES:
        if found & members:
            return "cross_entropy" if name == "softmax" and "nll_loss_forward" in found else name
    return "elementwise" if found else "general"


def describe_task(task: TaskRef, device_type: str) -> TaskFacts:
    """The facts for the prompt and the advice query; partial (with a ``note``) when the
    task's code cannot be run here."""
    try:
        return _describe(task, device_type)
    except Exception as e:  # noqa: BLE001 - the task's own code: the run goes on without facts
        return TaskFacts(device_type, note=f"the reference could not be traced here "
                                            f"({type(e).__name__}: {e})"[:200])


def _describe(task: TaskRef, device_type: str) -> TaskFacts:
    import torch

    module = task_module(task.path, task.sha256)
    names = _forward_names(module)
    shapes = task.shapes(device_type)
    checked = []
    for shape in shapes:
        with shape_overrides(module, shape), torch.device("meta"):
            checked.append(CheckedShape(dict(shape), _facts_of(module.get_inputs(), names)))
    gpu_inputs: tuple[TensorFact, ...] = ()
    if device_type == "cpu":
        with shape_overrides(module, task.shapes("cuda")[0]), torch.device("meta"):
            gpu_inputs = _facts_of(module.get_inputs(), names)
        if gpu_inputs == checked[0].inputs:
            gpu_inputs = ()
    note, ops, out, at = "", [], None, 0
    try:
        out, ops = _run_reference(module, shapes[0], "meta")
    except Exception:  # noqa: BLE001 - data-dependent code: try a small CPU run
        at = min(range(len(checked)), key=lambda i: sum(
            _numel(t.shape) for t in checked[i].inputs if t.shape is not None))
        if sum(_numel(t.shape) for t in checked[at].inputs if t.shape) <= 1 << 22:
            try:
                out, ops = _run_reference(module, shapes[at], "cpu")
            except Exception as e:  # noqa: BLE001
                note = f"the reference could not be run here ({type(e).__name__})"
        else:
            note = "the reference does not run on the meta device and is too big to run here"
    names = ["output"] if not isinstance(out, list | tuple) else [
        f"output {i}" for i in range(len(out))]
    outputs = _facts_of(out, names) if out is not None else ()
    tolerances = {t.dtype: _judge_tolerance(task.meta, t.dtype) for t in outputs
                  if t.shape is not None and t.dtype.startswith(("float", "bfloat"))}
    kept = tuple(dict.fromkeys(op for op in ops if op not in _VIEWS))
    return TaskFacts(device_type, tuple(checked), outputs, at, gpu_inputs, tolerances, kept,
                     family_of(kept), note)


__all__ = ["CheckedShape", "QueryMeta", "TaskFacts", "TensorFact", "describe_task", "family_of"]
