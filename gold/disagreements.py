"""Disagreements on units: annotators' labels mapped onto the units of one level, compared.

Each annotator's labels on a query collapse to one grade per unit (the max over the labels
that reach it, as everywhere in Assay), so nobody disagrees with themselves and two people
who marked overlapping but different passages are compared on the unit they share. A
(query, unit) is disputed when two or more annotators graded it and their grades differ
under the chosen rule; its resolution is an adjudication given on that unit's span.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext_lazy as _

from annotator.caches import cache
from annotator.models import Project, Query
from annotator.revisions import revision
from annotator.sources import ASSESSORS, JUDGES, PEOPLE, Sources, resolve_sources
from numerics.mapping import MappingPolicy
from web.spreadsheets import csv_text

from .policy import people, pseudo_annotators, resolve_mapping
from .units import Units, adjudicated_units, annotator_unit_grades, level_units, live_labels

DISAGREEMENT_RULES = {
    "any": _("grades differ"),
    "relevance": _("some say relevant, some not (at the project's threshold)"),
    "spread2": _("grades two or more apart"),
}


@dataclass
class DisputedUnit:
    """One (query, unit) on which annotators disagree."""

    query_pk: int
    qid: str
    unit: int  # index into ``units``
    unit_id: str
    document_pk: int
    start: int
    end: int
    grades: dict[str, int]  # annotator -> their grade of the unit
    resolved: int | None

    @property
    def spread(self) -> int:
        return max(self.grades.values()) - min(self.grades.values())

    def as_row(self) -> dict:
        return {
            "qid": self.qid,
            "unit": self.unit_id,
            "grades": self.grades,
            "resolved": self.resolved,
        }


def compared_annotators(
    project: Project,
    names: list[str] | None = None,
    *,
    include_pseudo: bool = False,
    sources=None,
) -> tuple[list[str], Sources | None]:
    """(annotators, the sources resolved): the named annotators (sources None: every
    label of theirs counts), or the members among ``sources`` (``annotator.sources``;
    when None, the people, and every pseudo-annotator with ``include_pseudo``).

    Names that are not members of the project are an error (``ValueError``; unknown
    sources raise ``SourcesError``, a ``ValueError`` too)."""
    everyone = people(project) + pseudo_annotators(project)
    if names is not None:
        unknown = sorted(set(names) - set(everyone))
        if not names or unknown:
            detail = f"; unknown: {', '.join(unknown)}" if unknown else ""
            raise ValueError(f"name members of the project{detail}")
        return sorted(set(names)), None
    default = (PEOPLE, ASSESSORS, JUDGES) if include_pseudo else (PEOPLE,)
    resolved = resolve_sources(project, sources or default)
    return sorted(name for name in everyone if resolved.counts(name)), resolved


def _disputed(rule: str, lo: np.ndarray, hi: np.ndarray, threshold: int) -> np.ndarray:
    if rule == "any":
        return lo < hi
    if rule == "relevance":
        return (lo < threshold) & (hi >= threshold)
    if rule == "spread2":
        return hi - lo >= 2
    raise ValueError(f"unknown disagreement rule {rule!r}")


def disagreements(
    project: Project,
    level: str,
    *,
    mapping: MappingPolicy | None = None,
    annotators: list[str] | None = None,
    include_pseudo: bool = False,
    rule: str = "any",
    units: Units | None = None,
    sources=None,
) -> list[DisputedUnit]:
    """Disputed units, grouped by query: queries with unresolved units first, and within
    a query unresolved units first, then the widest spread."""
    mapping = resolve_mapping(project, None, mapping)
    names, _counted = compared_annotators(
        project, annotators, include_pseudo=include_pseudo, sources=sources
    )
    units = units or level_units(project, level)
    # Kept per process under the project's label revision (labels and adjudications
    # move it): the queue's every page and filter change reads no label again.
    now = revision(project.pk).number
    project_key = ("disputes", project.pk, project.created_at)
    key = (*project_key, now, level, units.fingerprint, str(mapping), rule)
    key += (project.relevance_threshold, *names)
    kept = cache.peek(key)
    if kept is None:
        kept = _Kept(_disagreements(project, units, mapping, names, rule))
        cache.discard(lambda k: k[:3] == project_key and k[3] != now)  # older revisions
        cache.put(key, kept)
    return list(kept.items)


@dataclass(frozen=True)
class _Kept:
    items: list

    @property
    def nbytes(self) -> int:
        return 600 * len(self.items) + 100  # roughly: what the cache bounds by


def _disagreements(project, units, mapping, names, rule) -> list[DisputedUnit]:
    # Adjudications are read whatever the sources: they resolve disputes, never vote.
    labels = live_labels(project, sources=None, annotators=names, adjudicated=True)
    query, unit, source, grade = annotator_unit_grades(
        labels.take(labels.source >= 0), units, mapping
    )
    if query.size == 0:
        return []
    # Rows come sorted by (query, unit, source): one group per judged (query, unit).
    first = np.flatnonzero(np.r_[True, (query[1:] != query[:-1]) | (unit[1:] != unit[:-1])])
    count = np.diff(np.r_[first, query.size])
    lo, hi = np.minimum.reduceat(grade, first), np.maximum.reduceat(grade, first)
    chosen = first[(count >= 2) & _disputed(rule, lo, hi, project.relevance_threshold)]
    if chosen.size == 0:
        return []
    a_query, a_unit, a_grade = adjudicated_units(labels, units)
    resolved = {
        (q, u): g
        for q, u, g in zip(a_query.tolist(), a_unit.tolist(), a_grade.tolist(), strict=True)
    }
    qids = dict(Query.objects.filter(project=project).values_list("pk", "qid"))
    ends = dict(zip(first.tolist(), (first + count).tolist(), strict=True))
    items = []
    for begin in chosen.tolist():
        q, u = int(query[begin]), int(unit[begin])
        rows = range(begin, ends[begin])
        items.append(
            DisputedUnit(
                query_pk=q,
                qid=qids.get(q, ""),
                unit=u,
                unit_id=str(units.ids[u]),
                document_pk=int(units.document[u]),
                start=int(units.start[u]),
                end=int(units.end[u]),
                grades={labels.annotators[int(source[r])]: int(grade[r]) for r in rows},
                resolved=resolved.get((q, u)),
            )
        )
    open_queries = {item.query_pk for item in items if item.resolved is None}
    items.sort(
        key=lambda i: (
            i.query_pk not in open_queries,
            i.query_pk,
            i.resolved is not None,
            -i.spread,
            i.unit_id,
        )
    )
    return items


def disagreement_file(items: list[DisputedUnit], fmt: str) -> str:
    """JSONL (``{"qid", "unit", "grades": {annotator: grade}, "resolved"}`` per line) or CSV
    (``qid, unit``, one column per annotator, ``resolved``)."""
    if fmt == "jsonl":
        return "".join(json.dumps(i.as_row(), ensure_ascii=False) + "\n" for i in items)
    if fmt != "csv":
        raise ValueError(f"unknown format {fmt!r}; use jsonl or csv")
    names = sorted({name for item in items for name in item.grades})
    return csv_text(
        ["qid", "unit", *names, "resolved"],
        (
            [
                item.qid,
                item.unit_id,
                *(item.grades.get(name, "") for name in names),
                "" if item.resolved is None else item.resolved,
            ]
            for item in items
        ),
    )
