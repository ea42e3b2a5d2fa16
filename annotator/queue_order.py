"""Orders of an annotator's queue beyond query order, registered by the apps that know them.

An order is a function ``score(project, query_pks, membership) -> {query_pk: score}``:
queries with a higher score come first, the rest keep query order. ``membership`` is the
member whose queue is ordered: a member who labels blind (``access.sees_all_labels`` is
false) must not learn others' grades from the order, so the score may rest only on their
own labels and on judge labels. The ``judges`` app registers "judge disagrees with people
first" and "judge unsure first" when it starts, so this app never imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .models import Membership, Project

Score = Callable[[Project, list[int], Membership], dict[int, float]]


@dataclass(frozen=True)
class QueueOrder:
    key: str
    label: str
    score: Score


_orders: dict[str, QueueOrder] = {}


def register_queue_order(key: str, label: str, score: Score) -> None:
    _orders[key] = QueueOrder(key, label, score)


def queue_orders() -> list[QueueOrder]:
    return list(_orders.values())


def ordered(membership: Membership, query_pks: list[int], key: str) -> list[int]:
    """``query_pks`` (in query order) with the order's highest scores first, as this member
    may see them ordered."""
    scores = _orders[key].score(membership.project, query_pks, membership)
    rank = {pk: index for index, pk in enumerate(query_pks)}
    return sorted(query_pks, key=lambda pk: (-scores.get(pk, 0.0), rank[pk]))
