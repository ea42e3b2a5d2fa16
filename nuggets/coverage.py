"""Which units of a level cover which nuggets: the one mapping of nugget evidence onto units
(the mapping policy's, as for grades), read by the measures, the drill-down and the
exports alike."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gold.units import Units
from numerics.mapping import MappingPolicy
from numerics.nuggets import Subtopics, covering_pairs
from numerics.spans import SpanArrays

from .sources import NuggetRows


@dataclass(frozen=True)
class Coverage:
    """Covering (nugget index, unit index) pairs of one set of nuggets at one level."""

    nuggets: NuggetRows
    units: Units
    policy: MappingPolicy
    nugget: np.ndarray
    unit: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.nugget.nbytes + self.unit.nbytes

    def units_of(self, index: int) -> list[str]:
        """Ids of the units covering nugget ``index``."""
        return sorted(str(self.units.ids[u]) for u in self.unit[self.nugget == index].tolist())

    def subtopics(self, unit_code: np.ndarray) -> tuple[Subtopics, np.ndarray]:
        """The nuggets as subtopic qrels over query indices, items as ``unit_code`` (unit
        index → code in the ids' byte order); with the query pks the indices stand for."""
        query_pks = self.nuggets.query_pks
        return (
            Subtopics(
                n_queries=int(query_pks.size),
                nugget_query=np.searchsorted(query_pks, self.nuggets.query),
                vital=self.nuggets.vital,
                pair_nugget=self.nugget,
                pair_item=unit_code[self.unit],
            ),
            query_pks,
        )


def coverage(nuggets: NuggetRows, units: Units, policy: MappingPolicy) -> Coverage:
    """Every (nugget, unit) where one of the nugget's spans reaches the unit under
    ``policy`` — ``numerics.mapping``'s rule, as a label reaches the units it grades."""
    nugget, unit = covering_pairs(
        nuggets.ev_nugget,
        SpanArrays(nuggets.ev_document, nuggets.ev_start, nuggets.ev_end),
        SpanArrays(units.document, units.start, units.end),
        policy=policy,
    )
    return Coverage(nuggets, units, policy, nugget, unit)
