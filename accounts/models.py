"""Failed sign-ins, kept only as long as the lock-out window needs them."""

from __future__ import annotations

from django.db import models


class LoginFailure(models.Model):
    """One wrong password for a user name (normalised: stripped, lower case)."""

    username = models.CharField(max_length=150)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["username", "at"], name="login_failure_user_at")]

    def __str__(self) -> str:
        return f"{self.username} at {self.at:%Y-%m-%d %H:%M:%S}"


class ResetMail(models.Model):
    """One password-reset request for an address (normalised), kept for an hour: the
    mails to one address are rate limited."""

    email = models.CharField(max_length=254)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["email", "at"], name="reset_mail_email_at")]

    def __str__(self) -> str:
        return f"{self.email} at {self.at:%Y-%m-%d %H:%M:%S}"
