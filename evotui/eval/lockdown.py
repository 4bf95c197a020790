"""What the candidate worker takes from candidate code before any of it loads.

The sandbox lets a candidate write only its scratch folder; these keep what it may write
there from reaching the verdict:

- File-backed storage: ``torch.UntypedStorage.from_file(path, shared=True, n)`` (and every
  typed storage's, and ``torch.from_file``) maps a file writable. In the scratch folder
  lie the outputs the worker dumps for the judge (hashed as written) and the compiler's
  cache (a kernel binary written there would run instead of the checked text). Reached
  from ``__init__``, where no op policy runs. The static rules ban the names; here the
  functions themselves refuse.
- A log file (``logging.basicConfig(filename="/proc/self/fd/5")``): the answer's pipe is
  a descriptor of this process, so a log file opened on it wrote the worker's answer. The
  static rules refuse the keyword; here ``basicConfig`` refuses it however it is spelt
  (``**{...}``, an alias).
- An autotuner's benchmark function (``triton.autotune(do_bench=f)``): the tuner calls it
  while the launch runs. Tuners here always benchmark with the driver's own.
- Printing a tensor, or switching the dispatch modes off: the op policy saw nothing while
  ``str(x)`` handed the host every value, or torch computed the answer inside
  ``_disable_current_modes`` (``op_policy.watch_escapes``).

Runs before ``leftovers.harness_code`` takes its snapshot, so a candidate that restores a
function is caught as replaced harness code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from evotui.eval.op_policy import watch_escapes


def _refuse(*args: Any, **kwargs: Any) -> NoReturn:
    raise RuntimeError("file-backed tensors and storages are not available to candidates")


FORBIDDEN_LOG_ARGUMENTS = frozenset({"filename", "handlers", "stream"})


def _no_log_files(original: Callable[..., None]) -> Callable[..., None]:
    def basicConfig(**kwargs: Any) -> None:  # noqa: N802 - logging's own name
        if FORBIDDEN_LOG_ARGUMENTS & kwargs.keys():
            raise RuntimeError("logging.basicConfig(filename=/handlers=/stream=) is not available "
                               "to candidates: a log file can be the worker's answer")
        original(**kwargs)

    return basicConfig


def _tuners_benchmark_with_the_driver() -> None:
    from triton.runtime import autotuner, driver

    if isinstance(vars(autotuner.Autotuner).get("do_bench"), property):
        return  # the launch hooks' wall-clock benchmark, under the CPU interpreter
    autotuner.Autotuner.do_bench = property(lambda _self: driver.active.get_benchmarker())


def lock_down() -> None:
    import logging

    import torch

    torch.UntypedStorage.from_file = staticmethod(_refuse)  # typed storages call this one
    torch.from_file = _refuse
    logging.basicConfig = _no_log_files(logging.basicConfig)
    _tuners_benchmark_with_the_driver()
    watch_escapes()
