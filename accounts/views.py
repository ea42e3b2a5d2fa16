"""Sign-in with throttling; password change and reset are Django's own views."""

from __future__ import annotations

from django.contrib.auth import views as auth_views

from .forms import ThrottledAuthenticationForm


class LoginView(auth_views.LoginView):
    """Django's login view; a locked-out user name gets 429 Too Many Requests."""

    authentication_form = ThrottledAuthenticationForm

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.locked:
            response.status_code = 429
        return response
