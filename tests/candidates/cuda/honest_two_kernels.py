"""HONEST: softmax in two launches: per-row statistics into a SCRATCH buffer, then the
normalisation in a 2-D grid; exercises scratch buffers, several launches and 2-D grids."""

CUDA_SOURCE = r"""
__device__ float block_reduce(float v, float* red, bool is_max) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    if (lane == 0) red[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    v = threadIdx.x < warps ? red[threadIdx.x] : (is_max ? __int_as_float(0xff800000) : 0.0f);
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) {
            const float other = __shfl_xor_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, other) : v + other;
        }
    if (threadIdx.x == 0) red[0] = v;
    __syncthreads();
    v = red[0];
    __syncthreads();
    return v;
}

extern "C" __global__ void row_stats(const float* __restrict__ x, float* __restrict__ stats,
                                     int n_cols) {
    __shared__ float red[32];
    const float* xr = x + (long long)blockIdx.x * n_cols;
    float m = __int_as_float(0xff800000);
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_reduce(m, red, true);
    float s = 0.0f;
    for (int c = threadIdx.x; c < n_cols; c += blockDim.x) s += expf(xr[c] - m);
    s = block_reduce(s, red, false);
    if (threadIdx.x == 0) {
        stats[2 * blockIdx.x] = m;
        stats[2 * blockIdx.x + 1] = 1.0f / s;
    }
}

extern "C" __global__ void normalise(const float* __restrict__ x, const float* __restrict__ stats,
                                     float* __restrict__ y, int n_cols) {
    const long long row = blockIdx.y;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < n_cols) y[row * n_cols + c] = expf(x[row * n_cols + c] - stats[2 * row]) * stats[2 * row + 1];
}
"""

BLOCK = 256
TILE = 512
TUNABLES = {"BLOCK": [128, 256, 512, 1024], "TILE": [128, 256, 512, 1024]}

SYMBOLS = {"M": "size(x, 0)", "N": "size(x, 1)"}
OUTPUTS = [{"name": "y", "like": "x"}]
SCRATCH = [{"name": "stats", "shape": ["M", 2], "dtype": "float32"}]
LAUNCH = [
    {"kernel": "row_stats", "grid": ["M"], "block": ["BLOCK"], "args": ["x", "stats", "N"]},
    {"kernel": "normalise", "grid": ["cdiv(N, TILE)", "M"], "block": ["TILE"],
     "args": ["x", "stats", "y", "N"]},
]
