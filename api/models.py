"""Per-user API tokens for pipelines: only a hash is stored; the token is shown once."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

PREFIX_LENGTH = 8


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


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

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def create_for(cls, user, name: str) -> tuple[ApiToken, str]:
        """A new token; the plain text is returned once and never stored."""
        token = "assay_" + secrets.token_urlsafe(32)
        row = cls.objects.create(
            user=user, name=name, prefix=token[:PREFIX_LENGTH], token_hash=hash_token(token)
        )
        return row, token

    @classmethod
    def is_valid(cls, token: str) -> bool:
        """Whether ``token`` is an active token of an active user (nothing is recorded)."""
        if not token:
            return False
        found = cls.objects.active().filter(token_hash=hash_token(token), user__is_active=True)
        return found.exists()

    @classmethod
    def authenticate(cls, token: str) -> ApiToken | None:
        row = cls.objects.active().select_related("user").filter(token_hash=hash_token(token))
        row = row.first()
        if row is None or not row.user.is_active:
            return None
        cls.objects.filter(pk=row.pk).update(last_used_at=timezone.now())
        return row

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
