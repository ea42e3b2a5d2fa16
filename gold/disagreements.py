"""Disagreements on units: annotators' labels mapped onto the units of one level, compared.

Each annotator's labels on a query collapse to one grade per unit (the max over the labels
that reach it, as everywhere in Assay), so nobody disagrees with themselves and two people
who marked overlapping but different passages are compared on the unit they share. A
(query, unit) is disputed when two or more annotators graded it and their grades differ
under the chosen rule; its resolution is an adjudication given on that unit's span.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from django.utils.translation import gettext_lazy as _

from annotator import kept_files
from annotator.models import Project, Query
from annotator.sources import ASSESSORS, JUDGES, PEOPLE, Sources, resolve_sources
from numerics.mapping import MappingPolicy
from web.spreadsheets import csv_text

from .label_changes import kept_up_to_date
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
    options = (level, units.fingerprint, str(mapping), rule, project.relevance_threshold, *names)
    path = _kept_path(project, options)
    kept = kept_up_to_date(
        project,
        ("disputes", project.pk, project.created_at, *options),
        read=lambda: _read_kept(project, units, names, path),
        write=lambda kept: _keep(path, kept, names),
        derive=lambda queries: _Kept(
            _disagreements(project, units, mapping, names, rule, queries), (0, 0, 0)
        ),
        splice=_splice,
    )
    return list(kept.items)


@dataclass(frozen=True)
class _Kept:
    """The disputes as of ``version`` (``gold.label_changes``); ``unkept``: not in the
    file yet."""

    items: list
    version: tuple
    unkept: bool = False

    @property
    def nbytes(self) -> int:
        return 600 * len(self.items) + 100  # roughly: what the cache bounds by


def _splice(kept: _Kept, fresh: _Kept, changed: list[int]) -> _Kept:
    """``kept`` with the ``changed`` queries' disputes replaced by ``fresh``'s (a query's
    disputes depend on its own labels alone), in queue order."""
    again = set(changed)
    others = [item for item in kept.items if item.query_pk not in again]
    return replace(kept, items=_in_queue_order(others + fresh.items))


def _disagreements(project, units, mapping, names, rule, queries=None) -> list[DisputedUnit]:
    # Adjudications are read whatever the sources: they resolve disputes, never vote.
    labels = live_labels(project, sources=None, annotators=names, adjudicated=True, queries=queries)
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
    qids = _qids(project, np.unique(query[chosen]) if queries is not None else None)
    ends = dict(zip(first.tolist(), (first + count).tolist(), strict=True))
    items = []
    for begin in chosen.tolist():
        q, u = int(query[begin]), int(unit[begin])
        rows = range(begin, ends[begin])
        grades = {labels.annotators[int(source[r])]: int(grade[r]) for r in rows}
        items.append(_disputed_unit(q, qids.get(q, ""), u, units, grades, resolved.get((q, u))))
    return _in_queue_order(items)


def _qids(project: Project, pks: np.ndarray | None) -> dict[int, str]:
    """The qids of the project's queries (``pks``: of those alone)."""
    queries = Query.objects.filter(project=project)
    if pks is not None:
        queries = queries.filter(pk__in=pks.tolist())
    return dict(queries.values_list("pk", "qid"))


def _disputed_unit(q, qid, u, units, grades, resolved) -> DisputedUnit:
    return DisputedUnit(
        query_pk=q,
        qid=qid,
        unit=u,
        unit_id=str(units.ids[u]),
        document_pk=int(units.document[u]),
        start=int(units.start[u]),
        end=int(units.end[u]),
        grades=grades,
        resolved=resolved,
    )


def _in_queue_order(items: list[DisputedUnit]) -> list[DisputedUnit]:
    """Queries with unresolved units first, and within a query unresolved units first,
    then the widest spread (a unit's id breaks ties: the order is total)."""
    open_queries = {item.query_pk for item in items if item.resolved is None}
    return sorted(
        items,
        key=lambda i: (
            i.query_pk not in open_queries,
            i.query_pk,
            i.resolved is not None,
            -i.spread,
            i.unit_id,
        ),
    )


# The disputes of one choice (level, units, mapping, rule, threshold, annotators) as a
# process last derived them, for the next new process: it reads them back and compares
# again only the queries the history names since (at 500,000 labels, reading every label
# was most of the queue's first render).
def _kept_path(project: Project, options: tuple) -> Path:
    digest = hashlib.blake2b(repr(options).encode(), digest_size=8).hexdigest()
    stem = kept_files.project_stem("disputes", project.pk, project.created_at)
    return kept_files.folder() / f"{stem}.{digest}.npy"


def _keep(path: Path, kept: _Kept, names: list[str]) -> None:
    items = kept.items
    who = {name: k for k, name in enumerate(names)}
    kept_files.write_arrays(
        path,
        [
            np.array(kept.version, dtype=np.int64),
            kept_files.json_array(names),
            np.array([i.query_pk for i in items], dtype=np.int64),
            np.array([i.unit for i in items], dtype=np.int64),
            np.array([-1 if i.resolved is None else i.resolved for i in items], dtype=np.int64),
            np.array([len(i.grades) for i in items], dtype=np.int64),
            np.array([who[n] for i in items for n in i.grades], dtype=np.int64),
            np.array([g for i in items for g in i.grades.values()], dtype=np.int64),
        ],
    )


def _read_kept(project: Project, units: Units, names: list[str], path: Path) -> _Kept | None:
    """The kept disputes; None when there are none or they do not hold together."""
    arrays = kept_files.read_arrays(path, 8)
    if arrays is None or kept_files.json_of(arrays[1]) != names:
        return None
    version, _names, query, unit, resolved, count, who, grade = arrays
    columns = (query, unit, resolved, count, who, grade)
    if version.shape != (3,) or any(c.ndim != 1 or c.dtype != np.int64 for c in columns):
        return None
    n = query.size
    if not (unit.size == resolved.size == count.size == n and who.size == grade.size):
        return None
    if count.sum() != who.size or (n and (unit.min() < 0 or unit.max() >= len(units.ids))):
        return None
    if who.size and (who.min() < 0 or who.max() >= len(names)):
        return None
    qids = _qids(project, np.unique(query))
    bounds = np.cumsum(count)[:-1]
    items = [
        _disputed_unit(
            q,
            qids.get(q, ""),
            u,
            units,
            {names[w]: g for w, g in zip(ws.tolist(), gs.tolist(), strict=True)},
            None if r < 0 else r,
        )
        for q, u, r, ws, gs in zip(
            query.tolist(),
            unit.tolist(),
            resolved.tolist(),
            np.split(who, bounds) if n else [],
            np.split(grade, bounds) if n else [],
            strict=True,
        )
    ]
    return _Kept(items, tuple(int(v) for v in version))


def prune() -> int:
    """Delete this database's dispute files of projects that no longer exist; how many."""
    return kept_files.prune_project_files("disputes")


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
