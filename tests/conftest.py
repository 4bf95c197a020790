import os
from pathlib import Path

import pytest

from tests.fake_ollama import fake_ollama  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_kernels"
CANDIDATES = Path(__file__).resolve().parent / "candidates"


def pytest_collection_modifyitems(config, items):
    """GPU tests run only where a CUDA device is visible."""
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if has_gpu and os.environ.get("TRITON_INTERPRET") != "1":
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cpu_pool():
    """One evaluator pool for the whole session: every test also proves that the pool keeps
    serving candidates after whatever the previous test's candidate did to its worker."""
    from evotui.eval import EvaluatorPool

    with EvaluatorPool("cpu") as pool:
        yield pool


@pytest.fixture(scope="session")
def raw_cpu_pool():
    """A pool with the static rules off, so hostile candidates reach the worker."""
    from evotui.eval import EvaluatorPool

    with EvaluatorPool("cpu", static_checks=False) as pool:
        yield pool


@pytest.fixture(scope="session")
def softmax_task():
    from evotui.task.model import resolve_task

    return resolve_task(SAMPLES / "softmax")


@pytest.fixture(scope="module")
def gpu_pool():
    """A GPU pool per test module (the GPU tests only: they are skipped without one)."""
    from evotui.eval import EvaluatorPool

    with EvaluatorPool("cuda") as pool:
        yield pool


@pytest.fixture(scope="module")
def raw_gpu_pool():
    """A GPU pool with the static rules off, so hostile candidates reach the worker."""
    from evotui.eval import EvaluatorPool

    with EvaluatorPool("cuda", static_checks=False) as pool:
        yield pool
