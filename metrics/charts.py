"""Every chart of the metric pages, drawn as escaped SVG by one set of primitives.

Bar charts (one or several measures per run, with interval whiskers), histograms of
per-query values, per-query delta charts and a series' trend chart share the same value
axis: ticks at round steps scaled to the data (``nice_ticks``), grid lines, numbers on
the axis. Value labels sit above the whiskers, never on them; run names are written in
full on a slant, and the chart grows to hold them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

PALETTE = ["#2457a6", "#e07b00", "#2e7d32", "#8e24aa", "#c62828", "#00838f", "#6d4c41"]
PLOT_HEIGHT = 220
LEFT = 64  # room for the axis numbers
CHAR = 6.4  # average character width at font-size 12, for laying out names
MAX_NAME = 60  # characters of a name drawn; the full name is in a tooltip


@dataclass(frozen=True)
class Axis:
    """A value axis from ``low`` to ``high`` drawn over ``length`` pixels from ``origin``
    (values grow upwards: larger value, smaller y)."""

    ticks: list[float]
    origin: float
    length: float

    @property
    def low(self) -> float:
        return self.ticks[0]

    @property
    def high(self) -> float:
        return self.ticks[-1]

    def y(self, value: float) -> float:
        span = (self.high - self.low) or 1.0
        clipped = min(max(value, self.low), self.high)
        return self.origin - (clipped - self.low) / span * self.length


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]: steps of 1, 2, 2.5 or 5 × 10^n."""
    if not (math.isfinite(low) and math.isfinite(high)):
        low, high = 0.0, 1.0
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step + 1e-9) * step
    ticks = []
    value = first
    while value < high - 1e-9 * step:
        ticks.append(value)
        value += step
    ticks.append(value)
    digits = max(0, -math.floor(math.log10(step)) + (1 if step / magnitude == 2.5 else 0))
    return [round(t, digits + 2) for t in ticks] if len(ticks) > 1 else [first, first + step]


def _number(value: float) -> str:
    return f"{value:.4g}" if value else "0"


def _title_width(title: str) -> float:
    """About how wide the bold 13 px title is: a CJK character about a square, other
    characters about 0.62 of one."""
    return sum(13.0 if ord(ch) > 0x2E7F else 8.1 for ch in title)


def _svg(width: float, height: float, body: str, title: str) -> str:
    width = max(width, _title_width(title) + 8)  # the caption is never cut off
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{escape(title)}" '
        'font-family="sans-serif" font-size="12">'
        f'<title>{escape(title)}</title><rect width="100%" height="100%" fill="#fff"/>'
        f'<text x="4" y="16" font-weight="bold" font-size="13">{escape(title)}</text>{body}</svg>'
    )


def _axis(axis: Axis, right: float, label: str = "") -> str:
    """Tick labels and grid lines of a value axis, from LEFT to ``right``."""
    parts = []
    for tick in axis.ticks:
        y = axis.y(tick)
        colour = "#555" if tick == 0 else "#ddd"
        parts.append(
            f'<line x1="{LEFT}" x2="{right:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{colour}"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
            f"{_number(tick)}</text>"
        )
    if label:
        middle = axis.origin - axis.length / 2
        parts.append(
            f'<text transform="translate(12 {middle:.1f}) rotate(-90)" text-anchor="middle">'
            f"{escape(label)}</text>"
        )
    return "".join(parts)


def _legend(names: list[str], x: float, y: float) -> str:
    parts = []
    for i, name in enumerate(names):
        parts.append(
            f'<rect x="{x:.1f}" y="{y + i * 16:.1f}" width="10" height="10" '
            f'fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{x + 14:.1f}" y="{y + i * 16 + 9:.1f}">{escape(name)}</text>'
        )
    return "".join(parts)


def _slanted_names(names: list[str], centres: list[float], y: float) -> str:
    """Category names written in full (up to MAX_NAME characters) on a 35° slant, down and
    to the right of their bar."""
    parts = []
    for name, x in zip(names, centres, strict=True):
        parts.append(
            f'<text transform="translate({x - 4:.1f} {y:.1f}) rotate(35)" '
            f'class="name"><title>{escape(name)}</title>{escape(_shown(name))}</text>'
        )
    return "".join(parts)


def _shown(name: str) -> str:
    return name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + "…"


def _name_extent(names: list[str]) -> tuple[float, float]:
    """(height below the axis, width right of its bar) the slanted names need."""
    longest = max((len(_shown(n)) for n in names), default=0) * CHAR
    return 24 + longest * math.sin(math.radians(35)), longest * math.cos(math.radians(35))


Interval = tuple[float, float] | None


def bar_chart(
    title: str,
    measures: list[str],
    rows: list[tuple[str, list[float], list[Interval]]],
) -> str:
    """Grouped vertical bars: for each (name, values, intervals) one bar per measure,
    with its 95 % whisker and its value written above the whisker."""
    top_value = max(
        (
            max(v, i[1] if i else v)
            for _n, values, ivs in rows
            for v, i in zip(values, ivs, strict=True)
        ),
        default=1.0,
    )
    low_value = min((min(values) for _n, values, _i in rows), default=0.0)
    ticks = nice_ticks(min(0.0, low_value), top_value or 1.0)
    group = max(28.0, 22.0 * len(measures) + 12)
    width = max(480.0, LEFT + group * len(rows) + 24 + (120 if len(measures) > 1 else 0))
    head = 40 + (16 * len(measures) if len(measures) > 1 else 0)
    label_room = 52  # rotated value labels above the whiskers
    axis = Axis(ticks, head + label_room + PLOT_HEIGHT, PLOT_HEIGHT)
    plot_right = LEFT + group * len(rows) + 8
    parts = [_axis(axis, plot_right, measures[0] if len(measures) == 1 else "")]
    if len(measures) > 1:
        parts.append(_legend(measures, LEFT, 28))
    bar = (group - 12) / max(len(measures), 1)
    centres = []
    for r, (_name, values, intervals) in enumerate(rows):
        x0 = LEFT + 8 + r * group
        centres.append(x0 + (group - 12) / 2)
        for m, (value, interval) in enumerate(zip(values, intervals, strict=True)):
            x = x0 + m * bar
            y, base = axis.y(value), axis.y(max(ticks[0], 0.0))
            colour = PALETTE[m % len(PALETTE)]
            parts.append(
                f'<rect x="{x:.1f}" y="{min(y, base):.1f}" width="{bar - 2:.1f}" '
                f'height="{abs(base - y):.1f}" fill="{colour}" data-measure="{escape(measures[m])}"'
                f' data-value="{value!r}"><title>{escape(measures[m])}: {value:.4f}</title></rect>'
            )
            whisker_top = y
            if interval:
                lo, hi = axis.y(interval[0]), axis.y(interval[1])
                cx = x + (bar - 2) / 2
                whisker_top = min(hi, y)
                parts.append(
                    f'<path d="M{cx:.1f} {lo:.1f}V{hi:.1f}M{cx - 3:.1f} {hi:.1f}h6M{cx - 3:.1f} '
                    f'{lo:.1f}h6" stroke="#111" stroke-width="1.2" fill="none"/>'
                )
            parts.append(
                f'<text transform="translate({x + bar / 2 + 3:.1f} {whisker_top - 4:.1f}) '
                f'rotate(-90)" class="value">{value:.4f}</text>'
            )
    names = [name for name, _v, _i in rows]
    parts.append(_slanted_names(names, centres, axis.origin + 12))
    below, right = _name_extent(names)
    width = max(width, centres[-1] + right + 8) if centres else width
    return _svg(width, axis.origin + below, "".join(parts), title)


def histogram(title: str, values: list[float], bins: int = 10) -> str:
    """Distribution of per-query values in [0, 1]: counts on the value axis."""
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, max(0, int(value * bins)))] += 1
    axis = Axis(nice_ticks(0, max(counts, default=0) or 1), 40 + 20 + PLOT_HEIGHT, PLOT_HEIGHT)
    step = 52.0
    right = LEFT + step * bins + 8
    parts = [_axis(axis, right, _("number of queries"))]
    for i, count in enumerate(counts):
        x, y = LEFT + 8 + i * step, axis.y(count)
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{step - 4:.1f}" height="{axis.origin - y:.1f}" '
            f'fill="{PALETTE[0]}"><title>{i / bins:.1f}–{(i + 1) / bins:.1f}: {count}</title>'
            f'</rect><text x="{x + step / 2 - 2:.1f}" y="{y - 4:.1f}" text-anchor="middle">'
            f"{count}</text>"
            f'<text x="{x:.1f}" y="{axis.origin + 14:.1f}" text-anchor="middle">{i / bins:.1f}'
            "</text>"
        )
    parts.append(
        f'<text x="{right - 2:.1f}" y="{axis.origin + 14:.1f}" text-anchor="end">1.0</text>'
    )
    return _svg(right + 16, axis.origin + 30, "".join(parts), title)


def delta_chart(title: str, deltas: list[float], measure: str = "") -> str:
    """Per-query differences, sorted: wins above zero, losses below, on a symmetric axis."""
    values = sorted(deltas, reverse=True)
    top = max((abs(v) for v in values), default=0.0) or 0.1
    ticks = nice_ticks(-top, top, 6)
    axis = Axis(ticks, 40 + PLOT_HEIGHT, PLOT_HEIGHT)
    width = max(480.0, LEFT + 3.0 * len(values) + 24)
    step = (width - LEFT - 16) / max(len(values), 1)
    parts = [_axis(axis, width - 8, f"Δ {measure}" if measure else "Δ")]
    zero = axis.y(0)
    for i, value in enumerate(values):
        y = axis.y(value)
        colour = "#2e7d32" if value > 0 else "#c62828"
        parts.append(
            f'<rect x="{LEFT + 4 + i * step:.2f}" y="{min(y, zero):.1f}" '
            f'width="{max(step - 0.5, 0.5):.2f}" height="{abs(zero - y):.1f}" fill="{colour}"/>'
        )
    wins = sum(v > 0 for v in values)
    losses = sum(v < 0 for v in values)
    sorted_queries = ngettext("%(n)s query, sorted", "%(n)s queries, sorted", len(values)) % {
        "n": len(values)
    }
    counts = _("%(queries)s · %(better)s better · %(equal)s equal · %(worse)s worse") % {
        "queries": sorted_queries,
        "better": wins,
        "equal": len(values) - wins - losses,
        "worse": losses,
    }
    parts.append(f'<text x="{LEFT}" y="{axis.origin + 16:.1f}">{escape(counts)}</text>')
    return _svg(width, axis.origin + 28, "".join(parts), title)


def trend_chart(
    title: str, measures: list[str], points: list[tuple[str, list[float], list[Interval]]]
) -> str:
    """A series over time: one line per measure through the builds (in order), each point
    with its interval."""
    highs = [i[1] if i else v for _n, vs, ivs in points for v, i in zip(vs, ivs, strict=True)]
    lows = [i[0] if i else v for _n, vs, ivs in points for v, i in zip(vs, ivs, strict=True)]
    ticks = nice_ticks(min(lows, default=0.0), max(highs, default=1.0))
    head = 40 + 16 * len(measures)
    axis = Axis(ticks, head + PLOT_HEIGHT, PLOT_HEIGHT)
    step = max(40.0, 400.0 / max(len(points), 1))
    width = max(480.0, LEFT + step * len(points) + 24)
    parts = [_axis(axis, width - 8), _legend(measures, LEFT, 28)]
    centres = [LEFT + step / 2 + i * step for i in range(len(points))]
    for m, measure in enumerate(measures):
        colour = PALETTE[m % len(PALETTE)]
        path = []
        for i, (_name, values, intervals) in enumerate(points):
            x, y = centres[i], axis.y(values[m])
            path.append(f"{'M' if i == 0 else 'L'}{x:.1f} {y:.1f}")
            if intervals[m]:
                lo, hi = axis.y(intervals[m][0]), axis.y(intervals[m][1])
                parts.append(
                    f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{lo:.1f}" y2="{hi:.1f}" '
                    f'stroke="{colour}" stroke-opacity="0.5" stroke-width="3"/>'
                )
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}" '
                f'data-measure="{escape(measure)}" data-value="{values[m]!r}">'
                f"<title>{escape(measure)}: {values[m]:.4f}</title></circle>"
            )
        parts.append(f'<path d="{"".join(path)}" stroke="{colour}" fill="none"/>')
    names = [name for name, _v, _i in points]
    parts.append(_slanted_names(names, centres, axis.origin + 12))
    below, right = _name_extent(names)
    width = max(width, centres[-1] + right + 8) if centres else width
    return _svg(width, axis.origin + below, "".join(parts), title)
