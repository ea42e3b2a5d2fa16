"""Coverage by source: for a run and each query, the share of its top k units judged by
each label source (people, imported assessors, a judge version) and the share unjudged.

A unit is judged by a source when one of that source's labels reaches it through the
gold's mapping (an adjudication is people's). Shares divide by the units in the top k
(k, or fewer when the run retrieved fewer), as Judged@k does; a unit judged by two
sources counts for both, so the sources' shares need not add up to one. ``unjudged`` is
1 − Judged@k: the share that no counted source judged (1 when nothing was retrieved).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from annotator.sources import source_labels
from gold.units import adjudicated_units, annotator_unit_grades
from numerics.mapping import MappingPolicy

from . import kept_values
from .evaluation import Gold
from .label_state import counted_labels
from .rankings import cache, lookup, run_version

UNJUDGED = "unjudged"


@dataclass(frozen=True)
class Coverage:
    """Per gold query (``Gold.query_pks`` order) and on average: the share of the top k
    judged by each source, and unjudged."""

    per_query: dict[str, np.ndarray]

    @property
    def mean(self) -> dict[str, float]:
        return {
            name: float(values.mean()) if values.size else 0.0
            for name, values in self.per_query.items()
        }

    def at(self, index: int) -> dict[str, float]:
        return {name: float(values[index]) for name, values in self.per_query.items()}


@dataclass(frozen=True)
class _Judged:
    keys: dict[str, np.ndarray]  # source → sorted (query * width + unit) keys it judged
    mark: tuple | None

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.keys.values())


def judged_by_source(gold: Gold) -> dict[str, np.ndarray]:
    """Each counted source's judged (query, unit) keys at the gold's level; kept per
    process and, after label changes, recomputed for the changed queries only (a query's
    keys depend on its own labels alone)."""
    state = gold.state
    if state is None:
        return {}
    key = ("judged-by", gold.origin)
    kept = cache.peek(key) if gold.origin is not None else None
    if kept is not None and kept.mark == state.mark:
        return kept.keys
    width = max(len(gold.units.ids), 1)
    judged = None
    changed = state.changed_since(kept.mark) if kept is not None else None
    if changed is not None:
        part = _judged(gold, counted_labels(state, gold.sources, changed), width)
        if list(part) == list(kept.keys):
            judged = {
                name: _spliced(kept.keys[name], keys, changed, width) for name, keys in part.items()
            }
    if judged is None:
        judged = _judged(gold, counted_labels(state, gold.sources), width)
    if gold.origin is not None:
        cache.put(key, _Judged(judged, state.mark))
    return judged


def _judged_of(gold: Gold, query_pks: np.ndarray) -> dict[str, np.ndarray]:
    """Each source's judged keys, of ``query_pks`` at least: ``judged_by_source``'s when
    this process keeps them (it brings them up to date per query), else those of these
    queries alone, kept per process for the gold's other runs. A new process whose
    coverage file stands a few queries behind the labels no longer maps every label onto
    every unit to bring those queries up to date (0.6 s of a dashboard at *large*)."""
    state = gold.state
    if state is None or cache.peek(("judged-by", gold.origin)) is not None:
        return judged_by_source(gold)
    digest = hashlib.blake2b(query_pks.tobytes(), digest_size=12).hexdigest()
    width = max(len(gold.units.ids), 1)

    def compute() -> _Judged:
        return _Judged(_judged(gold, counted_labels(state, gold.sources, query_pks), width), None)

    return cache.get(("judged-by-queries", gold.origin, state.mark, digest), compute).keys


def _judged(gold: Gold, labels, width: int) -> dict[str, np.ndarray]:
    """Each source's sorted judged keys among ``labels``."""
    units = gold.units
    mapping = MappingPolicy.parse(gold.grades.policy["mapping"])
    query, unit, source, _grade = annotator_unit_grades(
        labels.take(labels.source >= 0), units, mapping
    )
    if gold.sources is not None:
        names = [gold.sources.source_of(name) for name in labels.annotators]
        order = gold.sources.labels()
    else:
        found = source_labels(gold.gold_set.project, labels.annotators)
        names = [found[name] for name in labels.annotators]
        order = list(dict.fromkeys(names))
    keys: dict[str, list[np.ndarray]] = {name: [] for name in order}
    name_of_code = np.array(names, dtype=object)
    for name in order:
        codes = np.flatnonzero(name_of_code == name) if names else np.zeros(0, np.int64)
        rows = np.isin(source, codes)
        keys[name].append(query[rows] * width + unit[rows])
    if gold.gold_set is not None or gold.sources.adjudicated:
        a_query, a_unit, _a_grade = adjudicated_units(labels, units)
        if a_query.size:
            keys.setdefault("people", []).append(a_query * width + a_unit)
    return {
        name: np.unique(np.concatenate([np.zeros(0, np.int64), *parts]))
        for name, parts in keys.items()
    }


def _spliced(old: np.ndarray, part: np.ndarray, changed: np.ndarray, width: int) -> np.ndarray:
    """Sorted keys ``old`` with those of the ``changed`` queries replaced by ``part`` (sorted,
    all of changed queries)."""
    kept = old[~np.isin(old // width, changed)]
    return np.insert(kept, np.searchsorted(kept, part), part)


@dataclass(frozen=True)
class _GoldKeys:
    keys: np.ndarray  # sorted (query * width + unit) keys of the gold's grades
    mark: tuple | None

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes


def _gold_keys(gold: Gold) -> np.ndarray:
    """The gold's judged (query, unit) keys, sorted; once per gold and labels state, not
    once per run."""
    width = max(len(gold.units.ids), 1)
    if gold.origin is None:
        return np.sort(gold.grades.query * width + gold.grades.unit)
    key = ("gold-keys", gold.origin)
    mark = gold.state.mark if gold.state is not None else None
    kept = cache.peek(key)
    if kept is not None and kept.mark == mark:
        return kept.keys
    keys = np.sort(gold.grades.query * width + gold.grades.unit)
    cache.put(key, _GoldKeys(keys, mark))
    return keys


@dataclass(frozen=True)
class _Kept:
    coverage: Coverage
    query_pks: np.ndarray  # the gold's queries, the order of every array of ``coverage``
    mark: tuple | None

    @property
    def nbytes(self) -> int:
        arrays = [self.query_pks, *self.coverage.per_query.values()]
        return sum(a.nbytes for a in arrays)


def run_coverage(run, gold: Gold, k: int) -> Coverage:
    """The run's coverage by source at cutoff ``k`` over the gold's queries; kept per
    process with the gold's labels as they were (every dashboard view shows it) and,
    after label changes, recomputed for the changed queries only (a query's shares
    depend on its own labels alone)."""
    if gold.origin is None:
        return _run_coverage(run, gold, k)
    key = ("coverage", *run_version(run), gold.origin, k)
    state = gold.state
    mark = state.mark if state is not None else None

    def read() -> _Kept | None:  # a new process: as kept at the label file's version
        found = kept_values.read_named(KIND, key, state)
        return None if found is None else _Kept(Coverage(found[1]), found[0], (state.epoch, 0))

    def update(kept: _Kept, changed: np.ndarray) -> _Kept | None:
        coverage = _updated_coverage(kept, run, gold, k, changed)
        return None if coverage is None else _Kept(coverage, gold.query_pks, mark)

    def write(kept: _Kept) -> None:
        if state is not None:
            kept_values.write_named(KIND, key, state, gold.query_pks, kept.coverage.per_query)

    return kept_values.brought_up_to_date(
        key,
        state,
        read=read,
        current=lambda kept: kept.mark == mark and np.array_equal(kept.query_pks, gold.query_pks),
        update=update,
        derive=lambda: _Kept(_run_coverage(run, gold, k), gold.query_pks, mark),
        write=write,
    ).coverage


KIND = kept_values.COVERAGE


def top_keys(run, units, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(query pk, query pk · n units + unit index) of each of the run's top ``k`` rows
    per query at these units, in no particular order; from the run's index (its file,
    which the worker wrote after the import), so that the stored results are neither
    read nor ranked again, and kept per process: it does not depend on the labels."""
    from .run_indexes import top_rows  # it imports this app's rankings

    def compute():
        row_query, _rank, unit = top_rows(run, units, k)
        return _TopKeys(row_query, row_query * max(len(units.ids), 1) + unit)

    kept = cache.get(("coverage-top", *run_version(run), units.fingerprint, k), compute)
    return kept.row_query, kept.keys


@dataclass(frozen=True)
class _TopKeys:
    row_query: np.ndarray
    keys: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.row_query.nbytes + self.keys.nbytes


def _run_coverage(run, gold: Gold, k: int) -> Coverage:
    return Coverage(_shares(run, gold, k, gold.query_pks, judged_by_source(gold), _gold_keys(gold)))


def _updated_coverage(kept: _Kept, run, gold: Gold, k: int, changed: np.ndarray):
    """``kept`` brought up to date: the shares of the ``changed`` queries (and of any
    query new to the gold) computed again, the others' kept; None when the sources
    differ (then everything is computed again)."""
    query_pks = gold.query_pks
    if np.array_equal(kept.query_pks, query_pks):  # the gold's queries are the same
        position, known = np.arange(query_pks.size), np.ones(query_pks.size, dtype=bool)
    else:
        position, known = lookup(kept.query_pks, query_pks)
    redo = ~known | _among(query_pks, changed)
    redone = query_pks[redo]
    judged = _judged_of(gold, redone)
    names = [*judged, UNJUDGED]
    if names != list(kept.coverage.per_query):
        return None
    fresh = {}
    if redo.any():
        grades = gold.grades  # sorted by query
        rows = _ranges(
            np.searchsorted(grades.query, redone), np.searchsorted(grades.query, redone, "right")
        )
        width = max(len(gold.units.ids), 1)
        gold_keys = np.sort(grades.query[rows] * width + grades.unit[rows])
        fresh = _shares(run, gold, k, redone, judged, gold_keys)
    per_query = {}
    for name in names:
        old = kept.coverage.per_query[name]
        new = np.empty(query_pks.size, dtype=old.dtype)
        new[~redo] = old[position[~redo]]
        if fresh:
            new[redo] = fresh[name]
        per_query[name] = new
    return Coverage(per_query)


def _shares(
    run,
    gold: Gold,
    k: int,
    query_pks: np.ndarray,
    judged: dict[str, np.ndarray],
    gold_keys: np.ndarray,
) -> dict[str, np.ndarray]:
    """Per query of ``query_pks`` (sorted gold query pks): each source's share of the
    run's top ``k``, and the unjudged share; ``gold_keys`` (sorted) holds at least the
    gold's keys of these queries."""
    row_query, keys = top_keys(run, gold.units, k)
    if query_pks.size < gold.query_pks.size:  # a few changed queries: only their rows
        mine = np.isin(row_query, query_pks)
        row_query, keys = row_query[mine], keys[mine]
    position, known = lookup(query_pks, row_query)
    n_queries = query_pks.size
    index = position[known]
    n_top = np.bincount(index, minlength=n_queries).astype(float)

    def share(hit: np.ndarray) -> np.ndarray:
        count = np.bincount(index[hit[known]], minlength=n_queries).astype(float)
        return np.divide(count, n_top, out=np.zeros(n_queries), where=n_top > 0)

    per_query = {name: share(_among(keys, values)) for name, values in judged.items()}
    judged_any = share(_among(keys, gold_keys))
    per_query[UNJUDGED] = np.where(n_top > 0, 1.0 - judged_any, 1.0)
    return per_query


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The positions ``starts[i]:stops[i]`` of every i, one after the other."""
    lengths = stops - starts
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return offsets + np.arange(int(lengths.sum()))


def _among(keys: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """Whether each key is one of ``sorted_values`` (ascending): ``np.isin`` by binary
    search, without sorting the keys and values together on every view."""
    if not sorted_values.size:
        return np.zeros(keys.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_values, keys), sorted_values.size - 1)
    return sorted_values[at] == keys
