"""The user-facing problems with the advice library (each printed as one line)."""

from __future__ import annotations


class AdviceError(Exception):
    """A user-facing problem with the advice library (printed as one line)."""


class UnknownAdvice(AdviceError):
    pass


class AmbiguousId(AdviceError):
    pass


class LibraryLocked(AdviceError):
    pass


class DamagedAdvice(AdviceError):
    def __init__(self, message: str, advice_id: str) -> None:
        super().__init__(message)
        self.advice_id = advice_id
