"""Label sources: the tokens, the one resolver, and every path that reads live labels
passing through it (pages, API endpoints, commands)."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotator import sources as sources_module
from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Membership, Role, SourceKind
from annotator.sources import SourcesError, parse_sources, resolve_sources, source_choices
from api.models import ApiToken
from gold.units import live_labels
from metrics.models import Run

from .test_project_views import PAGE_ROLES, project_urls, site_objects  # noqa: F401

pytestmark = pytest.mark.django_db

# Every page, endpoint and command whose numbers rest on live labels.
READS_LIVE_LABELS = {
    "metrics:dashboard",
    "metrics:dashboard_chart",
    "metrics:export",
    "metrics:qrels_file",
    "metrics:compare",
    "metrics:run_detail",
    "metrics:run_file",
    "metrics:run_histogram",
    "metrics:run_query",
    "metrics:series",
    "metrics:source_rankings",
    "gold:queue",
    "gold:agreement",
    "gold:disagreements_download",
    "judges:calibration",
}
API = {
    "api:run_metrics": {},
    "api:compare": {"runs": "RUN"},
    "api:gate": {"baseline": "RUN", "measure": "nDCG@10", "max_drop": "0.1"},
    "api:sources_compare": {"b": "judge:j"},
}


@pytest.fixture
def resolutions(monkeypatch):
    """How many times the resolver read a choice of sources (its one entry point)."""
    calls = []
    real = sources_module.parse_sources

    def counting(text):
        calls.append(text)
        return real(text)

    monkeypatch.setattr(sources_module, "parse_sources", counting)
    return calls


def test_tokens_parse_as_the_issue_spells_them(personas):
    assert parse_sources("") == ("people", "assessors")
    assert parse_sources("people, judge:gpt-mini@2,people") == ("people", "judge:gpt-mini@2")
    for bad in ("persons", "judge:", "judge:x@0", "judge:x@y", "judges:x"):
        with pytest.raises(SourcesError):
            parse_sources(bad)


def test_resolver_kinds_versions_and_the_default(personas, corpus):
    from judges.services import create_judge, update_judge

    project = personas["project"]
    judge = create_judge(
        project,
        slug="gpt",
        name="G",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        api_key_env="ASSAY_JUDGE_KEY_K",
        by_operator=True,
    )
    update_judge(judge, prompt=judge.prompt + " v2")
    from annotator.importing.judgments import label_annotator

    assessor = label_annotator(project, "cranfield-assessors")
    kinds = dict(Membership.objects.filter(project=project).values_list("user__username", "source"))
    assert kinds["cranfield-assessors"] == SourceKind.ASSESSORS
    assert kinds["judge-acme-gpt-v2"] == SourceKind.JUDGE
    assert kinds[personas["annotator"].username] == SourceKind.PERSON
    default = resolve_sources(project)
    assert default.names == ["people", "assessors"]
    assert default.counts(personas["annotator"].username) and default.counts(assessor.username)
    assert not default.counts("judge-acme-gpt-v1") and not default.counts("judge-acme-gpt-v2")
    latest = resolve_sources(project, "judge:gpt")
    assert set(latest.chosen) == {"judge-acme-gpt-v2"} and not latest.people
    assert set(resolve_sources(project, "judge:gpt@1").chosen) == {"judge-acme-gpt-v1"}
    assert set(resolve_sources(project, "judges").chosen) == {"judge-acme-gpt-v2"}
    with pytest.raises(SourcesError):
        resolve_sources(project, "judge:gpt@3")
    assert source_choices(project) == [
        "people",
        "assessors",
        "judges",
        "judge:gpt",
        "judge:gpt@1",
        "judge:gpt@2",
    ]
    # Labels: only the chosen sources' (and adjudications with people).
    query, chunk = corpus["query"], corpus["chunk"]
    for user, grade in ((personas["annotator"], 3), (assessor, 1)):
        change_label(query=query, annotator=user, evidence=Evidence.for_chunk(chunk), grade=grade)
    counted = live_labels(project, sources=resolve_sources(project, "assessors"))
    assert counted.annotators == ["cranfield-assessors"] and counted.grade.tolist() == [1]


def test_every_label_reading_page_endpoint_and_command_goes_through_the_resolver(
    personas,
    corpus,
    site_objects,  # noqa: F811 - the fixture imported above
    resolutions,
    client,
):
    client.force_login(personas["owner"])
    seen = set()
    for name, url in project_urls(site_objects):
        if name not in READS_LIVE_LABELS:
            continue
        resolutions.clear()
        response = client.get(url)
        assert response.status_code == 200, (name, response.status_code)
        assert resolutions, f"{name} read live labels without the sources resolver"
        seen.add(name)
    assert seen == READS_LIVE_LABELS
    token = ApiToken.create_for(personas["owner"], "ci")[1]
    run = Run.objects.get(pk=site_objects["run"])
    twin = Run(project=run.project, name="twin", level=run.level, chunking=run.chunking)
    twin.results = run.results
    twin.save()
    for name, params in API.items():
        kwargs = {"slug": "acme"}
        if name in ("api:run_metrics", "api:gate"):
            kwargs["pk"] = run.pk
        params = {k: str(twin.pk) if v == "RUN" else v for k, v in params.items()}
        if name == "api:compare":
            params["runs"] = f"{run.pk},{twin.pk}"
        resolutions.clear()
        answer = Client().get(
            reverse(name, kwargs=kwargs), params, HTTP_AUTHORIZATION=f"Bearer {token}"
        )
        assert answer.status_code in (200, 422), (name, answer.content)
        assert resolutions, f"{name} read live labels without the sources resolver"
        assert "sources" in answer.json()
    for command, args in (
        ("export_metrics", ["acme"]),
        ("disagreements", ["acme", "--level", "documents"]),
        ("freeze_gold", ["acme", "--name", "resolved"]),
        ("compare_sources", ["acme", "--b", "judge:j"]),
    ):
        resolutions.clear()
        call_command(command, *args, stdout=io.StringIO(), stderr=io.StringIO())
        assert resolutions, f"manage.py {command} read live labels without the resolver"


@pytest.fixture
def label_reads(monkeypatch):
    """Every read of live labels, wherever the reader was imported: ``live_labels`` (the
    labels from the database) and ``counted_labels`` (the labels a cached state narrows
    to the sources)."""
    import gold.units
    import metrics.label_state

    reads = []
    for owner, name in ((gold.units, "live_labels"), (metrics.label_state, "counted_labels")):
        original = getattr(owner, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            reads.append(_name)
            return _original(*args, **kwargs)

        for module in list(sys.modules.values()):
            if getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, spy)
    return reads


def test_no_page_reads_live_labels_without_the_resolver(
    personas,
    corpus,
    site_objects,  # noqa: F811 - the fixture imported above
    resolutions,
    label_reads,
    client,
):
    """The layer rule over every page of a project, not a list to keep up to date: any page
    that reads live labels (from the database or the cached state) has resolved its
    sources in the same request."""
    client.force_login(personas["owner"])
    reading = set()
    for name, url in project_urls(site_objects):
        if not PAGE_ROLES[name]:
            continue  # POST only
        resolutions.clear()
        label_reads.clear()
        client.get(url)
        if label_reads:
            reading.add(name)
            assert resolutions, f"{name} read live labels without the sources resolver"
    # The spy sees readers (pages served from the label caches read nothing new).
    assert {"metrics:dashboard", "gold:agreement", "gold:queue", "judges:estimate"} <= reading


def test_live_labels_cannot_be_read_without_saying_whose(personas):
    with pytest.raises(TypeError):
        live_labels(personas["project"])  # ``sources`` is required


def test_judge_labels_never_count_by_default(personas, corpus):
    """A judge's labels stay out of the default numbers until chosen (the issue's first bug)."""
    from judges.services import create_judge
    from metrics.evaluation import evaluation_setting

    project = personas["project"]
    judge = create_judge(
        project,
        slug="j",
        name="J",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        api_key_env="ASSAY_JUDGE_KEY_K",
        by_operator=True,
    )
    run = Run(project=project, name="r", level="chunk", chunking=corpus["chunking"])
    run.set_results(np.array([corpus["query"].pk]), np.array([corpus["chunk"].pk]), np.ones(1))
    run.save()
    change_label(
        query=corpus["query"],
        annotator=judge.current.annotator,
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=3,
    )
    level = corpus["chunking"].name
    default = evaluation_setting(project, level=level)
    assert default.gold.query_pks.size == 0  # nobody but the judge labelled
    chosen = evaluation_setting(project, level=level, sources="judge:j")
    assert chosen.gold.query_pks.tolist() == [corpus["query"].pk]
    assert chosen.gold.description["sources"] == ["judge:j"]
    assert Membership.objects.get(user=judge.current.annotator).role == Role.ANNOTATOR


def test_the_sources_line_says_which_version_latest_is(personas, corpus, client):
    from annotator.templatetags.sources_tags import sources_detail
    from judges.services import create_judge, update_judge

    project = personas["project"]
    judge = create_judge(
        project,
        slug="gpt",
        name="G",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        api_key_env="ASSAY_JUDGE_KEY_K",
        by_operator=True,
    )
    update_judge(judge, model="m2")
    line = sources_detail(resolve_sources(project, "people,judge:gpt"))
    assert line == "people · judge gpt (latest version: v2)"
    assert sources_detail(resolve_sources(project, "judges")).endswith("(judge gpt v2)")
    assert sources_detail(resolve_sources(project, "judge:gpt@1")) == "judge gpt v1"
    client.force_login(personas["owner"])
    url = reverse("metrics:dashboard", args=["acme"])
    page = client.get(url, {"sources": "people,judge:gpt"}).content.decode()
    assert "judge gpt (latest version: v2)" in page
    chinese = client.get(url, {"sources": "judge:gpt"}, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert "评审模型 gpt（最新版本：v2）" in chinese.content.decode()
