"""Loading a CUBIN and launching its kernels through cuda-python's driver API, on the stream
and in the context torch uses (the primary context of the current device). Worker side only.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

_MODULES: dict[tuple[str, int], LoadedModule] = {}
DEFAULT_SHARED = 48 * 1024  # bytes of shared memory per block without opting in


class LaunchError(RuntimeError):
    """A launch the driver refused (bad configuration, too many resources): the candidate's
    fault, and the context is still usable."""


def _driver():
    from cuda.bindings import driver

    return driver


def _ok(result: Any, what: str) -> Any:
    driver = _driver()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, text = driver.cuGetErrorString(err)
        detail = text.decode() if isinstance(text, bytes) else str(text)
        raise LaunchError(f"{what}: {getattr(err, 'name', err)} ({detail})")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


def ensure_context(ordinal: int) -> int:
    """Make the device's primary context (the one torch uses) current; return its handle."""
    driver = _driver()
    ctx = _ok(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if ctx is None or int(ctx) == 0:
        dev = _ok(driver.cuDeviceGet(ordinal), "cuDeviceGet")
        ctx = _ok(driver.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        _ok(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return int(ctx)


@dataclass
class KernelHandle:
    name: str
    function: Any
    max_threads: int  # per block, given its registers and __launch_bounds__
    static_shared: int  # bytes
    dynamic_shared_set: int = 0  # MAX_DYNAMIC_SHARED_SIZE_BYTES set so far (0: the default)


@dataclass
class LoadedModule:
    key: str
    module: Any
    kernels: dict[str, KernelHandle] = field(default_factory=dict)


def load(key: str, cubin: bytes, names: list[str], ordinal: int) -> LoadedModule:
    """The module for ``cubin`` in the current context, loaded once per (key, context)."""
    driver = _driver()
    ctx = ensure_context(ordinal)
    cached = _MODULES.get((key, ctx))
    if cached is not None:
        return cached
    module = _ok(driver.cuModuleLoadData(cubin), "cuModuleLoadData")
    loaded = LoadedModule(key, module)
    A = driver.CUfunction_attribute
    for name in names:
        fn = _ok(driver.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")
        loaded.kernels[name] = KernelHandle(
            name, fn,
            max_threads=int(_ok(driver.cuFuncGetAttribute(
                A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn), "cuFuncGetAttribute")),
            static_shared=int(_ok(driver.cuFuncGetAttribute(
                A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn), "cuFuncGetAttribute")))
    _MODULES[(key, ctx)] = loaded
    return loaded


# ctypes type names (from device_code.SCALAR_TYPES) -> ctypes classes
CTYPES = {name: getattr(ctypes, name) for name in (
    "c_int32", "c_uint32", "c_int64", "c_uint64", "c_int16", "c_uint16", "c_int8", "c_uint8",
    "c_bool", "c_float", "c_double", "c_void_p")}


def launch(kernel: KernelHandle, grid: tuple[int, int, int], block: tuple[int, int, int],
           shared: int, stream: int, args: list[tuple[str, int | float]],
           max_shared_optin: int) -> None:
    """Enqueue one launch. ``args`` are (ctypes name, value) pairs, pointers as c_void_p."""
    threads = block[0] * block[1] * block[2]
    if threads > kernel.max_threads:
        raise LaunchError(f"{kernel.name}: a block of {threads} threads, but this kernel allows at "
                          f"most {kernel.max_threads} (registers per thread / __launch_bounds__)")
    if shared + kernel.static_shared > max_shared_optin > 0:
        raise LaunchError(f"{kernel.name}: {shared} bytes of dynamic + {kernel.static_shared} of "
                          f"static shared memory exceed the device's {max_shared_optin} per block")
    driver = _driver()
    if shared + kernel.static_shared > DEFAULT_SHARED and shared > kernel.dynamic_shared_set:
        # above 48 KiB per block a kernel must opt in (set once, outside any graph capture:
        # the trials run every shape before timing does)
        _ok(driver.cuFuncSetAttribute(
            kernel.function,
            driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")
        kernel.dynamic_shared_set = shared
    values = [CTYPES[ctype](value) for ctype, value in args]
    pointers = (ctypes.c_void_p * max(1, len(values)))(*[ctypes.addressof(v) for v in values])
    params = ctypes.addressof(pointers) if values else 0
    _ok(driver.cuLaunchKernel(kernel.function, *grid, *block, shared, driver.CUstream(stream),
                              params, 0), f"launching {kernel.name}")
