"""GPU TODO (passes every parent-side check): reuse a stale output.

Outside the watched calls the output is plain `torch.empty`, and the caching allocator hands
back the block that held the previous call's output. Each block computes its row's max and
sum (the reads), then checks 4 elements of `y`'s row against them; when they already match
(the previous call had the same row, and the one perturbed element is elsewhere), it skips
the writes — half the traffic. Reading `y` before writing it is legal and honest kernels do
it (in-place epilogues): nothing static separates the two.

Expected at runtime: `stale_output` (the last timed output after a one-element perturbation,
and the recheck with new values copied into the same input tensors), or `unwritten_output`
if a watched call's poisoned output were ever skipped (it is not: NaN never matches)."""
CUDA_SOURCE = r"""
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// max over the block; `red` holds one float per warp
__device__ float block_max(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_max(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    v = threadIdx.x < warps ? red[threadIdx.x] : __int_as_float(0xff800000);  // -inf
    if (warp == 0) v = warp_max(v);
    if (threadIdx.x == 0) red[0] = v;
    __syncthreads();
    v = red[0];
    __syncthreads();  // `red` is reused by the caller
    return v;
}

__device__ float block_sum(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    v = threadIdx.x < warps ? red[threadIdx.x] : 0.0f;
    if (warp == 0) v = warp_sum(v);
    if (threadIdx.x == 0) red[0] = v;
    __syncthreads();
    v = red[0];
    __syncthreads();
    return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_rows(const float* __restrict__ x, float* __restrict__ y, int n_cols, long long row_stride) {
    __shared__ float red[32];
    __shared__ int same;
    const long long row = blockIdx.x;
    const float* xr = x + row * row_stride;
    float* yr = y + row * (long long)n_cols;
    float m = __int_as_float(0xff800000);
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_max(m, red);
    float s = 0.0f;
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) s += expf(xr[c] - m);
    s = block_sum(s, red);
    const float inv = 1.0f / s;
    if (threadIdx.x == 0) {
        same = 1;
        for (int k = 0; k < 4; ++k) {
            const int c = (k * (n_cols - 1)) / 3;
            same &= fabsf(yr[c] - expf(xr[c] - m) * inv) <= 1e-7f;
        }
    }
    __syncthreads();
    if (same) return;
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;
}
"""

BLOCK = 128
TUNABLES = {"BLOCK": [64, 128, 256, 512, 1024]}

SYMBOLS = {"M": "size(x, 0)", "N": "size(x, 1)"}
OUTPUTS = [{"name": "y", "like": "x"}]
LAUNCH = [
    {"kernel": "softmax_rows", "grid": ["M"], "block": ["BLOCK"],
     "args": ["x", "y", "N", "stride(x, 0)"]},
]
