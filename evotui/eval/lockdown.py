"""What the candidate worker takes from candidate code before any of it loads.

The sandbox lets a candidate write only its scratch folder; these keep what it may write
there from reaching the verdict:

- File-backed storage: ``torch.UntypedStorage.from_file(path, shared=True, n)`` (and every
  typed storage's, and ``torch.from_file``) maps a file writable. In the scratch folder
  lie the outputs the worker dumps for the judge (hashed as written) and the compiler's
  cache (a kernel binary written there would run instead of the checked text). Reached
  from ``__init__``, where no op policy runs. The static rules ban the names; here the
  functions themselves refuse.
- Printing a tensor, or switching the dispatch modes off: the op policy saw nothing while
  ``str(x)`` handed the host every value, or torch computed the answer inside
  ``_disable_current_modes`` (``op_policy.watch_escapes``).

Runs before ``leftovers.harness_code`` takes its snapshot, so a candidate that restores a
function is caught as replaced harness code.
"""

from __future__ import annotations

from typing import Any, NoReturn

from evotui.eval.op_policy import watch_escapes


def _refuse(*args: Any, **kwargs: Any) -> NoReturn:
    raise RuntimeError("file-backed tensors and storages are not available to candidates")


def lock_down() -> None:
    import torch

    torch.UntypedStorage.from_file = staticmethod(_refuse)  # typed storages call this one
    torch.from_file = _refuse
    watch_escapes()
