"""A run's results in trec_eval order, ranked once and cached: what every reader of a run takes.

A run is stored in trec_eval's order (``Run.set_results`` → ``storage_order``): query,
score descending, then item id descending in byte order. Readers never sort again:

- the labelling pool (``pool_rankings``, registered with ``annotator.pool`` at start-up)
  reads one query's rows in the stored order, memory-mapped from the run's file;
- the dashboards, drill-down and run files read ``ranked_run``: the run at an evaluation
  level. At the run's own level that is the stored order; a chunk run lifted to documents
  or pages keeps each unit's best chunk score and is ranked once at that level.

Everything derived here is kept in one per-process cache bounded by bytes
(``ASSAY_RUN_CACHE_MB``). Runs never change once imported and units are keyed by their
fingerprint, so nothing cached is ever stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from annotator.caches import cache
from annotator.importing.common import named_rows
from annotator.models import Chunk, Chunking, Document, Query
from gold.units import DOCUMENTS, PAGES, Units, level_units
from numerics.id_order import byte_order_codes
from numerics.measures import rank_order

from .models import Run, RunLevel


class LevelMismatch(ValueError):
    pass


def lookup(sorted_keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``values`` in ``sorted_keys`` (unique) and whether each is present.

    Database ids are nearly contiguous, so when their span is small a dense table maps
    each id to its position in one gather (much faster than a binary search per value).
    """
    values = np.asarray(values, dtype=np.int64)
    if sorted_keys.size == 0:
        return np.zeros(values.size, dtype=np.int64), np.zeros(values.size, dtype=bool)
    low, high = int(sorted_keys[0]), int(sorted_keys[-1])
    if high - low <= 8 * sorted_keys.size + 1024:
        table = np.full(high - low + 2, -1, dtype=np.int64)  # last slot: out of range
        table[sorted_keys - low] = np.arange(sorted_keys.size)
        offset = values - low
        offset[(offset < 0) | (offset > high - low)] = high - low + 1
        position = table[offset]
        known = position >= 0
        return np.where(known, position, 0), known
    position = np.minimum(np.searchsorted(sorted_keys, values), sorted_keys.size - 1)
    return position, sorted_keys[position] == values


def unit_codes(units: Units) -> np.ndarray:
    """Unit index → code whose order is the unit ids' byte order (trec_eval's); kept with
    the units (and in their file)."""
    return units.codes


def storage_order(run: Run, query_pk, item_pk, score) -> np.ndarray:
    """Row order in which ``run`` stores its results: ``rank_order`` with the items' ids
    in byte order (items unknown to the run's chunking or documents tie below all)."""
    if run.chunking_id is not None:
        items, column = Chunk.objects.filter(chunking_id=run.chunking_id), "chunk_id"
    else:
        items, column = Document.objects.filter(project_id=run.project_id), "doc_id"
    # Only the order among the run's own items matters: a short run reads their ids by
    # key (not the ids of all 5,000,000 chunks); a long one reads them all, once.
    rows = list(named_rows(items, "pk", np.unique(item_pk).tolist(), "pk", column))
    pks = np.array([pk for pk, _id in rows], dtype=np.int64)
    codes = byte_order_codes([item_id for _pk, item_id in rows])
    by_pk = np.argsort(pks)
    sorted_pks, sorted_codes = pks[by_pk], codes[by_pk] if pks.size else np.zeros(1, np.int64)
    item_code = np.empty(len(item_pk), dtype=np.int64)
    # A block of rows at a time, so that a 10,000,000-result run's lookup needs no
    # run-sized temporaries (an import must stay well under 1 GB).
    for start in range(0, item_code.size, 1 << 20):
        block = slice(start, start + (1 << 20))
        position, known = lookup(sorted_pks, item_pk[block])
        item_code[block] = np.where(known, sorted_codes[position], -1)
    return rank_order(query_pk, item_code, score)


@dataclass(frozen=True)
class RankedRun:
    """A run's rows in trec_eval order: grouped by query (ascending), best first."""

    query: np.ndarray  # each query pk once, ascending
    bounds: np.ndarray  # the rows of query[i] are bounds[i]:bounds[i + 1]
    item: np.ndarray  # stored item pk, or unit index at an evaluation level
    score: np.ndarray

    @classmethod
    def from_rows(cls, query: np.ndarray, item: np.ndarray, score: np.ndarray) -> RankedRun:
        """From rows already in rank order."""
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if query.size else []
        bounds = np.append(np.asarray(starts, dtype=np.int64), query.size)
        return cls(query[bounds[:-1]], bounds, item, score)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.query, self.bounds, self.item, self.score))

    @property
    def row_query(self) -> np.ndarray:
        """The query pk of every row."""
        return np.repeat(self.query, np.diff(self.bounds))

    def rows(self, query_pk: int) -> slice:
        """The rows of one query (empty when the run did not retrieve for it)."""
        i = int(np.searchsorted(self.query, query_pk))
        if i < self.query.size and self.query[i] == query_pk:
            return slice(int(self.bounds[i]), int(self.bounds[i + 1]))
        return slice(0, 0)


def forget_run(run_pk: int) -> int:
    """Free everything cached for a run (its stored, ranked and indexed arrays)."""
    return cache.discard(lambda key: len(key) > 1 and key[0] in RUN_KEYS and key[1] == run_pk)


RUN_KEYS = ("ranked", "index")


def run_version(run: Run) -> tuple:
    return (run.pk, run.n_results, run.n_queries, run.created_at)


def can_evaluate(run: Run, level: str) -> bool:
    if run.level == RunLevel.DOCUMENT:
        return level == DOCUMENTS
    return level in (DOCUMENTS, PAGES) or (run.chunking is not None and run.chunking.name == level)


def ranked_run(run: Run, units: Units, *, keep: bool = False) -> RankedRun:
    """The run at the units' level, items as unit indices, in trec_eval order; cached.

    - a chunk run at its own chunking's level, or a document run at document level: the
      stored order (results whose item is no longer a unit are left out);
    - a chunk run at document (or page) level: each chunk stands for its document (or the
      page holding its first character) and a unit's score is its best chunk's score —
      the usual way to judge a chunk retriever by the documents it surfaces.

    Read from the ranking's file when there is one (the worker writes it at the run's own
    units); ``keep``: write it when there is not (a drill-down does; an index built in a
    request does not: 20 runs at three levels would write half a gigabyte).
    """
    from .run_indexes import ranked_from_file  # it imports this module

    key = ("ranked", *run_version(run), units.fingerprint)
    return cache.get(key, lambda: ranked_from_file(run, units, write=keep))


def rank_at(run: Run, units: Units) -> RankedRun:
    """``ranked_run`` computed, not cached."""
    if not can_evaluate(run, units.level):
        raise LevelMismatch(f"run {run.name!r} cannot be evaluated at level {units.level!r}")
    query, item, score = run.get_results()
    if run.level == RunLevel.DOCUMENT or run.chunking.name == units.level:
        position, known = lookup(units.pk, item)  # units are ordered by pk
        return RankedRun.from_rows(query[known], position[known], score[known])
    # The run's chunking as its units (pk order), kept per process: every run over the
    # same chunking reads it once, not once per run.
    own = level_units(run.project, run.chunking.name)
    chunks = np.column_stack([own.pk, own.document, own.start]).astype(np.int64).reshape(-1, 3)
    row, known = lookup(chunks[:, 0], item)
    query, score, row = query[known], score[known], row[known]
    document, start = chunks[row, 1], chunks[row, 2]
    if units.level == DOCUMENTS:
        unit = np.searchsorted(units.pk, document)
    else:  # the page holding the chunk's first character
        key_units = units.document * (2**31) + units.start
        unit = np.searchsorted(key_units, document * (2**31) + start, side="right") - 1
    # Stored rows are ranked, so a (query, unit)'s first row holds its best score.
    query_index = np.cumsum(np.r_[False, query[1:] != query[:-1]])
    _keys, first = np.unique(query_index * len(units.ids) + unit, return_index=True)
    first.sort()
    query, unit, score = query[first], unit[first], score[first]
    order = rank_order(query, unit_codes(units)[unit], score)
    return RankedRun.from_rows(query[order], unit[order], score[order])


def pool_rankings(query: Query, chunking: Chunking | None = None) -> list[Sequence[int]]:
    """The labelling pool's ranking source: for every chunk-level run of the query's
    project (over ``chunking`` when given), the query's chunk pks in stored order, read
    from each run's memory-mapped stored rows (``run_indexes.stored_rows``)."""
    from .run_indexes import stored_rows  # it imports this module

    runs = Run.objects.filter(project_id=query.project_id, level=RunLevel.CHUNK).only(
        "pk", "n_results", "n_queries", "created_at"
    )
    if chunking is not None:
        runs = runs.filter(chunking=chunking)
    rankings: list[Sequence[int]] = []
    for run in runs.order_by("pk"):
        queries, bounds, item = stored_rows(run)
        i = int(np.searchsorted(queries, query.pk))
        if i < queries.size and queries[i] == query.pk and bounds[i + 1] > bounds[i]:
            rankings.append(item[int(bounds[i]) : int(bounds[i + 1])].tolist())
    return rankings
