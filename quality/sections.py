"""What the quality app shows on the pages below it: per run, the share of its top k from
each quality grade (dashboard, drill-down), and agreement per dimension (agreement page)."""

from __future__ import annotations

import numpy as np

from annotator.access import sees_all_labels

from .agreement import dimension_agreement
from .models import QualityDimension


def _dimensions(project) -> list[QualityDimension]:
    return list(QualityDimension.objects.filter(project=project))


def _grades(dimension: QualityDimension) -> list[dict]:
    return [{"key": str(g), "label": label} for g, label in dimension.shown_labels]


def dashboard_section(*, project, membership, setting, rows) -> dict | None:
    """Per dimension, per shown run: the mean over the gold's queries of the share of the
    run's top k from each grade and from no judged source (``metrics.gain.quality_shares``)."""
    from metrics.gain import quality_shares

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
    from metrics.gain import quality_shares

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


def agreement_section(*, project, membership, params=None) -> dict | None:
    """Cohen's κ per annotator pair and Krippendorff's α of every dimension's grades; None
    for a member who may not see each person's grades or a project without dimensions."""
    if not sees_all_labels(membership):
        return None
    dimensions = _dimensions(project)
    if not dimensions:
        return None
    return {
        "rows": [
            {"dimension": dimension, "agreement": _shown(dimension_agreement(dimension))}
            for dimension in dimensions
        ]
    }


def _finite(value):
    return None if value is None or not np.isfinite(value) else float(value)


def _shown(agreement: dict) -> dict:
    """Undefined coefficients (NaN: no two grades of one source, a single category) as None."""
    alpha = {level: _finite(v) for level, v in agreement["krippendorff_alpha"].items()}
    pairs = [
        {**p, **{k: _finite(p[k]) for k in ("cohen_kappa", "cohen_kappa_linear")}}
        for p in agreement["pairs"]
    ]
    return {**agreement, "krippendorff_alpha": alpha, "pairs": pairs}


def register_all() -> None:
    from web.sections import register_section

    register_section("dashboard", "quality/partials/dashboard.html", dashboard_section)
    register_section("drilldown", "quality/partials/drilldown.html", drilldown_section)
    register_section("agreement", "quality/partials/agreement.html", agreement_section)
