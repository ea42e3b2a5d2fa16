"""API for pipelines: tokens, run upload, metrics, gold download — same roles as the pages."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from api.models import ApiToken
from gold.services import ConsensusPolicy, freeze_gold_set
from metrics.models import Run

pytestmark = pytest.mark.django_db


def bearer(token):
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def tokens(personas):
    return {
        key: ApiToken.create_for(personas[key], "ci")[1]
        for key in ("owner", "annotator", "viewer", "outsider")
    }


def upload(token, content=b"q1 Q0 d1#0 1 2.0 ci\n", **data):
    client = Client(enforce_csrf_checks=True)  # tokens need no CSRF token: no cookies
    return client.post(
        reverse("api:upload_run", args=["acme"]),
        {
            "file": SimpleUploadedFile("run.trec", content),
            "name": "ci-build",
            "chunking": "c256",
            **data,
        },
        **bearer(token),
    )


def test_token_page_creates_shows_once_and_revokes(login, personas):
    client = login(personas["annotator"])
    page = client.post(reverse("api:tokens"), {"name": "laptop"})
    token = page.context["created"]
    assert token.startswith("assay_") and token.encode() in page.content
    row = ApiToken.objects.get(user=personas["annotator"])
    assert row.token_hash != token and token not in row.token_hash
    again = client.get(reverse("api:tokens"))
    assert token.encode() not in again.content
    client.post(reverse("api:tokens"), {"action": "revoke", "token": row.pk})
    assert ApiToken.authenticate(token) is None
    # A name with a NUL character, or a token that is not a number: refused, nothing kept.
    assert client.post(reverse("api:tokens"), {"name": "lap\x00top"}).status_code == 400
    assert client.post(reverse("api:tokens"), {"action": "revoke", "token": "x"}).status_code == 404
    assert ApiToken.objects.filter(user=personas["annotator"]).count() == 1
    # Someone else's token cannot be revoked through my page.
    theirs, _ = ApiToken.create_for(personas["owner"], "x")
    assert (
        client.post(reverse("api:tokens"), {"action": "revoke", "token": theirs.pk}).status_code
        == 404
    )


def test_owner_uploads_a_run_and_reads_its_metrics(personas, corpus, tokens):
    response = upload(
        tokens["owner"], parameters='{"model": "e5"}', tags="nightly, e5", series="main"
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(name="ci-build")
    assert (run.tags, run.series) == (["nightly", "e5"], "main")
    assert response.json()["results"] == 1 and run.parameters == {"model": "e5"}
    metrics = Client().get(
        reverse("api:run_metrics", args=["acme", run.pk]),
        {"level": "c256", "k": 5},
        **bearer(tokens["viewer"]),
    )
    assert metrics.status_code == 200
    body = metrics.json()
    assert set(body["mean"]) == {"Hit@5", "P@5", "R@5", "F1@5", "MRR@5", "MAP", "nDCG@5", "Rprec"}
    assert body["gold"]["gold"] == "live"


def test_bad_uploads_write_nothing(personas, corpus, tokens):
    response = upload(tokens["owner"], content=b"q1 Q0 d1#0 1 2.0 ci\nq9 Q0 nope 1 x ci\n")
    assert response.status_code == 400
    assert response.json()["lines"] == ["line 2: score 'x' is not a number"]
    assert upload(tokens["owner"], parameters="[1]").status_code == 400
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "field",
    [
        {"name": "ci\x00build"},
        {"chunking": "c\x00256"},
        {"tags": "a,\x00b"},
        {"series": "main\x00"},
        {"parameters": '{"model": "e\\u00005"}'},
        {"parameters": '{"\\u0000": 1}'},
    ],
)
def test_null_characters_are_refused_before_the_database_sees_them(personas, corpus, tokens, field):
    """PostgreSQL stores no NUL in text or JSON: an upload carrying one answered 500 there
    (found by the OpenAPI check's random inputs); it is refused with 400 on every database."""
    response = upload(tokens["owner"], **field)
    assert response.status_code == 400, response.content
    assert response.json()["error"].startswith(next(iter(field)))
    assert not Run.objects.exists()


def test_roles_and_tokens(personas, corpus, tokens):
    assert upload(tokens["annotator"]).status_code == 403
    assert upload(tokens["outsider"]).status_code == 404
    assert upload("assay_wrong").status_code == 401
    no_header = Client().post(reverse("api:upload_run", args=["acme"]), {})
    assert no_header.status_code == 401
    # A logged-in session is not enough: the API takes tokens only.
    session = Client()
    session.force_login(personas["owner"])
    assert session.post(reverse("api:upload_run", args=["acme"]), {}).status_code == 401
    ApiToken.objects.get(user=personas["owner"]).revoke()
    assert upload(tokens["owner"]).status_code == 401
    assert not Run.objects.exists()


def test_gold_download_for_owners(personas, corpus, tokens):
    from annotator.evidence import Evidence
    from annotator.labels import change_label

    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=2,
    )
    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy())
    target = reverse("api:gold_export", args=["acme", gold_set.pk])
    response = Client().get(target, {"format": "qrels", "level": "c256"}, **bearer(tokens["owner"]))
    assert response.status_code == 200 and response.content == b"q1 0 d1#0 2\n"
    assert Client().get(target, **bearer(tokens["viewer"])).status_code == 403
    assert Client().get(target, **bearer(tokens["outsider"])).status_code == 404
    assert Client().get(target, {"format": "pdf"}, **bearer(tokens["owner"])).status_code == 400


def test_api_follows_the_blind_and_release_rules(personas, corpus, tokens):
    """Per-query metrics against live labels are grades by another name: not for
    annotators; a gold set's file and metrics: owners, then everyone once released."""
    from annotator.evidence import Evidence
    from annotator.labels import change_label

    change_label(
        query=corpus["query"],
        annotator=personas["annotator2"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=3,
    )
    run = Run(project=personas["project"], name="r", level="chunk", chunking=corpus["chunking"])
    run.set_results([corpus["query"].pk], [corpus["chunk"].pk], [1.0])
    run.save()
    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy())
    metrics = reverse("api:run_metrics", args=["acme", run.pk])
    export = reverse("api:gold_export", args=["acme", gold_set.pk])
    anna = bearer(tokens["annotator"])
    for params in ({}, {"gold": "live"}, {"gold": gold_set.pk}):
        response = Client().get(metrics, params, **anna)
        assert response.status_code == 403 and "error" in response.json(), params
    assert Client().get(export, **anna).status_code == 403
    viewer = bearer(tokens["viewer"])
    assert Client().get(metrics, {"gold": gold_set.pk}, **viewer).status_code == 403
    gold_set.set_released(True)
    released = Client().get(metrics, {"level": "c256"}, **anna)  # defaults to the released set
    assert released.status_code == 200
    assert released.json()["gold"]["gold"] == "g v1" and released.json()["mean"]["P@10"] == 0.1
    response = Client().get(export, {"format": "qrels", "level": "c256"}, **anna)
    assert response.status_code == 200 and response.content == b"q1 0 d1#0 3\n"


def test_large_uploads_go_to_the_worker_and_answer_202_with_the_job(
    personas, corpus, tokens, settings
):
    # API run uploads were parsed inside the web request (378 MB resident after two
    # 1 M-line uploads): above ASSAY_API_INLINE_RUN_BYTES the worker reads them.
    from tests.test_import_views import work_off_queue

    settings.ASSAY_API_INLINE_RUN_BYTES = 10
    response = upload(tokens["owner"], tags="nightly", series="main", replace="false")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "pending" and body["run"] is None
    assert response["Location"] == body["poll"] == f"/api/p/acme/jobs/{body['job']}/"
    assert not Run.objects.exists()  # nothing read in the request
    work_off_queue()
    done = Client().get(body["poll"], **bearer(tokens["owner"])).json()
    run = Run.objects.get(name="ci-build")
    assert done["status"] == "done" and done["run"] == {"id": run.pk, "name": "ci-build"}
    assert (run.tags, run.series, run.n_results) == (["nightly"], "main", 1)
    assert Client().get(body["poll"], **bearer(tokens["viewer"])).status_code == 403
    bad = upload(tokens["owner"], content=b"q1 Q0 d1#0 1 x ci\n", name="bad")
    work_off_queue()
    failed = Client().get(bad.json()["poll"], **bearer(tokens["owner"])).json()
    assert failed["status"] == "failed"
    assert failed["lines"] == ["line 1: score 'x' is not a number"]
    assert not Run.objects.filter(name="bad").exists()


def test_a_workbook_is_known_by_its_content_whatever_its_name(personas, corpus, tokens):
    """An upload the content shows is a workbook is read as one under any name (openpyxl
    itself refuses names not ending in .xlsx), and a broken one is a 400, not a 500."""
    import io

    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["qid", "docid", "score"])
    book.active.append(["q1", "d1#0", 2.0])
    content = io.BytesIO()
    book.save(content)
    client = Client(enforce_csrf_checks=True)
    url = reverse("api:upload_run", args=["acme"])
    named_zip = SimpleUploadedFile("file.zip", content.getvalue())
    response = client.post(
        url, {"file": named_zip, "name": "w", "chunking": "c256"}, **bearer(tokens["owner"])
    )
    assert response.status_code == 201, response.content
    # A zip whose bytes were mangled in transit (as a fuzzer sent it): not a workbook.
    broken = b"PK\x03\x04\x14\x00\x00\x00\x00\x00P\xef\xbf\xbd;]C\xef\xbf\xbd" + b"\x00" * 30
    response = client.post(
        url,
        {"file": SimpleUploadedFile("file.zip", broken), "name": "b", "chunking": "c256"},
        **bearer(tokens["owner"]),
    )
    assert response.status_code == 400
    assert response.json()["lines"] == ["the file is not an Excel workbook (.xlsx)"]
    assert not Run.objects.filter(name="b").exists()
