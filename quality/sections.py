"""What the quality app shows on the pages below it: agreement per dimension (agreement
page). The shares of a run's top k by grade are metrics' sections (metrics.quality_sections):
they evaluate runs, which sit above quality."""

from __future__ import annotations

import numpy as np

from annotator.access import sees_all_labels
from annotator.sources import SourcesError, resolve_sources

from .agreement import dimension_agreement
from .models import QualityDimension


def _dimensions(project) -> list[QualityDimension]:
    return list(QualityDimension.objects.filter(project=project))


def _grades(dimension: QualityDimension) -> list[dict]:
    return [{"key": str(g), "label": label} for g, label in dimension.shown_labels]


def agreement_section(*, project, membership, params=None) -> dict | None:
    """Cohen's κ per annotator pair and Krippendorff's α of every dimension's grades; None
    for a member who may not see each person's grades or a project without dimensions.

    The grades that count follow the page's choice of label sources (``?sources=``, by
    ``annotator.sources.resolve_sources``; ``people,assessors`` by default), as the
    relevance agreement above them does."""
    if not sees_all_labels(membership):
        return None
    dimensions = _dimensions(project)
    if not dimensions:
        return None
    try:
        sources = resolve_sources(project, (params or {}).get("sources"))
    except SourcesError:  # the page refuses these sources before drawing its sections
        return None
    return {
        "sources": sources,
        "project": project,
        "rows": [
            {
                "dimension": dimension,
                "agreement": _shown(dimension_agreement(dimension, sources=sources)),
            }
            for dimension in dimensions
        ],
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

    register_section("agreement", "quality/partials/agreement.html", agreement_section)
