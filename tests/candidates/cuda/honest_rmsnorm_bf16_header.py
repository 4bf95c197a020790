"""HONEST (rmsnorm): the bf16 types and conversions of <cuda_bf16.h>, two columns per thread
through __nv_bfloat162 where the row allows, a scalar tail otherwise."""

CUDA_SOURCE = r"""
#include <cuda_bf16.h>

__device__ float block_sum(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    v = threadIdx.x < warps ? red[threadIdx.x] : 0.0f;
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) red[0] = v;
    __syncthreads();
    return red[0];
}

extern "C" __global__ void __launch_bounds__(BLOCK)
rmsnorm_bf16(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
             __nv_bfloat16* __restrict__ y, int n_cols, float eps) {
    __shared__ float red[32];
    const long long base = (long long)blockIdx.x * n_cols;
    // pairs only when every row starts 4-byte aligned
    const int pairs = (n_cols % 2 == 0) ? n_cols / 2 : 0;
    const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(x + base);
    float ss = 0.0f;
    for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
        const float2 v = __bfloat1622float2(x2[p]);
        ss += v.x * v.x + v.y * v.y;
    }
    for (int c = 2 * pairs + threadIdx.x; c < n_cols; c += blockDim.x) {
        const float v = __bfloat162float(x[base + c]);
        ss += v * v;
    }
    const float inv = rsqrtf(block_sum(ss, red) / n_cols + eps);
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x)
        y[base + c] = __float2bfloat16_rn(__bfloat162float(x[base + c]) * inv * __bfloat162float(w[c]));
}
"""

BLOCK = 256
TUNABLES = {"BLOCK": [128, 256, 512, 1024]}

SYMBOLS = {"N": "size(x, -1)", "M": "numel(x) // N"}
OUTPUTS = [{"name": "y", "like": "x"}]
LAUNCH = [
    {"kernel": "rmsnorm_bf16", "grid": ["M"], "block": ["BLOCK"],
     "args": ["x", "weight", "y", "N", "eps"]},
]
