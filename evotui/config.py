"""Where evotui keeps its data, and the defaults users can override.

``EVOTUI_HOME`` overrides the data directory (advice library, runs); otherwise the platform's
user data directory (``~/.local/share/evotui`` on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MODEL = "qwen2.5-coder:7b"
DEFAULT_EMBED_MODEL = "nomic-embed-text"


class HomeError(OSError):
    """The data directory cannot be created: one line for the user (exit code 2)."""


def home() -> Path:
    env = os.environ.get("EVOTUI_HOME")
    if env:
        path = Path(env).expanduser()
    else:
        from platformdirs import user_data_dir

        path = Path(user_data_dir("evotui", appauthor=False))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        where = f"EVOTUI_HOME={env}" if env else f"the data directory {path}"
        fix = "" if env else ": set EVOTUI_HOME to a writable folder"
        why = "not a directory" if isinstance(e, FileExistsError) else e.strerror or e
        raise HomeError(f"{where} is not a writable directory ({why}){fix}") from None
    return path


def advice_db_path() -> Path:
    return home() / "advice.json"


def runs_dir() -> Path:
    path = home() / "runs"
    path.mkdir(parents=True, exist_ok=True)
    return path
