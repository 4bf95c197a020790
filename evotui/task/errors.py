"""The user-facing errors a task can raise: printed as one line, exit code 2."""

from __future__ import annotations


class TaskError(Exception):
    """A user-facing problem with a task file: printed as one line, exit code 2."""


class TaskChanged(TaskError):
    """The task file is no longer the text the run started with."""
