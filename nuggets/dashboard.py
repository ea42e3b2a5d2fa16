"""Nugget measures where runs are measured: the dashboard's section (table and chart), the
drill-down's covered nuggets, the metric tables' columns and the API's block."""

from __future__ import annotations

import math

from django.utils.translation import gettext as _

from annotator.models import Query
from metrics import charts
from metrics.evaluation import EvaluationSetting
from metrics.figures import RunFigures
from metrics.models import Run

from .evaluation import NuggetSetting, nugget_measures


def _finite(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def dashboard_section(*, project, membership, setting: EvaluationSetting, rows) -> dict | None:
    """Means with intervals of every shown run, over the queries that have nuggets."""
    nuggets = NuggetSetting.of(project, setting)
    if not nuggets.n_queries or not rows:
        return None
    names = nugget_measures(setting.k)
    table = []
    for row in rows:
        scores = nuggets.scores(row["run"], names)
        cells = []
        for name in names:
            interval = scores.intervals[name]
            cells.append(
                {
                    "name": name,
                    "mean": scores.mean(name),
                    "low": interval[0] if interval else None,
                    "high": interval[1] if interval else None,
                }
            )
        table.append({"run": row["run"], "level": scores.level, "cells": cells, "scores": scores})
    shown = names[:2]
    chart = charts.bar_chart(
        _("Nugget recall at %(k)s") % {"k": setting.k},
        shown,
        [
            (
                r["run"].name,
                [r["scores"].mean(n) or 0.0 for n in shown],
                [r["scores"].intervals[n] for n in shown],
            )
            for r in sorted(
                table, key=lambda r: (-(r["scores"].mean(names[0]) or 0), r["run"].name)
            )
        ],
    )
    return {
        "names": names,
        "rows": table,
        "n_queries": nuggets.n_queries,
        "n_vital_queries": nuggets.n_vital_queries,
        "n_total": Query.objects.filter(project=project).count(),
        "chart": chart,
        "setting": setting,
        "project": project,
        "source": nuggets.rows.source,
    }


def drilldown_section(*, project, membership, run: Run, query, setting: EvaluationSetting):
    """The query's nuggets, each with the ranks of the run's units that cover it."""
    nuggets = NuggetSetting.of(project, setting)
    if not nuggets.rows.of_query(query.pk).size:
        return None
    depth = max(setting.k, 20)
    items = nuggets.covered_ranks(run, query.pk, depth)
    scores = nuggets.scores(run)
    position = int((scores.query_pks == query.pk).argmax())
    values = [(name, _finite(float(scores.values[name][position]))) for name in scores.values]
    return {
        "items": items,
        "values": values,
        "k": setting.k,
        "depth": depth,
        "level": scores.level,
        "n_covered": sum(1 for i in items if i["first"] is not None and i["first"] <= setting.k),
    }


def _means(setting: EvaluationSetting, runs: list[Run]) -> tuple[list[str], dict[int, list]]:
    project = setting.project
    names = nugget_measures(setting.k)
    header = [*names, "nugget queries"]
    if project is None:
        return header, {}
    nuggets = NuggetSetting.of(project, setting)
    if not nuggets.n_queries:
        return [], {}
    found = {}
    for run in runs:
        scores = nuggets.scores(run, names)
        found[run.pk] = [scores.mean(n) for n in names] + [nuggets.n_queries]
    return header, found


def _per_query(setting: EvaluationSetting, run: Run) -> tuple[list[str], dict[int, list]]:
    project = setting.project
    names = nugget_measures(setting.k)
    if project is None:
        return names, {}
    nuggets = NuggetSetting.of(project, setting)
    if not nuggets.n_queries:
        return [], {}
    scores = nuggets.scores(run, names)
    return names, {
        int(pk): [_finite(float(scores.values[n][i])) for n in names]
        for i, pk in enumerate(scores.query_pks.tolist())
    }


def _api(setting: EvaluationSetting, run: Run) -> dict | None:
    project = setting.project
    if project is None:
        return None
    nuggets = NuggetSetting.of(project, setting)
    if not nuggets.n_queries:
        return None
    names = nugget_measures(setting.k)
    scores = nuggets.scores(run, names)
    qids = dict(Query.objects.filter(pk__in=scores.query_pks.tolist()).values_list("pk", "qid"))
    return {
        "level": scores.level,
        "queries": nuggets.n_queries,
        "of": Query.objects.filter(project=project).count(),
        "mean": {n: scores.mean(n) for n in names},
        "counted": {n: scores.counted(n) for n in names},
        "interval": {n: scores.intervals[n] for n in names},
        "per_query": {
            qids[int(pk)]: {n: _finite(float(scores.values[n][i])) for n in names}
            for i, pk in enumerate(scores.query_pks.tolist())
        },
    }


FIGURES = RunFigures("nuggets", _means, _per_query, _api)
