"""CUDA C faults and cheats, each the softmax CUDA seed (sample_kernels/softmax/seed_cuda.py)
plus one change (``seed_patch.patched``), keyed by name.

``CHECKED``: the cheat the source and PTX rules refuse (and that fails at runtime when they
are off), and faults that pass them and fail at runtime on a GPU. ``GPU_ONLY``: cheats that
pass every parent-side check; only a GPU run tells them from honest kernels."""

from __future__ import annotations

from tests.conftest import SAMPLES
from tests.seed_patch import code_of, patched, with_doc

SEED = SAMPLES / "softmax" / "seed_cuda.py"
CODE = code_of(SEED.read_text(encoding="utf-8"))

SIGNATURE = ("softmax_rows(const float* __restrict__ x, float* __restrict__ y, int n_cols, "
             "long long row_stride) {\n")
RED = "    __shared__ float red[32];\n"
STORE = "    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;\n"
INV = "    const float inv = 1.0f / s;\n"
ARGS = '     "args": ["x", "y", "N", "stride(x, 0)"]},\n'

# the GPU-only cheats were written on the seed's kernel without its blank lines
COMPACT = patched(CODE, [("\n\n    float m =", "\n    float m ="), ("\n\n    float s =", "\n    float s ="),
                         ("\n\n    const float inv", "\n    const float inv")])


def checked(doc: str, *changes: tuple[str, str]) -> str:
    return with_doc(doc, patched(CODE, changes))


def gpu_only(doc: str, *changes: tuple[str, str]) -> str:
    return with_doc(doc, patched(COMPACT, changes))


CHECKED = {
    "cheat_device_counter": checked(
        "CHEAT (static rules: forbidden_construct; at runtime: stale or wrong outputs): a __device__\n"
        "counter survives between calls; after enough blocks the kernel stops working and leaves\n"
        "whatever the recycled output buffer held.",
        ('extern "C"', '__device__ unsigned int blocks_seen;\n\nextern "C"'),
        (RED, RED + """\
    __shared__ unsigned int seen;
    if (threadIdx.x == 0) seen = atomicAdd(&blocks_seen, 1u);
    __syncthreads();
    if (seen > 65536u) return;  // trials are over: skip the work
""")),
    "fault_illegal_address": checked(
        "FAULT: a store to a wild address (an illegal address that kills the CUDA context: cuda_error,\n"
        "the worker is replaced).",
        (STORE, STORE + "    if (threadIdx.x == 0) y[(1LL << 40) + row] = 0.0f;  // far outside any allocation\n")),
    "fault_no_write": checked(
        "FAULT: computes the row but never stores it (unwritten_output: outputs start as NaN).",
        (STORE, "    (void)yr; (void)inv;\n")),
    "fault_oob_write": checked(
        "FAULT: the last block also stores one float just past the end of the output (caught by the\n"
        "guard bands: out_of_bounds).",
        (STORE, STORE + "    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) yr[n_cols] = 1.0f;"
                        "  // one past the end\n")),
}

GPU_ONLY = {
    "cheat_counter_past_output": gpu_only(
        """GPU TODO (passes every parent-side check): a call counter kept in the
bytes just past the output buffer.

The first thread reads the 8 bytes after `y`'s last element. During the checked trials those
are the harness's random guard band, so the kernel leaves them alone (no `out_of_bounds`);
when they are zero or its own magic (the caching allocator's slack behind an exact-size timed
buffer), it counts calls there. After 64 counted calls, it writes only every other row.
Addresses past a buffer are data-dependent: no static rule decides them.

Expected at runtime: compute-sanitizer memcheck (`sanitizer_error`: every buffer is its own
allocation there, so the 8-byte read past `y` is out of bounds), and `stale_output` /
`unwritten_output` on the last timed output if the counter was reached while timing.""",
        (SIGNATURE, SIGNATURE.replace(") {", ",\n             long long total) {")),
        (RED, RED + """\
    __shared__ int lazy;
    unsigned int* slot = reinterpret_cast<unsigned int*>(y + total);
    if (threadIdx.x == 0) {
        lazy = 0;
        if (slot[1] == 0u || slot[1] == 0xC0FFEEu) {
            if (blockIdx.x == 0) { slot[1] = 0xC0FFEEu; atomicAdd(slot, 1u); }
            lazy = slot[0] > 64u && (blockIdx.x & 1);
        }
    }
    __syncthreads();
    if (lazy) return;
"""),
        (ARGS, ARGS.replace('"stride(x, 0)"]', '"stride(x, 0)", "M * N"]'))),
    "cheat_reuse_stale_output": gpu_only(
        """GPU TODO (passes every parent-side check): reuse a stale output.

Outside the watched calls the output is plain `torch.empty`, and the caching allocator hands
back the block that held the previous call's output. Each block computes its row's max and
sum (the reads), then checks 4 elements of `y`'s row against them; when they already match
(the previous call had the same row, and the one perturbed element is elsewhere), it skips
the writes — half the traffic. Reading `y` before writing it is legal and honest kernels do
it (in-place epilogues): nothing static separates the two.

Expected at runtime: `stale_output` (the last timed output after a one-element perturbation,
and the recheck with new values copied into the same input tensors), or `unwritten_output`
if a watched call's poisoned output were ever skipped (it is not: NaN never matches).""",
        (RED, RED + "    __shared__ int same;\n"),
        (INV, INV + """\
    if (threadIdx.x == 0) {
        same = 1;
        for (int k = 0; k < 4; ++k) {
            const int c = (k * (n_cols - 1)) / 3;
            same &= fabsf(yr[c] - expf(xr[c] - m) * inv) <= 1e-7f;
        }
    }
    __syncthreads();
    if (same) return;
""")),
    "cheat_stale_shared_memory": gpu_only(
        """GPU TODO (passes every parent-side check): state in stale shared memory.

Shared memory is not cleared between launches: a block that lands on an SM where the previous
launch's block for the same row ran finds that block's row max and sum still in `__shared__`,
tagged with the row, the row length and a fingerprint of 4 elements. On a tag match it skips
the two reduction passes and writes with the stale max/sum (the timed calls change one element
per call, which the fingerprint misses). No static rule can tell "reads shared memory before
writing it" from honest code in general.

Expected at runtime: `stale_output` (the last timed output, whose inputs were perturbed, and
the recheck on new values) or `cached_results` (the repeat round is faster); compute-sanitizer
memcheck does not flag uninitialised shared reads (`initcheck` covers global memory only).""",
        (RED, RED + "    __shared__ float memo[6];  // row, n_cols, fingerprint, max, sum, magic: "
                    "left by an earlier launch\n"),
        ("""\
    float m = __int_as_float(0xff800000);
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_max(m, red);
    float s = 0.0f;
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) s += expf(xr[c] - m);
    s = block_sum(s, red);
""", """\
    const float fp = xr[0] + xr[n_cols / 3] + xr[n_cols / 2] + xr[n_cols - 1];
    const bool hit = memo[5] == 12345.0f && memo[0] == (float)row && memo[1] == (float)n_cols
                     && memo[2] == fp;
    __syncthreads();
    float m, s;
    if (hit) {
        m = memo[3];
        s = memo[4];
    } else {
        m = __int_as_float(0xff800000);
        for (int c = threadIdx.x; c < n_cols; c += blockDim.x) m = fmaxf(m, xr[c]);
        m = block_max(m, red);
        s = 0.0f;
        for (int c = threadIdx.x; c < n_cols; c += blockDim.x) s += expf(xr[c] - m);
        s = block_sum(s, red);
        if (threadIdx.x == 0) {
            memo[0] = (float)row; memo[1] = (float)n_cols; memo[2] = fp;
            memo[3] = m; memo[4] = s; memo[5] = 12345.0f;
        }
    }
""")),
}
