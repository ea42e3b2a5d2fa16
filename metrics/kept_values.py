"""What a dashboard derives from a project's labels, kept in files for new processes.

A new process starts from the project's label file (``metrics.label_state``): its state's
step 0 holds exactly the labels of that file, whose version the state names
(``kept_version``). A value derived at step 0 (a run's per-query values and resample
sums) is written under that version, and a new process starting from the same file reads
it back as its own step 0 and brings it up to date for the changed queries alone, as a
warm process does: a first render after a restart no longer evaluates every run (20 runs
of 10,000 queries: most of a dashboard's first second).

Files are named by the project, the label file's version and a digest of the value's
key; writing one deletes the values of its kind that other versions of the file hold.
Everything here is a cache (``annotator.kept_files``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from annotator import kept_files
from annotator.caches import cache

from .label_state import LabelState

# Every kind of value kept here, by what derives it (the worker prunes each kind of the
# projects that are gone): a run's per-query values and resample sums
# (``metrics.score_cache``), its coverage by source (``metrics.coverage``), the
# fragmentation counts (``metrics.reports``), the pairs people's labels reach
# (``judges.scope``).
VALUES, COVERAGE, DIAGNOSTICS, PEOPLE_REACH = "values", "coverage", "diagnostics", "people-reach"
KINDS = (VALUES, COVERAGE, DIAGNOSTICS, PEOPLE_REACH)


def _stem(kind: str, state: LabelState) -> str | None:
    if state.kept_version is None or state.key[:2] != ("labels", "live"):
        return None
    _labels, _live, project_pk, created_at = state.key
    return kept_files.project_stem(kind, project_pk, created_at)


def _path(kind: str, key: tuple, state: LabelState) -> Path | None:
    stem = _stem(kind, state)
    if stem is None:
        return None
    version = "-".join(str(v) for v in state.kept_version)
    digest = hashlib.blake2b(repr(key).encode(), digest_size=12).hexdigest()
    return kept_files.folder() / f"{stem}.{version}.{digest}.npy"


def read(kind: str, key: tuple, state: LabelState, count: int) -> list[np.ndarray] | None:
    """The ``count`` arrays kept for ``key`` under the state's label file: the value at
    the state's step 0, whatever step it is at now (the caller brings it up to date)."""
    path = _path(kind, key, state)
    return None if path is None else kept_files.read_arrays(path, count)


def write(kind: str, key: tuple, state: LabelState, arrays: list[np.ndarray]) -> None:
    """Keep ``arrays`` for ``key`` when the state is at its step 0; the project's values of
    this kind under other versions of the label file are deleted."""
    path = _path(kind, key, state)
    if path is None or state.step != 0:
        return
    if kept_files.write_arrays(path, arrays):
        version = path.name.split(".")[4]
        for other in path.parent.glob(f"{_stem(kind, state)}.*.npy"):
            if other.name.split(".")[4] != version:
                other.unlink(missing_ok=True)


def read_json(kind: str, key: tuple, state: LabelState):
    """A JSON value ``write_json`` kept for ``key`` at the state's step 0; else None."""
    arrays = read(kind, key, state, 1)
    return None if arrays is None else kept_files.json_of(arrays[0])


def write_json(kind: str, key: tuple, state: LabelState, value) -> None:
    """``write`` a JSON value."""
    write(kind, key, state, [kept_files.json_array(value)])


def write_named(
    kind: str,
    key: tuple,
    state: LabelState,
    query_pks: np.ndarray,
    named: dict[str, np.ndarray],
    extra: list[np.ndarray] = (),
) -> None:
    """``write`` per-query arrays (``named``, each over ``query_pks``) and ``extra``."""
    names = list(named)
    dtypes = [named[n].dtype.str for n in names]
    matrix = np.array([named[n] for n in names], dtype=np.float64)
    text = kept_files.json_array([names, dtypes])
    arrays = [text, query_pks, matrix.reshape(len(names), query_pks.size), *extra]
    write(kind, key, state, arrays)


def read_named(
    kind: str, key: tuple, state: LabelState, n_extra: int = 0
) -> tuple[np.ndarray, dict[str, np.ndarray], list[np.ndarray]] | None:
    """What ``write_named`` kept: (query pks, the named arrays, read-only, in their own
    types, the extra arrays); None when there is none or it does not hold together."""
    arrays = read(kind, key, state, 3 + n_extra)
    if arrays is None:
        return None
    text, query_pks, matrix, *extra = arrays
    try:
        names, dtypes = kept_files.json_of(text)
        dtypes = [np.dtype(d) for d in dtypes]
    except (ValueError, TypeError):
        return None
    if not isinstance(names, list) or len(dtypes) != len(names) or query_pks.dtype != np.int64:
        return None
    if matrix.shape != (len(names), query_pks.size):
        return None
    named = {}
    for name, row, dtype in zip(names, matrix, dtypes, strict=True):
        row = row.astype(dtype)
        row.flags.writeable = False
        named[name] = row
    return query_pks, named, extra


def brought_up_to_date(
    key: tuple,
    state: LabelState | None,
    *,
    read: Callable[[], object | None],
    update: Callable[[object, np.ndarray], object | None],
    derive: Callable[[], object],
    write: Callable[[object], None],
    current: Callable[[object], bool] | None = None,
):
    """What is derived per query from the labels of ``state``, kept per process under
    ``key`` and brought up to date with the state; every value has a ``mark`` (the
    state's when it was made).

    The kept value (a new process: ``read()``, the file's value at the state's step 0) is
    returned when ``current(kept)`` (by default: its mark is the state's); else, when the
    state names the queries changed since its mark, ``update(kept, changed)`` derives
    those again (None: it cannot, as when the sources differ); else ``derive()`` derives
    everything, and ``write`` keeps that in the file (``write_named``: at step 0 only, so
    a spliced value is never written)."""
    kept = cache.peek(key)
    if kept is None and state is not None:
        kept = read()
    if kept is not None and (kept.mark == state.mark if current is None else current(kept)):
        cache.put(key, kept)
        return kept
    value = None
    if kept is not None and kept.mark is not None and state is not None:
        changed = state.changed_since(kept.mark)
        if changed is not None:
            value = update(kept, changed)
    if value is None:
        value = derive()
        write(value)
    cache.put(key, value)
    return value


def prune(kind: str) -> int:
    """Delete this database's values of ``kind`` of projects that no longer exist."""
    return kept_files.prune_project_files(kind)
