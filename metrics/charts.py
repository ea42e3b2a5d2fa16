"""Server-rendered SVG charts: small, dependency-free, escaped, downloadable as files."""

from __future__ import annotations

from django.utils.html import escape

WIDTH = 640
BAR = 22
GAP = 8
LABEL = 230


def _svg(height: int, body: str, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-label="{escape(title)}" '
        'font-family="sans-serif" font-size="12">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )


def bar_chart(title: str, rows: list[tuple[str, float, tuple[float, float] | None]]) -> str:
    """Horizontal bars in [0, 1], one per (label, value, interval or None)."""
    span = WIDTH - LABEL - 60
    parts = [f'<text x="4" y="14" font-weight="bold">{escape(title)}</text>']
    for i, (label, value, interval) in enumerate(rows):
        y = 24 + i * (BAR + GAP)
        width = max(0.0, min(1.0, value)) * span
        parts.append(
            f'<text x="4" y="{y + 15}">{escape(label[:36])}</text>'
            f'<rect x="{LABEL}" y="{y}" width="{width:.1f}" height="{BAR}" fill="#2457a6"/>'
            f'<text x="{LABEL + width + 4:.1f}" y="{y + 15}">{value:.4f}</text>'
        )
        if interval:
            low, high = (LABEL + max(0.0, min(1.0, v)) * span for v in interval)
            mid = y + BAR / 2
            parts.append(
                f'<line x1="{low:.1f}" x2="{high:.1f}" y1="{mid}" y2="{mid}" stroke="#111" '
                'stroke-width="1.5"/>'
            )
    return _svg(30 + len(rows) * (BAR + GAP), "".join(parts), title)


def histogram(title: str, values: list[float], bins: int = 10) -> str:
    """Distribution of per-query values in [0, 1]."""
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, max(0, int(value * bins)))] += 1
    top = max(counts) or 1
    height, base = 180, 150
    step = (WIDTH - 40) / bins
    parts = [f'<text x="4" y="14" font-weight="bold">{escape(title)}</text>']
    for i, count in enumerate(counts):
        h = 120 * count / top
        x = 20 + i * step
        parts.append(
            f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{step - 4:.1f}" height="{h:.1f}" '
            f'fill="#2457a6"><title>{i / bins:.1f}–{(i + 1) / bins:.1f}: {count}</title></rect>'
            f'<text x="{x:.1f}" y="{base + 14}">{i / bins:.1f}</text>'
            f'<text x="{x:.1f}" y="{base - h - 3:.1f}">{count}</text>'
        )
    return _svg(height, "".join(parts), title)


def delta_chart(title: str, deltas: list[float]) -> str:
    """Per-query differences, sorted: wins above the axis, losses below."""
    values = sorted(deltas, reverse=True)
    height, middle = 200, 100
    top = max((abs(v) for v in values), default=1.0) or 1.0
    step = (WIDTH - 20) / max(len(values), 1)
    parts = [
        f'<text x="4" y="14" font-weight="bold">{escape(title)}</text>',
        f'<line x1="10" x2="{WIDTH - 10}" y1="{middle}" y2="{middle}" stroke="#999"/>',
    ]
    for i, value in enumerate(values):
        h = 80 * abs(value) / top
        y = middle - h if value > 0 else middle
        colour = "#2e7d32" if value > 0 else "#c62828"
        parts.append(
            f'<rect x="{10 + i * step:.2f}" y="{y:.1f}" width="{max(step - 0.5, 0.5):.2f}" '
            f'height="{h:.1f}" fill="{colour}"/>'
        )
    return _svg(height, "".join(parts), title)
