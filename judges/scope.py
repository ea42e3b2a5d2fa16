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
from gold.units import DOCUMENTS, annotator_unit_grades
from metrics import kept_values
from metrics.evaluation import level_units as _units
from metrics.label_state import counted_labels, label_state
from metrics.models import Run
from metrics.rankings import cache, can_evaluate, run_version
from metrics.run_indexes import top_rows

SAMPLE_SEED = 20240


@dataclass(frozen=True)
class Pair:
    query: int  # query pk
    document: int  # document pk
    chunk: int | None  # chunk pk at chunk level


def level_name(level: str, chunking: Chunking | None) -> str:
    return DOCUMENTS if level == "document" else chunking.name


@dataclass(frozen=True)
class ScopeKeys:
    """The pairs of a scope as (query pk, unit index) arrays, in the job's order: what a
    plan counts without making a ``Pair`` of every one."""

    query: np.ndarray
    unit: np.ndarray
    units: object  # gold.units.Units

    def __len__(self) -> int:
        return int(self.query.size)

    def take(self, keep: np.ndarray) -> ScopeKeys:
        return ScopeKeys(self.query[keep], self.unit[keep], self.units)

    @property
    def document(self) -> np.ndarray:
        return self.units.document[self.unit]

    @property
    def chunk(self) -> np.ndarray | None:
        """Chunk pk of every pair, or None at document level."""
        return None if self.units.level == DOCUMENTS else self.units.pk[self.unit]

    def pairs(self, limit: int | None = None) -> list[Pair]:
        """The first ``limit`` pairs (all when None) as ``Pair``."""
        query = self.query[:limit].tolist()
        document = self.document[:limit].tolist()
        chunk = self.chunk
        if chunk is None:
            return [Pair(q, d, None) for q, d in zip(query, document, strict=True)]
        return [
            Pair(q, d, c) for q, d, c in zip(query, document, chunk[:limit].tolist(), strict=True)
        ]


def _codes(query: np.ndarray, unit: np.ndarray, units) -> np.ndarray:
    """One int64 per (query pk, unit index)."""
    return query.astype(np.int64) * (len(units.ids) + 1) + unit


def _in_sorted(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """``np.isin(values, sorted_keys)`` for sorted keys: a binary search per value
    instead of sorting both."""
    if sorted_keys.size == 0:
        return np.zeros(values.size, dtype=bool)
    position = np.minimum(np.searchsorted(sorted_keys, values), sorted_keys.size - 1)
    return sorted_keys[position] == values


def _first_of_each(codes: np.ndarray) -> np.ndarray:
    """Positions of the first occurrence of each code, in their order."""
    _distinct, first = np.unique(codes, return_index=True)
    first.sort()
    return first


def pool_arrays(project: Project, units, query_pks: set[int] | None) -> tuple:
    """(query pk, unit index) arrays of the pool, in query order then run order (each
    run's top ``pool_depth`` in rank order), each pair once, where first pooled."""
    depth = project.pool_depth
    runs = [
        r
        for r in Run.objects.filter(project=project)
        .select_related("chunking")
        .without_results()
        .order_by("pk")
        if can_evaluate(r, units.level)
    ]
    # Kept per process under what the pool is made of: the runs (which never change once
    # imported), the depth, the units and the queries asked for.
    key = (
        "pool",
        project.pk,
        project.created_at,
        depth,
        units.fingerprint,
        tuple(run_version(r) for r in runs),
        None if query_pks is None else tuple(sorted(query_pks)),
    )
    kept = cache.get(key, lambda: _Kept(*_pool(runs, depth, units, query_pks)))
    return kept.query, kept.unit


@dataclass(frozen=True)
class _Kept:
    """(query pk, unit index) arrays kept per process (read-only)."""

    query: np.ndarray
    unit: np.ndarray

    def __post_init__(self) -> None:
        self.query.flags.writeable = False
        self.unit.flags.writeable = False

    @property
    def nbytes(self) -> int:
        return self.query.nbytes + self.unit.nbytes


def _pool(runs: list[Run], depth: int, units, query_pks: set[int] | None) -> tuple:
    parts = []
    asked = None if query_pks is None else np.fromiter(query_pks, dtype=np.int64)
    for order, run in enumerate(runs):
        # From the run's index (the worker's file): a first estimate in a process read
        # and ranked every run's stored results (1.4 s of a profiled 2.6 s at *medium*).
        query, rank, unit = top_rows(run, units, depth)
        if asked is not None:
            keep = np.isin(query, asked)
            query, rank, unit = query[keep], rank[keep], unit[keep]
        parts.append((query, np.full(query.size, order), rank, unit))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    query, run, rank, unit = (np.concatenate(column) for column in zip(*parts, strict=True))
    order = np.lexsort((rank, run, query))
    query, unit = query[order].astype(np.int64), unit[order].astype(np.int64)
    first = _first_of_each(_codes(query, unit, units))
    return query[first], unit[first]


def pool_keys(project: Project, units, query_pks: set[int] | None) -> list[tuple[int, int]]:
    """(query pk, unit index) of the pool, in query order then run order."""
    query, unit = pool_arrays(project, units, query_pks)
    return list(zip(query.tolist(), unit.tolist(), strict=True))


def people_arrays(project: Project, units, query_pks: set[int] | None) -> tuple:
    """(query pk, unit index) arrays that a person's label (or an adjudication) reaches,
    sorted, each once.

    A query's pairs depend on its own labels alone, so they are kept per process and in a
    file under the label file's version (``metrics.kept_values``), for the units, the
    mapping, the sources and the queries asked for, and after label changes only the
    changed queries' labels are mapped again: an estimate after a label change, or in a
    new process, no longer maps every person's label onto every unit."""
    sources = resolve_sources(project, (PEOPLE,))
    mapping = resolve_mapping(project)
    state = label_state(project)
    asked = None if query_pks is None else tuple(sorted(query_pks))
    key = ("people reach", state.key, units.fingerprint, str(mapping), sources.key, asked)

    def reach(changed: np.ndarray | None = None) -> tuple:
        return _people(counted_labels(state, sources, changed), units, mapping, query_pks)

    def read() -> _Reach | None:  # a new process: as kept at the label file's version
        arrays = kept_values.read(PEOPLE_REACH, key, state, 2)
        if arrays is None or any(a.dtype != np.int64 or a.ndim != 1 for a in arrays):
            return None
        if arrays[0].size != arrays[1].size:
            return None
        return _Reach(*arrays, (state.epoch, 0))

    def update(kept: _Reach, changed: np.ndarray) -> _Reach:
        query, unit = reach(changed)
        left = ~np.isin(kept.query, changed)
        query = np.concatenate([kept.query[left], query])
        unit = np.concatenate([kept.unit[left], unit])
        order = np.argsort(_codes(query, unit, units), kind="stable")
        return _Reach(query[order], unit[order], state.mark)

    kept = kept_values.brought_up_to_date(
        key,
        state,
        read=read,
        update=update,
        derive=lambda: _Reach(*reach(), state.mark),
        write=lambda kept: kept_values.write(PEOPLE_REACH, key, state, [kept.query, kept.unit]),
    )
    return kept.query, kept.unit


PEOPLE_REACH = kept_values.PEOPLE_REACH


def _people(labels, units, mapping, query_pks: set[int] | None) -> tuple:
    query, unit, _source, _grade = annotator_unit_grades(labels, units, mapping)
    keep = np.ones(query.size, dtype=bool)
    if query_pks is not None:
        keep = np.isin(query, list(query_pks))
    query, unit = query[keep].astype(np.int64), unit[keep].astype(np.int64)
    _distinct, first = np.unique(_codes(query, unit, units), return_index=True)
    return query[first], unit[first]


@dataclass(frozen=True)
class _Reach(_Kept):
    """People's (query pk, unit index) pairs, as of the label state's ``mark``."""

    mark: tuple[int, int] = (0, 0)


def judged_by_people(project: Project, units, query_pks: set[int] | None) -> set[tuple[int, int]]:
    """(query pk, unit index) that a person's label (or an adjudication) reaches."""
    query, unit = people_arrays(project, units, query_pks)
    return set(zip(query.tolist(), unit.tolist(), strict=True))


def scope_keys(
    project: Project,
    *,
    scope: str,
    level: str,
    chunking: Chunking | None = None,
    query_pks: set[int] | None = None,
    sample_size: int | None = None,
    units=None,
) -> ScopeKeys:
    """The scope's pairs as arrays (``scope_pairs`` without a ``Pair`` per pair)."""
    if scope not in ("pool", "holes", "sample", "all"):
        raise ValueError(f"scope must be holes, pool, sample or all, not {scope!r}")
    units = units if units is not None else _units(project, level_name(level, chunking))
    query, unit = pool_arrays(project, units, query_pks)
    if scope == "holes":
        people_query, people_unit = people_arrays(project, units, query_pks)
        keep = ~_in_sorted(_codes(query, unit, units), _codes(people_query, people_unit, units))
        query, unit = query[keep], unit[keep]
    elif scope == "sample":
        size = min(sample_size or 0, query.size)
        chosen = np.zeros(query.size, dtype=bool)
        chosen[random.Random(SAMPLE_SEED).sample(range(query.size), size)] = True
        query, unit = query[chosen], unit[chosen]
    elif scope == "all":
        people_query, people_unit = people_arrays(project, units, query_pks)  # sorted
        extra = ~np.isin(_codes(people_query, people_unit, units), _codes(query, unit, units))
        query = np.concatenate([query, people_query[extra]])
        unit = np.concatenate([unit, people_unit[extra]])
    return ScopeKeys(query, unit, units)


def scope_pairs(
    project: Project,
    *,
    scope: str,
    level: str,
    chunking: Chunking | None = None,
    query_pks: set[int] | None = None,
    sample_size: int | None = None,
) -> list[Pair]:
    return scope_keys(
        project,
        scope=scope,
        level=level,
        chunking=chunking,
        query_pks=query_pks,
        sample_size=sample_size,
    ).pairs()
