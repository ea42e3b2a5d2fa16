"""Inter-annotator agreement, vectorised over all items. Numpy and the standard library only.

- ``table``   the checked label arrays (``labels`` → ``Labels``) and their count table;
- ``kappa``   percent agreement, Cohen's kappa (unweighted, linear, quadratic) and
  confusion matrices, Fleiss' kappa;
- ``alpha``   Krippendorff's alpha, one distance function per level (``DISTANCES``);
- ``spans``   character-level F1 of marked passages;
- ``paired``  people against one other rater (an LLM judge), with bootstrap intervals;
- ``report``  every coefficient at once, annotators named: the report the agreement
  command and the agreement page share (``build_report``).

Coefficients take a ``Labels`` bundle, or an items × categories table as ``counts=``
where that is all they need. Every coefficient returns ``None`` where it is not defined —
no pairable labels, or no expected disagreement (everyone used one same category, so
chance agreement is total) — and never a silent 0.
"""

from __future__ import annotations

from .alpha import (
    DISTANCES,
    LEVELS,
    alpha_per_query,
    coincidences,
    krippendorff_alpha,
    total_coincidences,
)
from .kappa import (
    KAPPA_WEIGHTS,
    WEIGHTS,
    cohen_kappa,
    cohen_kappa_from_confusion,
    confusion_matrix,
    fleiss_kappa,
    pairwise,
    percent_agreement,
    percent_agreement_per_query,
)
from .paired import compare_raters
from .report import (
    Report,
    agreement_report,
    build_report,
    per_query,
    report_of_rows,
    summary,
    support,
)
from .spans import span_f1
from .table import Labels, counts, labels

__all__ = [
    "DISTANCES",
    "KAPPA_WEIGHTS",
    "LEVELS",
    "WEIGHTS",
    "Labels",
    "Report",
    "agreement_report",
    "alpha_per_query",
    "build_report",
    "cohen_kappa",
    "cohen_kappa_from_confusion",
    "coincidences",
    "compare_raters",
    "confusion_matrix",
    "counts",
    "fleiss_kappa",
    "krippendorff_alpha",
    "labels",
    "pairwise",
    "per_query",
    "percent_agreement",
    "percent_agreement_per_query",
    "report_of_rows",
    "span_f1",
    "summary",
    "support",
    "total_coincidences",
]
