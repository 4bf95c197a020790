"""Loading a task file: ``load_module`` imports it as a fresh module; ``task_module`` does so
at most once per process for a given file and text.

Each process that needs a task's code (the pool's parent for the run's facts and memory
plan, the judge for its references, each candidate's process before its sandbox closes)
asks ``task_module(path, sha256)``: the module is kept, keyed by the path and the sha256 of
the text it was loaded from. A file changed on disk since (its inode, size or modification
time differ) is read again, and with ``sha256`` only the text that hashes to it is accepted
(``TaskChanged`` otherwise), so a changed task file is noticed as before.

The module is shared by its users in the process: they set its size constants only through
``constants.shape_overrides``, which holds a lock while they are set.
"""

from __future__ import annotations

import hashlib
import os
import threading
import types
from pathlib import Path

from evotui.task.errors import TaskChanged, TaskError

Stamp = tuple[int, int, int, int]  # device, inode, size, modification time (ns)

_LOCK = threading.Lock()
_MODULES: dict[tuple[str, str | None], tuple[Stamp, types.ModuleType]] = {}
LOADS: list[str] = []  # the paths this process loaded, in order (for the tests)


def _stamp(path: Path) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None  # load_module says why
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def task_module(path: str | Path, sha256: str | None = None) -> types.ModuleType:
    """The task module of ``path``, loaded once for a given text: with ``sha256``, only the
    text that hashes to it (``TaskChanged`` otherwise); without, the file as it is (kept
    under its own digest too, for the callers that pass it later)."""
    path = Path(path)
    key = (str(path), sha256)
    with _LOCK:
        stamp = _stamp(path)  # before reading: a change while it is read shows next time
        held = _MODULES.get(key)
        if held is not None and stamp is not None and held[0] == stamp:
            return held[1]
        module = load_module(path, "evotui_task", sha256)
        LOADS.append(str(path))
        if stamp is not None:
            _MODULES[key] = (stamp, module)
            _MODULES[(str(path), module.__evotui_sha256__)] = (stamp, module)
        return module


def load_module(path: Path, module_name: str, sha256: str | None = None) -> types.ModuleType:
    """Import a Python file as a fresh module; any failure becomes a one-line TaskError.
    With ``sha256``, only the text that hashes to it is loaded (``TaskChanged`` otherwise)."""
    try:
        source = path.read_text()
    except OSError as e:
        raise TaskError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise TaskError(f"{path} is not UTF-8 text") from None
    digest = hashlib.sha256(source.encode()).hexdigest()
    if sha256 is not None and digest != sha256:
        raise TaskChanged(f"{path} changed on disk since the task was loaded; restart to use "
                          "the new version")
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as e:
        raise TaskError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    module.__evotui_sha256__ = digest
    try:
        exec(code, module.__dict__)
    except Exception as e:  # a task's own import-time error is a user mistake
        raise TaskError(f"{path}: error while loading: {type(e).__name__}: {e}") from None
    for needed in ("Model", "get_inputs", "get_init_inputs"):
        if needed not in module.__dict__:
            raise TaskError(f"{path}: missing `{needed}` (KernelBench format needs Model, "
                            "get_inputs and get_init_inputs)")
    return module


__all__ = ["load_module", "task_module"]
