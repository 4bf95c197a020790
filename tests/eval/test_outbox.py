"""The bytes a candidate's process hands over cannot change afterwards, and the fingerprints of
inputs catch any change made before their key was given."""

from __future__ import annotations

import os
import socket

import pytest
import torch

from evotui.eval import outbox
from evotui.eval.digest import fingerprint
from evotui.eval.protocol import TamperedOutput, TensorMeta, load_tensor
from evotui.eval.sandbox import run_isolated


def _handover(body):
    """``body`` in a fresh process with an outbox channel; its answer and received paths."""
    outcome = run_isolated(lambda: None, body, None, 60.0)
    assert outcome.blobs is not None
    paths = [outbox.path_of(fd) if fd >= 0 else None for fd in outcome.blobs.fds]
    return outcome, paths


def test_a_handed_over_output_reads_back_and_cannot_be_rewritten():
    def body(_):
        t = torch.arange(1000, dtype=torch.float32)
        meta = {"shape": [1000], "dtype": "torch.float32", "type_name": "torch.Tensor",
                "device": "cpu", "file": None, "blob": outbox.put_tensor(t)}
        # the candidate's later code: the tensor it handed over is its own to change, the
        # handed-over bytes are not
        t.fill_(-1.0)
        return {"ok": True, "meta": meta}

    outcome, paths = _handover(body)
    try:
        got = load_tensor(TensorMeta.from_dict(outcome.answer["meta"]), "cpu", paths)
        assert torch.equal(got, torch.arange(1000, dtype=torch.float32))
        # nobody can write it now, not even through a new descriptor of it
        with pytest.raises(PermissionError):
            with open(paths[0], "r+b") as f:
                f.write(b"\0" * 16)
        assert torch.equal(load_tensor(TensorMeta.from_dict(outcome.answer["meta"]), "cpu", paths),
                           torch.arange(1000, dtype=torch.float32))
    finally:
        outcome.blobs.close()


def test_an_unsealed_descriptor_is_refused():
    def body(_):
        fd = os.memfd_create("forged", os.MFD_ALLOW_SEALING)
        os.write(fd, b"\0" * 64)
        socket.send_fds(outbox._channel, [b"0"], [fd])  # what a candidate could send itself
        return {"ok": True}

    outcome, paths = _handover(body)
    try:
        assert "not sealed" in outcome.blobs.error
        assert paths == [None]
    finally:
        outcome.blobs.close()


def test_a_named_file_is_not_taken_for_handed_over_bytes(tmp_path):
    plain = tmp_path / "x.bin"
    plain.write_bytes(b"\0" * 16)
    meta = TensorMeta("torch.Tensor", (4,), "torch.float32", "cpu", None, None, blob=0)
    with pytest.raises(TamperedOutput, match="not a memfd"):
        load_tensor(meta, "cpu", [str(plain)])
    with pytest.raises(TamperedOutput, match="not handed over"):
        load_tensor(meta, "cpu", [])


def test_the_key_is_given_once_and_a_second_ask_is_noted():
    def body(_):
        first = outbox.ask_key()
        second = outbox.ask_key()
        return {"ok": True, "keys": [first, second]}

    outcome, _ = _handover(body)
    try:
        assert outcome.answer["keys"][0] == outcome.blobs.key
        assert "twice" in outcome.blobs.error
    finally:
        outcome.blobs.close()


def test_a_fingerprint_changes_with_any_byte_and_with_the_key():
    x = torch.randn(3, 1001)
    key = 123456789
    base = fingerprint(x, key)
    assert fingerprint(x.clone(), key) == base
    y = x.clone()
    y.view(-1)[2000] = torch.nextafter(y.view(-1)[2000], torch.tensor(1e9))  # one ulp
    assert fingerprint(y, key) != base
    assert fingerprint(x, key + 1) != base
    # a change by the prime itself in a word would not survive 16-bit limbs either
    z = x.clone().view(torch.int32)
    z.view(-1)[0] += 2**31 - 1
    assert fingerprint(z.view(torch.float32), key) != base


def test_a_fingerprint_is_the_sum_of_its_products_modulo_the_prime_even_at_the_largest_limbs():
    # every limb 0xFFFF over more than one row of summed products: a sum that overflowed
    # int64 before its modulo would differ from the definition computed in Python integers
    from evotui.eval import digest

    n = digest.ROW * 2 + 5
    x = torch.full((n,), -1, dtype=torch.int16)
    key = 42
    want = []
    for j in range(2):
        gen = torch.Generator()
        gen.manual_seed(key * 2 + j)
        coeff = torch.randint(0, digest.PRIME, (n,), generator=gen, dtype=torch.int64)
        want.append(sum(c * 0xFFFF for c in coeff.tolist()) % digest.PRIME)
    assert fingerprint(x, key) == want


def test_the_judge_checks_inputs_by_their_fingerprints():
    from evotui.core import reasons
    from evotui.eval.judge import Judge, Reject

    judge = Judge("cpu")
    pristine = [torch.randn(64, 33), 7]
    key = 987654321

    def metas(values):
        return [{"type_name": "torch.Tensor", "shape": list(v.shape), "dtype": str(v.dtype),
                 "device": "cpu", "file": None, "digest": fingerprint(v, key)}
                if isinstance(v, torch.Tensor) else {"type_name": "builtins.int", "file": None}
                for v in values]

    judge.digest_key = key
    judge._check_inputs(metas(pristine), pristine, "trial")  # unchanged: passes
    changed = [pristine[0].clone(), 7]
    changed[0][5, 5] += 1.0
    with pytest.raises(Reject) as r:
        judge._check_inputs(metas(changed), pristine, "trial")
    assert r.value.reason == reasons.MODIFIED_INPUTS
    with pytest.raises(Reject) as r:
        judge._check_inputs(metas(pristine)[:1], pristine, "trial")
    assert r.value.reason == reasons.TAMPERED
    judge.digest_key = None
    with pytest.raises(Reject) as r:
        judge._check_inputs(metas(pristine), pristine, "trial")
    assert r.value.reason == reasons.TAMPERED
