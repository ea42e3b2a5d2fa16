"""Adjudicating units, and freezing gold sets from chosen annotators under a stated policy."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max

from annotator.evidence import Evidence
from annotator.models import Judgment, Project, Query
from annotator.revisions import bump
from annotator.sources import PEOPLE, pinned_sources, resolve_sources, source_labels
from numerics.grades import check_grade
from numerics.mapping import MappingPolicy
from quality.dimensions import project_gain_rule
from quality.grades import recorded_quality

from .models import Adjudication, AdjudicationHistory, GoldLabel, GoldSet
from .parts import parts
from .policy import ConsensusPolicy, SelectionError, choose_annotators, resolve_mapping
from .units import levels, live_labels, unit_grades, units_for_level

__all__ = [
    "ConsensusPolicy",
    "SelectionError",
    "adjudicate",
    "freeze_gold_set",
    "gold_policy",
    "preview_gold_set",
]


def adjudicate(*, query: Query, evidence: Evidence, grade: int, reason: str, adjudicator):
    """Set (or change) the final grade of one unit; every change is kept in history."""
    check_grade(grade)
    with transaction.atomic():
        bump(query.project_id)
        adjudication, created = Adjudication.objects.select_for_update().get_or_create(
            query=query,
            **evidence.span_fields(),
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
            **evidence.span_fields(),
            old_grade=old,
            new_grade=grade,
            reason=reason,
            changed_by=adjudicator,
        )
        return adjudication


def gold_policy(
    project: Project,
    policy: ConsensusPolicy,
    annotators: list[str] | None,
    mapping: MappingPolicy | None = None,
    sources=None,
) -> dict:
    """The policy a version records: its label sources and who counts, the consensus rule,
    the mapping.

    ``annotators=None``: those who labelled among ``sources`` (``annotator.sources``;
    ``people`` when None: never pseudo-annotators unless chosen). Named annotators record
    the sources they belong to.
    """
    mapping = resolve_mapping(project, None, mapping)
    if annotators is None:
        resolved = resolve_sources(project, sources or (PEOPLE,))
        chosen = choose_annotators(project, None, resolved)
        recorded_sources = pinned_sources(project, resolved)
    else:
        chosen = choose_annotators(project, annotators)
        recorded_sources = sorted(set(source_labels(project, chosen).values()))
    return {
        **policy.to_dict(),
        "sources": recorded_sources,
        "annotators": chosen,
        "humans_only": recorded_sources == [PEOPLE],
        "mapping": str(mapping),
    }


def preview_gold_set(project: Project, recorded: dict) -> list[dict]:
    """How many queries and units a version under ``recorded`` (see ``gold_policy``)
    would hold, per level, from the live labels: ``{"level", "queries", "units",
    "relevant"}`` rows (relevant: at or above the project's threshold)."""
    consensus = ConsensusPolicy(
        recorded["rule"], recorded["min_annotators"], recorded["adjudicated_first"]
    )
    # The annotators were chosen by the sources resolver when the policy was recorded.
    labels = live_labels(
        project,
        sources=None,
        annotators=recorded["annotators"],
        adjudicated=consensus.adjudicated_first,
    )
    mapping = MappingPolicy.parse(recorded["mapping"])
    rows = []
    for level in levels(project):
        grades = unit_grades(
            labels, units_for_level(project, level), consensus=consensus, mapping=mapping
        )
        rows.append(
            {
                "level": level,
                "queries": len(set(grades.query.tolist())),
                "units": int(grades.grade.size),
                "relevant": int((grades.grade >= project.relevance_threshold).sum()),
            }
        )
    return rows


def freeze_gold_set(
    project: Project,
    name: str,
    *,
    policy: ConsensusPolicy,
    annotators: list[str] | None = None,
    mapping: MappingPolicy | None = None,
    note: str = "",
    created_by=None,
    sources=None,
) -> GoldSet:
    """Snapshot the chosen annotators' labels (and the adjudications) as a new version.

    ``annotators=None``: those who labelled among ``sources`` (the people by default;
    pseudo-annotators only when named or chosen). The version records its sources.
    Raises ``SelectionError`` (nothing written) when the choice holds no labels.
    """
    recorded = gold_policy(project, policy, annotators, mapping, sources)
    # How quality enters the gain, and the quality grades it reads (a lead's final grade
    # first, as for relevance), frozen with the labels (recorded only when there is
    # something: older versions read as "none").
    rule = project_gain_rule(project)
    if not rule.is_none:
        recorded["gain"] = str(rule)
    quality = recorded_quality(
        project, recorded["annotators"], adjudicated=policy.adjudicated_first
    )
    if quality:
        recorded["quality"] = quality
    judgments = (
        Judgment.objects.filter(query__project=project)
        .filter(annotator__username__in=recorded["annotators"])
        .select_related("annotator")
    )
    with transaction.atomic():
        bump(project.pk)
        latest = GoldSet.objects.filter(project=project, name=name).aggregate(v=Max("version"))
        gold_set = GoldSet.objects.create(
            project=project,
            name=name,
            version=(latest["v"] or 0) + 1,
            note=note,
            created_by=created_by,
            policy=recorded,
        )
        rows = [
            GoldLabel(
                gold_set=gold_set,
                query_id=j.query_id,
                annotator=j.annotator.username,
                **j.span_fields(),
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
                    **a.span_fields(),
                    grade=a.grade,
                    note=a.reason,
                )
                for a in Adjudication.objects.filter(query__project=project)
            ]
        GoldLabel.objects.bulk_create(rows, batch_size=5000)
        for part in parts():  # what apps above gold freeze with the labels (nuggets …)
            part.freeze(gold_set)
        gold_set.n_labels = len(rows)
        gold_set.n_queries = len({row.query_id for row in rows})
        GoldSet.objects.filter(pk=gold_set.pk).update(
            n_labels=gold_set.n_labels, n_queries=gold_set.n_queries
        )
    return gold_set
