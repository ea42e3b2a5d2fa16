"""Comparing two versions of a gold set on the units of one level."""

from __future__ import annotations

from annotator.models import Query
from numerics.mapping import MappingPolicy

from .models import GoldSet
from .parts import parts
from .policy import resolve_mapping
from .units import DOCUMENTS, gold_unit_grades


def unit_map(gold_set: GoldSet, level: str, mapping: MappingPolicy) -> dict[tuple[int, str], int]:
    """(query pk, unit id) → consensus grade of every judged unit of the version."""
    grades = gold_unit_grades(gold_set.project, level, gold_set=gold_set, mapping=mapping)
    ids = grades.units.ids
    return {
        (query, str(ids[unit])): grade
        for query, unit, grade in zip(
            grades.query.tolist(), grades.unit.tolist(), grades.grade.tolist(), strict=True
        )
    }


def diff_gold_sets(
    old: GoldSet, new: GoldSet, *, level: str = DOCUMENTS, mapping: MappingPolicy | None = None
) -> dict:
    """Units added, removed and regraded from ``old`` to ``new`` at ``level``.

    Both versions are read under one mapping (``new``'s own unless given), each with its
    own consensus rule, so ``n_new - n_old == len(added) - len(removed)`` always holds:
    the counts and the lists describe the same units.
    """
    mapping = resolve_mapping(new.project, new, mapping)
    before, after = unit_map(old, level, mapping), unit_map(new, level, mapping)
    qids = dict(Query.objects.filter(project=new.project).values_list("pk", "qid"))

    def row(key, **grades) -> dict:
        return {"query": key[0], "qid": qids.get(key[0]), "unit": key[1], **grades}

    def by_qid(keys):
        return sorted(keys, key=lambda k: (qids.get(k[0]) or "", k[1]))

    return {
        "level": level,
        "mapping": str(mapping),
        "n_old": len(before),
        "n_new": len(after),
        "added": [row(k, grade=after[k]) for k in by_qid(after.keys() - before.keys())],
        "removed": [row(k, grade=before[k]) for k in by_qid(before.keys() - after.keys())],
        "changed": [
            row(k, old=before[k], new=after[k])
            for k in by_qid(before.keys() & after.keys())
            if before[k] != after[k]
        ],
        # What the sets' other parts (nuggets …) say about the two versions.
        "parts": {part.name: part.diff(old, new) for part in parts() if part.diff is not None},
    }
