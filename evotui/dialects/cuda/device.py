"""What the GPU is, through cuda-python's driver API: name, architecture (``sm_90``), SM count,
L2 size, memory bandwidth (memory clock × bus width, where the driver reports them).

Queries use ``cuInit`` and ``cuDeviceGetAttribute`` only: no context is created, so the parent
process may ask too. Without a GPU (or without cuda-python) ``query`` returns facts with
``available=False`` and the reason, and ``compile_arch`` falls back to ``DEFAULT_ARCH``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

DEFAULT_ARCH = "sm_90"  # the H200 the project targets; EVOTUI_CUDA_ARCH overrides


@dataclass(frozen=True)
class DeviceFacts:
    available: bool
    ordinal: int = 0
    name: str = ""
    arch: str = ""  # "sm_90"
    compute_capability: tuple[int, int] = (0, 0)
    sms: int = 0
    l2_bytes: int = 0
    total_memory_bytes: int = 0
    max_threads_per_block: int = 0
    max_shared_per_block: int = 0  # bytes without opting in (48 KiB)
    max_shared_per_block_optin: int = 0  # bytes with cuFuncSetAttribute (227 KiB on H100/H200)
    warp_size: int = 32
    memory_clock_khz: int = 0
    memory_bus_bits: int = 0
    bandwidth_bytes_per_s: float | None = None  # theoretical: 2 × clock × bus width
    driver_version: str = ""
    error: str = ""  # why not available

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _driver():
    from cuda.bindings import driver

    return driver


def _ok(result: Any, what: str) -> Any:
    driver = _driver()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what}: {err.name if hasattr(err, 'name') else err}")
    return rest[0] if len(rest) == 1 else rest


@lru_cache(maxsize=8)
def query(ordinal: int = 0) -> DeviceFacts:
    """Facts about device ``ordinal`` (as this process sees it, after CUDA_VISIBLE_DEVICES)."""
    try:
        driver = _driver()
        _ok(driver.cuInit(0), "cuInit")
        count = _ok(driver.cuDeviceGetCount(), "cuDeviceGetCount")
        if ordinal >= count:
            return DeviceFacts(False, ordinal, error=f"no CUDA device {ordinal} ({count} visible)")
        dev = _ok(driver.cuDeviceGet(ordinal), "cuDeviceGet")
        A = driver.CUdevice_attribute

        def attr(name: str) -> int:
            value = getattr(A, name, None)
            if value is None:  # an attribute this driver/bindings version does not have
                return 0
            try:
                return int(_ok(driver.cuDeviceGetAttribute(value, dev), name))
            except RuntimeError:
                return 0

        raw_name = _ok(driver.cuDeviceGetName(256, dev), "cuDeviceGetName")
        name = bytes(raw_name).split(b"\x00", 1)[0].decode(errors="replace")
        major = attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
        minor = attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
        clock = attr("CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE")
        bus = attr("CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH")
        version = _ok(driver.cuDriverGetVersion(), "cuDriverGetVersion")
        try:
            total = int(_ok(driver.cuDeviceTotalMem(dev), "cuDeviceTotalMem"))
        except RuntimeError:
            total = 0
        return DeviceFacts(
            available=True, ordinal=ordinal, name=name, arch=f"sm_{major}{minor}",
            compute_capability=(major, minor),
            sms=attr("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
            l2_bytes=attr("CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE"),
            total_memory_bytes=total,
            max_threads_per_block=attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
            max_shared_per_block=attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"),
            max_shared_per_block_optin=attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
            warp_size=attr("CU_DEVICE_ATTRIBUTE_WARP_SIZE") or 32,
            memory_clock_khz=clock, memory_bus_bits=bus,
            bandwidth_bytes_per_s=2.0 * clock * 1e3 * bus / 8 if clock and bus else None,
            driver_version=f"{int(version) // 1000}.{int(version) % 1000 // 10}")
    except Exception as e:  # no cuda-python, no driver library, no GPU: degrade, never raise
        return DeviceFacts(False, ordinal, error=f"{type(e).__name__}: {e}"[:300])


def compile_arch(ordinal: int = 0) -> str:
    """The ``-arch`` to compile for: $EVOTUI_CUDA_ARCH, else the device's, else sm_90."""
    forced = os.environ.get("EVOTUI_CUDA_ARCH")
    if forced:
        return forced
    facts = query(ordinal)
    return facts.arch if facts.available else DEFAULT_ARCH
