"""Answer runs against a baseline, as retrieval runs are compared: per-query paired tests
with Holm's correction and wins / ties / losses, each measure over the queries where every
run's value is defined; the page, ``answer_metrics --baseline`` and the API give the same
numbers, and the CI gate applies the retrieval runs' rule. The figures are checked
against scipy (t-test), statsmodels (Holm) and an exact sign-flip enumeration."""

from __future__ import annotations

import itertools
import json
import re
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotator.importing import run_import
from annotator.models import Query
from answers.judging import Target, change_judgment
from answers.models import AnswerRun, Aspect
from api.models import ApiToken
from metrics.reports import p_text

from .conftest import simple_line, write_jsonl

pytestmark = pytest.mark.django_db

QIDS = ["q1", "q2", "q3", "q4", "q5", "q6", "q7"]
# CRAG grades (3 perfect … 0 incorrect; scores 1, .5, 0, −1) of each run's answers to
# q1…q7; None: not graded (so "worse" has no CRAG score on q7).
GRADES = {
    "base": [1, 2, 2, 1, 0, 3, 2],
    "better": [3, 3, 2, 2, 1, 3, 3],
    "worse": [0, 1, 2, 1, 0, 2, None],
}
SCORE = {0: -1.0, 1: 0.0, 2: 0.5, 3: 1.0}


@pytest.fixture
def three_runs(answer_project, personas, tmp_path):
    project = answer_project["project"]
    for qid in QIDS[3:]:
        Query.objects.create(project=project, qid=qid, text=f"Question {qid}")
    runs = {}
    for name, grades in GRADES.items():
        path = write_jsonl(
            tmp_path / f"{name}.jsonl",
            [
                simple_line(qid, [("Wings make lift.", [{"doc_id": "a", "start": 0, "end": 16}])])
                for qid in QIDS
            ],
        )
        run_import("answers", project, path, options={"name": name})
        run = AnswerRun.objects.get(project=project, name=name)
        for qid, value in zip(QIDS, grades, strict=True):
            if value is not None:
                change_judgment(
                    answer=run.answers.get(query__qid=qid),
                    annotator=personas["annotator"],
                    target=Target(Aspect.CRAG),
                    value=value,
                )
        runs[name] = run
    return {**personas, **answer_project, "runs": runs}


def exact_sign_flip_p(d: np.ndarray) -> float:
    observed = abs(d.mean())
    flips = [abs((np.array(s) * d).mean()) for s in itertools.product((1, -1), repeat=d.size)]
    return float(np.mean([f >= observed - 1e-12 for f in flips]))


def api(token, name, *args, **params):
    return Client().get(
        reverse(name, args=["acme", *args]), params, HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def test_crag_comparison_against_scipy_statsmodels_and_an_exact_enumeration(three_runs):
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    from answers.comparison import compare_answer_runs

    runs = three_runs["runs"]
    comparison = compare_answer_runs(
        [runs["base"], runs["better"], runs["worse"]], ["crag", "citation_validity"]
    )
    assert comparison.qids == QIDS  # every run answered all seven
    # CRAG: q7 left out ("worse" has no grade there), so six queries.
    assert comparison.queries("crag") == 6
    assert comparison.queries("citation_validity") == 7
    base = np.array([SCORE[g] for g in GRADES["base"][:6]])
    crag = next(m for m in comparison.measures if m.name == "crag")
    assert crag.baseline_mean == pytest.approx(base.mean())
    ps, pts = [], []
    expected_wtl = {"better": (4, 2, 0), "worse": (0, 3, 3)}
    for row in crag.rows:
        values = np.array([SCORE[g] for g in GRADES[row.run.name][:6]])
        d = values - base
        assert row.mean == pytest.approx(values.mean())
        assert row.delta == pytest.approx(d.mean())
        assert (row.wins, row.ties, row.losses) == expected_wtl[row.run.name]
        assert row.p_t == pytest.approx(stats.ttest_rel(values, base).pvalue)
        assert row.p_randomization == pytest.approx(exact_sign_flip_p(d))
        ps.append(row.p_randomization)
        pts.append(row.p_t)
    holm = multipletests(ps, method="holm")[1]
    holm_t = multipletests(pts, method="holm")[1]
    assert [r.p_holm for r in crag.rows] == pytest.approx(list(holm))
    assert [r.p_t_holm for r in crag.rows] == pytest.approx(list(holm_t))
    # Hand-worked: better − base on q1…q6 = 1, .5, 0, .5, 1, 0 → mean .5.
    assert crag.rows[0].delta == pytest.approx(0.5)
    # No citation reaches gold evidence: every run 0 on all seven, all ties, p = 1.
    validity = next(m for m in comparison.measures if m.name == "citation_validity")
    assert [(r.wins, r.ties, r.losses, r.p_t) for r in validity.rows] == [(0, 7, 0, 1.0)] * 2


def page_rows(body: str, measure: str) -> dict[str, list[str]]:
    table = re.search(rf'<table[^>]*data-measure="{measure}"[^>]*>(.*?)</table>', body, re.S)
    rows = {}
    for name, cells in re.findall(r'<tr data-run="([^"]+)">(.*?)</tr>', table.group(1), re.S):
        rows[name] = [
            re.sub(r"\s+", " ", c).strip()
            for c in re.findall(r'<td class="num">(.*?)</td>', cells, re.S)
        ]
    return rows


def test_page_equals_cli_equals_api(three_runs, login):
    runs = three_runs["runs"]
    ids = f"{runs['base'].pk},{runs['better'].pk},{runs['worse'].pk}"
    token = ApiToken.create_for(three_runs["viewer"], "ci")[1]
    response = api(token, "answers:api_answer_compare", runs=ids, measure=["crag", "coverage_all"])
    assert response.status_code == 200
    body = response.json()
    out = StringIO()
    call_command(
        "answer_metrics",
        "acme",
        "--runs",
        "better",
        "worse",
        "--baseline",
        "base",
        "-m",
        "crag",
        "-m",
        "coverage_all",
        "--json",
        stdout=out,
    )
    assert json.loads(out.getvalue()) == body
    assert body["baseline"]["name"] == "base"
    assert list(body["measures"]) == ["crag", "coverage_all"]
    assert body["measures"]["crag"]["queries"] == 6
    assert [r["name"] for r in body["measures"]["crag"]["runs"]] == ["better", "worse"]
    # The page: the same means, deltas, wins / ties / losses and p-values.
    client = login(three_runs["viewer"])
    page = client.get(
        reverse("answers:compare", args=["acme"]),
        {
            "runs": [runs["better"].pk, runs["worse"].pk],
            "baseline": runs["base"].pk,
            "measure": ["crag", "coverage_all"],
        },
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-measure="crag" data-queries="6"' in html
    shown = page_rows(html, "crag")
    for row in body["measures"]["crag"]["runs"]:
        cells = shown[row["name"]]
        assert cells[0] == f"{row['mean']:.4f}"
        assert cells[1] == f"{row['delta']:.4f}"
        assert cells[3] == f"{row['wins']} / {row['ties']} / {row['losses']}"
        assert cells[4] == p_text(row["p_randomization"]).replace("<", "&lt;")
        assert cells[6] == p_text(row["p_holm"]).replace("<", "&lt;")
    # In Chinese: the same page, translated.
    zh = client.get(
        reverse("answers:compare", args=["acme"]),
        {"runs": [runs["better"].pk, runs["base"].pk], "measure": "crag"},
        HTTP_ACCEPT_LANGUAGE="zh-CN",
    ).content.decode()
    assert "比较答案运行" in zh and "每个答案运行与基线 better 比较" in zh and "(7 个查询)" in zh
    # The plain table of the command: the same figures.
    out = StringIO()
    call_command("answer_metrics", "acme", "--baseline", "base", "-m", "crag", stdout=out)
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    better = next(line for line in lines if line[2] == "better")
    assert better[:2] == ["crag", "6"]
    assert better[5] == "4/2/0"


def test_gate_passes_and_fails_with_the_retrieval_rule(three_runs):
    runs = three_runs["runs"]
    token = ApiToken.create_for(three_runs["owner"], "ci")[1]
    passed = api(
        token,
        "answers:api_answer_gate",
        runs["better"].pk,
        baseline=runs["base"].pk,
        measure="crag",
        max_drop="0",
    )
    assert passed.status_code == 200 and passed.json()["pass"] is True
    # worse − base on CRAG: mean (−1 − .5 + 0 + 0 + 0 − .5) / 6 = −1/3, a drop over 0.1.
    failed = api(
        token,
        "answers:api_answer_gate",
        runs["worse"].pk,
        baseline=runs["base"].pk,
        measure=["crag", "coverage_all"],
        max_drop=["0.1", "0"],
    )
    assert failed.status_code == 422
    body = failed.json()
    assert body["pass"] is False
    assert [c["measure"] for c in body["failing"]] == ["crag"]
    assert body["failing"][0]["delta"] == pytest.approx(-1 / 3)
    assert body["failing"][0]["queries"] == 6
    assert body["failing"][0]["reasons"] == ["crag dropped by 0.3333 > 0.1"]
    assert body["checks"][1]["pass"] is True  # coverage_all: all ties


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("compare", {"runs": "x,1"}),
        ("compare", {"runs": ""}),
        ("compare", {"runs": "{base}", "measure": "nDCG@10"}),
        ("compare", {"runs": "{base}"}),
        ("compare", {"runs": "{base},{better}", "baseline": "b"}),
        ("compare", {"runs": "{base},{better}", "measure": ["crag", "crag"]}),
        ("gate", {"measure": "crag", "max_drop": "0"}),
        ("gate", {"baseline": "{better}", "measure": "crag", "max_drop": "0"}),
        ("gate", {"baseline": "{base}", "measure": "crag"}),
        ("gate", {"baseline": "{base}", "measure": "crag", "max_drop": "-1"}),
        ("gate", {"baseline": "{base}", "measure": "P@10", "max_drop": "0"}),
        ("gate", {"baseline": "{base}", "measure": "crag", "alpha": "2"}),
    ],
)
def test_bad_parameters_are_400_with_the_reason(three_runs, name, params):
    ids = {k: str(v.pk) for k, v in three_runs["runs"].items()}
    params = {
        k: [x.format(**ids) for x in v] if isinstance(v, list) else v.format(**ids)
        for k, v in params.items()
    }
    token = ApiToken.create_for(three_runs["owner"], "ci")[1]
    if name == "compare":
        response = api(token, "answers:api_answer_compare", **params)
    else:
        response = api(token, "answers:api_answer_gate", three_runs["runs"]["better"].pk, **params)
    assert response.status_code == 400
    assert response.json()["error"]


def test_page_refuses_bad_parameters_and_strangers_runs(three_runs, login):
    client = login(three_runs["owner"])
    url = reverse("answers:compare", args=["acme"])
    base = three_runs["runs"]["base"].pk
    assert client.get(url).status_code == 200
    bad = client.get(url, {"runs": [base, three_runs["runs"]["better"].pk], "measure": "MAP"})
    assert bad.status_code == 400
    assert "Unknown answer measures: MAP" in bad.content.decode()
    assert client.get(url, {"runs": [base]}).status_code == 400
    assert client.get(url, {"runs": ["abc"]}).status_code == 400
    assert client.get(url, {"runs": [base, 999999]}).status_code == 404
    # Annotators judge blind: no measures for them, on the page or the API.
    assert login(three_runs["annotator"]).get(url).status_code == 403
    token = ApiToken.create_for(three_runs["annotator"], "ci")[1]
    assert api(token, "answers:api_answer_compare", runs=f"{base},{base}").status_code == 403


def test_command_refuses_unknown_runs_and_measures(three_runs):
    with pytest.raises(CommandError, match="no answer run 'nope'"):
        call_command("answer_metrics", "acme", "--baseline", "nope")
    with pytest.raises(CommandError, match="Unknown answer measures: MAP"):
        call_command("answer_metrics", "acme", "--baseline", "base", "-m", "MAP")
    with pytest.raises(CommandError, match="give --baseline"):
        call_command("answer_metrics", "acme", "-m", "crag")
    with pytest.raises(CommandError, match="at least one run"):
        call_command("answer_metrics", "acme", "--runs", "base", "--baseline", "base")
