"""What ``ct.autoschedule`` did, for a person to read: the base candidates, the space and how
the trimming passes shrank it, every schedule timed, the chosen one and its speedup over the
default schedule. ``str(report)`` is the text form, ``report._repr_html_()`` a table for
notebooks and ``report.plot()`` a bar chart (matplotlib, optional)."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any

from .candidates import Candidate
from .pipeline import describe
from .search import Measurement
from .space import SpaceCounts


@dataclass
class Report:
    """The record of one autoschedule call.

    ``candidates``: the base candidates (the default, the asymptotic frontier's members of one
    schedule, the other legal loop orders) of every variant. ``frontier``: what became of each
    frontier member (searched, on which formats, or why not). ``space``: the counts of the
    schedule space of each variant (by conversion). ``measurements``: every schedule timed, in
    order (failures carry their ``error``). ``chosen``: the winner; ``default``: the baseline.
    ``from_database``: the tuning was found in the tuning database, and nothing was timed now.
    ``arms``: the bandit's arms that were drawn, with how many schedules each had timed and
    their mean log(time / default).
    """

    statement: str
    candidates: list[Candidate]
    measurements: list[Measurement]
    chosen: Measurement
    default: Measurement
    tuning_seconds: float
    strategy: str
    space_size: int | None = None
    space: dict[str, SpaceCounts] = field(default_factory=dict)
    from_database: bool = False
    # The bandit's arms that were drawn: (schedules timed, mean log(time / default)).
    arms: dict[str, tuple[int, float]] = field(default_factory=dict)
    frontier: str = ""
    # The format the search computed the result in (inferred from the operands as given):
    # replaying a measurement on converted operands takes it as ``out_format``, since
    # inference on the converted formats may choose another.
    result_format: str = ""

    @property
    def schedule(self) -> str:
        """The chosen schedule's text (``""``: the compiler's default; a frontier member of two
        kernels: its ``pipeline.pipeline_text``, which ``pipeline.stages_of`` reads)."""
        return self.chosen.schedule

    @property
    def conversions(self) -> dict[str, str]:
        """Operands to convert before running the chosen schedule (name -> format text)."""
        return dict(self.chosen.conversions)

    @property
    def speedup(self) -> float:
        """The default schedule's time over the chosen one's (conversion included); a lower
        bound when the default was stopped over time (``default.stopped``)."""
        if self.chosen.total <= 0 or math.isinf(self.default.total):
            return 1.0
        return self.default.total / self.chosen.total

    def _speedup_text(self) -> str:
        return ("≥ " if self.default.stopped else "") + f"{self.speedup:.2f}x"

    @property
    def timed(self) -> list[Measurement]:
        """The schedules that were timed (compiled, checked and run)."""
        return [m for m in self.measurements if m.error is None]

    def _chosen_text(self) -> str:
        schedule = describe(self.chosen.schedule) or "(the default schedule)"
        converted = "".join(
            f"\n  convert {name} to {fmt} first" for name, fmt in self.conversions.items()
        )
        return schedule + converted

    def __str__(self) -> str:
        lines = [f"autoschedule {self.statement}"]
        if self.from_database:
            lines.append(
                f"  from the tuning database (tuned before in {self.tuning_seconds:.2f} s); "
                "nothing timed now"
            )
        else:
            size = "not counted" if self.space_size is None else f"{self.space_size} schedules"
            lines.append(
                f"  {len(self.measurements)} schedules timed in {self.tuning_seconds:.2f} s "
                f"({self.strategy}; space beyond the defaults: {size})"
            )
        if self.frontier:
            lines.append(f"  frontier: {self.frontier}")
        lines.append(f"  base candidates: {len(self.candidates)}")
        for c in self.candidates:
            lines.append(f"    {c.origin:<11} {c.schedule or '(default)'}")
        for variant, counts in self.space.items():
            dropped = ", ".join(f"{n} {k}" for n, k in sorted(counts.dropped_by.items()))
            lines.append(
                f"  space {variant}: {counts.loop_orders_kept}/{counts.loop_orders} loop orders "
                f"concordant, {counts.partitions_kept}/{counts.partitions} partitions "
                f"({counts.partitions_expanded} expanded: {counts.templates} templates of "
                f"{counts.mappings} naive mappings)" + (f" (dropped: {dropped})" if dropped else "")
            )
        stopped = f" or more ({self.default.error})" if self.default.stopped else ""
        lines.append(f"  default: {_ms(self.default.total)}{stopped}")
        lines.append(
            f"  chosen:  {_ms(self.chosen.total)}  ({self._speedup_text()})  {self._chosen_text()}"
        )
        if self.arms:
            lines.append("  arms drawn (schedules, geometric mean time / default):")
            for arm, (count, mean) in sorted(self.arms.items(), key=lambda a: a[1][1]):
                lines.append(f"    {count:>3}  {math.exp(mean):8.3g}  {arm}")
        if self.measurements:
            lines.append("  timed (fastest first):")
            for m in sorted(self.measurements, key=lambda m: m.total):
                what = m.error if m.error else _ms(m.total)
                conv = f" [{', '.join(f'{n}->{f}' for n, f in m.conversions.items())}]"
                lines.append(
                    f"    {what:>10}  {describe(m.schedule) or '(default)'}"
                    + (conv if m.conversions else "")
                )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>".format(
                html.escape(m.error or _ms(m.total)),
                html.escape(describe(m.schedule) or "(default)"),
                html.escape(", ".join(f"{n}→{f}" for n, f in m.conversions.items())),
                html.escape(m.origin),
            )
            for m in sorted(self.measurements, key=lambda m: m.total)
        )
        source = "the tuning database" if self.from_database else self.strategy
        return (
            f"<p><b>autoschedule</b> <code>{html.escape(self.statement)}</code>: "
            f"chosen <code>{html.escape(self._chosen_text())}</code>, "
            f"{html.escape(self._speedup_text())} the default ({html.escape(source)}, "
            f"{self.tuning_seconds:.2f} s)</p>"
            "<table><tr><th>time</th><th>schedule</th><th>conversions</th><th>origin</th></tr>"
            f"{rows}</table>"
        )

    def plot(self, ax: Any = None) -> Any:
        """A horizontal bar chart of the timed schedules (fastest at the top, the chosen one
        and the default marked); returns the matplotlib axes. Needs matplotlib."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("Report.plot needs matplotlib (pip install matplotlib)") from None
        timed = sorted(self.timed, key=lambda m: m.total, reverse=True)
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 0.3 * len(timed) + 1))
        labels = [
            (describe(m.schedule) or "(default)")[:60] + (" +conv" if m.conversions else "")
            for m in timed
        ]
        colors = [
            "tab:green" if m is self.chosen else "tab:gray" if m is self.default else "tab:blue"
            for m in timed
        ]
        ax.barh(range(len(timed)), [m.total * 1e3 for m in timed], color=colors)
        ax.set_yticks(range(len(timed)), labels, fontsize=7)
        ax.set_xlabel("milliseconds per call (conversion included)")
        ax.set_title(f"autoschedule {self.statement}: {self._speedup_text()} the default")
        return ax


def _ms(seconds: float) -> str:
    return "—" if math.isinf(seconds) else f"{seconds * 1e3:.3g} ms"
