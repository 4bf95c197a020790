"""Modal forms of the TUI: new advice, hint, candidate details, confirm quit."""

from evotui.tui.screens.confirm import ConfirmQuitScreen
from evotui.tui.screens.details import CandidateScreen
from evotui.tui.screens.hint import HintScreen
from evotui.tui.screens.new_advice import NewAdviceScreen, parse_conditions

__all__ = ["CandidateScreen", "ConfirmQuitScreen", "HintScreen", "NewAdviceScreen",
           "parse_conditions"]
