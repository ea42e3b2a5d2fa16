"""A chart is at least as wide as its caption, which names the label sources it stands on
(long with several sources, and in Chinese), so the caption is never cut off."""

from __future__ import annotations

import re

import pytest

from metrics import charts

CAPTIONS = [
    "nDCG@10 · c · labels of people · imported assessors · judge fake (latest version)",
    "nDCG@10 · c · 人工 · 导入的评估者 · 评审模型 fake（最新版本）的标注",
]


@pytest.mark.parametrize("caption", CAPTIONS)
def test_every_chart_is_as_wide_as_its_caption(caption):
    rows = [("bm25", [0.5], [(0.4, 0.6)]), ("dense", [0.7], [(0.6, 0.8)])]
    drawn = [
        charts.bar_chart(caption, ["nDCG@10"], rows),
        charts.histogram(caption, [0.1, 0.5, 0.9]),
        charts.delta_chart(caption, [0.1, -0.2]),
    ]
    # Bold 13 px: a CJK character is about 13 px wide, a Latin one at most about 8.
    needed = sum(13 if ord(ch) > 0x2E7F else 7.8 for ch in caption)
    for svg in drawn:
        width = float(re.search(r'width="([0-9.]+)"', svg).group(1))
        assert width >= needed
