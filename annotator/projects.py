"""Creating projects and changing their members: one path for the command and the pages."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _

from .models import Membership, Project, Role

SLUG_MAX = Project._meta.get_field("slug").max_length
NAME_MAX = Project._meta.get_field("name").max_length


class ProjectRejected(ValueError):
    """A refused project or membership change; ``field`` names the form field at fault."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


def find_user(identifier: str):
    """The active user with this username, or else the one active user with this email."""
    identifier = (identifier or "").strip()
    users = get_user_model().objects.filter(is_active=True)
    user = users.filter(username=identifier).first() if identifier else None
    if user is None and "@" in identifier:
        matches = list(users.filter(email__iexact=identifier)[:2])
        if len(matches) > 1:
            raise ProjectRejected(
                _("Several users have this email: give the username."), "username"
            )
        user = matches[0] if matches else None
    if user is None:
        raise ProjectRejected(_("No active user with this username or email."), "username")
    return user


def create_project(*, slug: str, name: str, owner, description: str = "") -> Project:
    """A new project with ``owner`` as its first owner, or ``ProjectRejected`` and nothing."""
    slug, name = (slug or "").strip(), (name or "").strip()
    if not slug or slugify(slug) != slug or len(slug) > SLUG_MAX:
        raise ProjectRejected(
            _(
                "“%(slug)s” is not a slug: lowercase letters, digits, - and _, "
                "at most %(max)d characters."
            )
            % {"slug": slug, "max": SLUG_MAX},
            "slug",
        )
    if not name or len(name) > NAME_MAX:
        raise ProjectRejected(
            _("Give the project a name of at most %(max)d characters.") % {"max": NAME_MAX},
            "name",
        )
    if owner is None or not owner.is_active:
        raise ProjectRejected(_("The owner must be an active user."), "owner")
    taken = _("A project with the slug “%(slug)s” already exists.") % {"slug": slug}
    if Project.objects.filter(slug=slug).exists():
        raise ProjectRejected(taken, "slug")
    try:
        with transaction.atomic():
            project = Project.objects.create(slug=slug, name=name, description=description)
            Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    except IntegrityError:  # created by someone else in the meantime
        raise ProjectRejected(taken, "slug") from None
    return project


def _lock(membership: Membership) -> None:
    """Owner changes of one project one at a time, so two cannot remove the last two owners."""
    Project.objects.select_for_update().filter(pk=membership.project_id).first()


def _keeps_an_owner(membership: Membership, new_role: str | None) -> None:
    """Refuse a change that would leave the project without an owner (None: removal)."""
    if membership.role != Role.OWNER or new_role == Role.OWNER:
        return
    owners = Membership.objects.filter(project_id=membership.project_id, role=Role.OWNER)
    if not owners.exclude(pk=membership.pk).exists():
        raise ProjectRejected(_("A project keeps at least one owner."))


def add_member(project: Project, identifier: str, role: str) -> Membership:
    """Make the user (username or email) a member with ``role``; a member gets the new role."""
    user = find_user(identifier)
    # A pseudo-annotator (imported labels, an LLM judge's version) of any project is
    # nobody who logs in: it never becomes a member.
    if Membership.objects.filter(user=user, is_pseudo=True).exists():
        raise ProjectRejected(_("This name holds imported labels, not a person."), "username")
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None:
        return Membership.objects.create(project=project, user=user, role=role)
    change_role(membership, role)
    return membership


def change_role(membership: Membership, role: str) -> None:
    if role not in Role.values:
        raise ProjectRejected(_("Unknown role."), "role")
    with transaction.atomic():
        _lock(membership)
        _keeps_an_owner(membership, role)
        membership.role = role
        membership.save(update_fields=["role"])


def remove_member(membership: Membership) -> None:
    with transaction.atomic():
        _lock(membership)
        _keeps_an_owner(membership, None)
        membership.delete()
