"""The sign-in form with throttling (``accounts.throttle``)."""

from __future__ import annotations

import math

from django import forms
from django.contrib.auth.forms import AuthenticationForm
from django.utils import timezone
from django.utils.translation import ngettext

from . import throttle


class ThrottledAuthenticationForm(AuthenticationForm):
    """Refuses a locked-out user name before checking its password, and counts failures."""

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
            if self.cleaned_data.get("password"):
                throttle.record_failure(username)
            raise
        throttle.clear(username)
        return cleaned
