"""ESCAPE: poisons numpy, the time module, triton.language and torch for whatever candidate
the same worker runs next."""
import time

import numpy as np
import torch
import triton.language as tl

np.exp = lambda x, *a, **k: x * 0.0
np.max = lambda *a, **k: 0.0
time.perf_counter = lambda: 0.0
tl.exp = tl.log
torch.Tensor.contiguous = lambda self, *a, **k: self * 2
torch.empty_like = torch.zeros_like


def escape():
    pass
