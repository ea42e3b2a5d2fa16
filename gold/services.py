"""Adjudicating, freezing gold sets, and reading consensus grades out of them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import Max

from annotator.labels import Evidence
from annotator.models import Judgment, Project, Query
from numerics.consensus import RULES, consensus_grades
from numerics.grades import check_grade

from .models import Adjudication, AdjudicationHistory, GoldLabel, GoldSet


@dataclass(frozen=True)
class ConsensusPolicy:
    """How several annotators' grades become one: recorded with every gold set and export."""

    rule: str = "majority"
    min_annotators: int = 1
    adjudicated_first: bool = True

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.min_annotators < 1:
            raise ValueError("min_annotators must be at least 1")

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "min_annotators": self.min_annotators,
            "adjudicated_first": self.adjudicated_first,
        }


def adjudicate(*, query: Query, evidence: Evidence, grade: int, reason: str, adjudicator):
    """Set (or change) the final grade of one unit; every change is kept in history."""
    check_grade(grade)
    with transaction.atomic():
        adjudication, created = Adjudication.objects.select_for_update().get_or_create(
            query=query,
            granularity=evidence.granularity,
            document=evidence.document,
            start=evidence.start,
            end=evidence.end,
            defaults={
                "grade": grade,
                "reason": reason,
                "adjudicator": adjudicator,
                "chunk": evidence.chunk,
            },
        )
        old = None if created else adjudication.grade
        if not created:
            if adjudication.grade == grade and adjudication.reason == reason:
                return adjudication
            adjudication.grade, adjudication.reason = grade, reason
            adjudication.adjudicator = adjudicator
            adjudication.save(update_fields=["grade", "reason", "adjudicator", "updated_at"])
        AdjudicationHistory.objects.create(
            adjudication=adjudication,
            query=query,
            granularity=evidence.granularity,
            document=evidence.document,
            start=evidence.start,
            end=evidence.end,
            old_grade=old,
            new_grade=grade,
            reason=reason,
            changed_by=adjudicator,
        )
        return adjudication


def freeze_gold_set(
    project: Project,
    name: str,
    *,
    policy: ConsensusPolicy,
    annotators: list[str] | None = None,
    note: str = "",
    created_by=None,
) -> GoldSet:
    """Snapshot the labels of ``annotators`` (all who labelled, if None) as a new version."""
    judgments = Judgment.objects.filter(query__project=project).select_related("annotator")
    if annotators is not None:
        judgments = judgments.filter(annotator__username__in=annotators)
    with transaction.atomic():
        latest = GoldSet.objects.filter(project=project, name=name).aggregate(v=Max("version"))
        gold_set = GoldSet.objects.create(
            project=project,
            name=name,
            version=(latest["v"] or 0) + 1,
            note=note,
            created_by=created_by,
            policy={**policy.to_dict(), "annotators": sorted(annotators) if annotators else None},
        )
        rows = [
            GoldLabel(
                gold_set=gold_set,
                query_id=j.query_id,
                annotator=j.annotator.username,
                granularity=j.granularity,
                document_id=j.document_id,
                start=j.start,
                end=j.end,
                grade=j.grade,
                note=j.note,
            )
            for j in judgments.iterator(chunk_size=5000)
        ]
        if policy.adjudicated_first:
            rows += [
                GoldLabel(
                    gold_set=gold_set,
                    query_id=a.query_id,
                    adjudicated=True,
                    granularity=a.granularity,
                    document_id=a.document_id,
                    start=a.start,
                    end=a.end,
                    grade=a.grade,
                    note=a.reason,
                )
                for a in Adjudication.objects.filter(query__project=project)
            ]
        GoldLabel.objects.bulk_create(rows, batch_size=5000)
        gold_set.n_labels = len(rows)
        gold_set.n_queries = len({row.query_id for row in rows})
        GoldSet.objects.filter(pk=gold_set.pk).update(
            n_labels=gold_set.n_labels, n_queries=gold_set.n_queries
        )
    return gold_set


@dataclass(frozen=True)
class SpanGrades:
    """Consensus grade per distinct evidence span of a gold set (parallel arrays)."""

    query_pk: np.ndarray
    document_pk: np.ndarray
    start: np.ndarray
    end: np.ndarray
    granularity: list[str]
    grade: np.ndarray  # -1 where the policy reached no consensus
    n_annotators: np.ndarray


def span_consensus(gold_set: GoldSet) -> SpanGrades:
    """One grade per (query, granularity, document, start, end) under the set's policy."""
    rows = list(
        gold_set.labels.values_list(
            "query_id", "granularity", "document_id", "start", "end", "grade", "adjudicated"
        ).order_by("query_id", "document_id", "start", "end", "granularity")
    )
    keys = [r[:5] for r in rows]
    unit_of_key: dict = {}
    unit = np.fromiter(
        (unit_of_key.setdefault(k, len(unit_of_key)) for k in keys), dtype=np.int64, count=len(keys)
    )
    grade = np.array([r[5] for r in rows], dtype=np.int64)
    adjudicated = np.array([r[6] for r in rows], dtype=bool)
    policy = gold_set.policy
    final, n = consensus_grades(
        unit[~adjudicated],
        grade[~adjudicated],
        len(unit_of_key),
        policy.get("rule", "majority"),
        policy.get("min_annotators", 1),
        unit[adjudicated],
        grade[adjudicated],
    )
    units = list(unit_of_key)
    return SpanGrades(
        query_pk=np.array([u[0] for u in units], dtype=np.int64),
        document_pk=np.array([u[2] for u in units], dtype=np.int64),
        start=np.array([u[3] for u in units], dtype=np.int64),
        end=np.array([u[4] for u in units], dtype=np.int64),
        granularity=[u[1] for u in units],
        grade=final,
        n_annotators=n,
    )


def diff_gold_sets(old: GoldSet, new: GoldSet) -> dict[str, list[dict]]:
    """Spans added, removed and regraded between two gold sets (consensus grades)."""

    def as_map(gold_set):
        spans = span_consensus(gold_set)
        return {
            (int(q), g, int(d), int(s), int(e)): int(grade)
            for q, g, d, s, e, grade in zip(
                spans.query_pk,
                spans.granularity,
                spans.document_pk,
                spans.start,
                spans.end,
                spans.grade,
                strict=True,
            )
            if grade >= 0
        }

    before, after = as_map(old), as_map(new)

    def row(key, **extra):
        q, g, d, s, e = key
        return {"query": q, "granularity": g, "document": d, "start": s, "end": e, **extra}

    return {
        "added": [row(k, grade=after[k]) for k in sorted(after.keys() - before.keys())],
        "removed": [row(k, grade=before[k]) for k in sorted(before.keys() - after.keys())],
        "changed": [
            row(k, old=before[k], new=after[k])
            for k in sorted(before.keys() & after.keys())
            if before[k] != after[k]
        ],
    }
