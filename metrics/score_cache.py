"""Runs' per-query values and intervals, kept per process and updated per changed query.

An entry follows one label state (``metrics.label_state``): when the state has moved on,
the queries it names as changed (and any query new to the gold) are evaluated again and
spliced into the kept values, and the bootstrap resample sums are recomputed only for the
blocks of queries holding them (``numerics.significance.resample_sums``). Per-query values
depend on their own query alone and the sums on their own block, so the result is the
full computation's, bit for bit (tested).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from annotator import kept_files
from numerics.significance import (
    WEIGHT_CELLS,
    bootstrap_cis,
    means_of_sums,
    percentile_intervals,
    resample_sums,
    resample_weights,
)

from . import kept_values
from .label_state import LabelState, key_lock
from .rankings import cache, lookup


@dataclass(frozen=True)
class _Scores:
    query_pks: np.ndarray
    values: dict[str, np.ndarray]
    sums: np.ndarray | None
    intervals: dict[str, tuple[float, float]]
    mark: tuple[int, int]

    @property
    def nbytes(self) -> int:
        arrays = [self.query_pks, *self.values.values()]
        return sum(a.nbytes for a in arrays) + (0 if self.sums is None else self.sums.nbytes)


def named_intervals(names: list[str], result) -> dict[str, tuple[float, float]]:
    """{measure: (low, high)} from ``(lows, highs)``; empty for None."""
    if result is None:
        return {}
    return {n: (float(lo), float(hi)) for n, lo, hi in zip(names, *result, strict=True)}


def run_values(
    key: tuple,
    state: LabelState,
    query_pks: np.ndarray,
    evaluate: Callable[[np.ndarray], dict[str, np.ndarray]],
    *,
    n_resamples: int,
) -> tuple[dict[str, np.ndarray], dict[str, tuple[float, float]]]:
    """(per-query values over ``query_pks``, 95 % bootstrap intervals of their means) of
    one run against one gold; ``evaluate(query_keys)`` gives the values over some of the
    gold's queries. ``key`` names the run, the gold, the measures and the threshold."""
    key = ("values", *key)
    kept = cache.peek(key)
    if kept is not None and kept.mark == state.mark and np.array_equal(kept.query_pks, query_pks):
        return kept.values, kept.intervals
    with key_lock(key):  # one computation per key; other keys go on meanwhile
        return _run_values(key, state, query_pks, evaluate, n_resamples)


def _run_values(key, state, query_pks, evaluate, n_resamples):
    scores = kept_values.brought_up_to_date(
        key,
        state,
        read=lambda: _read_kept(key, state),
        current=lambda kept: kept.mark == state.mark and np.array_equal(kept.query_pks, query_pks),
        update=lambda kept, changed: _scores(
            state, query_pks, evaluate, n_resamples, kept, changed
        ),
        derive=lambda: _scores(state, query_pks, evaluate, n_resamples),
        write=lambda scores: _keep(key, state, scores),
    )
    return scores.values, scores.intervals


def _scores(state, query_pks, evaluate, n_resamples, kept=None, changed=None) -> _Scores:
    """The values over ``query_pks`` and their intervals: every query evaluated, or with
    ``kept`` and the queries ``changed`` since, those (and any query new to the gold)
    evaluated again and spliced in, and the resample sums of their blocks alone."""
    if kept is None:
        values = evaluate(query_pks)
        redo = None
    else:
        position, known = lookup(kept.query_pks, query_pks)
        redo = ~known | np.isin(query_pks, changed)
        fresh = evaluate(query_pks[redo]) if redo.any() else None
        values = {}
        for name, old in kept.values.items():
            new = np.empty(query_pks.size, dtype=old.dtype)
            new[~redo] = old[position[~redo]]
            if fresh is not None:
                new[redo] = fresh[name]
            values[name] = new
    names = list(values)
    for array in values.values():
        array.flags.writeable = False  # shared by every request until the labels change
    matrix = np.array([values[n] for n in names], dtype=np.float64).reshape(len(names), -1)
    weights = kept_weights(query_pks.size, n_resamples)
    if redo is not None and kept.sums is not None and np.array_equal(kept.query_pks, query_pks):
        sums = resample_sums(
            matrix,
            n_resamples=n_resamples,
            previous=kept.sums,
            changed=np.flatnonzero(redo),
            weights=weights,
        )
    else:
        sums = resample_sums(matrix, n_resamples=n_resamples, weights=weights)
    if sums is not None:
        intervals = named_intervals(
            names, percentile_intervals(means_of_sums(sums, query_pks.size))
        )
    else:  # too many queries to keep the resample weights: the blocked path, in full
        intervals = named_intervals(
            names, bootstrap_cis(matrix, n_resamples=n_resamples) if query_pks.size else None
        )
    return _Scores(query_pks, values, sums, intervals, state.mark)


KIND = kept_values.VALUES
# Weights files kept at once: one per query count (a count moves as queries get labels).
WEIGHT_FILES = 4


def kept_weights(n: int, n_resamples: int) -> np.ndarray | None:
    """``resample_weights(n, n_resamples)``, kept per process and in a file: drawing them
    took 0.4 s at 5,000 queries and 0.6 s at 10,000, on every first render that
    resampled; the file holds the counts as bytes and is read back in 0.05 s. None when
    they are not kept (``resample_weights``)."""
    if n == 0 or n * n_resamples > WEIGHT_CELLS:
        return None
    return cache.get(
        ("weights", n, n_resamples), lambda: _Weights(_read_or_draw(n, n_resamples))
    ).weights


@dataclass(frozen=True)
class _Weights:
    weights: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.weights.nbytes


def _read_or_draw(n: int, n_resamples: int) -> np.ndarray:
    folder = kept_files.folder()
    path = folder / f"weights.{n}.{n_resamples}.npy"
    arrays = kept_files.read_arrays(path, 1)
    if arrays is not None and arrays[0].shape == (n, n_resamples) and arrays[0].dtype == np.uint8:
        weights = arrays[0].astype(np.float64)
        weights.flags.writeable = False
        return weights
    weights = resample_weights(n, n_resamples)
    if weights.max(initial=0) <= 255:  # a count above 255 is kept in memory only
        kept_files.write_arrays(path, [weights.astype(np.uint8)])
        newest = sorted(folder.glob("weights.*.npy"), key=_modified, reverse=True)
        for older in newest[WEIGHT_FILES:]:
            older.unlink(missing_ok=True)
    return weights


def _modified(path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _keep(key: tuple, state: LabelState, scores: _Scores) -> None:
    names = list(scores.values)
    sums = np.zeros((0, 0, 0)) if scores.sums is None else scores.sums
    bounds = np.array([scores.intervals.get(n, (np.nan, np.nan)) for n in names]).reshape(-1, 2)
    kept_values.write_named(KIND, key, state, scores.query_pks, scores.values, [sums, bounds])


def _read_kept(key: tuple, state: LabelState) -> _Scores | None:
    """The values kept for ``key`` at the state's step 0, as of that step; None when
    there are none or they do not hold together."""
    found = kept_values.read_named(KIND, key, state, 2)
    if found is None:
        return None
    query_pks, values, (sums, bounds) = found
    names = list(values)
    if bounds.shape != (len(names), 2):
        return None
    if sums.size and (sums.ndim != 3 or sums.shape[1] != len(names)):
        return None
    intervals = {
        n: (float(lo), float(hi))
        for n, (lo, hi) in zip(names, bounds.tolist(), strict=True)
        if not (np.isnan(lo) and np.isnan(hi))
    }
    return _Scores(query_pks, values, sums if sums.size else None, intervals, (state.epoch, 0))
