"""API tokens scoped to projects and to reading, and revoked by a password change.

The scope matrix runs over every token endpoint of the URL list: a token limited to
another project finds nothing here (404), a token limited to this project or to reading
reads as its user's role allows, and a read-only token writes nothing (403).
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, reverse

from api import urls as api_urls
from api.models import ApiToken
from metrics.models import Run
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

OPEN = {"tokens", "openapi"}  # the session's token page and the public description


def token_endpoints() -> list[str]:
    """Every token endpoint's URL name, from the URL list (a new one joins the matrix)."""
    names = [p.name for p in api_urls.urlpatterns if isinstance(p, URLPattern)]
    assert len(names) >= 8
    return [name for name in names if name not in OPEN]


def _args(name: str) -> list:
    pattern = next(p for p in api_urls.urlpatterns if p.name == name)
    return ["acme"] + [1] * (str(pattern.pattern).count("<int:"))


def call(token: str, name: str, method: str = "GET"):
    client = Client()
    url = reverse(f"api:{name}", args=_args(name))
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if method == "POST":
        data = {"file": SimpleUploadedFile("r.trec", b"q1 Q0 d1#0 1 2.0 x\n"), "name": "ci"}
        return client.post(url, {**data, "chunking": "c256"}, **headers)
    return client.get(url, **headers)


@pytest.mark.parametrize("name", token_endpoints())
def test_a_token_scoped_to_another_project_finds_nothing_here(personas, corpus, name):
    other_only = ApiToken.create_for(personas["owner"], "ci", projects=[personas["other"]])[1]
    # alice owns acme but is no member of "other": scope her token to a project of hers.
    from annotator.models import Membership, Role

    Membership.objects.create(project=personas["other"], user=personas["owner"], role=Role.VIEWER)
    assert call(other_only, name).status_code == 404
    acme_only = ApiToken.create_for(personas["owner"], "ci", projects=[personas["project"]])[1]
    everywhere = ApiToken.create_for(personas["owner"], "ci")[1]
    assert call(acme_only, name).status_code == call(everywhere, name).status_code != 401


@pytest.mark.parametrize("name", token_endpoints())
def test_a_read_only_token_reads_as_its_user_may(personas, corpus, name):
    read_only = ApiToken.create_for(personas["owner"], "ci", read_only=True)[1]
    everywhere = ApiToken.create_for(personas["owner"], "ci")[1]
    assert call(read_only, name).status_code == call(everywhere, name).status_code


def test_a_read_only_token_uploads_nothing(personas, corpus):
    read_only = ApiToken.create_for(personas["owner"], "ci", read_only=True)[1]
    answer = call(read_only, "upload_run", "POST")
    assert answer.status_code == 403 and answer.json() == {"error": "this token may only read"}
    assert not Run.objects.exists()
    writer = ApiToken.create_for(personas["owner"], "ci")[1]
    assert call(writer, "upload_run", "POST").status_code in (200, 201, 202)


def test_a_password_change_revokes_every_token(login, personas, corpus):
    token = ApiToken.create_for(personas["owner"], "ci")[1]
    assert call(token, "gold_list").status_code == 200
    client = login(personas["owner"])
    changed = client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "n3w-secret-2026",
            "new_password2": "n3w-secret-2026",
        },
    )
    assert changed.status_code == 302
    assert call(token, "gold_list").status_code == 401
    assert "revoked" in client.get(reverse("api:tokens")).content.decode()
    # So does a password an administrator sets.
    fresh = ApiToken.create_for(personas["owner"], "ci")[1]
    personas["owner"].set_password("another-one-2026")
    personas["owner"].save()
    assert call(fresh, "gold_list").status_code == 401


def test_the_token_page_and_create_token_set_the_scopes(login, personas, corpus, capsys):
    client = login(personas["owner"])
    page = client.post(
        reverse("api:tokens"),
        {"name": "ci", "read_only": "on", "projects": [personas["project"].pk]},
    )
    row = ApiToken.objects.get(user=personas["owner"])
    assert row.read_only and list(row.projects.all()) == [personas["project"]]
    assert "read only" in page.content.decode() and "acme" in page.content.decode()
    # A project the user is no member of cannot be chosen.
    refused = client.post(reverse("api:tokens"), {"name": "x", "projects": [personas["other"].pk]})
    assert refused.status_code == 400 and ApiToken.objects.count() == 1
    call_command("create_token", "alice", "--name", "nightly", "--read-only", "--project", "acme")
    made = ApiToken.objects.get(name="nightly")
    assert made.read_only and [p.slug for p in made.projects.all()] == ["acme"]
    with pytest.raises(Exception, match="no member of a project 'other'"):
        call_command("create_token", "alice", "--name", "x", "--project", "other")
