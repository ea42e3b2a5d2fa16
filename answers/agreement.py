"""Agreement between people on answer judgements, per aspect: how many targets two or more
people judged, percent agreement, Cohen's kappa of each pair (unweighted and linear) and
Krippendorff's alpha (nominal and ordinal), each from ``numerics.agreement`` — the same
coefficients as relevance labels. Pseudo-annotators (judge versions, assessor sets) are
left out; a target is (answer, aspect, nugget / citation / sentence)."""

from __future__ import annotations

import numpy as np

from annotator.access import sees_all_labels
from annotator.models import Membership
from numerics.agreement.alpha import krippendorff_alpha
from numerics.agreement.kappa import pairwise, percent_agreement
from numerics.agreement.table import labels

from .models import TOP_VALUE, AnswerJudgment, Aspect


def aspect_agreement(project, aspect: str) -> dict:
    """``{"aspect", "targets", "shared", "percent", "alpha_nominal", "alpha_ordinal",
    "pairs": [{"a", "b", "n", "kappa", "kappa_linear"}]}`` over people's judgements."""
    pseudo = Membership.objects.filter(project=project, is_pseudo=True).values("user_id")
    rows = list(
        AnswerJudgment.objects.filter(answer__run__project=project, aspect=aspect)
        .exclude(annotator_id__in=pseudo)
        .values_list(
            "answer_id", "nugget_id", "citation_id", "sentence_id", "annotator__username", "value"
        )
    )
    targets = {key: i for i, key in enumerate(sorted({r[:4] for r in rows}, key=str))}
    names = sorted({r[4] for r in rows})
    result = {"aspect": aspect, "targets": len(targets), "annotators": names, "pairs": []}
    if len(names) < 2:
        return {
            **result,
            "shared": 0,
            "percent": None,
            "alpha_nominal": None,
            "alpha_ordinal": None,
        }
    data = labels(
        np.array([targets[r[:4]] for r in rows], dtype=np.int64),
        np.array([names.index(r[4]) for r in rows], dtype=np.int64),
        np.array([r[5] for r in rows], dtype=np.int64),
        n_categories=TOP_VALUE[Aspect(aspect)] + 1,
        n_items=len(targets),
        n_annotators=len(names),
    )
    shared = int((np.bincount(data.item, minlength=data.n_items) >= 2).sum())
    result["pairs"] = [
        {
            "a": names[p["a"]],
            "b": names[p["b"]],
            "n": p["n"],
            "kappa": p["cohen_kappa"],
            "kappa_linear": p["cohen_kappa_linear"],
        }
        for p in pairwise(data)
    ]
    return {
        **result,
        "shared": shared,
        "percent": percent_agreement(data) if shared else None,
        "alpha_nominal": krippendorff_alpha(data, level="nominal") if shared else None,
        "alpha_ordinal": krippendorff_alpha(data, level="ordinal") if shared else None,
    }


def agreement(project) -> list[dict]:
    """Every aspect's agreement, in the order of ``Aspect``."""
    return [aspect_agreement(project, aspect.value) for aspect in Aspect]


def agreement_section(*, project, membership, params=None) -> dict | None:
    """The answers' part of the agreement page and of the answer-runs page: every aspect's
    agreement, named for the screen; None for a member who may not see each person's
    judgements, or a project without answer judgements."""
    from .presenting import ASPECT_LABELS

    if not sees_all_labels(membership):
        return None
    if not AnswerJudgment.objects.filter(answer__run__project=project).exists():
        return None
    rows = [{**row, "label": ASPECT_LABELS[row["aspect"]]} for row in agreement(project)]
    return {"project": project, "rows": rows}
