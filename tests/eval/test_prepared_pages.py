"""Memfds made ready for outputs before they exist: the bytes handed over are the harness's
copy whatever candidate code did to them before, and a candidate that could still write
them afterwards makes the hand-over fail."""

from __future__ import annotations

import fcntl
import mmap
import os

import pytest
import torch

from evotui.eval import outbox
from evotui.eval.failures import CandidateFailure
from evotui.eval.protocol import TensorMeta, load_tensor
from evotui.eval.sandbox import run_isolated

N = 1000  # float32 values per output


def _meta(index: int) -> dict:
    return {"shape": [N], "dtype": "torch.float32", "type_name": "torch.Tensor",
            "device": "cpu", "file": None, "blob": index}


def _ready_fds() -> list[int]:
    """What candidate code finds of them: a descriptor of each memfd named like an output's."""
    found: dict[int, int] = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            if "evotui-output" in os.readlink(f"/proc/self/fd/{name}"):
                found.setdefault(os.fstat(int(name)).st_ino, int(name))
        except OSError:
            pass
    return list(found.values())


def _run(body):
    outcome = run_isolated(lambda: None, body, None, 60.0)
    assert outcome.blobs is not None
    return outcome, [outbox.path_of(fd) if fd >= 0 else None for fd in outcome.blobs.fds]


def _read(outcome, paths, k):
    return load_tensor(TensorMeta.from_dict(outcome.answer["metas"][k]), "cpu", paths)


def test_outputs_go_into_the_ready_memfds_and_read_back():
    def body(_):
        outbox.prepare([torch.zeros(N)], 2)
        ready = outbox._ready.count()
        metas = [_meta(outbox.put_tensor(torch.arange(N, dtype=torch.float32) + k))
                 for k in range(3)]  # the third finds none ready: written the ordinary way
        return {"ok": True, "ready": ready, "left": outbox._ready.count(), "metas": metas}

    outcome, paths = _run(body)
    try:
        assert outcome.answer["ready"] == 2 and outcome.answer["left"] == 0
        for k in range(3):
            assert torch.equal(_read(outcome, paths, k), torch.arange(N, dtype=torch.float32) + k)
    finally:
        outcome.blobs.close()


def test_what_candidate_code_wrote_into_a_ready_memfd_is_overwritten():
    def body(_):
        outbox.prepare([torch.zeros(N)], 1)
        for fd in _ready_fds():  # the candidate's "answer", written ahead
            os.pwrite(fd, torch.full((N,), 7.0).numpy().tobytes(), 0)
        metas = [_meta(outbox.put_tensor(torch.zeros(N)))]
        return {"ok": True, "found": len(_ready_fds()), "metas": metas}

    outcome, paths = _run(body)
    try:
        assert torch.equal(_read(outcome, paths, 0), torch.zeros(N))
    finally:
        outcome.blobs.close()


def test_a_ready_memfd_the_candidate_could_still_write_is_not_handed_over():
    def body(_):
        outbox.prepare([torch.zeros(N)], 2)
        fds = _ready_fds()
        kept = mmap.mmap(fds[0], N * 4, flags=mmap.MAP_SHARED)  # to rewrite it later
        os.ftruncate(fds[1], N * 2)  # or resized
        failures = []
        for _ in fds:
            try:
                outbox.put_tensor(torch.zeros(N))
            except CandidateFailure as e:
                failures.append(f"{e.reason}: {e}")
        kept.close()
        return {"ok": True, "failures": failures, "found": len(fds)}

    outcome, paths = _run(body)
    try:
        assert outcome.answer["found"] == 2
        failures = outcome.answer["failures"]
        assert len(failures) == 2, failures
        assert all(f.startswith("tampered: ") for f in failures)
        assert any("sealed" in f for f in failures) and any("resized" in f for f in failures)
        assert paths == []  # nothing of either was handed over
    finally:
        outcome.blobs.close()


@pytest.mark.gpu
def test_a_gpu_output_comes_by_dma_into_page_locked_pages_and_is_sealed():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from evotui.eval.prepared_pages import SEALS, ReadyPool

    value = torch.randn(1 << 20, device="cuda")
    flat = value.view(torch.uint8)
    pool = ReadyPool()
    pool.prepare({flat.numel(): 1}, pin_for=torch.cuda.current_device())
    ready = pool.take(flat.numel())
    assert ready is not None and ready.pinned  # registered with the driver
    try:
        ready.fill(flat)
        assert fcntl.fcntl(ready.fd, fcntl.F_GET_SEALS) & SEALS == SEALS
        got = torch.frombuffer(bytearray(os.pread(ready.fd, flat.numel(), 0)), dtype=torch.float32)
        assert torch.equal(got, value.cpu())
        torch.empty(1, device="cuda").fill_(1.0).item()  # nothing left pending for torch
    finally:
        ready.close()


def test_no_more_is_made_ready_than_the_cap(monkeypatch):
    from evotui.eval import prepared_pages

    monkeypatch.setattr(prepared_pages, "MAX_READY_BYTES", 3 * N * 4)
    pool = prepared_pages.ReadyPool()
    try:
        pool.prepare({N * 4: 5}, None)
        assert pool.count() == 3
        pool.prepare({N * 4 * 10: 1}, None)  # bigger than what is left
        assert pool.count() == 3
    finally:
        pool.close()
