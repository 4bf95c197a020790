"""Naive CUDA C softmax: one block per row, three passes over the row (max, sum of
exponentials, write), block reductions through warp shuffles and shared memory.

A CUDA candidate is never executed as Python: the harness reads these literals, compiles
CUDA_SOURCE with NVRTC (every int constant below becomes a -D define), allocates OUTPUTS
and launches LAUNCH (see evotui/dialects/cuda/README.md)."""

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
