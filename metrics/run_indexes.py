"""A run's index at a level, kept per process and in a file that the next process reads.

Building a run's index (its results read and inflated, lifted to the level's units,
ranked and its (query, unit) keys sorted) is the costly part of a dashboard's first
render in a fresh process: 50–100 ms per run of 500,000 results. Runs never change once
imported and units are named by their fingerprint, so the index is written once to
``ASSAY_RUN_INDEX_DIR`` (uncompressed ``.npy`` arrays, replaced atomically) and read
back in a few milliseconds. The worker writes each run's file at its own level right
after the import (``metrics.tasks``); any process writes the file of an index it had to
build. A file that cannot be read, or does not fit the run and its units, is built again.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from annotator import kept_files
from gold.units import Units
from numerics.measures import RunIndex, index_run

from .models import Run
from .rankings import RankedRun, cache, forget_run, rank_at, ranked_run, unit_codes

log = logging.getLogger(__name__)

FIELDS = ("query", "start", "count", "sorted_key", "row_of_key")


def run_index(run: Run, units: Units) -> RunIndex:
    """The run at the units' level, indexed by (query pk, unit code): from the process's
    cache, else from its file, else built (and its file written)."""
    key = ("index", run.pk, run.n_results, run.created_at, units.fingerprint)
    return cache.get(key, lambda: _read_or_build(run, units))


def top_rows(run: Run, units: Units, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query pk, rank from 0, unit index) of each query's top ``k`` rows of the run at
    these units (trec_eval's order, ties broken as it does), grouped by query, in no
    particular order within a query; from their file, else from the run's index (so that
    the stored results are neither read nor ranked again), then kept in a file: a pass
    over every row of the index, for each of 20 runs, was a dashboard's first 0.4 s."""
    path = kept_files.folder() / (
        f"{_version_prefix(run.pk, run.n_results, run.created_at)}{units.fingerprint}.top{k}.npy"
    )
    arrays = kept_files.read_arrays(path, 3)
    if arrays is not None and _tops_fit(arrays, len(units.ids), k):
        return tuple(arrays)
    rows = _top_rows(run_index(run, units), units, k)
    kept_files.write_arrays(path, list(rows))
    return rows


def _tops_fit(arrays: list[np.ndarray], n_units: int, k: int) -> bool:
    query, rank, unit = arrays
    return (
        all(a.ndim == 1 and a.size == query.size and a.dtype.kind in "iu" for a in arrays)
        and bool(((rank >= 0) & (rank < k)).all())
        and bool(((unit >= 0) & (unit < n_units)).all())
    )


def _top_rows(index: RunIndex, units: Units, k: int):
    # The sorted keys are grouped by query position (position · n_items + item), count[i]
    # of them for the i-th query: each key's position without dividing.
    position = np.repeat(np.arange(index.query.size), index.count)
    rank = index.row_of_key - index.start[position]
    top = rank < k
    code = index.sorted_key[top] % max(index.n_items, 1)
    return index.query[position[top]], rank[top], units.unit_of_code[code]


def keep_file(run: Run, units: Units) -> None:
    """Write the run's index file (and its ranking's) at these units unless it is there:
    what the worker does after an import (nothing is kept in the process's own cache)."""
    path = index_path(run, units)
    if not path.exists() or not _ranked_path(run, units).exists():
        ranked = ranked_from_file(run, units)
        write(
            path,
            index_run(
                ranked.row_query, units.codes[ranked.item], ranked.score, n_items=units.codes.size
            ),
        )


def _ranked_path(run: Run, units: Units) -> Path:
    prefix = _version_prefix(run.pk, run.n_results, run.created_at)
    return kept_files.folder() / f"{prefix}{units.fingerprint}.ranked.npy"


def ranked_from_file(run: Run, units: Units, *, write: bool = True) -> RankedRun:
    """``rankings.rank_at`` from its file, else computed (and, with ``write``, written): a
    drill-down's first render read and ranked the whole stored run (0.3 s at 500,000
    results)."""
    path = _ranked_path(run, units)
    arrays = kept_files.read_arrays(path, 4)
    if arrays is not None:
        ranked = RankedRun(*arrays)
        if _ranked_fits(ranked, len(units.ids)):
            return ranked
    ranked = rank_at(run, units)
    if write:
        kept_files.write_arrays(path, [ranked.query, ranked.bounds, ranked.item, ranked.score])
    return ranked


def _ranked_fits(ranked: RankedRun, n_units: int) -> bool:
    """Cheap checks that the arrays are a ranking over ``n_units`` units."""
    query, bounds, item, score = ranked.query, ranked.bounds, ranked.item, ranked.score
    return (
        query.dtype.kind in "iu"
        and item.dtype.kind in "iu"
        and bounds.dtype.kind in "iu"
        and score.dtype.kind == "f"
        and bounds.size == query.size + 1
        and item.size == score.size
        and (bounds.size == 0 or (int(bounds[0]) == 0 and int(bounds[-1]) == item.size))
        and bool((np.diff(bounds) >= 0).all())
        and bool(((item >= 0) & (item < n_units)).all())
    )


def build(run: Run, units: Units, *, cached: bool = True) -> RunIndex:
    """The index computed from the stored run; ``cached``: the ranked run and the unit
    codes come from (and go to) the process's cache."""
    if cached:
        ranked, code = ranked_run(run, units), unit_codes(units)
    else:
        ranked, code = rank_at(run, units), units.codes
    return index_run(ranked.row_query, code[ranked.item], ranked.score, n_items=code.size)


def _read_or_build(run: Run, units: Units) -> RunIndex:
    path = index_path(run, units)
    index = read(path, n_items=len(units.ids))
    if index is None:
        index = build(run, units)
        write(path, index)
    return index


def index_path(run: Run, units: Units) -> Path:
    """The file of the run's index at these units. The name holds what identifies the
    index: the database, the run (pk, result count, creation time to the microsecond) and
    the units' fingerprint (their level, ids, pks and spans)."""
    name = f"{_version_prefix(run.pk, run.n_results, run.created_at)}{units.fingerprint}.npy"
    return kept_files.folder() / name


def _run_prefix(run_pk: int) -> str:
    """What the names of one run's files begin with."""
    return f"{kept_files.database_key()}-{run_pk}-"


def _version_prefix(run_pk: int, n_results: int, created_at) -> str:
    """What the names of one run's files begin with, for this version of the run (a run
    replaced by a new import may come back with the same pk)."""
    return f"{_run_prefix(run_pk)}{n_results}-{int(created_at.timestamp() * 1_000_000)}-"


def read(path: Path, *, n_items: int) -> RunIndex | None:
    """The index kept in ``path``; None when there is none or it does not hold together."""
    arrays = kept_files.read_arrays(path, len(FIELDS) + 1)
    if arrays is None:
        return None
    *fields, kept_items = arrays
    index = RunIndex(*fields, n_items=int(kept_items))
    if not _holds_together(index, n_items):
        log.warning("run index %s does not fit its run: building it again", path.name)
        return None
    return index


def _holds_together(index: RunIndex, n_items: int) -> bool:
    """Cheap checks that the arrays are the index of a run over ``n_items`` units."""
    n_queries, n_rows = index.query.size, index.sorted_key.size
    return (
        index.n_items == n_items
        and index.start.size == n_queries
        and index.count.size == n_queries
        and index.row_of_key.size == n_rows
        and int(index.count.sum()) == n_rows
        and all(getattr(index, f).dtype.kind in "iu" for f in FIELDS)
    )


def write(path: Path, index: RunIndex) -> None:
    """Keep ``index`` in ``path`` (``annotator.kept_files.write_arrays``)."""
    kept_files.write_arrays(
        path, [*(getattr(index, name) for name in FIELDS), np.int64(index.n_items)]
    )


def stored_rows(run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(each query pk once, ascending; bounds: query i's rows are bounds[i]:bounds[i+1];
    item pk of every row) of the run as stored, memory-mapped from its file: one query's
    rows cost a few pages, where the stored results are one compressed blob to inflate
    whole (2.5 s for 20 runs of 500,000 results). The file is written by the worker after
    the import, or here by the first reader; one that does not fit is written again."""
    path = kept_files.folder() / (
        f"{_version_prefix(run.pk, run.n_results, run.created_at)}stored.npy"
    )
    packed = _read_stored(path, run.n_results)
    if packed is None:
        packed = _packed_rows(run)
        kept_files.write_arrays(path, [packed])
    n_queries = int(packed[0])
    return (
        packed[1 : 1 + n_queries],
        packed[1 + n_queries : 2 + 2 * n_queries],
        packed[2 + 2 * n_queries :],
    )


def keep_stored_file(run: Run) -> None:
    """Write the run's stored-rows file unless it is there (the worker, after an import)."""
    stored_rows(run)


def _packed_rows(run: Run) -> np.ndarray:
    ranked = RankedRun.from_rows(*run.get_results(scores=False))  # the pool shows none
    parts = [[ranked.query.size], ranked.query, ranked.bounds, ranked.item]
    return np.concatenate(parts).astype(np.int64)


def _read_stored(path: Path, n_results: int) -> np.ndarray | None:
    try:
        packed = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError) as error:
        log.warning("run file %s unreadable (%s): writing it again", path.name, error)
        return None
    n_queries = int(packed[0]) if packed.ndim == 1 and packed.size else -1
    fits = (
        packed.dtype == np.int64
        and n_queries >= 0
        and packed.size == 2 + 2 * n_queries + n_results
        and int(packed[1 + 2 * n_queries]) == n_results
    )
    if not fits:
        log.warning("run file %s does not fit its run: writing it again", path.name)
        return None
    return packed


def forget(run_pk: int) -> None:
    """Free what is kept for a deleted run: its cached arrays and its index files."""
    forget_run(run_pk)
    folder = kept_files.folder()
    if folder.is_dir():
        for path in folder.glob(f"{_run_prefix(run_pk)}*.npy"):
            path.unlink(missing_ok=True)


def prune() -> int:
    """Delete this database's index files of runs that no longer exist (deleted with their
    project or chunking, or replaced by a new import); how many were deleted."""
    folder = kept_files.folder()
    if not folder.is_dir():
        return 0
    paths = list(folder.glob(f"{kept_files.database_key()}-*.npy"))
    pks = {int(p.name.split("-")[1]) for p in paths if p.name.split("-")[1].isdigit()}
    alive = {
        _version_prefix(*row)
        for row in Run.objects.filter(pk__in=pks).values_list("pk", "n_results", "created_at")
    }
    gone = [p for p in paths if p.name[: p.name.rindex("-") + 1] not in alive]
    for path in gone:
        path.unlink(missing_ok=True)
    return len(gone)
