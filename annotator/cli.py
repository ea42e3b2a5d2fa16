"""What management commands share: the project a command names, or a clear error."""

from __future__ import annotations

from django.core.management.base import CommandError

from .models import Project


def project_named(slug: str) -> Project:
    """The project with this slug; ``CommandError`` (no traceback) if there is none."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"no project with slug {slug!r}")
    return project
