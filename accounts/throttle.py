"""Login throttling (every way in: the sign-in page and the admin's) and reset-mail limits.

After ``ASSAY_LOGIN_ATTEMPTS`` wrong passwords for one user name
within ``ASSAY_LOGIN_LOCKOUT_MINUTES``, that name is locked out until the window has
passed since the failure that reached the limit; the right password does not open it early.

Failures are kept in the database, so every server process sees the same count. Only
the user name is counted, not the client's address: behind a proxy every client shares
one address, and locking that would lock the whole team out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .models import LoginFailure, ResetMail


def window() -> timedelta:
    return timedelta(minutes=settings.ASSAY_LOGIN_LOCKOUT_MINUTES)


def normalise(username: str) -> str:
    return (username or "").strip().lower()[:150]


def locked_until(username: str) -> datetime | None:
    """When the lock-out of ``username`` ends, or None when it may try now."""
    limit = settings.ASSAY_LOGIN_ATTEMPTS
    now = timezone.now()
    recent = (
        LoginFailure.objects.filter(username=normalise(username), at__gt=now - window())
        .order_by("-at")
        .values_list("at", flat=True)[:limit]
    )
    recent = list(recent)
    if len(recent) < limit:
        return None
    until = recent[-1] + window()
    return until if until > now else None


def record_failure(username: str) -> None:
    name = normalise(username)
    now = timezone.now()
    with transaction.atomic():
        LoginFailure.objects.create(username=name, at=now)
        # Failures older than the window count for nothing any more.
        LoginFailure.objects.filter(username=name, at__lte=now - window()).delete()


def clear(username: str) -> None:
    LoginFailure.objects.filter(username=normalise(username)).delete()


RESET_WINDOW = timedelta(hours=1)


def may_mail_reset(email: str) -> bool:
    """Whether a reset mail may go to ``email`` now; each request is counted, sent or not,
    so that one address cannot be flooded (``ASSAY_RESET_MAILS_PER_HOUR``)."""
    address = normalise(email)[:254]
    now = timezone.now()
    with transaction.atomic():
        ResetMail.objects.filter(at__lte=now - RESET_WINDOW).delete()
        recent = ResetMail.objects.filter(email=address, at__gt=now - RESET_WINDOW).count()
        ResetMail.objects.create(email=address, at=now)
    return recent < settings.ASSAY_RESET_MAILS_PER_HOUR
