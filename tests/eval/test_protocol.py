"""The channel between worker and judge: what crosses it cannot be changed on the way."""

from __future__ import annotations

import pytest


def test_a_dumped_output_rewritten_after_the_dump_is_refused(tmp_path):
    """The worker records each dumped file's sha256 as it writes it; the judge reloads only
    those bytes (a candidate mapped the dump files and fixed them a call later)."""
    import torch

    from evotui.eval.protocol import TamperedOutput, TensorMeta, dump_tensor, load_tensor

    meta = TensorMeta.from_dict(dump_tensor(torch.arange(6.0), tmp_path / "out_0.bin"))
    assert torch.equal(load_tensor(meta), torch.arange(6.0))
    raw = bytearray((tmp_path / "out_0.bin").read_bytes())
    raw[0] ^= 1
    (tmp_path / "out_0.bin").write_bytes(bytes(raw))
    with pytest.raises(TamperedOutput, match="changed after the worker wrote it"):
        load_tensor(meta)
