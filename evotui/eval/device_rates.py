"""What the device can do at most: its copy and read bandwidth and its matmul rate,
measured once by the judge for the roofline (``below_roofline``, % of roofline)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evotui.eval.timing import CudaTimer


def _per_second(device: Any, work: Callable[[], Any], amount: float) -> float:
    """``amount`` (bytes, FLOPs) over the median time of ``work`` on ``device``."""
    return amount / (CudaTimer(device).time(work, rep_ms=100).median_ms / 1000)


def measure_copy_bandwidth(device: Any, nbytes: int = 2**30) -> float:
    """Device-to-device copy bandwidth in bytes/s (read + write counted)."""
    import torch

    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).normal_()
    dst = torch.empty_like(src)
    return _per_second(device, lambda: dst.copy_(src), 2 * nbytes)


def measure_read_bandwidth(device: Any, nbytes: int = 2**30) -> float:
    """Device read bandwidth in bytes/s (a sum over ``nbytes``): faster than the copy rate,
    which pays for writes too; a kernel that mostly reads can beat the copy rate."""
    import torch

    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).normal_()
    return _per_second(device, lambda: src.sum(), nbytes)


def peak_bytes_per_s(facts: dict[str, Any]) -> float:
    """The fastest the device is known to move data: the measured copy and read rates and,
    when cuda-python reports it, the datasheet bandwidth. A kernel timed well under the
    time this rate needs for its bytes is not believed (``below_roofline``)."""
    rates = [facts.get(k) for k in ("copy_bytes_per_s", "read_bytes_per_s", "theoretical_bytes_per_s")]
    return max(r for r in rates if r)


def measure_matmul_rate(device: Any, n: int = 8192) -> float:
    """bf16 matmul FLOP/s on random data (the realistic ceiling for compute-bound tasks)."""
    import torch

    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    return _per_second(device, lambda: a @ b, 2 * n**3)


def measure_device_facts(torch: Any, device: Any) -> dict[str, Any]:
    """The device's name, architecture, SMs, L2, memory and measured rates (the roofline's
    ceilings); with cuda-python, the datasheet bandwidth too (no context needed)."""
    props = torch.cuda.get_device_properties(device)
    facts: dict[str, Any] = {
        "name": props.name,
        "arch": f"sm_{props.major}{props.minor}",
        "sms": props.multi_processor_count,
        "l2_bytes": int(getattr(props, "L2_cache_size", 0)),
        "memory_bytes": int(props.total_memory),
        "copy_bytes_per_s": measure_copy_bandwidth(device),
        "matmul_flops_per_s": measure_matmul_rate(device),
    }
    try:  # only widens the below_roofline floor: without it, the copy rate serves
        facts["read_bytes_per_s"] = measure_read_bandwidth(device)
    except Exception:  # noqa: BLE001
        pass
    from evotui.dialects.cuda.device import query

    cuda = query(device.index or 0)
    if cuda.available:
        facts["theoretical_bytes_per_s"] = cuda.bandwidth_bytes_per_s
        facts["driver"] = cuda.driver_version
    return facts


def time_baselines(torch: Any, timer: CudaTimer, model: Any, inputs: list[Any]) -> dict[str, Any]:
    """The reference's own time, eager and under torch.compile (what speedups are against)."""
    result: dict[str, Any] = {}
    with torch.no_grad():
        eager = timer.time(lambda: model(*inputs))
        result["eager_ms"], result["eager_spread_pct"] = eager.median_ms, eager.spread_pct
        try:
            compiled = torch.compile(model)
            for _ in range(3):
                compiled(*inputs)
            t = timer.time(lambda: compiled(*inputs))
            result["compile_ms"], result["compile_spread_pct"] = t.median_ms, t.spread_pct
        except Exception as e:  # noqa: BLE001 - a missing compiler is not fatal
            result["compile_error"] = f"{type(e).__name__}: {e}"[:300]
    return result
