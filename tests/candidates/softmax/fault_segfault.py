"""FAULT: the worker process dies of SIGSEGV in the middle of a call (needs static rules off:
they refuse `ctypes`; and a Triton kernel's wild load, the old way to crash the CPU worker,
is stopped by the interpreter's bounds, `out_of_bounds`)."""

import ctypes

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        ctypes.string_at(0)  # reads address 0
        return x
