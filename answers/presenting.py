"""How answer measures and judgement levels are named on screens (translated)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from .metrics import MEASURES

MEASURE_LABELS = {
    "all_strict": _("All strict"),
    "all_weak": _("All weak"),
    "vital_strict": _("Vital strict"),
    "vital_weak": _("Vital weak"),
    "coverage_needed": _("Citation coverage (of sentences needing one)"),
    "coverage_all": _("Citation coverage (of all sentences)"),
    "support_precision_strict": _("Support precision (strict)"),
    "support_precision_weak": _("Support precision (weak)"),
    "citation_recall": _("Citation recall"),
    "citation_validity": _("Citation validity (gold evidence)"),
    "crag": _("CRAG score"),
    "correct": _("Correct"),
}

LEVEL_LABELS = {
    "support": _("support"),
    "partial": _("partial"),
    "not": _("not"),
    "full": _("full"),
    "none": _("none"),
    "yes": _("yes"),
    "no": _("no"),
    "perfect": _("perfect"),
    "acceptable": _("acceptable"),
    "missing": _("missing"),
    "incorrect": _("incorrect"),
}


ASPECT_LABELS = {
    "nugget": _("Nugget support"),
    "support": _("Citation support"),
    "needs_citation": _("Needs a citation"),
    "crag": _("Answer grade (CRAG)"),
}


def measure_columns() -> list[tuple[str, str]]:
    return [(name, MEASURE_LABELS[name]) for name in MEASURES]
