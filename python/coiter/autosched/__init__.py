"""The autoscheduler (docs/autoscheduling.md): the asymptotic frontier (frontier.py, the core's
src/autosched/), base candidates (candidates.py: where the frontier plugs in), the schedule
space and its trimming passes (space.py, trimming.py), the timed search (search.py), the
tuning database (database.py), the report (report.py) and the public functions (api.py)."""

from .api import DEFAULT_BUDGET, autoschedule, clear_tuning, instant_choice, tuning_info
from .frontier import frontier
from .report import Report

__all__ = [
    "autoschedule",
    "tuning_info",
    "clear_tuning",
    "instant_choice",
    "frontier",
    "Report",
    "DEFAULT_BUDGET",
]
