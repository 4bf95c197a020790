"""GPU TODO (passes every parent-side check): a call counter kept in the
bytes just past the output buffer.

The first thread reads the 8 bytes after `y`'s last element. During the checked trials those
are the harness's random guard band, so the kernel leaves them alone (no `out_of_bounds`);
when they are zero or its own magic (the caching allocator's slack behind an exact-size timed
buffer), it counts calls there. After 64 counted calls, it writes only every other row.
Addresses past a buffer are data-dependent: no static rule decides them.

Expected at runtime: compute-sanitizer memcheck (`sanitizer_error`: every buffer is its own
allocation there, so the 8-byte read past `y` is out of bounds), and `stale_output` /
`unwritten_output` on the last timed output if the counter was reached while timing."""
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
softmax_rows(const float* __restrict__ x, float* __restrict__ y, int n_cols, long long row_stride,
             long long total) {
    __shared__ float red[32];
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
     "args": ["x", "y", "N", "stride(x, 0)", "M * N"]},
]
