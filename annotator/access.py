"""One access helper per object, used by every view: non-members get 404, never 403."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from .models import Membership, Project, Role


def get_project_for_user(request, slug: str, *roles: str) -> tuple[Project, Membership]:
    """The project with this slug if the user is a member with one of ``roles`` (any if none).

    Outsiders get 404 so that a URL does not reveal that a project exists; members
    without the needed role get 403.
    """
    membership = (
        Membership.objects.select_related("project")
        .filter(project__slug=slug, user=request.user, is_pseudo=False)
        .first()
        if request.user.is_authenticated
        else None
    )
    if membership is None:
        raise Http404("No such project")
    if roles and membership.role not in roles:
        raise PermissionDenied("Your role in this project does not allow this")
    return membership.project, membership


def can_label(membership: Membership) -> bool:
    return membership.role in (Role.OWNER, Role.ADJUDICATOR, Role.ANNOTATOR)


def sees_all_labels(membership: Membership) -> bool:
    return membership.role in (Role.OWNER, Role.ADJUDICATOR)
