"""What a timeout means, said in its message: a seed that gives no verdict in time says the
task is too big for the device at its shape (and how to shrink it); a child that times out
where the seed's evaluation finished says the candidate is too slow."""

from __future__ import annotations

from typing import Any


def explain_timeout(message: str, *, is_seed: bool, seed_wall_s: float | None,
                    timeout_s: float, device: str, shape: dict[str, Any]) -> str:
    if is_seed:
        at = ", ".join(f"{k}={v}" for k, v in shape.items())
        where = f" at {at}" if at else ""
        return (f"{message}: the seed itself gives no verdict within {timeout_s:.0f} s on "
                f"{device}, so the task is too big for this device{where}: shrink it with "
                "--shape NAME=VALUE, or allow more time with --eval-timeout SECONDS")
    if seed_wall_s is not None:
        return (f"{message}: the seed's whole evaluation took {seed_wall_s:.0f} s here, so the "
                "task fits this device: this candidate is too slow")
    return message
