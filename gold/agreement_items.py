"""The items agreement is computed over, kept under the label version they were read at.

An item is a (query, unit) of a level; each annotator's grade of it is the best of their
labels mapped onto the unit (``gold.units.annotator_unit_grades``). A query's items depend
on its own labels alone, so after label changes only the queries the history names since
(``gold.label_changes``) are read and mapped again and spliced in: a lead watching
agreement while annotators label is not served a full read of every label (1–2 s at
500,000 labels) on every view. Kept per process and in a file for the next new process;
whatever the way, the arrays are those a full read gives, row for row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from annotator import kept_files
from annotator.models import Project
from numerics.mapping import MappingPolicy

from .label_changes import kept_up_to_date
from .units import Units, annotator_unit_grades, live_labels

KIND = "agreement-items"


@dataclass(frozen=True)
class Items:
    """Each annotator's grade of each (query, unit) they reached, sorted by (query, unit,
    source); ``present``: the (query, source) pairs with labels at all, which name the
    annotators (one whose labels reach no unit is still compared)."""

    annotators: list[str]
    query: np.ndarray
    unit: np.ndarray
    source: np.ndarray
    grade: np.ndarray
    present_query: np.ndarray
    present_source: np.ndarray
    version: tuple = (0, 0, 0)
    unkept: bool = False

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        return (
            self.query,
            self.unit,
            self.source,
            self.grade,
            self.present_query,
            self.present_source,
        )

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays) + 100


def agreement_items(
    project: Project, units: Units, mapping: MappingPolicy, names: list[str], sources
) -> Items:
    """The items of ``names``' labels that count for ``sources`` (no adjudications: they
    resolve, never vote) at ``units`` under ``mapping``, as of the label revision."""
    options = (units.level, units.fingerprint, str(mapping), sources.key, *names)
    path = _path(project, options)
    return kept_up_to_date(
        project,
        (KIND, project.pk, project.created_at, *options),
        read=lambda: _read(path),
        write=lambda items: _write(path, items),
        derive=lambda queries: _derive(project, units, mapping, names, sources, queries),
        splice=_splice,
    )


def _derive(project, units, mapping, names, sources, queries) -> Items:
    labels = live_labels(
        project, sources=sources, annotators=names, adjudicated=False, queries=queries
    )
    query, unit, source, grade = annotator_unit_grades(labels, units, mapping)
    pairs = np.unique(np.stack([labels.query, labels.source], axis=1), axis=0).reshape(-1, 2)
    return Items(labels.annotators, query, unit, source, grade, pairs[:, 0], pairs[:, 1])


def _splice(kept: Items, fresh: Items, changed: list[int]) -> Items:
    """``kept`` with the rows of the ``changed`` queries replaced by ``fresh``'s, the
    annotators named and numbered as a full read would (sorted; those with labels)."""
    everyone = sorted(set(kept.annotators) | set(fresh.annotators))

    def recode(items: Items) -> np.ndarray:
        return np.array([everyone.index(n) for n in items.annotators] + [-1], dtype=np.int64)

    old, new = recode(kept), recode(fresh)
    stays, stays_present = (~np.isin(q, changed) for q in (kept.query, kept.present_query))
    query, unit, source, grade = (
        np.concatenate([a[stays], b])
        for a, b in zip(
            (kept.query, kept.unit, old[kept.source], kept.grade),
            (fresh.query, fresh.unit, new[fresh.source], fresh.grade),
            strict=True,
        )
    )
    present_query = np.concatenate([kept.present_query[stays_present], fresh.present_query])
    present_source = np.concatenate(
        [old[kept.present_source][stays_present], new[fresh.present_source]]
    )
    used = np.unique(present_source)  # annotators with labels left, in name order
    source, present_source = np.searchsorted(used, source), np.searchsorted(used, present_source)
    order = np.lexsort((source, unit, query))
    present = np.lexsort((present_source, present_query))
    return Items(
        [everyone[k] for k in used.tolist()],
        query[order],
        unit[order],
        source[order],
        grade[order],
        present_query[present],
        present_source[present],
        kept.version,
    )


def _path(project: Project, options: tuple) -> Path:
    digest = hashlib.blake2b(repr(options).encode(), digest_size=8).hexdigest()
    stem = kept_files.project_stem(KIND, project.pk, project.created_at)
    return kept_files.folder() / f"{stem}.{digest}.npy"


def _write(path: Path, items: Items) -> None:
    version = np.array(items.version, dtype=np.int64)
    kept_files.write_arrays(path, [version, kept_files.json_array(items.annotators), *items.arrays])


def _read(path: Path) -> Items | None:
    """The kept items; None when there are none or they do not hold together."""
    arrays = kept_files.read_arrays(path, 8)
    if arrays is None:
        return None
    version, names, *columns = arrays
    annotators = kept_files.json_of(names)
    if version.shape != (3,) or not isinstance(annotators, list):
        return None
    if any(c.ndim != 1 or c.dtype != np.int64 for c in columns):
        return None
    query, unit, source, grade, present_query, present_source = columns
    if not (query.size == unit.size == source.size == grade.size):
        return None
    if present_query.size != present_source.size:
        return None
    for codes in (source, present_source):
        if codes.size and (codes.min() < 0 or codes.max() >= len(annotators)):
            return None
    return Items(annotators, *columns, version=tuple(int(v) for v in version))


def prune() -> int:
    """Delete this database's item files of projects that no longer exist; how many."""
    return kept_files.prune_project_files(KIND)
