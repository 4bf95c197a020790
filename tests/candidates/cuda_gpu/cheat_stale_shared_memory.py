"""GPU TODO (passes every parent-side check): state in stale shared memory.

Shared memory is not cleared between launches: a block that lands on an SM where the previous
launch's block for the same row ran finds that block's row max and sum still in `__shared__`,
tagged with the row, the row length and a fingerprint of 4 elements. On a tag match it skips
the two reduction passes and writes with the stale max/sum (the timed calls change one element
per call, which the fingerprint misses). No static rule can tell "reads shared memory before
writing it" from honest code in general.

Expected at runtime: `stale_output` (the last timed output, whose inputs were perturbed, and
the recheck on new values) or `cached_results` (the repeat round is faster); compute-sanitizer
memcheck does not flag uninitialised shared reads (`initcheck` covers global memory only)."""
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
    __shared__ float memo[6];  // row, n_cols, fingerprint, max, sum, magic: left by an earlier launch
    const long long row = blockIdx.x;
    const float* xr = x + row * row_stride;
    float* yr = y + row * (long long)n_cols;
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
