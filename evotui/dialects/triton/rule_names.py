"""The names the Triton static rules allow and refuse: imports, calls, attribute names
(whole, by prefix, by suffix), keyword arguments, class bases, module names reached as
attributes, private and dunder attributes. Read by static_rules.check_source.
"""

from __future__ import annotations

from evotui.dialects.triton.receiver_rules import CONSTRUCTOR_PREFIXES

ALLOWED_IMPORTS = {
    "torch", "torch.nn", "torch.nn.functional",
    "triton", "triton.language", "triton.language.math", "triton.language.extra",
    "triton.language.extra.libdevice", "triton.language.extra.cuda",
    "triton.language.extra.cuda.libdevice", "triton.runtime", "triton.tools.tensor_descriptor",
    "math", "typing", "functools", "itertools", "operator", "dataclasses", "__future__",
    "collections", "collections.abc", "enum",
    # harmless helpers honest kernel files import: a device guard, a logger, a `__main__`
    # benchmark's clock and random shapes, deprecation warnings, mixed-precision decorators
    "contextlib", "logging", "time", "random", "warnings", "torch.amp", "torch.cuda.amp",
    # an environment flag, the CPU count, paths (by their name lists: stdlib_rules)
    "os", "os.path", "pathlib",
}

# code from strings, attributes by string, the module's namespace, a file descriptor
FORBIDDEN_CALLS = {
    "eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr", "globals",
    "locals", "vars", "open",
}

# Attribute names banned on any object.
FORBIDDEN_ATTRIBUTES = {
    "Stream", "stream", "Event", "synchronize", "set_stream", "current_stream",
    "default_stream", "CUDAGraph", "graph", "graphs", "data_ptr", "untyped_storage",
    "storage", "set_", "register_forward_hook", "register_forward_pre_hook",
    "register_hook", "manual_seed", "set_rng_state", "get_rng_state", "do_bench",
    "launch_enter_hook", "launch_exit_hook", "jit_post_compile_hook", "set_active",
    # the modules themselves, reached again through a module that imports them
    # (`F.torch.library`, `F.torch.compile`): dotted paths are resolved by name only
    "torch", "triton", "library",
    # attribute names as strings: a way around every name rule here
    "attrgetter", "methodcaller",
    # the answer computed on the host and handed to a kernel that only copies
    "numpy", "tolist", "from_numpy", "frombuffer", "from_dlpack",
    # a Python callable run on every element (CPU tensors), with no aten op to see
    "apply_", "map_", "map2_",
    # the harness reseeds before checked calls: the seed must not tell them apart
    "initial_seed", "default_generator",
    # frames, code objects and tracebacks: a walk up the stack into the harness
    "f_back", "f_locals", "f_globals", "f_builtins", "f_code", "f_trace", "f_lasti",
    # what evaluates strings as code: annotations read back (`get_type_hints`, a
    # `singledispatch` registration), forward references
    "get_type_hints", "ForwardRef", "singledispatch", "singledispatchmethod",
    # getattr/setattr by string (`update_wrapper(self, torch)` copies a module's names onto
    # `self`), module globals written by name (`global_enum`), classes built at runtime
    # (`type(name, (torch.Tensor,), ...)`, `make_dataclass(bases=...)`, `new_class`)
    "update_wrapper", "wraps", "WRAPPER_ASSIGNMENTS", "WRAPPER_UPDATES", "global_enum",
    "make_dataclass", "new_class", "as_subclass",
    # code Triton runs around a launch, or instead of the kernel (the interpreter's cache)
    "add_pre_run_hook", "pre_run_hooks", "rewritten_fn", "rewriter",
    # files written: a storage mapped onto one (the dumped outputs, the compiler's cache),
    # a path's writers (`Path("/proc/self/fd/5").write_text(...)` is the answer's pipe)
    "from_file", "write_text", "write_bytes", "touch", "symlink_to", "hardlink_to", "link_to",
    # copyreg's table, reached as `<module>.copy.dispatch_table`: what deepcopy runs
    "dispatch_table",
    # `tl.core.knobs` is `triton.knobs` (banned only as that path)
    "knobs",
    # a jit function's globals dict (and with it `__builtins__`), and what evaluates
    # annotations as code (`triton.cdiv.signature.from_callable(f, eval_str=True)`)
    "used_global_vals", "cache_key", "signature", "from_callable", "get_annotations",
    "getfullargspec", "PyTorchFileWriter", "PyTorchFileReader",
}
# attribute names banned by ending: every storage class (`torch.FloatStorage.from_file`)
FORBIDDEN_ATTRIBUTE_SUFFIXES = ("Storage",)
# keyword arguments that name a module to write into (`Enum("P", {...}, module="...")`)
FORBIDDEN_KEYWORDS = {"module", "qualname", "eval_str",
                      # `triton.autotune(do_bench=f)`: the tuner runs `f` with the policy off
                      "do_bench",
                      # `logging.basicConfig(filename="/proc/self/fd/5")` wrote the worker's
                      # answer for it
                      "filename"}
# bases a candidate's class may have, besides its own classes: torch.nn modules (not
# Parameter or Buffer: tensors), plain containers and the typing/enum helpers
ALLOWED_BASE_PREFIXES = CONSTRUCTOR_PREFIXES
FORBIDDEN_BASES = ("torch.nn.Parameter", "torch.nn.Buffer", "torch.nn.parameter.")
ALLOWED_BASE_NAMES = {"object", "dict", "list", "tuple", "set", "frozenset", "Exception",
                      "ValueError", "RuntimeError", "TypeError", "KeyError", "IndexError",
                      "NotImplementedError", "AssertionError", "ArithmeticError", "LookupError"}
FORBIDDEN_ATTRIBUTE_PREFIXES = ("gi_", "cr_", "ag_", "tb_", "co_", "register_module_")
# Modules that allowed modules happen to import (`torch.sys`, `torch.inspect`,
# `torch.nn.functional.np`, ...): reached as attributes they would bypass the import list.
# Banned on anything but `self` itself (`self.gc = 0` is the candidate's own field).
# `reachable_modules()` finds more by walking what is loaded; this list holds the modules
# that reach the verdict (write a descriptor, run code, walk frames or memory, start threads
# or processes, run callbacks at any moment, compute on the host) whether or not this
# process has loaded them yet. (The allowed standard-library modules are refused as
# attributes by their own rule: import the module itself.)
MODULE_NAMES = {
    "sys", "subprocess", "threading", "multiprocessing", "inspect", "ctypes", "importlib",
    "builtins", "np", "gc", "pickle", "marshal", "signal", "shutil", "tempfile", "traceback",
    "weakref", "runpy", "mmap", "asyncio", "concurrent", "linecache", "posix", "pty",
    "pkgutil", "zipimport", "pdb", "io", "copyreg", "types",
}
# Names under which some loaded module holds a module, allowed as attribute names all the
# same: `dict.copy()` is everyday code, and the `copy` module leads nowhere else that is not
# banned by name (`copy.weakref`, `copy.copyreg`)
HARMLESS_MODULE_NAMES = frozenset({"copy"})
# Private attributes allowed on any object: read-only, and keyed caches need them.
ALLOWED_PRIVATE = {"_version",
                   # a NamedTuple's public API (configs as NamedTuples)
                   "_replace", "_asdict", "_fields", "_make"}

ALLOWED_DUNDERS = {"__init__", "__name__", "__version__"}
# scalar types Triton treats specially as kernel arguments (a subclass's properties would
# run while a launch inspects it; the launch also checks exact types)
BUILTIN_TYPES = {"int", "float", "bool", "complex", "str", "bytes"}
