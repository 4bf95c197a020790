"""The engine's side of the optional advice library (``hooks.AdviceLibrary``): advice for each
mutation, the shown/improved counters, and the human's accept/veto/author commands.

The library failing never stops a run: each failure costs a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evotui.engine import events as ev
from evotui.engine.context import Emit, RunTask
from evotui.engine.hooks import AdviceLibrary, advice_block, advice_view, call
from evotui.engine.population import Candidate

AdviceCommand = ev.AcceptAdvice | ev.VetoAdvice | ev.AuthorAdvice


@dataclass(frozen=True)
class Retrieved:
    items: list[Any] = field(default_factory=list)  # as the library returned them: for the mutator
    views: list[dict[str, Any]] = field(default_factory=list)  # for events and lineage
    block: str = ""  # for the prompt


class AdviceLink:
    def __init__(self, memory: AdviceLibrary | None, k: int, task: RunTask, interpreter: bool,
                 emit: Emit) -> None:
        self.memory = memory
        self.k = k  # advice items per mutation (0: none)
        self.task = task
        self.interpreter = interpreter  # interpreter wall times count no win rate
        self._emit = emit

    def _warn(self, message: str) -> None:
        self._emit(ev.Status(message, "warning"))

    async def retrieve(self, cid: str, parent: Candidate, param: bool) -> Retrieved:
        """Top-k advice for this parent. The parameter mutator (``param``) gets the advice it
        can follow (tunable moves) when the library can pick those, and no prompt block."""
        memory, k = self.memory, self.k
        if memory is None or k <= 0:
            return Retrieved()
        fn = memory.retrieve_tunables if param else memory.retrieve
        try:
            query = self.task.query()
            items = list(await call(fn, query, parent.source, k) or [])[:k]
            views = [advice_view(a) for a in items]
        except Exception as e:
            self._warn(f"advice library: retrieval failed ({type(e).__name__}: {e}); "
                       "continuing without advice")
            return Retrieved()
        if views:
            self._emit(ev.AdviceRetrieved(cid, tuple(views)))
        return Retrieved(items, views, "" if param else advice_block(items, views))

    async def record_outcome(self, advice_ids: list[str], improved: bool) -> None:
        memory = self.memory
        # interpreter wall times say nothing of kernel speed: no win rate is counted from them
        if not advice_ids or memory is None or self.interpreter:
            return
        try:
            await call(memory.record_outcome, list(advice_ids), improved)
        except Exception as e:
            self._warn(f"advice library: recording the outcome failed: {e}")

    async def forward(self, cmd: AdviceCommand) -> None:
        """Pass a human's accept/veto/author command to the library, if it takes decisions."""
        name = {"accept_advice": "accept", "veto_advice": "veto", "author_advice": "author"}[cmd.kind]
        memory = self.memory
        if memory is None or not memory.decides:
            self._warn(f"cannot {name} advice: no advice library that takes decisions is "
                       "attached")
            return
        try:
            if isinstance(cmd, ev.AuthorAdvice):
                got = await call(memory.author, cmd.text, **cmd.fields)
                self._emit(ev.Status(f"advice added: {advice_view(got)['id']}"))
            elif isinstance(cmd, ev.AcceptAdvice):
                await call(memory.accept, cmd.id)
                self._emit(ev.Status(f"advice {cmd.id} accepted"))
            else:
                await call(memory.veto, cmd.id)
                self._emit(ev.Status(f"advice {cmd.id} vetoed"))
        except Exception as e:
            self._warn(f"advice {name} failed: {type(e).__name__}: {e}")
