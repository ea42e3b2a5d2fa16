"""The sign-in form with throttling (``accounts.throttle``)."""

from __future__ import annotations

import math

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.utils import timezone
from django.utils.translation import ngettext

from . import throttle


class Throttled:
    """Refuses a locked-out user name before checking its password, and counts failures.
    Mixed into every sign-in form, so that all of them share the one throttle."""

    locked = False

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        until = throttle.locked_until(username)
        if until is not None:
            self.locked = True
            minutes = max(1, math.ceil((until - timezone.now()).total_seconds() / 60))
            raise forms.ValidationError(
                ngettext(
                    "Too many failed attempts to log in as this user. "
                    "Try again in %(minutes)d minute.",
                    "Too many failed attempts to log in as this user. "
                    "Try again in %(minutes)d minutes.",
                    minutes,
                )
                % {"minutes": minutes},
                code="locked",
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            if self.cleaned_data.get("password") and self.user_cache is None:
                throttle.record_failure(username)  # a wrong password, not a refused role
            raise
        throttle.clear(username)
        return cleaned


class ThrottledAuthenticationForm(Throttled, AuthenticationForm):
    """The sign-in page's form."""


class ThrottledAdminAuthenticationForm(Throttled, AdminAuthenticationForm):
    """The admin site's sign-in form: the same throttle, staff only."""


class LimitedPasswordResetForm(PasswordResetForm):
    """Django's reset form; past the hourly limit for an address, nothing is sent (the
    answer is the same, so it tells nobody whether the address is known)."""

    def save(self, *args, **kwargs):
        if throttle.may_mail_reset(self.cleaned_data["email"]):
            super().save(*args, **kwargs)
