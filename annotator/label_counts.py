"""How many labels a member sees, kept per process under the project's label revision:
the project page shows it on every view, and counting 500,000 labels each time made the
page grow with the project (docs/benchmarks.md, "Large on PostgreSQL")."""

from __future__ import annotations

from dataclasses import dataclass

from .access import sees_all_labels
from .caches import cache
from .models import Judgment, Membership
from .revisions import revision


@dataclass(frozen=True)
class _Counted:
    number: int  # the label revision it was counted at
    labels: int
    nbytes: int = 200  # roughly, for the cache's bound


def visible_label_count(membership: Membership) -> int:
    """``Judgment.objects.visible_to(membership).count()``, counted again only when the
    project's labels changed (every label change moves the revision). One entry per
    project and viewer scope (everyone's labels, or one annotator's own), replaced when
    the revision moves: old counts are not left behind."""
    project = membership.project
    scope = None if sees_all_labels(membership) else membership.user_id
    key = ("visible_labels", project.pk, project.created_at, scope)
    now = revision(project.pk).number
    kept = cache.peek(key)
    if kept is not None and kept.number == now:
        return kept.labels
    counted = _Counted(now, Judgment.objects.visible_to(membership).count())
    cache.put(key, counted)
    return counted.labels
