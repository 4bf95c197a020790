"""The advice library as the engine and the faces use it: ``evotui.memory.hook.MemoryHook``
and the tests' stand-ins all subclass ``AdviceLibrary``. Every member is always there: a
library without a feature keeps the default, which says so (``decides``/``learns`` False,
``NotHere`` if called anyway), so no caller asks whether a method exists.

Methods may be sync (the engine runs them in a thread) or async."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any


class NotHere(Exception):
    """A feature this library does not have (see ``decides`` and ``learns``)."""


class AdviceLibrary(ABC):
    # takes the human's decisions: ``accept``, ``veto`` and ``author``
    decides: bool = False
    # distils a finished run's gains into proposed advice: ``learn``
    learns: bool = False

    @abstractmethod
    def retrieve(self, task_meta: Any, parent_source: str = "", k: int | None = None) -> Any:
        """The top-``k`` advice for this task (what it computes) and parent program: a list
        (``evotui.memory.Advice``, dicts or objects with ``id`` and ``text``), or an
        awaitable of one."""

    @abstractmethod
    def record_outcome(self, advice_ids: Iterable[str], improved: bool) -> Any:
        """The advice in ``advice_ids`` was shown for one child; did the child improve?"""

    def retrieve_tunables(self, task_meta: Any, parent_source: str = "",
                          k: int | None = None) -> Any:
        """Advice the parameter mutator can follow (tunable moves). The default, for a
        library that cannot pick those: ``retrieve``'s advice."""
        return self.retrieve(task_meta, parent_source, k)

    def accept(self, advice_id: str) -> Any:
        """Mark advice as accepted by the human (only where ``decides``)."""
        raise NotHere("this advice library takes no decisions")

    def veto(self, advice_id: str) -> Any:
        """Never offer this advice again (only where ``decides``)."""
        raise NotHere("this advice library takes no decisions")

    def author(self, text: str, **fields: Any) -> Any:
        """New advice written by the human; returns it, with its ``id`` (only where
        ``decides``)."""
        raise NotHere("this advice library takes no decisions")

    async def learn(self, mutations: Iterable[Any], ask: Any = None, **options: Any) -> Any:
        """After a run: its successful mutations → proposed advice (only where ``learns``;
        ``options``: ``min_gain``, ``summary``, see ``evotui.memory.learn``)."""
        raise NotHere("this advice library does not distil runs")


__all__ = ["AdviceLibrary", "NotHere"]
