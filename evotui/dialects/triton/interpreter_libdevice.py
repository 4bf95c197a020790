"""libdevice under Triton's CPU interpreter.

In Triton 3.9 ``triton.language.extra.libdevice``'s functions are empty stubs under the
interpreter (they return None) and the CUDA module's need an extern call the interpreter
does not implement, so honest kernels using ``libdevice.tanh``, ``erf`` or ``rsqrt`` failed
on the CPU and ran on a GPU (Liger's RMSNorm, an erf GELU). Here the
common elementwise functions compute in numpy, in fp64, and round to the argument's type
(bf16 through its bit patterns, as the interpreter stores it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from evotui.dialects.triton.interpreter_bf16 import to_bf16


def _vectorized(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    return np.vectorize(fn, otypes=[np.float64])


def _round_half_away(a: np.ndarray) -> np.ndarray:
    return np.copysign(np.floor(np.abs(a) + 0.5), a)


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh, "fast_tanhf": np.tanh, "erf": _vectorized(math.erf),
    "erfc": _vectorized(math.erfc), "exp": np.exp, "fast_expf": np.exp, "exp2": np.exp2,
    "exp10": lambda a: np.power(10.0, a), "fast_exp10f": lambda a: np.power(10.0, a),
    "expm1": np.expm1, "log": np.log, "fast_logf": np.log, "log2": np.log2,
    "fast_log2f": np.log2, "log10": np.log10, "fast_log10f": np.log10, "log1p": np.log1p,
    "sqrt": np.sqrt, "sqrt_rn": np.sqrt, "rsqrt": lambda a: 1.0 / np.sqrt(a),
    "rsqrt_rn": lambda a: 1.0 / np.sqrt(a), "cbrt": np.cbrt, "sin": np.sin,
    "fast_sinf": np.sin, "cos": np.cos, "fast_cosf": np.cos, "tan": np.tan,
    "fast_tanf": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "rint": np.rint, "nearbyint": np.rint, "round": _round_half_away, "abs": np.abs,
    "lgamma": _vectorized(math.lgamma), "tgamma": _vectorized(math.gamma),
    "saturatef": lambda a: np.clip(a, 0.0, 1.0),
}
BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "pow": np.power, "fast_powf": np.power, "atan2": np.arctan2, "fmod": np.fmod,
    "hypot": np.hypot, "copysign": np.copysign, "fdim": lambda a, b: np.maximum(a - b, 0.0),
    "div_rn": np.divide, "fast_dividef": np.divide, "add_rn": np.add, "sub_rn": np.subtract,
    "mul_rn": np.multiply,
}
TERNARY: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "fma": lambda a, b, c: a * b + c, "fma_rn": lambda a, b, c: a * b + c,
}


def _elementwise(np_fn: Callable[..., np.ndarray]) -> Callable[..., Any]:
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    def as_f64(value: Any) -> np.ndarray:
        if isinstance(value, tl.constexpr):
            value = value.value
        if not isinstance(value, tl.tensor):
            return np.asarray(value, dtype=np.float64)
        data = np.asarray(value.handle.data)
        if value.dtype == tl.bfloat16:
            data = (data.astype(np.uint32) << 16).view(np.float32)
        return data.astype(np.float64)

    def call(*args: Any, **_kwargs: Any) -> Any:
        tensors = [a for a in args if isinstance(a, tl.tensor)]
        if not tensors:
            raise TypeError("libdevice functions take triton tensors")
        dtype = tensors[0].dtype
        with np.errstate(all="ignore"):
            out = np.asarray(np_fn(*(as_f64(a) for a in args)), dtype=np.float64)
        if dtype == tl.bfloat16:
            data = to_bf16(out.astype(np.float32))
        else:
            data = out.astype({tl.float16: np.float16, tl.float64: np.float64}.get(dtype, np.float32))
        is_block = any(t.type.is_block() for t in tensors)
        kind = tl.block_type(dtype, list(data.shape)) if is_block else dtype
        return tl.tensor(TensorHandle(data, dtype), kind)

    return call


def apply_libdevice() -> list[str]:
    """Replace the libdevice modules' functions (the generic and the CUDA one) with numpy
    ones; returns the modules patched."""
    import importlib

    patched = []
    for module_name in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if getattr(module, "evotui_patched", False):
            patched.append(module_name)
            continue
        for table in (UNARY, BINARY, TERNARY):
            for name, np_fn in table.items():
                if hasattr(module, name):
                    setattr(module, name, _elementwise(np_fn))
        module.evotui_patched = True
        patched.append(module_name)
    return patched
