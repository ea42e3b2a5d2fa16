"""Parts of a gold set that apps above gold freeze with the labels (nuggets …), registered
when they start: what a version copies when it is frozen, what each query's export line
and the workbook gain, and what a diff between two versions says about the part."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .models import GoldSet


@dataclass(frozen=True)
class GoldPart:
    """``freeze(gold_set)`` copies the live state into the new version, inside the
    freezing transaction; ``fields(gold_set, query_pks)`` gives, per query pk, the fields
    its JSONL line gains; ``sheet(gold_set)`` the (name, header, rows) of a workbook sheet,
    ``sheets(gold_set)`` a list of them (a part with several kinds: a sheet per kind);
    ``diff(old, new)`` a dict the diff's section template shows; ``queries(gold_set)``
    the query pks the part froze something for, so that each gets its JSONL line even
    without a relevance label (its ``rel_map`` and ``evidence`` then empty)."""

    name: str
    freeze: Callable[[GoldSet], None]
    fields: Callable[[GoldSet, list[int]], dict[int, dict]]
    sheet: Callable[[GoldSet], tuple[str, list, list[list]]] | None = None
    diff: Callable[[GoldSet, GoldSet], dict] | None = None
    sheets: Callable[[GoldSet], list[tuple[str, list, list[list]]]] | None = None
    queries: Callable[[GoldSet], set[int]] | None = None

    def workbook_sheets(self, gold_set: GoldSet) -> list[tuple[str, list, list[list]]]:
        """Every workbook sheet the part adds, in order."""
        found = [self.sheet(gold_set)] if self.sheet is not None else []
        return found + (self.sheets(gold_set) if self.sheets is not None else [])


_PARTS: dict[str, GoldPart] = {}


def register_part(part: GoldPart) -> None:
    _PARTS[part.name] = part


def parts() -> list[GoldPart]:
    return list(_PARTS.values())
