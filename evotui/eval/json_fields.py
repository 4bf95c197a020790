"""Reading one JSON object's fields, each as the type it must have: what the evaluator's
messages (``evotui.eval.messages``) are parsed with, so that a message from a process that
ran candidate code is either well formed or a ``MalformedMessage``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar

ABSENT: Any = object()  # no default: the field must be there
T = TypeVar("T")


class MalformedMessage(ValueError):
    """A message that lacks a field or holds one of the wrong type."""


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def is_str(v: Any) -> bool:
    return isinstance(v, str)


def _all(v: Any, ok: Callable[[Any], bool]) -> bool:
    return isinstance(v, list | tuple) and all(map(ok, v))


def list_of(ok: Callable[[Any], bool], kind: str) -> Callable[[Any, str], tuple[Any, ...]]:
    """A parser of a list nested in a list (an A/B's, one per candidate)."""
    def parse(value: Any, what: str) -> tuple[Any, ...]:
        if not _all(value, ok):
            raise MalformedMessage(f"{what} is not a list of {kind}")
        return tuple(value)
    return parse


class Fields:
    """One JSON object's fields, each read as the type it must have. A field with a default
    may be absent; one whose default is None may also be null."""

    def __init__(self, value: Any, what: str) -> None:
        if not isinstance(value, dict):
            raise MalformedMessage(f"{what} is not a JSON object")
        self.value, self.what = value, what

    def _get(self, key: str, ok: Callable[[Any], bool], kind: str, default: Any) -> Any:
        if key not in self.value:
            if default is ABSENT:
                raise MalformedMessage(f"{self.what} lacks `{key}`")
            return default
        v = self.value[key]
        if v is None and default is None:
            return None
        if not ok(v):
            raise MalformedMessage(f"{self.what}: `{key}` is not {kind}")
        return v

    def integer(self, key: str, default: Any = ABSENT) -> Any:
        return self._get(key, is_int, "an integer", default)

    def number(self, key: str, default: Any = ABSENT) -> Any:
        v = self._get(key, is_number, "a number", default)
        return None if v is None else float(v)

    def text(self, key: str, default: Any = ABSENT) -> Any:
        return self._get(key, is_str, "text", default)

    def flag(self, key: str, default: Any = ABSENT) -> Any:
        return self._get(key, lambda v: isinstance(v, bool), "true or false", default)

    def seq(self, key: str, ok: Callable[[Any], bool], kind: str, default: Any = ()) -> Any:
        v = self._get(key, lambda v: _all(v, ok), f"a list of {kind}", default)
        return None if v is None else tuple(v)

    def metas(self, key: str, default: Any = ABSENT) -> Any:
        return self.seq(key, lambda m: isinstance(m, dict), "tensors", default)

    def counts(self, key: str) -> dict[str, int]:
        v = self._get(key, lambda v: isinstance(v, dict) and all(map(is_int, v.values())),
                      "a count per name", {})
        return {str(k): n for k, n in v.items()}

    def numbers(self, key: str) -> dict[str, float]:
        v = self._get(key, lambda v: isinstance(v, dict) and all(map(is_number, v.values())),
                      "a number per name", {})
        return {str(k): float(n) for k, n in v.items()}

    def record(self, key: str, parse: Callable[[Any, str], T], default: Any = ABSENT) -> Any:
        v = self._get(key, lambda v: v is not None, "an object", default)
        return v if v is None or v is default else parse(v, f"{self.what}'s `{key}`")

    def records(self, key: str, parse: Callable[[Any, str], T]) -> tuple[T, ...]:
        items = self._get(key, lambda v: isinstance(v, list | tuple), "a list", ())
        return tuple(parse(v, f"{self.what}'s `{key}` {i}") for i, v in enumerate(items))


class Record:
    def to_json(self) -> dict[str, Any]:
        """The JSON object it travels as (nested records as objects, tuples as lists)."""
        return asdict(self)  # type: ignore[call-overload]
