"""A keyed fingerprint of a tensor's bytes, computed on its GPU.

What the judge needs of an input after the calls is only whether it changed. Handing over
every timed input set as bytes costs gigabytes per candidate; instead the candidate's process
fingerprints them with a key it is given only after its last timed call
(``evotui.eval.outbox.ask_key``), and the judge fingerprints the inputs it regenerates with the
same key. The fingerprint is a universal hash: the bytes as 16-bit limbs, each times a
coefficient drawn from the key, summed modulo a prime, twice with independent coefficients.
For any change of the bytes fixed before the key was drawn, both sums agree with probability
(2^31 - 1)^-2.
"""

from __future__ import annotations

from typing import Any

PRIME = 2**31 - 1
CHUNK = 1 << 25  # limbs per step: bounds the temporary memory to a few hundred MB
# products summed before each reduction modulo PRIME: coefficient < 2^31, limb < 2^16, so a
# row of 2^16 products sums below 2^63 (int64) and only one value per row needs the modulo
# (a modulo of every int64 product is what made the fingerprint slow on a GPU)
ROW = 1 << 16


def fingerprint(value: Any, key: int) -> list[int]:
    import torch

    data = value.detach().contiguous().reshape(-1).view(torch.uint8)
    if data.numel() % 2:
        data = torch.cat([data, data.new_zeros(1)])
    limbs = data.view(torch.int16)
    sums = []
    for j in range(2):
        gen = torch.Generator(device=data.device)
        gen.manual_seed((key * 2 + j) % 2**63)
        total = 0
        for start in range(0, limbs.numel(), CHUNK):
            part = limbs[start:start + CHUNK].to(torch.int64) & 0xFFFF
            coeff = torch.randint(0, PRIME, part.shape, generator=gen, device=data.device,
                                  dtype=torch.int64)
            total += _sum_mod(coeff.mul_(part))
        sums.append(total % PRIME)
    return sums


def _sum_mod(products: Any) -> int:
    """The sum of ``products`` (each below 2^47) modulo PRIME, exactly."""
    full = products.numel() // ROW * ROW
    total = int((products[:full].view(-1, ROW).sum(dim=1) % PRIME).sum()) if full else 0
    return (total + int(products[full:].sum())) % PRIME
