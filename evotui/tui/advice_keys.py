"""The app's advice keys: ``n`` writes new advice, ``a``/``v`` accept or veto the advice
the Advice panel's cursor is on — only while that panel has the focus, so that what is
decided is what is visibly selected. The library is written from a worker thread."""

from __future__ import annotations

from typing import Any

from textual import work

from evotui.tui.controller import Controller
from evotui.tui.screens import NewAdviceScreen


class AdviceKeys:
    """Mixed into ``EvotuiApp``: uses its controller, feed, Advice panel and notifications."""

    controller: Controller
    feed: Any
    advice: Any
    notify: Any
    push_screen: Any
    call_from_thread: Any

    def action_new_advice(self) -> None:
        defaults = self.controller.advice_defaults()
        self.push_screen(NewAdviceScreen(defaults), self._save_advice)

    def _save_advice(self, data: dict[str, Any] | None) -> None:
        if data:
            self._advice_worker("author", data)

    def action_accept(self) -> None:
        self._decide("accept")

    def action_veto(self) -> None:
        self._decide("veto")

    def _decide(self, what: str) -> None:
        """Act on the advice row the cursor is visibly on: only with the Advice panel
        focused. From elsewhere the key first moves the focus there (nothing is decided)."""
        panel = self.advice
        advice_id = panel.highlighted_id
        if advice_id is None:
            self.notify("No advice to decide on yet (advice appears when a mutation "
                        "retrieves some).", severity="warning")
            return
        if not panel.has_focus:
            panel.focus()
            key = "a" if what == "accept" else "v"
            self.notify(f"Advice panel selected, on {advice_id}: ↑/↓ choose, {key} again "
                        f"{what}s it.", timeout=5)
            return
        self._advice_worker(what, {"id": advice_id})

    @work(thread=True, group="advice", exit_on_error=False)
    def _advice_worker(self, what: str, data: dict[str, Any]) -> None:
        c = self.controller
        try:
            if what == "author":
                fields = {k: v for k, v in data.items() if k != "text"}
                aid = c.author_advice(data["text"], **fields)["id"]
                message = f"Advice {aid} saved to the library; it can be offered from the " \
                          "next prompt on."
            elif what == "accept":
                c.accept_advice(data["id"])
                self.feed.mark_advice(data["id"], "accepted")
                message = f"Advice {data['id']} accepted."
            else:
                c.veto_advice(data["id"])
                self.feed.mark_advice(data["id"], "vetoed")
                message = f"Advice {data['id']} vetoed: it will not be offered again."
        except Exception as e:
            self.call_from_thread(self.notify, f"advice {what} failed: {e}", severity="error")
        else:
            self.call_from_thread(self.notify, message, timeout=6)
