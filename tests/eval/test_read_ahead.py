"""The judge reads a report's bytes before it takes the device: the same bytes, only what
was sealed, and never a later memfd's that took the same descriptor number."""

from __future__ import annotations

import fcntl
import os
import threading
import time

import pytest
import torch

from evotui.eval.device_gate import DeviceGate
from evotui.eval.outbox import SEALS
from evotui.eval.protocol import TamperedOutput, TensorMeta, load_tensor
from evotui.eval.read_ahead import ReadAhead


def _memfd(values: torch.Tensor, sealed: bool = True) -> int:
    fd = os.memfd_create("evotui-output", os.MFD_ALLOW_SEALING)
    os.write(fd, values.numpy().tobytes())
    if sealed:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
    return fd


def _meta(n: int, blob: int) -> TensorMeta:
    return TensorMeta("torch.Tensor", (n,), "torch.float32", "cpu", None, None, blob=blob)


def test_bytes_read_ahead_are_the_ones_the_verdict_loads():
    values = [torch.arange(1000, dtype=torch.float32) * k for k in range(3)]
    fds = [_memfd(v) for v in values]
    paths = [f"/proc/self/fd/{fd}" for fd in fds]
    try:
        ahead = ReadAhead("cpu")
        assert ahead.read(paths) == 3 * 4000
        for k, path in enumerate(paths):
            assert ahead.take(path) is not None
            got = load_tensor(_meta(1000, k), "cpu", paths, ahead.take)
            assert torch.equal(got, values[k])
    finally:
        for fd in fds:
            os.close(fd)


def test_an_unsealed_memfd_is_not_read_ahead_and_still_refused():
    fd = _memfd(torch.ones(10), sealed=False)
    path = f"/proc/self/fd/{fd}"
    try:
        ahead = ReadAhead("cpu")
        assert ahead.read([path]) == 0 and ahead.take(path) is None
        with pytest.raises(TamperedOutput, match="not sealed"):
            load_tensor(_meta(10, 0), "cpu", [path], ahead.take)
    finally:
        os.close(fd)


def test_a_later_memfd_at_the_same_path_is_not_taken_for_the_one_read():
    ahead = ReadAhead("cpu")
    first = _memfd(torch.zeros(10))
    path = f"/proc/self/fd/{first}"
    ahead.read([path])
    os.close(first)
    second = _memfd(torch.ones(10))  # the lowest free number: the same path
    try:
        assert f"/proc/self/fd/{second}" == path
        assert ahead.take(path) is None
        assert torch.equal(load_tensor(_meta(10, 0), "cpu", [path], ahead.take), torch.ones(10))
    finally:
        os.close(second)


def test_what_does_not_fit_the_budget_is_read_when_the_verdict_loads_it():
    values = [torch.full((2048,), float(k)) for k in range(3)]  # 8 KiB each
    fds = [_memfd(v) for v in values]
    paths = [f"/proc/self/fd/{fd}" for fd in fds]
    try:
        ahead = ReadAhead("cpu", budget=20 << 10)
        assert ahead.read(paths) == 2 * 8192
        assert ahead.take(paths[2]) is None
        assert torch.equal(load_tensor(_meta(2048, 2), "cpu", paths, ahead.take), values[2])
    finally:
        for fd in fds:
            os.close(fd)


def test_the_judge_reads_ahead_while_someone_else_is_timed():
    """Reading needs the judge, not the device: it goes on during another's timing, and the
    judge's request takes the device only after that timing; meanwhile nobody else has the
    judge."""
    gate = DeviceGate(1 << 30)
    order: list[str] = []
    gate.be_alone()  # a candidate's timing

    def judge() -> None:
        with gate.judging(reading=lambda: order.append("read")):
            order.append("judged")

    first = threading.Thread(target=judge)
    first.start()
    deadline = time.monotonic() + 5
    while "read" not in order and time.monotonic() < deadline:
        time.sleep(0.01)
    def other() -> None:
        with gate.judging():
            order.append("other")

    second = threading.Thread(target=other)
    second.start()
    time.sleep(0.2)
    assert order == ["read"]  # the device is still the timing's; the judge is taken
    gate.end_alone()
    first.join(5)
    second.join(5)
    assert order == ["read", "judged", "other"]
    assert gate.snapshot() == (0, False, gate.host_bytes)


@pytest.mark.gpu
def test_on_a_gpu_the_arena_is_page_locked_and_the_bytes_reach_the_device():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    value = torch.randn(1 << 20)
    fd = _memfd(value)
    path = f"/proc/self/fd/{fd}"
    try:
        ahead = ReadAhead("cuda")
        ahead.read([path])
        assert ahead.arena.is_pinned()
        got = load_tensor(_meta(1 << 20, 0), "cuda", [path], ahead.take)
        assert got.device.type == "cuda" and torch.equal(got.cpu(), value)
    finally:
        os.close(fd)
