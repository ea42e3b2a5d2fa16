"""Which (query, unit) pairs a job judges: the pool, its holes, a sample, or everything.

The pool of a level is the top ``project.pool_depth`` of every run that can be evaluated
at that level (documents, or one chunking's chunks), deduplicated in run order; the
*holes* are pooled pairs that no person has judged, a person's labels reaching units
through the default evidence mapping (so a whole-document label covers its chunks).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from annotator.models import Chunking, Project
from annotator.sources import PEOPLE, resolve_sources
from gold.policy import resolve_mapping
from gold.units import DOCUMENTS, annotator_unit_grades, live_labels
from gold.units import units_for_level as _units
from metrics.models import Run
from metrics.rankings import can_evaluate, ranked_run

SAMPLE_SEED = 20240


@dataclass(frozen=True)
class Pair:
    query: int  # query pk
    document: int  # document pk
    chunk: int | None  # chunk pk at chunk level


def level_name(level: str, chunking: Chunking | None) -> str:
    return DOCUMENTS if level == "document" else chunking.name


def _to_pairs(units, keys) -> list[Pair]:
    chunk_level = units.level != DOCUMENTS
    return [
        Pair(int(q), int(units.document[u]), int(units.pk[u]) if chunk_level else None)
        for q, u in keys
    ]


def pool_keys(project: Project, units, query_pks: set[int] | None) -> list[tuple[int, int]]:
    """(query pk, unit index) of the pool, in query order then run order."""
    depth = project.pool_depth
    pooled: dict[tuple[int, int], None] = {}
    runs = [
        r
        for r in Run.objects.filter(project=project).order_by("pk")
        if can_evaluate(r, units.level)
    ]
    per_query: dict[int, list[int]] = {}
    for run in runs:
        ranked = ranked_run(run, units)
        for index, query in enumerate(ranked.query.tolist()):
            if query_pks is not None and query not in query_pks:
                continue
            start, stop = ranked.bounds[index], ranked.bounds[index + 1]
            per_query.setdefault(query, []).extend(
                ranked.item[start : min(stop, start + depth)].tolist()
            )
    for query in sorted(per_query):
        for unit in per_query[query]:
            pooled.setdefault((query, int(unit)), None)
    return list(pooled)


def judged_by_people(project: Project, units, query_pks: set[int] | None) -> set[tuple[int, int]]:
    """(query pk, unit index) that a person's label (or an adjudication) reaches."""
    labels = live_labels(project, sources=resolve_sources(project, (PEOPLE,)), adjudicated=True)
    query, unit, _source, _grade = annotator_unit_grades(labels, units, resolve_mapping(project))
    keep = np.ones(query.size, dtype=bool)
    if query_pks is not None:
        keep = np.isin(query, list(query_pks))
    return set(zip(query[keep].tolist(), unit[keep].tolist(), strict=True))


def scope_pairs(
    project: Project,
    *,
    scope: str,
    level: str,
    chunking: Chunking | None = None,
    query_pks: set[int] | None = None,
    sample_size: int | None = None,
) -> list[Pair]:
    units = _units(project, level_name(level, chunking))
    pool = pool_keys(project, units, query_pks)
    if scope == "pool":
        keys = pool
    elif scope == "holes":
        people = judged_by_people(project, units, query_pks)
        keys = [key for key in pool if key not in people]
    elif scope == "sample":
        size = min(sample_size or 0, len(pool))
        chosen = set(random.Random(SAMPLE_SEED).sample(range(len(pool)), size))
        keys = [key for index, key in enumerate(pool) if index in chosen]
    elif scope == "all":
        people = judged_by_people(project, units, query_pks)
        keys = list(dict.fromkeys([*pool, *sorted(people)]))
    else:
        raise ValueError(f"scope must be holes, pool, sample or all, not {scope!r}")
    return _to_pairs(units, keys)
