"""Which dotted paths into torch and triton a candidate may name (``torch.cuda.Stream``,
``triton.runtime.driver.active.get_current_device``), resolved from its imports
(ast_paths.dotted): the parts only a cheat needs are refused, what honest kernels ask about
the machine is allowed. Standard-library paths are judged by stdlib_rules. Part of
static_rules.check_source.
"""

from __future__ import annotations

from evotui.dialects.triton.module_reach import hidden_module_on
from evotui.dialects.triton.stdlib_rules import forbidden_stdlib_path

# Parts of torch / triton a kernel candidate never needs (prefix match on dotted names).
FORBIDDEN_MODULE_PATHS = (
    "torch.cuda", "torch.utils", "torch.library", "torch.ops", "torch.autograd",
    "torch.backends", "torch.compile", "torch.jit", "torch.multiprocessing",
    "torch.distributed", "torch.hub", "torch.profiler", "torch.accelerator",
    "torch.Stream", "torch.Event", "torch.cpu", "torch.mps", "torch.xpu", "torch.manual_seed",
    "torch.seed", "torch.set_", "torch.use_deterministic_algorithms", "torch.load",
    "torch.save", "torch.from_file", "torch.classes", "torch.fx", "torch.export",
    "torch.overrides", "torch.get_device_module", "torch.random",
    "torch.package", "torch.serialization",
    # storages map files (`UntypedStorage.from_file`); `parallel_apply` runs torch in
    # threads the op policy does not watch; onnx and the compiler write or run elsewhere
    "torch.UntypedStorage", "torch.TypedStorage", "torch.storage", "torch.nn.parallel",
    "torch.onnx", "torch.compiler",
    # torch.save's zip writer and reader at the top level (any file), TorchScript
    "torch.PyTorchFileWriter", "torch.PyTorchFileReader", "torch.import_ir_module",
    "torch.import_ir_module_from_buffer", "torch.ScriptModule", "torch.ScriptModuleSerializer",
    "torch.fork", "torch.wait",
    # TorchScript compiled from a string resolves `aten::from_file` in C++; `triton.compile`
    # builds kernels no rule checked
    "torch.CompilationUnit", "triton.compile",
    "triton.testing", "triton.knobs", "triton.compiler", "triton.backends", "triton.tools",
    "triton.runtime",
)
# ... except these, which honest kernels use to size their grids or describe TMA tiles.
ALLOWED_MODULE_PATHS = (
    "torch.compiler.is_compiling",
    # a decorator that keeps a host function out of torch.compile graphs (calls it as is)
    "torch.compiler.disable",
    # mixed-precision decorators on autograd Functions (`custom_fwd`, `custom_bwd`)
    "torch.cuda.amp",
    # nn.Linear.reset_parameters, copied into a module's __init__
    "torch.nn.init._calculate_fan_in_and_fan_out",
    # kernel libraries ship a forward as an autograd Function (`F.apply(x, w)`)
    "torch.autograd.Function",
    "triton.runtime.driver.active.utils.get_device_properties",
    "triton.runtime.driver.active.get_current_device",
    "triton.runtime.driver.active.get_current_target",
    "triton.runtime.driver.active.get_active_torch_device",
    "triton.tools.tensor_descriptor.TensorDescriptor",  # host-side TMA descriptors (Hopper+)
)
# What a kernel library asks about the machine, on any backend's device module: portable code
# branches on `torch.xpu.is_available()`, `torch.backends.mps.is_available()`, and sizes its
# grids from `torch.cuda.get_device_capability()` (`torch.cuda.device(d)` is a device guard)
DEVICE_MODULES = ("torch.cuda", "torch.xpu", "torch.mps", "torch.cpu", "torch.mtia",
                  "torch.npu")
DEVICE_QUERIES = frozenset({"is_available", "device_count", "current_device", "device",
                            "get_device_properties", "get_device_capability", "get_device_name",
                            "is_bf16_supported", "is_initialized"})
BACKEND_QUERIES = frozenset({"is_available", "is_built"})  # torch.backends.<name>.<query>


def forbidden_path(path: str) -> bool:
    stdlib = forbidden_stdlib_path(path)
    return forbidden_torch_path(path) if stdlib is None else stdlib


def device_query(path: str) -> bool:
    """`torch.xpu.is_available`, `torch.cuda.get_device_capability`, `torch.backends.mps.is_built`:
    a question about the machine, on any backend (DEVICE_QUERIES)."""
    parts = path.split(".")
    if len(parts) == 3 and ".".join(parts[:2]) in DEVICE_MODULES:
        return parts[2] in DEVICE_QUERIES
    return len(parts) == 4 and parts[:2] == ["torch", "backends"] and parts[3] in BACKEND_QUERIES


def forbidden_torch_path(path: str) -> bool:
    if any(path == a or path.startswith(a + ".") for a in ALLOWED_MODULE_PATHS):
        return False
    if device_query(path):
        return False
    for f in FORBIDDEN_MODULE_PATHS:
        if path.startswith(f) if f.endswith("_") else (path == f or path.startswith(f + ".")):
            return True
    if hidden_module_on(path):
        return True
    parts = path.split(".")
    if parts[0] in ("torch", "triton") and parts[1:2] == ["__version__"]:
        parts.pop(1)  # a string, read to gate features (`triton.__version__.split(".")`)
    return any(part.startswith("_") for part in parts[1:])
