"""Quality on the metrics pages: per run, the share of its top k from each quality grade
(dashboard) and the same for one query (drill-down), through the pages' section slots."""

from __future__ import annotations

import numpy as np

from quality.models import QualityDimension

from .gain import quality_shares


def _dimensions(project) -> list[QualityDimension]:
    return list(QualityDimension.objects.filter(project=project))


def _grades(dimension: QualityDimension) -> list[dict]:
    return [{"key": str(g), "label": label} for g, label in dimension.shown_labels]


def dashboard_section(*, project, membership, setting, rows) -> dict | None:
    """Per dimension, per shown run: the mean over the gold's queries of the share of the
    run's top k from each grade and from no judged source (``metrics.gain.quality_shares``)."""
    dimensions = _dimensions(project)
    if not dimensions or not rows:
        return None
    tables = []
    for dimension in dimensions:
        table = []
        for row in rows:
            shares = quality_shares(row["run"], setting.gold, setting.k, dimension)
            table.append(
                {
                    "run": row["run"],
                    "shares": [
                        {"key": key, "share": float(np.mean(values)) if values.size else None}
                        for key, values in shares.items()
                    ],
                }
            )
        tables.append({"dimension": dimension, "grades": _grades(dimension), "rows": table})
    return {"project": project, "setting": setting, "k": setting.k, "tables": tables}


def drilldown_section(*, project, membership, run, query, setting) -> dict | None:
    """The same shares for one query of the run."""
    dimensions = _dimensions(project)
    found = np.flatnonzero(setting.gold.query_pks == query.pk)
    if not dimensions or not found.size:
        return None
    position = int(found[0])
    tables = []
    for dimension in dimensions:
        shares = quality_shares(run, setting.gold, setting.k, dimension)
        tables.append(
            {
                "dimension": dimension,
                "grades": _grades(dimension),
                "shares": [
                    {"key": key, "share": float(values[position])} for key, values in shares.items()
                ],
            }
        )
    return {"k": setting.k, "tables": tables}


def register_all() -> None:
    from web.sections import register_section

    register_section("dashboard", "quality/partials/dashboard.html", dashboard_section)
    register_section("drilldown", "quality/partials/drilldown.html", drilldown_section)
