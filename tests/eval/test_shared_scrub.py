"""The timer writes over every SM's shared memory before each timed call: what one launch
leaves in ``__shared__`` is gone for the next (evotui.eval.shared_scrub)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from evotui.eval.shared_scrub import KERNEL, PTX

# `leave` fills its shared memory with a tag; `find` counts the tagged words it finds in its
# own, never written: what an earlier launch left on the same SM.
LEAVE_AND_FIND = r"""
extern "C" __global__ void leave(unsigned int tag, int words) {
    extern __shared__ unsigned int mem[];
    volatile unsigned int* v = mem;
    for (int i = threadIdx.x; i < words; i += blockDim.x) v[i] = tag;
}
extern "C" __global__ void find(unsigned int tag, int words, unsigned int* found) {
    extern __shared__ unsigned int mem[];
    volatile unsigned int* v = mem;
    unsigned int n = 0;
    for (int i = threadIdx.x; i < words; i += blockDim.x) n += v[i] == tag;
    if (n) atomicAdd(found, n);
}
"""


def _ptxas() -> Path | None:
    try:
        import triton
    except ImportError:
        return None
    path = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    return path if path.is_file() and os.access(path, os.X_OK) else None


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_scrub_kernel_builds_for_the_gpus_triton_targets(tmp_path, arch):
    """The driver builds the PTX when a worker starts; Triton's own ptxas builds it here."""
    ptxas = _ptxas()
    if ptxas is None:
        pytest.skip("Triton's ptxas is not installed")
    (tmp_path / "scrub.ptx").write_text(PTX)
    done = subprocess.run([str(ptxas), f"-arch={arch}", "-v", str(tmp_path / "scrub.ptx"),
                           "-o", str(tmp_path / "scrub.cubin")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert KERNEL in done.stderr and "spill" in done.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("scrubbed", [False, True])
def test_nothing_left_in_shared_memory_survives_the_flush(scrubbed):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from evotui.dialects.cuda import launcher
    from evotui.dialects.cuda.compiler import CompileRequest, compile_cubin
    from evotui.dialects.cuda.device import compile_arch
    from evotui.eval.timing import CudaTimer

    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    timer = CudaTimer(device, scrub_shared=scrubbed)
    cubin = compile_cubin(CompileRequest(LEAVE_AND_FIND, compile_arch(0),
                                         kernels=("leave", "find"), check_ptx=False))
    module = launcher.load("test-leave-and-find", cubin, ["leave", "find"], 0)
    props = torch.cuda.get_device_properties(0)
    sms, shared = props.multi_processor_count, 32 * 1024
    words, tag = shared // 4, 0x5EC12E7
    found = torch.zeros(1, dtype=torch.int32, device=device)
    stream = torch.cuda.current_stream(device).cuda_stream

    def launch(name: str, *args: tuple[str, int]) -> None:
        launcher.launch(module.kernels[name], (sms, 1, 1), (256, 1, 1), shared, stream,
                        list(args), int(props.shared_memory_per_block_optin))

    def left_over(between) -> int:
        found.zero_()
        launch("leave", ("c_uint32", tag), ("c_int32", words))
        between()
        launch("find", ("c_uint32", tag), ("c_int32", words), ("c_void_p", found.data_ptr()))
        torch.cuda.synchronize(device)
        return int(found.item())

    assert left_over(lambda: None) > 0  # the channel exists on this GPU
    after_flush = left_over(timer.flush)
    if scrubbed:
        assert after_flush == 0
    else:
        assert after_flush > 0  # the L2 flush alone leaves it
