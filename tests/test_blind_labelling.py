"""Blind means blind: over every project URL, what an annotator and each other role read.

The rules live in ``annotator/access.py``: annotators see no grade but their own
anywhere; grades from the live labels are for owners, adjudicators and viewers; a frozen
gold set's grades are for owners until the owner releases it to the team.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from gold.models import GoldSet
from gold.services import ConsensusPolicy, freeze_gold_set

from .test_project_views import PAGE_ROLES, project_urls, site_objects

pytestmark = pytest.mark.django_db

TOKEN = re.compile(rb'(csrfmiddlewaretoken" value=|"X-CSRFToken": ?|csrf-token" content=)"[^"]+"')


def _variants(url: str, gold_pks: list[int]) -> list[str]:
    """The URL bare and with every gold parameter a page may be asked for."""
    return [
        url,
        f"{url}?gold=live",
        f"{url}?gold=live&level=c256",
        *(f"{url}?gold={pk}" for pk in gold_pks),
        *(f"{url}?against={pk}" for pk in gold_pks),
    ]


def _read_everything(client, objects, gold_pks) -> dict[str, tuple[int, bytes]]:
    seen = {}
    for name, url in project_urls(objects):
        if PAGE_ROLES[name] is None:
            continue
        for variant in _variants(url, gold_pks):
            response = client.get(variant)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            seen[variant] = (response.status_code, TOKEN.sub(b"", body))
    return seen


def _label_as_anna(personas, corpus) -> None:
    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=3,
        note="anna-note",
    )
    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_document(corpus["document"]),
        grade=2,
    )


def test_no_url_shows_an_annotator_anything_of_anothers_labels(login, personas, corpus):
    """Every page, partial and download arno can reach reads the same before and after
    anna labels: her grades reach him nowhere (before the fix the qrels, drill-down,
    run page and exports against live labels showed them)."""
    project = personas["project"]
    released = freeze_gold_set(project, "team", policy=ConsensusPolicy())
    released.set_released(True)
    kept = freeze_gold_set(project, "held-out", policy=ConsensusPolicy())
    objects = site_objects.__wrapped__(personas, corpus)
    gold_pks = [released.pk, kept.pk, objects["gold"]]
    client = login(personas["annotator2"])
    before = _read_everything(client, objects, gold_pks)
    _label_as_anna(personas, corpus)
    after = _read_everything(client, objects, gold_pks)
    changed = [url for url in before if before[url] != after[url]]
    assert not changed, changed
    assert all(b"anna" not in body for _status, body in after.values())
    # The pages are really there: the metric pages against the released gold set.
    reachable = [url for url, (status, _body) in after.items() if status == 200]
    assert any(f"metrics/qrels/?gold={released.pk}" in url for url in reachable)
    assert any(f"/q/{corpus['query'].qid}/?gold={released.pk}" in url for url in reachable)


# Pages that show no gold set's grades: run management, and the judge-against-people
# rankings (live labels of chosen sources only: readers of live grades).
RUN_PAGES = {"metrics:runs", "metrics:run_delete", "metrics:source_rankings"}


@pytest.mark.parametrize("persona", ["owner", "adjudicator", "annotator", "viewer"])
def test_gold_set_grades_follow_one_rule_on_every_path(login, personas, corpus, persona):
    """An unreleased gold set's grades: owners only, whatever the path (qrels download,
    dashboard, run page, drill-down, metric exports, the diff page, the gold export);
    once released, every member. Before the fix ``metrics/qrels/?gold=`` and the diff
    page gave them to every member while the export answered 403."""
    project = personas["project"]
    _label_as_anna(personas, corpus)
    first = freeze_gold_set(project, "g", policy=ConsensusPolicy())
    objects = site_objects.__wrapped__(personas, corpus)
    gold_set = GoldSet.objects.get(pk=objects["gold"])  # the same labels, v2
    client = login(personas[persona])
    paths = []
    for name, url in project_urls(objects):
        # Run management shows no grades: its own roles apply (test_project_views).
        if name.startswith("metrics:") and PAGE_ROLES[name] is not None and name not in RUN_PAGES:
            paths.append(f"{url}?gold={gold_set.pk}")
    paths.append(reverse("gold:detail", args=["acme", gold_set.pk]) + f"?against={first.pk}")
    paths.append(reverse("gold:export", args=["acme", gold_set.pk]) + "?format=qrels")
    expected = 200 if persona == "owner" else 403
    for path in paths:
        assert client.get(path).status_code == expected, (persona, path)
    first.set_released(True)
    gold_set.set_released(True)
    for path in paths:
        assert client.get(path).status_code == 200, (persona, path)
    qrels = client.get(reverse("metrics:qrels_file", args=["acme"]) + f"?gold={gold_set.pk}")
    assert qrels.content.decode().split() == ["q1", "0", "d1", "3"]


def test_annotators_metrics_default_to_the_newest_released_gold_set(login, personas, corpus):
    project = personas["project"]
    _label_as_anna(personas, corpus)
    client = login(personas["annotator2"])
    dashboard = reverse("metrics:dashboard", args=["acme"])
    page = client.get(dashboard)
    assert page.status_code == 200 and b'id="metrics-blind"' in page.content
    assert b"dashboard-table" not in page.content
    assert client.get(dashboard, {"gold": "live"}).status_code == 403
    old = freeze_gold_set(project, "g", policy=ConsensusPolicy())
    old.set_released(True)
    new = freeze_gold_set(project, "g", policy=ConsensusPolicy())
    new.set_released(True)
    freeze_gold_set(project, "g", policy=ConsensusPolicy())  # v3, not released
    page = client.get(dashboard)
    assert page.context["setting"].gold.gold_set == new
    body = page.content.decode()
    assert 'value="live"' not in body
    assert [g.version for g in page.context["gold_sets"]] == [2, 1]
    lead = login(personas["adjudicator"]).get(dashboard)
    assert lead.context["setting"].gold.gold_set is None and 'value="live"' in lead.content.decode()


def test_only_owners_release_and_withdraw(login, personas, corpus):
    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy())
    url = reverse("gold:release", args=["acme", gold_set.pk])
    for persona in ("adjudicator", "annotator", "viewer"):
        assert login(personas[persona]).post(url, {"released": "1"}).status_code == 403
    gold_set.refresh_from_db()
    assert not gold_set.released
    owner = login(personas["owner"])
    assert owner.post(url, {"released": "maybe"}).status_code == 400
    assert owner.post(url, {"released": "1"}).status_code == 302
    gold_set.refresh_from_db()
    assert gold_set.released
    page = owner.get(reverse("gold:detail", args=["acme", gold_set.pk])).content.decode()
    assert "Withdraw from the team" in page
    owner.post(url, {"released": "0"})
    gold_set.refresh_from_db()
    assert not gold_set.released


def test_annotators_do_not_grade_from_drill_downs(login, personas, corpus):
    """Grading in a drill-down shows the live grades around it: not for blind labellers."""
    objects = site_objects.__wrapped__(personas, corpus)
    url = reverse("metrics:judge", args=["acme", objects["run"], corpus["query"].qid])
    assert login(personas["annotator"]).post(url, {"unit": 0, "grade": 1}).status_code == 403
    owner = login(personas["owner"])
    assert owner.post(url + f"?gold={objects['gold']}", {"unit": 0, "grade": 1}).status_code == 400
    assert login(personas["adjudicator"]).post(url, {"unit": 0, "grade": 1}).status_code == 200
