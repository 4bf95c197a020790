"""Triton's C helpers, built once per worker by a process that runs no candidate code.

A candidate's compiler cache is its own (a candidate must not leave a compiled kernel or a
helper library for the next one to load), so without this every candidate would build
Triton's driver helpers with gcc again, seconds each. Instead the worker forks one trusted
process that launches a tiny kernel of ours, which makes Triton build and cache everything a
launch needs, in a folder only that process writes; each candidate's cache starts as a copy of
it (``seed_cache``): a copy, so what a candidate changes in its own stays its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

WARM_TIMEOUT_S = 300.0


def build_trusted_cache(root: Path) -> Path | None:
    """Fill a new folder under ``root`` with what Triton builds for a first launch on this
    worker's GPU; None when that fails (candidates then build it themselves)."""
    from evotui.eval.sandbox import run_isolated

    folder = Path(tempfile.mkdtemp(prefix="triton-cache-", dir=root))

    def body(_: Any) -> dict[str, Any]:
        os.environ["TRITON_CACHE_DIR"] = str(folder)
        import torch

        from evotui.eval.warm_kernel import launch_once

        launch_once(torch.device("cuda:0"))
        return {"ok": True}

    outcome = run_isolated(lambda: None, body, None, WARM_TIMEOUT_S)
    if outcome.blobs is not None:
        outcome.blobs.close()
    if not (outcome.answer or {}).get("ok"):
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return folder


def seed_cache(trusted: Path | None, cache_dir: str) -> None:
    """A candidate's compiler cache, starting as a copy of the trusted one."""
    if trusted is None or not trusted.is_dir():
        return
    shutil.copytree(trusted, cache_dir, dirs_exist_ok=True, symlinks=False)
