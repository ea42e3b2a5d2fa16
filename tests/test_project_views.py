"""Project pages: rendering, escaping, htmx partials and the permission matrix."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotator.models import Judgment, Membership, Role

pytestmark = pytest.mark.django_db


ALL = {"owner", "adjudicator", "annotator", "viewer"}
LEADS = {"owner", "adjudicator"}
# Grades from the live labels (annotators label blind; annotator/access.py). The fixture's
# gold set is not released, so the metric pages measure against the live labels.
LIVE_READERS = {"owner", "adjudicator", "viewer"}
# Who may GET each project page (others members: 403). POST-only endpoints: None.
# Every URL with a slug must be listed here, so a new page cannot skip the matrix.
PAGE_ROLES = {
    "annotator:project_detail": ALL,
    "annotator:members": {"owner"},
    "annotator:project_settings": {"owner"},
    "annotator:document_list": ALL,
    "annotator:document_detail": ALL,
    "annotator:document_original": ALL,
    "annotator:document_page_image": ALL,
    "annotator:document_span_boxes": ALL,
    "annotator:query_list": ALL,
    "annotator:query_detail": ALL,
    "annotator:chunking_list": ALL,
    "annotator:import_upload": {"owner"},
    "annotator:import_status": {"owner"},
    "annotator:queue": ALL,
    "annotator:assign": ALL,
    "annotator:label_query": ALL,
    "annotator:label_query_judge": ALL,
    "annotator:label_query_status": ALL,
    "annotator:label_query_document": ALL,
    "annotator:label_query_search": ALL,
    "gold:queue": LEADS,
    "gold:agreement": LEADS,
    "gold:disagreements_download": LEADS,
    "gold:adjudicate": None,
    "gold:list": ALL,
    "gold:detail": ALL,
    "gold:delete": None,
    "gold:release": None,
    "gold:export": {"owner"},
    "metrics:dashboard": ALL,  # annotators: a note until a gold set is released
    "metrics:dashboard_chart": LIVE_READERS,
    "metrics:export": LIVE_READERS,
    "metrics:qrels_file": LIVE_READERS,
    "metrics:compare": LIVE_READERS,
    "metrics:source_rankings": LIVE_READERS,
    "metrics:run_detail": LIVE_READERS,
    "metrics:run_file": LIVE_READERS,
    "metrics:run_histogram": LIVE_READERS,
    "metrics:run_query": LIVE_READERS,
    "metrics:judge": None,
    # LLM judges: owners configure and start; leads and viewers read; annotators nothing.
    "judges:list": LIVE_READERS,
    "judges:calibration": LIVE_READERS,
    "judges:detail": {"owner"},
    "judges:estimate": {"owner"},
    "judges:start": None,
    "judges:job": {"owner"},
    "judges:cancel": None,
    "judges:resume": None,
    "judges:pause": None,
    # Judges grading a quality dimension: owners (the quality settings page's section).
    "judges:quality_estimate": {"owner"},
    "judges:quality_start": None,
    "metrics:choose_measures": None,
    "metrics:runs": ALL,
    "metrics:series": LIVE_READERS,
    "metrics:run_edit": None,
    "metrics:run_archive": None,
    "metrics:run_delete": {"owner"},
    # Nuggets: leads write them; who reads live grades reads them (annotators: only on a
    # query they have finished, when the owner allows it: tests/nuggets/test_views.py).
    "nuggets:overview": LIVE_READERS,
    "nuggets:setting": None,
    "nuggets:export": LIVE_READERS,
    "nuggets:query_nuggets": LIVE_READERS,
    "nuggets:propose": None,
    # Token-authenticated: tested with tokens in tests/test_api.py.
    "api:upload_run": "api",
    "api:run_metrics": "api",
    "api:gold_export": "api",
    "api:gold_list": "api",
    "api:compare": "api",
    "api:sources_compare": "api",
    "api:gate": "api",
    "api:run_job": "api",
    "answers:api_answer_runs": "api",
    "answers:api_answer_metrics": "api",
    "answers:api_answer_compare": "api",
    "answers:api_answer_gate": "api",
    "answers:api_answer_calibration": "api",
    # Answer runs: measured on everyone's live judgements, like metrics on live labels.
    "answers:dashboard": LIVE_READERS,
    "answers:run_detail": LIVE_READERS,
    "answers:answer": LIVE_READERS,
    "answers:compare": LIVE_READERS,
    # LLM judges on answers: owners start jobs; their calibration for who reads live grades.
    "answers:llm_judging": {"owner"},
    "answers:calibration": LIVE_READERS,
    # Judging answers: whoever labels (blind to the run).
    "answers:judge": {"owner", "adjudicator", "annotator"},
    "answers:judge_side": {"owner", "adjudicator", "annotator"},
    "answers:judge_save": None,
    "answers:judge_undo": None,
    "answers:disputes": LEADS,
    "answers:adjudicate": None,
    # Quality dimensions and the gain rule: owners define them (tests/test_quality_settings.py).
    "quality:settings": {"owner"},
    # Disputed quality grades: leads set final grades (tests/test_quality_adjudication.py).
    "quality:disputes": LEADS,
    "quality:adjudicate": None,
    # The labelling screens' quality rows: read by every member, graded by labellers
    # (tests/test_quality_labelling.py).
    "quality:label_query_quality": ALL,
}


@pytest.fixture
def site_objects(personas, corpus):
    from pathlib import Path

    import numpy as np
    from django.conf import settings

    from annotator.importing.files import Source, import_files
    from gold.services import ConsensusPolicy, freeze_gold_set
    from judges.services import create_judge, plan_job, start_job
    from metrics.models import Run
    from tests.document_files import write_pdf

    # A document imported from a PDF, so its original and page images exist (in the
    # test's own file store: see ``originals_in_tmp``; the PDF is written beside it).
    folder = Path(settings.STORAGES["default"]["OPTIONS"]["location"]).parent
    pdf = write_pdf(folder / "manual.pdf", [["Page one."], ["Page two."]])
    import_files(personas["project"], [Source(pdf, "manual.pdf")])
    pdf_document = personas["project"].documents.get(doc_id="manual.pdf")

    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy())
    run = Run(project=personas["project"], name="r", level="chunk", chunking=corpus["chunking"])
    run.set_results(np.array([corpus["query"].pk]), np.array([corpus["chunk"].pk]), np.ones(1))
    run.save()
    judge = create_judge(
        personas["project"],
        slug="j",
        name="J",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        api_key_env="ASSAY_JUDGE_KEY_J",
        by_operator=True,
    )
    job = start_job(plan_job(judge, scope="pool", level="chunk"), enqueue=False)
    from answers.models import Answer, AnswerRun, Citation, Sentence

    answer_run = AnswerRun.objects.create(project=personas["project"], name="ar", shape="simple")
    answer = Answer.objects.create(run=answer_run, query=corpus["query"], text="Wings lift.")
    sentence = Sentence.objects.create(answer=answer, number=1, text="Wings lift.", start=0, end=11)
    Citation.objects.create(
        sentence=sentence,
        answer=answer,
        number=1,
        granularity="passage",
        document=corpus["document"],
        start=0,
        end=5,
    )
    return {
        # First: "answers:…" names pick the answer run before "run" is matched.
        "answers": answer_run.pk,
        "run": run.pk,
        "query": corpus["query"].pk,
        "qid": corpus["query"].qid,
        "document": pdf_document.pk,
        "page": 2,
        "chunking": corpus["chunking"].pk,
        "chunk": corpus["chunk"].pk,
        "gold": gold_set.pk,
        "import": None,
        "judge": judge.pk,
        "job": job.pk,
        "answer": answer.pk,
    }


def project_urls(objects, slug="acme"):
    """Every URL of the site that belongs to a project, built from the URL configuration.

    Any pattern with a ``slug`` argument is listed; its ``pk`` is filled with the object
    its name is about. Missing objects (an import job) get a pk that does not exist.
    """
    found = []

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                namespace = f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
                walk(pattern.url_patterns, namespace)
            elif isinstance(pattern, URLPattern):
                groups = set(pattern.pattern.regex.groupindex)
                if "slug" in groups:
                    found.append((f"{prefix}{pattern.name}", groups))

    walk(get_resolver().url_patterns)
    built = []
    for name, groups in found:
        kwargs = {"slug": slug}
        kind = next((k for k in objects if k in name), "document")
        for group in groups - {"slug"}:
            if group == "pk":
                kwargs[group] = objects.get(kind) or 999999
            else:  # e.g. query_pk
                kwargs[group] = objects.get(group.removesuffix("_pk")) or 999999
        built.append((name, reverse(name, kwargs=kwargs)))
    unlisted = {name for name, _ in built} - PAGE_ROLES.keys()
    assert not unlisted, f"add these URLs to PAGE_ROLES: {unlisted}"
    return [(name, url) for name, url in built if PAGE_ROLES[name] != "api"]


def test_anonymous_is_sent_to_login(client, site_objects):
    for name, url in project_urls(site_objects):
        response = client.get(url) if PAGE_ROLES[name] else client.post(url)
        assert response.status_code == 302, name
        assert response["Location"].startswith(reverse("login")), name


def test_outsider_gets_404_on_every_project_url(login, personas, site_objects):
    client = login(personas["outsider"])
    for name, url in project_urls(site_objects):
        assert client.post(url, {}).status_code in (404, 405), name
        if PAGE_ROLES[name]:
            assert client.get(url).status_code == 404, name
        else:
            assert client.post(url, {}).status_code == 404, name


def test_outsider_cannot_reach_objects_through_their_own_project(login, personas, corpus):
    """A document of project acme under the slug of the outsider's own project: 404."""
    client = login(personas["outsider"])
    url = reverse("annotator:document_detail", args=["other", corpus["document"].pk])
    assert client.get(url).status_code == 404
    url = reverse("annotator:query_detail", args=["other", corpus["query"].pk])
    assert client.get(url).status_code == 404


@pytest.mark.parametrize("persona", ["owner", "adjudicator", "annotator", "viewer"])
def test_member_matrix(login, personas, site_objects, persona):
    client = login(personas[persona])
    for name, url in project_urls(site_objects):
        allowed = PAGE_ROLES[name]
        if allowed is None:
            assert client.get(url).status_code == 405, (persona, name)
            continue
        status = client.get(url).status_code
        if persona not in allowed:
            assert status == 403, (persona, name, status)
        elif name == "annotator:import_status":
            assert status == 404, (persona, name, status)  # no such job
        elif name == "annotator:document_span_boxes":
            assert status == 400, (persona, name, status)  # access granted; no span given
        elif name == "judges:quality_estimate":
            assert status == 400, (persona, name, status)  # access granted; no judge given
        else:
            assert status == 200, (persona, name, status)


def test_project_list_shows_only_my_projects(login, personas):
    client = login(personas["annotator"])
    body = client.get(reverse("annotator:project_list")).content.decode()
    assert "Acme search" in body
    assert "Other project" not in body


def test_document_text_is_escaped(login, personas, corpus):
    client = login(personas["annotator"])
    url = reverse("annotator:document_detail", args=["acme", corpus["document"].pk])
    body = client.get(url).content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; wings." in body
    assert "Wings &amp; &lt;b&gt;lift&lt;/b&gt;" in body
    assert "第二页：机翼的升力。" in body
    assert "Page 2" in body


def test_query_text_is_escaped(login, personas, corpus):
    client = login(personas["annotator"])
    url = reverse("annotator:query_detail", args=["acme", corpus["query"].pk])
    body = client.get(url).content.decode()
    assert "How do wings &lt;lift&gt;?" in body


@pytest.mark.parametrize("name", ["annotator:document_list", "annotator:query_list"])
def test_lists_render_full_page_and_htmx_partial(login, personas, corpus, name):
    client = login(personas["viewer"])
    url = reverse(name, args=["acme"])
    full = client.get(url)
    assert b"<html" in full.content and b"<table" in full.content
    partial = client.get(url, {"q": "1"}, HTTP_HX_REQUEST="true")
    assert partial.status_code == 200
    assert b"<html" not in partial.content and b"<table" in partial.content
    assert (b"d1" in partial.content) or (b"q1" in partial.content)


@pytest.mark.parametrize("name", ["annotator:document_list", "annotator:query_list"])
def test_bad_list_parameters_are_400(login, personas, corpus, name):
    client = login(personas["viewer"])
    assert client.get(reverse(name, args=["acme"]), {"page": "x"}).status_code == 400
    assert client.get(reverse(name, args=["acme"]), {"page": "0"}).status_code == 400


def test_labels_are_blind_for_annotators(login, personas, corpus):
    from annotator.evidence import Evidence
    from annotator.labels import change_label

    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=3,
        note="anna-note",
    )
    url = reverse("annotator:query_detail", args=["acme", corpus["query"].pk])
    assert "anna-note" not in login(personas["annotator2"]).get(url).content.decode()
    assert "anna-note" in login(personas["annotator"]).get(url).content.decode()
    assert "anna-note" in login(personas["adjudicator"]).get(url).content.decode()
    assert "anna-note" in login(personas["owner"]).get(url).content.decode()
    assert Judgment.objects.count() == 1


def test_owner_manages_members(login, personas):
    client = login(personas["owner"])
    url = reverse("annotator:members", args=["acme"])
    response = client.post(url, {"action": "add", "username": "otto", "role": "viewer"})
    assert response.status_code == 302
    membership = Membership.objects.get(project=personas["project"], user=personas["outsider"])
    assert membership.role == Role.VIEWER
    client.post(url, {"action": "role", "membership": membership.pk, "role": "annotator"})
    membership.refresh_from_db()
    assert membership.role == Role.ANNOTATOR
    client.post(url, {"action": "remove", "membership": membership.pk})
    assert not Membership.objects.filter(pk=membership.pk).exists()


def test_last_owner_cannot_leave(login, personas):
    client = login(personas["owner"])
    owner = Membership.objects.get(project=personas["project"], user=personas["owner"])
    url = reverse("annotator:members", args=["acme"])
    assert client.post(url, {"action": "remove", "membership": owner.pk}).status_code == 400
    assert (
        client.post(url, {"action": "role", "membership": owner.pk, "role": "viewer"}).status_code
        == 400
    )
    owner.refresh_from_db()
    assert owner.role == Role.OWNER


def test_adding_unknown_user_shows_error(login, personas):
    client = login(personas["owner"])
    response = client.post(
        reverse("annotator:members", args=["acme"]),
        {"action": "add", "username": "nobody", "role": "viewer"},
    )
    assert response.status_code == 400
    assert "No active user with this username or email." in response.content.decode()


def test_members_page_enforces_csrf(personas):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["owner"])
    response = client.post(
        reverse("annotator:members", args=["acme"]),
        {"action": "add", "username": "otto", "role": "viewer"},
    )
    assert response.status_code == 403
    assert not Membership.objects.filter(
        user=personas["outsider"], project=personas["project"]
    ).exists()


def test_owner_edits_settings_and_bad_values_write_nothing(login, personas):
    client = login(personas["owner"])
    url = reverse("annotator:project_settings", args=["acme"])
    form = {
        "name": "Acme",
        "description": "",
        "guidelines": "Grade 3 = answers fully.",
        "grade_label_0": "无关",
        "grade_label_1": "相关",
        "grade_label_2": "部分回答",
        "grade_label_3": "完全回答",
        "relevance_threshold": 2,
        "pool_depth": 20,
    }
    assert client.post(url, form).status_code == 302
    project = personas["project"]
    project.refresh_from_db()
    assert (project.relevance_threshold, project.pool_depth, project.grade_label_3) == (
        2,
        20,
        "完全回答",
    )
    response = client.post(url, {**form, "relevance_threshold": 0, "name": "Changed"})
    assert response.status_code == 200
    assert "The threshold is a grade from 1 to 3." in response.content.decode()
    project.refresh_from_db()
    assert project.name == "Acme"


@pytest.mark.parametrize("persona", ["adjudicator", "annotator", "viewer"])
def test_only_owners_change_settings(login, personas, persona):
    client = login(personas[persona])
    url = reverse("annotator:project_settings", args=["acme"])
    assert client.post(url, {"name": "Hacked"}).status_code == 403
    personas["project"].refresh_from_db()
    assert personas["project"].name == "Acme search"


def test_admin_is_for_staff_and_labels_are_read_only_there(client, personas, corpus):
    from django.contrib.auth import get_user_model

    client.force_login(personas["owner"])
    assert client.get("/admin/").status_code == 302  # not staff: sent to the admin login
    staff = get_user_model().objects.create_superuser("root", password="x-long-password")
    client.force_login(staff)
    assert client.get("/admin/annotator/project/").status_code == 200
    assert client.get("/admin/annotator/judgment/add/").status_code == 403
