"""Agreement on a quality dimension: the annotators' grades of the same sources.

The items are what a dimension is graded on (documents, or sites): Cohen's kappa for every
annotator pair over the items both graded, and Krippendorff's alpha over all of them, by
the same numeric code as relevance agreement (``numerics.agreement``; equal to
scikit-learn's ``cohen_kappa_score`` and ``krippendorff.alpha``, tested).
"""

from __future__ import annotations

from numerics.agreement.alpha import krippendorff_alpha
from numerics.agreement.kappa import pairwise
from numerics.agreement.table import labels

from .models import QualityDimension, QualityGrade

LEVELS = ("nominal", "ordinal", "interval")


def dimension_agreement(dimension: QualityDimension, *, sources=None) -> dict:
    """``{"dimension", "annotators", "items", "pairs": [{"a", "b", "n", "cohen_kappa",
    "cohen_kappa_linear", "cohen_kappa_quadratic", "confusion"}], "krippendorff_alpha":
    {level: α}}`` of the grades that count (``sources``: an ``annotator.sources.Sources``;
    everyone's when None); annotators by name, pairs a < b in name order."""
    grades = QualityGrade.objects.filter(dimension=dimension)
    if sources is not None:
        grades = sources.judgments(grades)
    rows = list(grades.values_list("annotator__username", "document_id", "site", "grade"))
    names = sorted({r[0] for r in rows})
    items = sorted({(r[1] or 0, r[2]) for r in rows})
    item_code = {item: i for i, item in enumerate(items)}
    name_code = {name: i for i, name in enumerate(names)}
    data = labels(
        [item_code[(r[1] or 0, r[2])] for r in rows],
        [name_code[r[0]] for r in rows],
        [r[3] for r in rows],
        n_categories=dimension.max_grade + 1,
        n_items=len(items),
        n_annotators=len(names),
    )
    pairs = [{**p, "a": names[p["a"]], "b": names[p["b"]]} for p in pairwise(data)]
    return {
        "dimension": dimension.key,
        "annotators": names,
        "items": len(items),
        "pairs": pairs,
        "krippendorff_alpha": {
            level: krippendorff_alpha(data, level=level) if rows else None for level in LEVELS
        },
    }
