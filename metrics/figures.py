"""Figures of runs that apps above metrics compute (nugget measures …), registered when
they start: the columns they add to the metric tables (downloads, ``export_metrics``) and
the block they add to the API's metrics of a run. Metrics never imports those apps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .evaluation import EvaluationSetting
    from .models import Run


@dataclass(frozen=True)
class RunFigures:
    """``means(setting, runs)``: (header, {run pk: cells}) added to the means table;
    ``per_query(setting, run)``: (header, {query pk: cells}) added to a run's per-query
    table; ``api(setting, run)``: the value of the API answer's key ``name`` (None: left
    out). Each sees the setting the dashboard built, so the same gold and mapping."""

    name: str
    means: Callable[[EvaluationSetting, list[Run]], tuple[list[str], dict[int, list]]]
    per_query: Callable[[EvaluationSetting, Run], tuple[list[str], dict[int, list]]]
    api: Callable[[EvaluationSetting, Run], dict | None]


_FIGURES: dict[str, RunFigures] = {}


def register_figures(figures: RunFigures) -> None:
    _FIGURES[figures.name] = figures


def figures() -> list[RunFigures]:
    return list(_FIGURES.values())
