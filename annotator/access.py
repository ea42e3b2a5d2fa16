"""One access helper per object, and one read rule per kind of data; every path asks them.

Kinds of data and who reads them (pages, partials, drill-downs, downloads, exports, the
API — every path to the data asks the rule here, never a role list of its own):

- **each annotator's live labels** (who graded what, their notes): owners and
  adjudicators; everyone else sees their own labels only (``sees_all_labels``);
- **grades drawn from the live labels** (metrics, qrels, drill-downs and diagnostics
  against live labels): owners, adjudicators and viewers. Annotators label blind: no
  grade but their own reaches them anywhere (``reads_live_grades``);
- **a frozen gold set's grades** (metrics against it, its qrels, drill-downs, the diff
  between versions, its export): owners, and every member once the owner has released
  it to the team (``reads_gold_set``).
"""

from __future__ import annotations

from typing import Protocol

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext_lazy as _

from .models import Membership, Project, Role


class Releasable(Protocol):
    """A frozen gold set, as far as access is concerned (``gold.models.GoldSet``)."""

    project_id: int
    released: bool


def get_project_for_user(
    request, slug: str, *roles: str, annotations: dict | None = None
) -> tuple[Project, Membership]:
    """The project with this slug if the user is a member with one of ``roles`` (any if none).

    Outsiders get 404 so that a URL does not reveal that a project exists; members
    without the needed role get 403. ``annotations``: read with the membership.
    """
    membership = (
        Membership.objects.select_related("project")
        .annotate(**(annotations or {}))
        .filter(project__slug=slug, user=request.user, is_pseudo=False)
        .first()
        if request.user.is_authenticated
        else None
    )
    if membership is None:
        raise Http404("No such project")
    if roles and membership.role not in roles:
        raise PermissionDenied(_("Your role in this project does not allow this."))
    return membership.project, membership


def can_create_projects(user) -> bool:
    """Staff, and people who already own a project, may start new projects."""
    if not user.is_authenticated or not user.is_active:
        return False
    owns = Membership.objects.filter(user=user, role=Role.OWNER, is_pseudo=False).exists()
    return user.is_staff or owns


def can_label(membership: Membership) -> bool:
    return membership.role in (Role.OWNER, Role.ADJUDICATOR, Role.ANNOTATOR)


def sees_all_labels(membership: Membership) -> bool:
    """Each annotator's live labels, with names and notes (the labelling screens)."""
    return membership.role in (Role.OWNER, Role.ADJUDICATOR)


def reads_live_grades(membership: Membership) -> bool:
    """Grades drawn from everyone's live labels: metrics, qrels and drill-downs on them."""
    return membership.role in (Role.OWNER, Role.ADJUDICATOR, Role.VIEWER)


def reads_gold_set(membership: Membership, gold_set: Releasable) -> bool:
    """A frozen gold set's grades: owners, and every member once it is released."""
    if gold_set.project_id != membership.project_id:
        return False
    return membership.role == Role.OWNER or bool(gold_set.released)


def readable_gold_sets(membership: Membership, gold_sets: QuerySet) -> QuerySet:
    """The gold sets of ``gold_sets`` whose grades the member may read (``reads_gold_set``)."""
    return gold_sets if membership.role == Role.OWNER else gold_sets.filter(released=True)


class NoGoldToRead(PermissionDenied):
    """The member reads neither live grades nor any released gold set (yet)."""


def require_grades(membership: Membership, gold_set: Releasable | None) -> None:
    """403 unless the member may read the grades of ``gold_set`` (None: the live labels)."""
    if gold_set is None:
        if not reads_live_grades(membership):
            raise PermissionDenied(
                _("You label blind: metrics are shown against gold sets the owner released.")
            )
    elif not reads_gold_set(membership, gold_set):
        raise PermissionDenied(_("The owner has not released this gold set to the team."))


def default_gold_set(membership: Membership, gold_sets: QuerySet):
    """What a member's metrics are measured against when they name nothing: the live
    labels (None) if they read them, else the newest released gold set; ``NoGoldToRead``
    when there is none."""
    if reads_live_grades(membership):
        return None
    newest = readable_gold_sets(membership, gold_sets).order_by("-created_at", "-pk").first()
    if newest is None:
        raise NoGoldToRead(_("Metrics appear here once the owner releases a gold set to the team."))
    return newest
