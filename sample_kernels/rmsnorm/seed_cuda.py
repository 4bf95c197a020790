"""Naive CUDA C RMSNorm over bf16 rows: one block per row, two passes (sum of squares, then
normalise and scale by the model's weight), all arithmetic in fp32.

bf16 travels as its 16 bits (`unsigned short`) with explicit conversions, so no header is
needed. `weight` and `eps` are the task Model's own parameter and attribute: the harness
builds the reference Model under the same seed and passes them by name."""

CUDA_SOURCE = r"""
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float bf16_to_float(unsigned short h) {
    return __uint_as_float(((unsigned int)h) << 16);
}

__device__ __forceinline__ unsigned short float_to_bf16(float f) {  // round to nearest even
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

__device__ float block_sum(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    v = threadIdx.x < warps ? red[threadIdx.x] : 0.0f;
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    if (threadIdx.x == 0) red[0] = v;
    __syncthreads();
    return red[0];
}

extern "C" __global__ void __launch_bounds__(BLOCK)
rmsnorm_rows(const unsigned short* __restrict__ x, const unsigned short* __restrict__ w,
             unsigned short* __restrict__ y, int n_cols, float eps) {
    __shared__ float red[32];
    const long long row = blockIdx.x;
    const unsigned short* xr = x + row * n_cols;
    unsigned short* yr = y + row * n_cols;

    float ss = 0.0f;
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) {
        const float v = bf16_to_float(xr[c]);
        ss += v * v;
    }
    const float inv = rsqrtf(block_sum(ss, red) / n_cols + eps);

    for (int c = threadIdx.x; c < n_cols; c += blockDim.x)
        yr[c] = float_to_bf16(bf16_to_float(xr[c]) * inv * bf16_to_float(w[c]));
}
"""

BLOCK = 128
TUNABLES = {"BLOCK": [64, 128, 256, 512, 1024]}

SYMBOLS = {"N": "size(x, -1)", "M": "numel(x) // N"}
OUTPUTS = [{"name": "y", "like": "x"}]
LAUNCH = [
    {"kernel": "rmsnorm_rows", "grid": ["M"], "block": ["BLOCK"],
     "args": ["x", "weight", "y", "N", "eps"]},
]
