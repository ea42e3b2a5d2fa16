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
    its JSONL line gains; ``sheet(gold_set)`` the (name, header, rows) of a workbook sheet;
    ``diff(old, new)`` a dict the diff's section template shows."""

    name: str
    freeze: Callable[[GoldSet], None]
    fields: Callable[[GoldSet, list[int]], dict[int, dict]]
    sheet: Callable[[GoldSet], tuple[str, list, list[list]]] | None = None
    diff: Callable[[GoldSet, GoldSet], dict] | None = None


_PARTS: dict[str, GoldPart] = {}


def register_part(part: GoldPart) -> None:
    _PARTS[part.name] = part


def parts() -> list[GoldPart]:
    return list(_PARTS.values())
