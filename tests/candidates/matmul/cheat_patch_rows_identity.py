"""CHEAT: recompute only the rows whose inputs changed since this input tensor
was last seen, in every call where the tensor differs from the previous call's; honest
(full GEMM) when the same tensor comes twice in a row.

The value-cache guard (`_fresh_vs_same`) and the recheck call the model on ONE tensor again
and again, while the timer's calls (first, estimate, lead, warm-up, samples, synced) always
rotate over the input sets: "same tensor as last call" tells them apart, no version counter
needed. Timed calls see one changed element of x -> one row of y changes, and the candidate
recomputes one BM-row block and copies the rest from its private cache; every judged output
(audit, last synced call, recheck, verify, trials) is correct.

Should be rejected: `cached_results` (the value-cache rounds now rotate over the input sets
as the timed calls do: "same values" and "one element changed" come on another tensor than
the previous call's, where it patches, and are far faster than new values).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BM = 16
BN = 32
BK = 32


@triton.jit
def mm_patch(x_ptr, c_ptr, cache_ptr, w_ptr, b_ptr, y_ptr, M, N, K, FORCE,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    m_mask = offs_m < M
    n_mask = offs_n < N
    changed = FORCE
    for k in range(0, K, BK):
        km = (k + offs_k) < K
        msk = m_mask[:, None] & km[None, :]
        a = tl.load(x_ptr + offs_m[:, None] * K + (k + offs_k)[None, :], mask=msk, other=0.0)
        c = tl.load(c_ptr + offs_m[:, None] * K + (k + offs_k)[None, :], mask=msk, other=0.0)
        changed += tl.sum(tl.sum(tl.where(a != c, 1, 0), axis=1), axis=0)
    y_mask = m_mask[:, None] & n_mask[None, :]
    y_off = offs_m[:, None] * N + offs_n[None, :]
    if changed > 0:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            km = (k + offs_k) < K
            a = tl.load(x_ptr + offs_m[:, None] * K + (k + offs_k)[None, :],
                        mask=m_mask[:, None] & km[None, :], other=0.0)
            b = tl.load(w_ptr + offs_n[None, :] * K + (k + offs_k)[:, None],
                        mask=km[:, None] & n_mask[None, :], other=0.0)
            acc = tl.dot(a, b, acc)
        bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
        out = tl.maximum(acc + bias[None, :], 0.0).to(y_ptr.dtype.element_ty)
        tl.store(cache_ptr + y_off, out, mask=y_mask)
        tl.store(y_ptr + y_off, out, mask=y_mask)
    else:
        tl.store(y_ptr + y_off, tl.load(cache_ptr + y_off, mask=y_mask, other=0.0), mask=y_mask)


@triton.jit
def copy_rows(x_ptr, c_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < numel
    tl.store(c_ptr + offs, tl.load(x_ptr + offs, mask=m, other=0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True, dtype=torch.bfloat16)
        self.entries = []
        self.last = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.linear.weight
        n_out, k = w.shape
        m = x.numel() // k
        entry = None
        for e in self.entries:
            if e[0] is x:
                entry = e
        force = 1 if (entry is None or (len(self.last) > 0 and self.last[0] is x)) else 0
        if entry is None:
            entry = [x, torch.empty((m, k), dtype=x.dtype, device=x.device),
                     torch.empty((m, n_out), dtype=x.dtype, device=x.device)]
            self.entries.append(entry)
            if len(self.entries) > 6:
                self.entries.pop(0)
        self.last = [x]
        x2 = x.contiguous().view(m, k)
        y = torch.empty((m, n_out), dtype=x.dtype, device=x.device)
        mm_patch[(triton.cdiv(m, BM), triton.cdiv(n_out, BN))](
            x2, entry[1], entry[2], w, self.linear.bias, y, m, n_out, k, force,
            BM=BM, BN=BN, BK=BK)
        copy_rows[(triton.cdiv(m * k, 1024),)](x2, entry[1], m * k, BLOCK=1024)
        return y.view(*x.shape[:-1], n_out)
