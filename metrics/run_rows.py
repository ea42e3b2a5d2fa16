"""A run file's rows with the project's primary keys, from whichever reader fits the file.

A TREC or TSV run is read by the one TREC reader into a ``RunFrame`` (polars, a block
of text at a time) and its ids matched to the project's by a hash join, so that a
10,000,000-line run imports in well under 1 GB; JSONL, JSON, CSV and XLSX files by
``formats.read_run``. Both name every bad line. Either way the importer
sees the same ``RunRows``: a primary key per row (-1 where the project lacks the id),
scores, line numbers, and the ids of any rows it must name in an error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from annotator.importing import common as importing
from formats import LineErrors, Ranked, check_file, read_run
from formats.arrays import RUN_LAYOUTS, run_format
from formats.columnar import RunFrame, read_trec_run

# The pks of the items a file names: a dict, or a function of the file's distinct ids
# (None: too many to name, every pk is wanted) that reads them.
ItemPks = dict[str, int] | Callable[[set[str] | None], dict[str, int]]


def _item_pks(item_pks: ItemPks, count: int, distinct: Callable[[], set[str]]) -> dict[str, int]:
    """``count``: the file's distinct ids or (the TREC reader) lines, an upper bound known
    without a pass over the ids."""
    if isinstance(item_pks, dict):
        return item_pks
    return item_pks(distinct() if count <= importing.NAMED_IDS else None)


class RunRows:
    """Row i: query pk ``query[i]``, item pk ``item[i]`` (-1: unknown to the project),
    ``score[i]``; the subclasses know each row's line and ids."""

    query: np.ndarray
    item: np.ndarray
    score: np.ndarray
    size: int
    _item_pks: dict[str, int]

    def lines(self, rows: np.ndarray) -> np.ndarray:
        """The file line of each of ``rows``."""
        raise NotImplementedError

    def query_ids(self, rows: np.ndarray, *, distinct: bool = False) -> list[str]:
        """The query id of each of ``rows``; with ``distinct``, each id once, in byte
        order."""
        raise NotImplementedError

    def item_ids(self, rows: np.ndarray, *, distinct: bool = False) -> list[str]:
        """The item id of each of ``rows``, or (``distinct``) each once, in byte order."""
        raise NotImplementedError

    def all_item_ids(self) -> set[str]:
        """Every distinct item id of the file."""
        raise NotImplementedError

    def distinct_items(self) -> tuple[set[str], float]:
        """The file's distinct item ids and the share of them the project knows."""
        names = self.all_item_ids()
        known = sum(1 for name in names if name in self._item_pks)
        return names, known / len(names) if names else 1.0


def read_rows(
    path: Path | str,
    fmt: str | None,
    errors: LineErrors,
    query_pks: dict[str, int],
    item_pks: ItemPks,
    *,
    max_bytes: int | None = None,
    progress=None,
) -> RunRows:
    """The run's rows with ``query_pks`` and ``item_pks`` looked up; bad lines go to
    ``errors`` (and are left out), as ``read_run`` does."""
    fmt = run_format(path, fmt)
    if fmt not in RUN_LAYOUTS:
        ranked = read_run(path, fmt, errors=errors, max_bytes=max_bytes, progress=progress)
        return CheckedRows(ranked, query_pks, item_pks)
    check_file(Path(path), max_bytes)
    frame = read_trec_run(path, RUN_LAYOUTS[fmt], errors=errors, max_bytes=max_bytes)
    if progress is not None:
        progress(1.0)
    return ColumnarRows(frame, query_pks, item_pks)


def _pks(ids: np.ndarray, pks: dict[str, int]) -> np.ndarray:
    """The primary key of each distinct id (UTF-8 bytes), -1 where the project has none."""
    return np.array([pks.get(i.decode(), -1) for i in ids.tolist()], dtype=np.int64)


class CheckedRows(RunRows):
    """From the checked reader's arrays: ids are coded (in byte order), so each distinct
    id is looked up once."""

    def __init__(self, ranked: Ranked, query_pks: dict[str, int], item_pks: ItemPks):
        self._ranked = ranked
        item_pks = _item_pks(item_pks, ranked.items.size, self.all_item_ids)
        self._item_pks = item_pks
        self.query = _pks(ranked.qids, query_pks)[ranked.query]
        self.item = _pks(ranked.items, item_pks)[ranked.item]
        self.score = ranked.score
        self.size = ranked.line.size

    def lines(self, rows):
        return self._ranked.line[rows]

    def query_ids(self, rows, *, distinct=False):
        return _names(self._ranked.qids, self._ranked.query[rows], distinct)

    def item_ids(self, rows, *, distinct=False):
        return _names(self._ranked.items, self._ranked.item[rows], distinct)

    def all_item_ids(self):
        return {i.decode() for i in self._ranked.items.tolist()}


class ColumnarRows(RunRows):
    """From a ``RunFrame``: item ids are matched by a hash join, a block of rows at a
    time."""

    def __init__(self, frame: RunFrame, query_pks: dict[str, int], item_pks: ItemPks):
        self._frame = frame
        item_pks = _item_pks(item_pks, frame.query.size, self.all_item_ids)
        self._item_pks = item_pks
        self.query = _pks(frame.qids, query_pks)[frame.query]
        self.item = frame.lookup(list(item_pks), np.fromiter(item_pks.values(), np.int64))
        self.score = frame.score
        self.size = frame.query.size

    def lines(self, rows):
        return self._frame.lines(rows)

    def query_ids(self, rows, *, distinct=False):
        return _names(self._frame.qids, self._frame.query[rows], distinct)

    def item_ids(self, rows, *, distinct=False):
        ids = self._frame.ids.gather(rows)
        if not distinct:
            return ids.to_list()
        return sorted(ids.unique().to_list(), key=str.encode)

    def all_item_ids(self):
        return set(self._frame.ids.unique().to_list())


def _names(ids: np.ndarray, codes: np.ndarray, distinct: bool) -> list[str]:
    """``ids[codes]`` decoded; with ``distinct`` each once, in byte order."""
    if distinct:
        return [i.decode() for i in np.sort(ids[np.unique(codes)]).tolist()]
    return [ids[c].decode() for c in codes.tolist()]
