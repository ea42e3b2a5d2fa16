"""Where people matter most: queries ordered by the judge's disagreement with people, or by
how unsure the judge was. Registered with ``annotator.queue_order`` when the app starts.

The judge is the newest judge version with labels in the project. Disagreement of a
query: Σ |judge − people| over the documents both graded (labels lifted to documents);
for a member who labels blind, "people" is that member alone, so the order never tells
them how anybody else graded.
Unsureness: the number of the judge's grades whose probability (from token
log-probabilities) is below ``UNSURE_BELOW``, or, where the endpoint gave none, that are
1 or 2 — the middle of the scale, where the judge hesitates most.
"""

from __future__ import annotations

import numpy as np
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.access import sees_all_labels
from annotator.models import Judgment, Membership, Project
from annotator.sources import PEOPLE, resolve_sources
from gold.policy import resolve_mapping
from gold.units import DOCUMENTS, annotator_unit_grades, live_labels, unit_grades, units_for_level

from .models import JudgePair, JudgeVersion, PairStatus

UNSURE_BELOW = 0.75
DISAGREE = "judge-disagrees"
UNSURE = "judge-unsure"


def newest_version(project: Project) -> JudgeVersion | None:
    with_labels = Judgment.objects.filter(query__project=project).values("annotator_id")
    return (
        JudgeVersion.objects.filter(judge__project=project, annotator_id__in=with_labels)
        .order_by("-created_at", "-pk")
        .first()
    )


def _grades(project: Project, sources, units, mapping, *, adjudicated: bool, only=None):
    """(query, unit, grade) of the labels of ``sources`` at ``units``: their consensus
    (with adjudications first), or each unit's highest label (one judge version's; with
    ``only``, one member's). Labels given while a judge's suggestion was on screen are
    left out: they would flatter the judge."""
    names = [only] if only is not None else None
    labels = live_labels(
        project, sources=sources, annotators=names, adjudicated=adjudicated, post_edited=False
    )
    if adjudicated:
        grades = unit_grades(labels, units, mapping=mapping)
        return grades.query, grades.unit, grades.grade
    query, unit, _source, grade = annotator_unit_grades(labels, units, mapping)
    return query, unit, grade


def disagreement(
    project: Project, query_pks: list[int], membership: Membership
) -> dict[int, float]:
    version = newest_version(project)
    if version is None:
        return {}
    units = units_for_level(project, DOCUMENTS)
    mapping = resolve_mapping(project)
    people = resolve_sources(project, (PEOPLE,))
    if sees_all_labels(membership):
        people_query, people_unit, people_grade = _grades(
            project, people, units, mapping, adjudicated=True
        )
    else:  # a member who labels blind: "people" is that member alone
        people_query, people_unit, people_grade = _grades(
            project,
            people,
            units,
            mapping,
            adjudicated=False,
            only=membership.user.get_username(),
        )
    judge = resolve_sources(project, f"judge:{version.judge.slug}@{version.number}")
    query, unit, grade = _grades(project, judge, units, mapping, adjudicated=False)
    n = max(len(units.ids), 1)
    _shared, mine, theirs = np.intersect1d(
        people_query * n + people_unit, query * n + unit, return_indices=True
    )
    gap = np.abs(people_grade[mine] - grade[theirs]).astype(float)
    shared_query = people_query[mine]
    wanted = np.isin(shared_query, query_pks)
    scores: dict[int, float] = {}
    for pk, value in zip(shared_query[wanted].tolist(), gap[wanted].tolist(), strict=True):
        scores[pk] = scores.get(pk, 0.0) + value
    return {pk: value for pk, value in scores.items() if value}


def unsureness(
    project: Project, query_pks: list[int], membership: Membership | None = None
) -> dict[int, float]:
    """Rests on the judge's grades alone, which every member may be ordered by."""
    version = newest_version(project)
    if version is None:
        return {}
    unsure = (
        JudgePair.objects.filter(
            job__version=version, status=PairStatus.JUDGED, query_id__in=query_pks
        )
        .filter(Q(confidence__lt=UNSURE_BELOW) | Q(confidence__isnull=True, grade__in=[1, 2]))
        .values_list("query_id", flat=True)
    )
    scores: dict[int, float] = {}
    for pk in unsure:
        scores[pk] = scores.get(pk, 0.0) + 1
    return scores


def register() -> None:
    from annotator.extensions import register_queue_order

    register_queue_order(DISAGREE, _("Judge disagrees with people first"), disagreement)
    register_queue_order(UNSURE, _("Judge unsure first"), unsureness)
