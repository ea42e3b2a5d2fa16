"""Per-process labels behind the dashboards, brought up to date from the label history.

Every label change writes a ``JudgmentHistory`` row and every adjudication an
``AdjudicationHistory`` row, so the history rows newer than those already seen name
exactly the queries whose labels changed: only those queries' labels are read again
and spliced in, and the grades derived at each level (``level_grades``) and the runs'
scores (``metrics.score_cache``) are recomputed for those queries alone. Whatever the
history does not explain — a count that moved without a history row (a query or
document deleted with its labels), a history row committed late — makes the next
request read everything again. A frozen gold set never changes: it is read once.

Each state has an ``epoch`` (a number new with every full read) and a ``step`` (one
more with every incremental update); what is derived from a state records both, and
``changed_since`` names the queries changed since then, or None for "start again".
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

import numpy as np

from annotator.models import Judgment, JudgmentEvent, JudgmentHistory, Project
from gold.models import Adjudication, AdjudicationHistory, GoldSet
from gold.policy import ConsensusPolicy
from gold.units import LabelRows, UnitGrades, Units, consensus_of, frozen_labels, live_labels
from gold.units import unit_grades as compute_unit_grades
from numerics.mapping import MappingPolicy

from .rankings import cache

LOG = 64  # incremental updates remembered; what is older starts again from scratch
_epochs = itertools.count(1)
_lock = threading.Lock()


@dataclass(frozen=True)
class LabelState:
    """A project's labels (live, or a frozen gold set's) as of ``version``."""

    labels: LabelRows
    version: tuple | None  # ``labels_version()`` when read; None for a frozen gold set
    key: tuple
    epoch: int
    step: int = 0
    log: tuple = ()  # (step, changed query pks) of the latest incremental updates

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


def _newest(history) -> tuple:
    """(pk, time) of the newest history row, (0, None) without any."""
    return history.objects.order_by("-pk").values_list("pk", "at").first() or (0, None)


def labels_version() -> tuple:
    """What moves with every label change: the newest history rows (with their times, so
    that a reused id after a deletion is not taken for the row already seen) and the row
    counts (deletions by cascade write no history, but change a count)."""
    return (
        *_newest(JudgmentHistory),
        JudgmentHistory.objects.count(),
        Judgment.objects.count(),
        *_newest(AdjudicationHistory),
        AdjudicationHistory.objects.count(),
        Adjudication.objects.count(),
    )


def label_state(project: Project, gold_set: GoldSet | None = None) -> LabelState:
    """The labels behind the gold: a frozen version's (read once), or the live ones,
    brought up to date."""
    if gold_set is not None:
        key = ("labels", "gold", gold_set.pk, gold_set.created_at)
        return cache.get(key, lambda: LabelState(frozen_labels(gold_set), None, key, next(_epochs)))
    key = ("labels", "live", project.pk)
    with _lock:
        version = labels_version()
        state = cache.peek(key)
        if state is not None and state.version == version:
            return state
        updated = _advance(state, project, version) if state is not None else None
        if updated is None:
            # The version is read before the labels: a change in between is seen again.
            updated = LabelState(live_labels(project), version, key, next(_epochs))
        cache.put(key, updated)
        return updated


def _advance(state: LabelState, project: Project, version: tuple) -> LabelState | None:
    """``state`` brought to ``version`` by re-reading the queries the history names;
    None when the history does not explain every change."""
    old = state.version
    for history, (pk, at) in ((JudgmentHistory, old[0:2]), (AdjudicationHistory, old[4:6])):
        if pk and not history.objects.filter(pk=pk, at=at).exists():
            return None  # the row seen last is gone: the history was rewritten
    judgment_rows = list(
        JudgmentHistory.objects.filter(pk__gt=old[0], pk__lte=version[0]).values_list(
            "event", "query_id", "query__project_id"
        )
    )
    adjudication_rows = list(
        AdjudicationHistory.objects.filter(pk__gt=old[4], pk__lte=version[4]).values_list(
            "old_grade", "new_grade", "query_id", "query__project_id"
        )
    )
    step = {JudgmentEvent.CREATE.value: 1, JudgmentEvent.DELETE.value: -1}
    explained = (
        version[2] == old[2] + len(judgment_rows)
        and version[3] == old[3] + sum(step.get(e, 0) for e, _q, _p in judgment_rows)
        and version[6] == old[6] + len(adjudication_rows)
        and version[7] == old[7] + sum(o is None for o, _n, _q, _p in adjudication_rows)
    )
    if not explained:
        return None
    changed = sorted(
        {q for _e, q, p in judgment_rows if p == project.pk}
        | {q for _o, _n, q, p in adjudication_rows if p == project.pk}
    )
    labels = state.labels
    if changed:
        fresh = live_labels(project, queries=changed)
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
    return LabelState(labels, version, state.key, state.epoch, state.step + 1, log)


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
) -> tuple[UnitGrades, np.ndarray, tuple]:
    """(grades, their sorted query pks, cache key) of the state's labels at ``units``;
    kept per process and, after label changes, recomputed for the changed queries only
    (a query's grades depend on its own labels alone)."""
    consensus = consensus_of(gold_set.policy) if gold_set is not None else ConsensusPolicy()
    key = ("grades", state.key, units.level, str(mapping), units.fingerprint)
    kept = cache.peek(key)
    if kept is not None and kept.mark == state.mark:
        return kept.grades, kept.query_pks, key
    changed = state.changed_since(kept.mark) if kept is not None else None
    labels = state.labels
    if changed is None:
        grades = compute_unit_grades(labels, units, consensus=consensus, mapping=mapping)
    else:
        part = compute_unit_grades(
            labels.take(np.isin(labels.query, changed)),
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
