"""Which runs a request may reach: the metric views' one access helper."""

from __future__ import annotations

from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from annotator.access import get_project_for_user
from annotator.models import Membership, Project

from .models import Run

MAX_ID = 2**53  # ids from URLs above this are nobody's


def get_run_for_user(
    request: HttpRequest, slug: str, pk: int, *roles: str
) -> tuple[Project, Membership, Run]:
    """The project (its members only, else 404; with ``roles``, members with one of them,
    else 403), the membership and run ``pk`` of it.

    The run comes without its results: readers take them from ``metrics.rankings``,
    which loads them once per process.
    """
    project, membership = get_project_for_user(request, slug, *roles)
    return project, membership, project_run(project, pk)


def project_run(project: Project, pk: int) -> Run:
    """Run ``pk`` of ``project`` (404 for any other), without its results."""
    if not 0 < pk <= MAX_ID:  # beyond any database id (and SQLite's integers)
        raise Http404("No such run")
    return get_object_or_404(
        Run.objects.without_results().select_related("chunking"), project=project, pk=pk
    )
