"""Answer measures stand on the label sources chosen (``?sources=`` on pages and the API,
``--sources`` on ``answer_metrics``; people by default) and say which: a judge's answer
judgements change the numbers only when the judge is chosen, and the dashboard, the
command and the API then give the same numbers; the drill-down shows a judge's values
beside the values counted."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotator.importing import run_import
from annotator.models import Membership, Role, SourceKind
from answers.metrics import MEASURES, answer_detail, answer_sources, run_scores
from answers.models import AnswerAdjudication, Aspect
from api.models import ApiToken
from tests.conftest import make_user

from .conftest import simple_line, write_jsonl
from .test_metrics import gold_evidence, judge_q1

pytestmark = pytest.mark.django_db


def judge_member(project, slug="fake", version=1):
    """The pseudo-annotator a judge version's judgements are stored under."""
    user = make_user(f"judge-{slug}-v{version}")
    Membership.objects.create(
        project=project,
        user=user,
        role=Role.ANNOTATOR,
        is_pseudo=True,
        source=SourceKind.JUDGE,
        judge_slug=slug,
        judge_version=version,
    )
    return user


@pytest.fixture
def both(answer_run, assessor):
    """anna judged q1 of "sys": n1 support, n2 partial, n3 not; citations full, partial,
    none; the uncited sentence needs one; acceptable. The judge: everything supported,
    every citation full, no citation needed; perfect."""
    gold_evidence(answer_run, assessor)
    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 2)
    judge = judge_member(answer_run["project"])
    judge_q1(answer_run, judge, {"n1": 2, "n2": 2, "n3": 2}, [2, 2, 2], 0, 3)
    return {**answer_run, "judge": judge}


def test_a_judge_counts_only_when_chosen(both):
    run = both["run"]
    people = run_scores(run).summary()
    assert people == run_scores(run, answer_sources(both["project"], "people")).summary()
    assert people == run_scores(run, answer_sources(both["project"])).summary()
    # Worked by hand on q1 (q2 is unjudged): people's all strict 1/3, weak (1 + .5)/3,
    # support precision strict 1/3, CRAG acceptable 0.5.
    assert people["all_strict"]["mean"] == pytest.approx(1 / 3, abs=1e-6)
    assert people["all_weak"]["mean"] == pytest.approx(0.5)
    assert people["support_precision_strict"]["mean"] == pytest.approx(1 / 3, abs=1e-6)
    assert people["crag"] == {"mean": 0.5, "answers": 1}
    judge = run_scores(run, answer_sources(both["project"], "judge:fake")).summary()
    assert judge["all_strict"]["mean"] == 1.0
    assert judge["support_precision_strict"]["mean"] == 1.0
    assert judge["crag"] == {"mean": 1.0, "answers": 1}
    # Citation validity stands on the gold evidence, whoever judges the answers.
    assert judge["citation_validity"] == people["citation_validity"]
    # Both: the low median of the two per target (anna's values here), as for people.
    together = run_scores(run, answer_sources(both["project"], "people,judge:fake")).summary()
    assert together["all_strict"]["mean"] == pytest.approx(1 / 3, abs=1e-6)
    assert together["crag"]["mean"] == 0.5


def test_a_leads_adjudication_counts_with_people_only(both):
    answer = both["run"].answers.get(query__qid="q1")
    AnswerAdjudication.objects.create(
        answer=answer, aspect=Aspect.CRAG, value=0, adjudicator=both["adjudicator"]
    )
    project = both["project"]
    assert run_scores(both["run"]).summary()["crag"]["mean"] == -1.0
    assert (
        run_scores(both["run"], answer_sources(project, "judge:fake")).summary()["crag"]["mean"]
        == 1.0
    )


def dashboard_means(client, query="") -> tuple[dict[str, list[str]], str]:
    body = client.get(reverse("answers:dashboard", args=["acme"]) + query).content.decode()
    rows = {}
    for name, cells in re.findall(r'<tr data-run="([^"]+)">(.*?)</tr>', body, re.S):
        rows[name] = re.findall(r'<td class="num">(.*?)</td>', cells, re.S)[1:]
    return rows, body


def shown(mean, n) -> str:
    if mean is None:
        return '<span class="muted">–</span>'
    return f'{mean:.3f} <span class="muted">({n})</span>'


def test_dashboard_equals_cli_equals_api_on_a_judge(both, login):
    out = StringIO()
    call_command("answer_metrics", "acme", "--json", "--sources", "judge:fake", stdout=out)
    cli = json.loads(out.getvalue())
    assert cli["sources"] == ["judge:fake"]
    run = cli["answer_runs"][0]
    assert run["sources"] == ["judge:fake"]
    assert run["measures"]["crag"] == {"mean": 1.0, "answers": 1}
    token = ApiToken.create_for(both["viewer"], "ci")[1]
    url = reverse("answers:api_answer_metrics", args=["acme", both["run"].pk])
    api = Client().get(url, {"sources": "judge:fake"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.status_code == 200
    assert api.json() == run
    default = Client().get(url, HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert default["sources"] == ["people"]
    assert default["measures"]["crag"] == {"mean": 0.5, "answers": 1}
    assert default["measures"] != run["measures"]

    client = login(both["viewer"])
    page, body = dashboard_means(client, "?sources=judge:fake")
    assert page["sys"] == [
        shown(run["measures"][m]["mean"], run["measures"][m]["answers"]) for m in MEASURES
    ]
    assert 'data-sources="judge:fake"' in body
    assert 'href="/p/acme/answers/' in body and "?sources=judge%3Afake" in body
    people, body = dashboard_means(client)
    assert 'data-sources="people"' in body
    assert people["sys"] == [
        shown(default["measures"][m]["mean"], default["measures"][m]["answers"]) for m in MEASURES
    ]
    # The run's page: the same means.
    detail = client.get(
        reverse("answers:run_detail", args=["acme", both["run"].pk]), {"sources": "judge:fake"}
    ).content.decode()
    assert 'data-sources="judge:fake"' in detail
    assert re.search(r'<tr class="mean">.*?</tr>', detail, re.S).group(0).count("1.000") >= 3
    # The plain table says what it stands on.
    out = StringIO()
    call_command("answer_metrics", "acme", "--sources", "judge:fake", stdout=out)
    assert out.getvalue().strip().splitlines()[-1] == "sources: judge:fake"


def test_bad_sources_are_refused_everywhere(both, login):
    with pytest.raises(CommandError, match="no judge nobody"):
        call_command("answer_metrics", "acme", "--sources", "judge:nobody")
    with pytest.raises(CommandError, match="Unknown source"):
        call_command("answer_metrics", "acme", "--sources", "robots")
    token = ApiToken.create_for(both["viewer"], "ci")[1]
    url = reverse("answers:api_answer_metrics", args=["acme", both["run"].pk])
    bad = Client().get(url, {"sources": "judge:nobody"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert bad.status_code == 400 and "nobody" in bad.json()["error"]
    client = login(both["viewer"])
    answer = both["run"].answers.get(query__qid="q1")
    for page in (
        reverse("answers:dashboard", args=["acme"]),
        reverse("answers:run_detail", args=["acme", both["run"].pk]),
        reverse("answers:answer", args=["acme", both["run"].pk, answer.pk]),
        reverse("answers:compare", args=["acme"]),
    ):
        assert client.get(page, {"sources": "judge:nobody"}).status_code == 400, page


@pytest.fixture
def two_runs(both, tmp_path):
    """Run "alt" answers q1 too; the judge grades it missing, people do not judge it."""
    path = write_jsonl(
        tmp_path / "alt.jsonl",
        [
            simple_line(
                "q1",
                [
                    ("Wings make lift.", [{"doc_id": "a", "start": 0, "end": 16}]),
                    ("Flaps raise drag.", [{"doc_id": "a", "start": 17, "end": 46}]),
                ],
            )
        ],
    )
    run_import("answers", both["project"], path, options={"name": "alt"})
    from answers.judging import Target, change_judgment

    alt = both["project"].answer_runs.get(name="alt")
    change_judgment(
        answer=alt.answers.get(), annotator=both["judge"], target=Target(Aspect.CRAG), value=1
    )
    return {**both, "alt": alt}


def test_compare_and_gate_on_a_judge_page_equals_api_equals_cli(two_runs, login):
    sys, alt = two_runs["run"], two_runs["alt"]
    token = ApiToken.create_for(two_runs["viewer"], "ci")[1]
    api = (
        Client()
        .get(
            reverse("answers:api_answer_compare", args=["acme"]),
            {"runs": f"{sys.pk},{alt.pk}", "measure": "crag", "sources": "judge:fake"},
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        .json()
    )
    assert api["sources"] == ["judge:fake"]
    crag = api["measures"]["crag"]
    assert (crag["queries"], crag["baseline_mean"], crag["runs"][0]["mean"]) == (1, 1.0, 0.0)
    # On people's judgements alt's answer is unjudged: no query to compare on.
    people = (
        Client()
        .get(
            reverse("answers:api_answer_compare", args=["acme"]),
            {"runs": f"{sys.pk},{alt.pk}", "measure": "crag"},
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        .json()
    )
    assert people["sources"] == ["people"] and people["measures"]["crag"]["queries"] == 0
    out = StringIO()
    call_command(
        "answer_metrics",
        "acme",
        "--baseline",
        "sys",
        "--runs",
        "alt",
        "-m",
        "crag",
        "--sources",
        "judge:fake",
        "--json",
        stdout=out,
    )
    assert json.loads(out.getvalue()) == api
    gate = Client().get(
        reverse("answers:api_answer_gate", args=["acme", alt.pk]),
        {"baseline": sys.pk, "measure": "crag", "max_drop": "0.5", "sources": "judge:fake"},
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert gate.status_code == 422 and gate.json()["sources"] == ["judge:fake"]
    page = login(two_runs["viewer"]).get(
        reverse("answers:compare", args=["acme"]),
        {"runs": [sys.pk, alt.pk], "baseline": sys.pk, "measure": "crag", "sources": "judge:fake"},
    )
    body = page.content.decode()
    assert page.status_code == 200
    assert 'data-sources="judge:fake"' in body
    assert 'data-measure="crag" data-queries="1"' in body
    row = re.search(r'<tr data-run="alt">(.*?)</tr>', body, re.S).group(1)
    assert re.findall(r'<td class="num">(.*?)</td>', row, re.S)[:2] == ["0.0000", "-1.0000"]
    assert 'value="judge:fake" checked' in body


def beside_cells(body: str) -> dict[str, list[str]]:
    rows = re.findall(r'<tr data-nugget="(\w+)">(.*?)</tr>', body, re.S)
    return {key: re.findall(r'<td class="beside">(.*?)</td>', cells, re.S) for key, cells in rows}


def test_drilldown_shows_a_judges_values_beside_peoples(two_runs, login):
    run = two_runs["run"]
    q1 = run.answers.get(query__qid="q1")
    detail = answer_detail(q1)
    assert detail["sources"] == ["people"] and detail["beside"] == ["judge:fake@1"]
    assert [(n["status"], n["beside"]) for n in detail["nuggets"]] == [
        ("support", ["support"]),
        ("partial", ["support"]),
        ("not", ["support"]),
    ]
    cited = [c for s in detail["sentences"] for c in s["citations"]]
    assert [(c["support"], c["beside"]) for c in cited] == [
        ("full", ["full"]),
        ("partial", ["full"]),
        ("none", ["full"]),
    ]
    assert (detail["crag"], detail["crag_beside"]) == ("acceptable", ["perfect"])
    assert detail["sentences"][2]["needs_beside"] == ["no"]
    # The judge chosen: its values are counted and people's are beside.
    chosen = answer_detail(q1, answer_sources(two_runs["project"], "judge:fake"))
    assert chosen["beside"] == ["people"]
    assert [(n["status"], n["beside"]) for n in chosen["nuggets"]] == [
        ("support", ["support"]),
        ("support", ["partial"]),
        ("support", ["not"]),
    ]
    # People and the judge counted together: each shown beside.
    together = answer_detail(q1, answer_sources(two_runs["project"], "people,judge:fake"))
    assert together["beside"] == ["people", "judge:fake@1"]
    assert [n["status"] for n in together["nuggets"]] == ["support", "partial", "not"]
    assert chosen["measures"]["crag"] == 1.0
    # q2: no judge judged it: nothing beside people's values unless a judge is chosen.
    q2 = run.answers.get(query__qid="q2")
    assert answer_detail(q2)["beside"] == []
    assert answer_detail(q2, answer_sources(two_runs["project"], "judge:fake"))["beside"] == [
        "people"
    ]
    assert answer_detail(q2, answer_sources(two_runs["project"], "people,judge:fake@1"))[
        "beside"
    ] == ["people", "judge:fake@1"]

    client = login(two_runs["viewer"])
    url = reverse("answers:answer", args=["acme", run.pk, q1.pk])
    body = client.get(url).content.decode()
    assert 'data-source="judge:fake@1"' in body
    assert beside_cells(body) == {"n1": ["support"], "n2": ["support"], "n3": ["support"]}
    assert re.findall(r'<td class="support">(.*?)</td><td class="beside">(.*?)</td>', body) == [
        ("full", "full"),
        ("partial", "full"),
        ("none", "full"),
    ]
    assert 'data-sources="people"' in body
    body = client.get(url, {"sources": "judge:fake"}).content.decode()
    assert 'data-sources="judge:fake"' in body
    assert re.findall(r'<td class="status">(.*?)</td>', body) == ["support"] * 3
    assert beside_cells(body)["n3"] == ["not"]
    q2_body = client.get(reverse("answers:answer", args=["acme", run.pk, q2.pk])).content.decode()
    assert 'class="beside"' not in q2_body


def test_export_metrics_answers_table_on_the_sources_chosen(both):
    def table(*extra):
        out = StringIO()
        call_command("export_metrics", "acme", "--table", "answers", *extra, stdout=out)
        header, row = (line.split(",") for line in out.getvalue().splitlines()[:2])
        return dict(zip(header, row, strict=True))

    people = table()
    assert (people["crag"], people["sources"]) == ("0.5", "people")
    judge = table("--sources", "judge:fake")
    assert (judge["crag"], judge["sources"]) == ("1.0", "judge:fake")
    with pytest.raises(CommandError, match="no judge nobody"):
        table("--sources", "judge:nobody")
