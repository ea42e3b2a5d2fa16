"""Per-user API tokens for pipelines: only a hash is stored; the token is shown once.

A token may be scoped: to some of its user's projects (none named: all of them) and to
reading only. It carries a stamp of its user's password, so changing the password (on
the password page, by a reset mail, by an administrator) revokes every token at once.
"""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

PREFIX_LENGTH = 8


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def password_stamp(user) -> str:
    """A digest of the user's stored password hash: it changes with the password."""
    return hashlib.sha256(f"api-token:{user.password}".encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=PREFIX_LENGTH)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Scopes: reading only, and the projects it reaches (none chosen: every project of
    # the user, with the user's roles there).
    read_only = models.BooleanField(default=False)
    projects = models.ManyToManyField("annotator.Project", blank=True, related_name="+")
    password_stamp = models.CharField(max_length=64, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def create_for(
        cls, user, name: str, *, read_only: bool = False, projects=()
    ) -> tuple[ApiToken, str]:
        """A new token; the plain text is returned once and never stored."""
        token = "assay_" + secrets.token_urlsafe(32)
        row = cls.objects.create(
            user=user,
            name=name,
            prefix=token[:PREFIX_LENGTH],
            token_hash=hash_token(token),
            read_only=read_only,
            password_stamp=password_stamp(user),
        )
        if projects:
            row.projects.set(projects)
        return row, token

    @property
    def live(self) -> bool:
        """Not revoked, and its user's password has not changed since it was made."""
        return self.revoked_at is None and self.password_stamp == password_stamp(self.user)

    def reaches(self, slug: str) -> bool:
        """Whether the token's project scope includes the project ``slug``."""
        chosen = list(self.projects.values_list("slug", flat=True))
        return not chosen or slug in chosen

    @classmethod
    def is_valid(cls, token: str, *, writing: bool = False) -> bool:
        """Whether ``token`` is a live token of an active user (nothing is recorded);
        ``writing``: one that may also write (not read-only)."""
        if not token:
            return False
        found = (
            cls.objects.active()
            .select_related("user")
            .filter(token_hash=hash_token(token), user__is_active=True)
        )
        row = found.first()
        return row is not None and row.live and not (writing and row.read_only)

    @classmethod
    def authenticate(cls, token: str) -> ApiToken | None:
        row = cls.objects.active().select_related("user").filter(token_hash=hash_token(token))
        row = row.first()
        if row is None or not row.user.is_active or not row.live:
            return None
        cls.objects.filter(pk=row.pk).update(last_used_at=timezone.now())
        return row

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
