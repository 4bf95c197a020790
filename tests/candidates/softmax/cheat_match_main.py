"""CHEAT: the `if __name__ == "__main__":` block the static rules skip runs anyway.

`_without_main_block` keeps the block (and checks it) only when the file *binds* `__name__`,
looking for Name stores, args, import aliases and global/nonlocal. A `match` capture pattern
binds a name through `ast.MatchAs.name` (a plain string, no ast.Name): `case __name__:` sets
the module global `__name__ = "__main__"`, and the unchecked block runs at load time, with the
whole language: here it hands forward a host softmax run with torch's dispatch modes off
(the op policy sees nothing). A Triton kernel only copies the answer (launch count right,
ghost replay wrong as an honest kernel's would be).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        answer = self.helper(x)
        y = torch.empty_like(x)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](answer, y, n, BLOCK=1024)
        return y


match "__main__":
    case __name__:
        pass

if __name__ == "__main__":
    from torch.utils._python_dispatch import _disable_current_modes

    def host_softmax(x):
        with _disable_current_modes():
            return torch.softmax(x, -1).contiguous()

    ModelNew.helper = staticmethod(host_softmax)
