"""Projects started in the browser and their members: checks, roles, the permission matrix."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotator.models import Membership, Project, Role
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

NEW = reverse("annotator:project_new")


def members_url(slug="acme"):
    return reverse("annotator:members", args=[slug])


@pytest.fixture
def staff(db):
    user = make_user("stella")
    user.is_staff = True
    user.save()
    return user


# ------------------------------------------------------------------ who may create


def test_anonymous_is_sent_to_login(client):
    for response in (client.get(NEW), client.post(NEW, {"slug": "x", "name": "X"})):
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    assert not Project.objects.filter(slug="x").exists()


@pytest.mark.parametrize(
    "persona, allowed",
    [
        ("staff", True),  # staff, member of nothing
        ("owner", True),
        ("outsider", True),  # owns the other project
        ("adjudicator", False),
        ("annotator", False),
        ("viewer", False),
    ],
)
def test_only_staff_and_owners_create_projects(login, personas, staff, persona, allowed):
    user = staff if persona == "staff" else personas[persona]
    client = login(user)
    listing = client.get(reverse("annotator:project_list")).content.decode()
    assert ('id="new-project"' in listing) is allowed
    assert client.get(NEW).status_code == (200 if allowed else 403)
    response = client.post(NEW, {"slug": "fresh", "name": "Fresh"})
    assert response.status_code == (302 if allowed else 403)
    created = Project.objects.filter(slug="fresh").first()
    assert (created is not None) is allowed
    if allowed:
        assert response["Location"] == members_url("fresh")
        (membership,) = created.memberships.all()
        assert (membership.user, membership.role) == (user, Role.OWNER)


@pytest.mark.parametrize(
    "slug, name, message",
    [
        ("Bad Slug", "X", "“Bad Slug” is not a slug"),
        ("acme", "X", "A project with the slug “acme” already exists."),
        ("ok", " ", "Give the project a name"),
    ],
)
def test_page_and_command_refuse_the_same_way(login, personas, slug, name, message):
    response = login(personas["owner"]).post(NEW, {"slug": slug, "name": name})
    assert response.status_code == 400
    body = response.content.decode()
    assert message in body and 'id="project-new-form"' in body
    assert "errorlist" in body
    with pytest.raises(CommandError, match=message):
        call_command("create_project", slug, "--name", name, "--owner", "alice")
    assert Project.objects.count() == 2  # acme and other, nothing new


def test_command_finds_the_owner_by_email(personas):
    personas["owner"].email = "alice@example.org"
    personas["owner"].save()
    call_command("create_project", "wiki", "--name", "Wiki", "--owner", "Alice@example.org")
    assert Project.objects.get(slug="wiki").memberships.get().user == personas["owner"]
    with pytest.raises(CommandError, match="No active user"):
        call_command("create_project", "wiki2", "--name", "W", "--owner", "nobody")


# ------------------------------------------------------------------ members


def test_owner_adds_by_username_or_email_changes_roles_and_removes(login, personas):
    client = login(personas["owner"])
    otto = personas["outsider"]
    otto.email = "otto@example.org"
    otto.save()
    response = client.post(
        members_url(), {"action": "add", "username": "OTTO@example.org", "role": "adjudicator"}
    )
    assert response.status_code == 302
    membership = Membership.objects.get(project=personas["project"], user=otto)
    assert membership.role == Role.ADJUDICATOR
    for role in (Role.OWNER, Role.VIEWER, Role.ANNOTATOR):
        client.post(members_url(), {"action": "role", "membership": membership.pk, "role": role})
        membership.refresh_from_db()
        assert membership.role == role
    # Adding somebody who is already a member gives them the new role.
    client.post(members_url(), {"action": "add", "username": "otto", "role": "viewer"})
    membership.refresh_from_db()
    assert membership.role == Role.VIEWER
    client.post(members_url(), {"action": "remove", "membership": membership.pk})
    assert not Membership.objects.filter(pk=membership.pk).exists()


def test_bad_additions_are_shown_in_the_form_and_write_nothing(login, personas):
    client = login(personas["owner"])
    for name in ("bea", "ben"):
        user = make_user(name)
        user.email = "same@example.org"
        user.save()
    before = Membership.objects.count()
    for typed, message in [
        ("nobody", "No active user with this username or email."),
        ("same@example.org", "Several users have this email: give the username."),
    ]:
        response = client.post(
            members_url(), {"action": "add", "username": typed, "role": "viewer"}
        )
        assert response.status_code == 400
        body = response.content.decode()
        assert message in body and f'value="{typed}"' in body
        assert 'id="member-table"' in body
    response = client.post(members_url(), {"action": "add", "username": "otto", "role": "boss"})
    assert response.status_code == 400
    assert Membership.objects.count() == before


def test_the_last_owner_stays(login, personas):
    client = login(personas["owner"])
    alice = Membership.objects.get(project=personas["project"], user=personas["owner"])
    for data in (
        {"action": "remove", "membership": alice.pk},
        {"action": "role", "membership": alice.pk, "role": "viewer"},
        {"action": "add", "username": "alice", "role": "annotator"},
    ):
        response = client.post(members_url(), data)
        assert response.status_code == 400, data
        body = response.content.decode()
        assert "A project keeps at least one owner." in body and "<html" in body
    alice.refresh_from_db()
    assert alice.role == Role.OWNER
    # With a second owner, the first may step down.
    client.post(members_url(), {"action": "add", "username": "otto", "role": "owner"})
    client.post(members_url(), {"action": "role", "membership": alice.pk, "role": "viewer"})
    alice.refresh_from_db()
    assert alice.role == Role.VIEWER


@pytest.mark.parametrize(
    "persona, status",
    [
        ("adjudicator", 403),
        ("annotator", 403),
        ("viewer", 403),
        ("outsider", 404),  # not a member: the project's existence is not revealed
        ("staff", 404),
    ],
)
def test_only_owners_manage_members(login, personas, staff, persona, status):
    client = login(staff if persona == "staff" else personas[persona])
    anna = Membership.objects.get(project=personas["project"], user=personas["annotator"])
    assert client.get(members_url()).status_code == status
    for data in (
        {"action": "add", "username": "otto", "role": "owner"},
        {"action": "role", "membership": anna.pk, "role": "owner"},
        {"action": "remove", "membership": anna.pk},
    ):
        assert client.post(members_url(), data).status_code == status, data
    anna.refresh_from_db()
    assert anna.role == Role.ANNOTATOR
    assert not Membership.objects.filter(user=personas["outsider"], project__slug="acme").exists()


def test_new_project_page_speaks_chinese(login, personas):
    body = login(personas["owner"]).get(NEW, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "新建项目" in body and "短名称" in body
    for english in ("New project", "Short name", "Create project", "first owner"):
        assert english not in body, english
