"""A task module's size constants (``batch_size = 4096``...): which ones ``get_inputs`` and
``get_init_inputs`` read, and setting them for one shape."""

from __future__ import annotations

import contextlib
import threading
import types
from collections.abc import Iterator
from typing import Any


def size_constants(module: types.ModuleType) -> dict[str, Any]:
    """Module constants (ints, or tuples of ints) that get_inputs/get_init_inputs read."""
    names: set[str] = set()
    for fn in (getattr(module, "get_inputs", None), getattr(module, "get_init_inputs", None)):
        code = getattr(fn, "__code__", None)
        stack = [code] if code is not None else []
        while stack:
            c = stack.pop()
            names.update(c.co_names)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    out: dict[str, Any] = {}
    for name in sorted(names):
        value = module.__dict__.get(name)
        if _is_int(value) or (isinstance(value, tuple) and value and all(_is_int(v) for v in value)):
            out[name] = value
    return out


# a process shares one module per task file (``loading.task_module``): one shape at a time
_SHAPE_LOCK = threading.RLock()


@contextlib.contextmanager
def shape_overrides(module: types.ModuleType, shape: dict[str, Any]) -> Iterator[None]:
    """Temporarily set a task module's constants (``batch_size``...) for one shape; other
    threads of the process wait until they are put back."""
    with _SHAPE_LOCK:
        saved = {k: module.__dict__[k] for k in shape}
        module.__dict__.update(shape)
        try:
            yield
        finally:
            module.__dict__.update(saved)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
