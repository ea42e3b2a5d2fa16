"""Sign-in throttling, password change and password reset by email."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse
from django.utils import timezone

import config.settings
from accounts.models import LoginFailure
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOGIN = reverse("login")


def attempt(client, username: str, password: str):
    return client.post(LOGIN, {"username": username, "password": password})


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_wrong_passwords_lock_the_name_out_for_the_window(client, personas, monkeypatch):
    for _ in range(5):
        response = attempt(client, "anna", "wrong")
        assert response.status_code == 200
        assert "match. Please try again." in response.content.decode()
    # The sixth attempt is refused before the password is checked, even the right one.
    for password in ("wrong", PASSWORD):
        response = attempt(client, "Anna ", password)
        assert response.status_code == 429
        body = response.content.decode()
        assert "Too many failed attempts to log in as this user. Try again in 15 minutes." in body
        assert not logged_in(client)
    assert LoginFailure.objects.filter(username="anna").count() == 5
    # Others are not locked out by anna's failures.
    assert attempt(client, "arno", PASSWORD).status_code == 302
    client.logout()
    # Fourteen minutes later anna is still locked out; after fifteen she may log in.
    start = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: start + timedelta(minutes=14))
    assert "Try again in 1 minute." in attempt(client, "anna", PASSWORD).content.decode()
    monkeypatch.setattr(timezone, "now", lambda: start + timedelta(minutes=15, seconds=1))
    assert attempt(client, "anna", PASSWORD).status_code == 302 and logged_in(client)
    assert not LoginFailure.objects.filter(username="anna").exists()


def test_a_success_resets_the_count(client, personas):
    for _ in range(4):
        attempt(client, "vera", "wrong")
    assert attempt(client, "vera", PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        attempt(client, "vera", "wrong")
    assert attempt(client, "vera", PASSWORD).status_code == 302


def test_a_user_changes_their_password(client, login, personas):
    client = login(personas["annotator"])
    url = reverse("password_change")
    page = client.get(url)
    assert page.status_code == 200 and b"Change your password" in page.content
    wrong = client.post(url, {"old_password": "nope", "new_password1": "x", "new_password2": "x"})
    assert wrong.status_code == 200
    personas["annotator"].refresh_from_db()
    assert personas["annotator"].check_password(PASSWORD)
    done = client.post(
        url,
        {
            "old_password": PASSWORD,
            "new_password1": "a-much-better-secret-42",
            "new_password2": "a-much-better-secret-42",
        },
    )
    assert done.status_code == 302 and done["Location"] == reverse("password_change_done")
    user = get_user_model().objects.get(username="anna")
    assert user.check_password("a-much-better-secret-42") and not user.check_password(PASSWORD)


def test_password_change_needs_a_login(client):
    response = client.get(reverse("password_change"))
    assert response.status_code == 302 and response["Location"].startswith(LOGIN)


def test_a_forgotten_password_is_reset_through_the_mailed_link(client, personas):
    assert config.settings.EMAIL_BACKEND == "django.core.mail.backends.console.EmailBackend"
    anna = personas["annotator"]
    anna.email = "anna@example.org"
    anna.save()
    assert b"Forgot your password?" in client.get(LOGIN).content
    sent = client.post(reverse("password_reset"), {"email": "anna@example.org"})
    assert sent.status_code == 302
    # An unknown address gets the same answer and no mail.
    client.post(reverse("password_reset"), {"email": "nobody@example.org"})
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["anna@example.org"] and message.subject == "Your new Assay password"
    link = re.search(r"https?://testserver(\S+)", message.body).group(1)
    form = client.get(link, follow=True)
    assert b"Choose a new password" in form.content
    new = "reset-by-mail-2026"
    done = client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert done.status_code == 302 and done["Location"] == reverse("password_reset_complete")
    assert attempt(client, "anna", new).status_code == 302
    # The link works once.
    assert b"no longer valid" in client.get(link, follow=True).content


ADMIN_LOGIN = "/admin/login/"


def test_the_admin_sign_in_shares_the_throttle(client, personas):
    """Wrong passwords at /admin/login/ count, and a name locked out anywhere is refused
    there too, even with the right password."""
    staff = personas["owner"]
    staff.is_staff = True
    staff.save()
    for _ in range(3):
        client.post(ADMIN_LOGIN, {"username": "alice", "password": "wrong"})
    assert LoginFailure.objects.filter(username="alice").count() == 3
    for _ in range(2):
        attempt(client, "alice", "wrong")
    answer = client.post(ADMIN_LOGIN, {"username": "alice", "password": PASSWORD})
    assert "Too many failed attempts" in answer.content.decode() and not logged_in(client)
    for _ in range(8):
        client.post(ADMIN_LOGIN, {"username": "alice", "password": "wrong"})
    assert not logged_in(client)
    # A person who logs in but is not staff is refused by role, not counted as a failure.
    answer = client.post(ADMIN_LOGIN, {"username": "vera", "password": PASSWORD})
    assert not logged_in(client) and not LoginFailure.objects.filter(username="vera").exists()


def test_reset_mails_to_one_address_are_rate_limited(client, personas, settings):
    anna = personas["annotator"]
    anna.email = "anna@example.org"
    anna.save()
    for _ in range(24):
        answer = client.post(reverse("password_reset"), {"email": "Anna@example.org"})
        assert answer.status_code == 302  # the same answer every time
    assert len(mail.outbox) == settings.ASSAY_RESET_MAILS_PER_HOUR == 3
    # Another address has its own allowance.
    vera = personas["viewer"]
    vera.email = "vera@example.org"
    vera.save()
    client.post(reverse("password_reset"), {"email": "vera@example.org"})
    assert len(mail.outbox) == 4
