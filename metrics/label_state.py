"""Per-process labels behind the dashboards, brought up to date from the label history.

A project's labels are kept per process under its label revision
(``annotator.revisions``): checking them costs one primary-key read. When the revision
has moved, the history rows of that project newer than those already seen name exactly
the queries whose labels changed: only those queries' labels are read again and spliced
in, and the grades derived at each level (``level_grades``) and the runs' scores
(``metrics.score_cache``) are recomputed for those queries alone. A revision the history
does not explain (labels deleted by cascade, a restored backup: its ``reset``) makes
the next request read everything again. A frozen gold set never changes: it is read once.

Each key (a project's labels, one level's grades) has its own lock, held while it is
brought up to date: a slow reload of one project never holds up another's dashboard.

Each state has an ``epoch`` (a number new with every full read) and a ``step`` (one
more with every incremental update); what is derived from a state records both, and
``changed_since`` names the queries changed since then, or None for "start again".
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from annotator import kept_files
from annotator.models import Project
from annotator.revisions import revision
from annotator.sources import Sources
from gold.label_changes import changes_since, current_version, follows
from gold.models import GoldSet
from gold.policy import ConsensusPolicy
from gold.units import LabelRows, UnitGrades, Units, consensus_of, frozen_labels, live_labels
from gold.units import unit_grades as compute_unit_grades
from numerics.mapping import MappingPolicy

from .rankings import cache

LOG = 64  # incremental updates remembered; what is older starts again from scratch
_epochs = itertools.count(1)
MAX_LOCKS = 10_000
_locks: dict[tuple, threading.Lock] = {}
_locks_guard = threading.Lock()  # held only to find a key's lock, never while reading


def key_lock(key: tuple) -> threading.Lock:
    """The lock of one cache key (a project's labels, a level's grades, a run's values)."""
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            if len(_locks) >= MAX_LOCKS:  # forget the locks nobody holds
                for old in [k for k, v in _locks.items() if not v.locked()]:
                    del _locks[old]
            lock = _locks[key] = threading.Lock()
        return lock


@dataclass(frozen=True)
class LabelState:
    """A project's labels (live, or a frozen gold set's) as of ``version``."""

    labels: LabelRows
    # (label revision, newest judgment history pk, newest adjudication history pk) of the
    # project when read; None for a frozen gold set.
    version: tuple | None
    key: tuple
    epoch: int
    step: int = 0
    log: tuple = ()  # (step, changed query pks) of the latest incremental updates
    # The version of the project's label file whose labels this epoch started from (its
    # step 0), or None: what is derived at step 0 may be kept in files under it
    # (``metrics.kept_values``), for new processes that start from the same file.
    kept_version: tuple | None = None

    @property
    def mark(self) -> tuple[int, int]:
        return (self.epoch, self.step)

    @property
    def nbytes(self) -> int:
        rows = self.labels
        arrays = (rows.query, rows.source, rows.document, rows.start, rows.end, rows.grade)
        return sum(a.nbytes for a in arrays) + sum(c.nbytes for _s, c in self.log)

    def changed_since(self, mark: tuple[int, int]) -> np.ndarray | None:
        """Query pks whose labels changed since ``mark`` (a state's ``mark``); None when
        that is not known (another epoch, or older than the log)."""
        epoch, step = mark
        if epoch != self.epoch or step > self.step:
            return None
        changes = [c for s, c in self.log if s > step]
        if len(changes) != self.step - step:
            return None
        return np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *changes]))


def label_state(project: Project, gold_set: GoldSet | None = None) -> LabelState:
    """The labels behind the gold: a frozen version's (read once), or the live ones,
    brought up to date with the project's label revision."""
    if gold_set is not None:
        key = ("labels", "gold", gold_set.pk, gold_set.created_at)
        return cache.get(key, lambda: LabelState(frozen_labels(gold_set), None, key, next(_epochs)))
    # The creation time tells a project from an earlier one that had its pk.
    key = ("labels", "live", project.pk, project.created_at)
    now = revision(project.pk)
    state = cache.peek(key)
    if state is not None and state.version[0] == now.number:
        return state
    with key_lock(key):
        state = cache.peek(key)
        if state is not None and state.version[0] == now.number:
            return state
        from_file = state is None
        if from_file:  # a new process: the labels as a process last kept them
            state = _read_kept(project, key)
        updated = None
        if state is not None and state.version[0] == now.number:  # the file is current
            updated = state
        elif state is not None and follows(state.version, now):
            updated = _advance(state, project, now.number)
        if updated is None:
            version = current_version(project, now.number)
            labels = live_labels(project, sources=None)
            updated = LabelState(labels, version, key, next(_epochs))
            updated = _keep(project, updated)
        elif from_file and _worth_keeping_again(state, updated):
            # A new epoch from the caught-up labels: what files hold under the old one
            # would cost more to bring up to date than to derive again.
            fresh = LabelState(updated.labels, updated.version, key, next(_epochs))
            updated = _keep(project, fresh)
        cache.put(key, updated)
        return updated


# A new process that caught up with more than this share of the labelled queries keeps
# its labels as the new file; below it, the file (and what is derived under it) stays,
# and each new process re-reads only the changed queries.
KEEP_AGAIN_SHARE = 0.25


def _worth_keeping_again(state: LabelState, updated: LabelState) -> bool:
    changed = updated.changed_since(state.mark)
    if changed is None:
        return True
    labelled = np.unique(updated.labels.query).size
    return changed.size > KEEP_AGAIN_SHARE * max(labelled, 1)


# The live labels of a project as a process last read them, for the next new process: it
# reads them back (0.5 million labels: 0.7 s from the database) and re-reads only the
# queries the history names since. Written after a full read, and after a new process
# caught up with the history; a file whose revision was reset is not used.
def _kept_path(project: Project) -> Path:
    return (
        kept_files.folder()
        / f"{kept_files.project_stem('labels', project.pk, project.created_at)}.npy"
    )


def _keep(project: Project, state: LabelState) -> LabelState:
    """Write the state's labels as the project's file; the state, marked as kept when
    the file was written."""
    rows = state.labels
    names = np.frombuffer(json.dumps(rows.annotators).encode(), dtype=np.uint8)
    arrays = (rows.query, rows.source, rows.document, rows.start, rows.end, rows.grade)
    version = np.array(state.version, dtype=np.int64)
    if not kept_files.write_arrays(_kept_path(project), [version, names, *arrays]):
        return state
    return replace(state, kept_version=state.version)


def _read_kept(project: Project, key: tuple) -> LabelState | None:
    """The kept labels of the project; None when there are none or they do not hold
    together."""
    arrays = kept_files.read_arrays(_kept_path(project), 8)
    if arrays is None:
        return None
    version, names, *columns = arrays
    if version.shape != (3,) or version.dtype.kind != "i" or names.dtype != np.uint8:
        return None
    n = columns[0].size
    if any(c.ndim != 1 or c.size != n or c.dtype != np.int64 for c in columns):
        return None
    try:
        annotators = json.loads(names.tobytes().decode())
    except ValueError:
        return None
    if not isinstance(annotators, list) or not all(isinstance(a, str) for a in annotators):
        return None
    source = columns[1]
    if n and (source.min() < -1 or source.max() >= len(annotators)):
        return None
    labels = LabelRows(*columns, annotators=annotators)
    version = tuple(int(v) for v in version)
    return LabelState(labels, version, key, next(_epochs), kept_version=version)


def prune() -> int:
    """Delete this database's label files of projects that no longer exist; how many."""
    return kept_files.prune_project_files("labels")


def _advance(state: LabelState, project: Project, number: int) -> LabelState | None:
    """``state`` brought to revision ``number`` by re-reading the queries the project's
    newer history rows name; None when a full read is needed."""
    changed, version = changes_since(project, state.version, number)
    labels = state.labels
    if changed:
        fresh = live_labels(project, sources=None, queries=changed)
        if not set(fresh.annotators) <= set(labels.annotators):
            return None  # a new annotator: codes are numbered afresh
        recode = np.array([labels.annotators.index(n) for n in fresh.annotators] + [-1])
        kept = labels.take(~np.isin(labels.query, changed))
        labels = LabelRows(
            *(
                np.concatenate([a, b])
                for a, b in zip(
                    (kept.query, kept.source, kept.document, kept.start, kept.end, kept.grade),
                    (
                        fresh.query,
                        recode[fresh.source],
                        fresh.document,
                        fresh.start,
                        fresh.end,
                        fresh.grade,
                    ),
                    strict=True,
                )
            ),
            annotators=labels.annotators,
        )
    log = (*state.log, (state.step + 1, np.array(changed, dtype=np.int64)))[-LOG:]
    return LabelState(
        labels, version, state.key, state.epoch, state.step + 1, log, state.kept_version
    )


def counted_labels(
    state: LabelState, sources: Sources | None, queries: np.ndarray | None = None
) -> LabelRows:
    """The state's labels that count for ``sources`` (a frozen gold set's: all of them):
    the chosen annotators', and the adjudications when people count; ``queries``: only
    those queries' (by pk)."""
    labels = state.labels
    if queries is not None:
        labels = labels.take(np.isin(labels.query, queries))
    if sources is None or state.version is None:
        return labels
    allowed = np.append(sources.annotator_mask(labels.annotators), sources.adjudicated)
    return labels.take(allowed[labels.source])  # source -1 (adjudicated) reads the last


@dataclass(frozen=True)
class _Grades:
    grades: UnitGrades
    query_pks: np.ndarray
    mark: tuple[int, int]
    nbytes: int = field(default=0)


def level_grades(
    state: LabelState,
    units: Units,
    mapping: MappingPolicy,
    gold_set: GoldSet | None = None,
    sources: Sources | None = None,
) -> tuple[UnitGrades, np.ndarray, tuple]:
    """(grades, their sorted query pks, cache key) of the state's labels that count for
    ``sources`` at ``units``; kept per process and, after label changes, recomputed for
    the changed queries only (a query's grades depend on its own labels alone)."""
    consensus = consensus_of(gold_set.policy) if gold_set is not None else ConsensusPolicy()
    counted = sources.key if sources is not None and gold_set is None else None
    key = ("grades", state.key, units.level, str(mapping), units.fingerprint, counted)
    kept = cache.peek(key)
    if kept is not None and kept.mark == state.mark:
        return kept.grades, kept.query_pks, key
    with key_lock(key):
        return _level_grades(state, units, mapping, consensus, sources, key)


def _level_grades(state, units, mapping, consensus, sources, key):
    kept = cache.peek(key)
    if kept is not None and kept.mark == state.mark:
        return kept.grades, kept.query_pks, key
    changed = state.changed_since(kept.mark) if kept is not None else None
    if changed is None:
        labels = counted_labels(state, sources)
        grades = compute_unit_grades(labels, units, consensus=consensus, mapping=mapping)
    else:
        part = compute_unit_grades(
            counted_labels(state, sources, changed),
            units,
            consensus=consensus,
            mapping=mapping,
        )
        grades = splice_grades(kept.grades, part, changed)
    query_pks = np.unique(grades.query)
    arrays = (grades.query, grades.unit, grades.grade, grades.n_annotators, query_pks)
    cache.put(key, _Grades(grades, query_pks, state.mark, sum(a.nbytes for a in arrays)))
    return grades, query_pks, key


def splice_grades(old: UnitGrades, part: UnitGrades, changed: np.ndarray) -> UnitGrades:
    """``old`` with the rows of the ``changed`` queries replaced by ``part`` (whose rows
    are all of changed queries); rows stay sorted by (query, unit)."""
    keep = ~np.isin(old.query, changed)
    at = np.searchsorted(old.query[keep], part.query)  # no kept row shares a changed query
    columns = [
        np.insert(a[keep], at, b)
        for a, b in (
            (old.query, part.query),
            (old.unit, part.unit),
            (old.grade, part.grade),
            (old.n_annotators, part.n_annotators),
        )
    ]
    return UnitGrades(*columns, units=old.units, policy=old.policy)
