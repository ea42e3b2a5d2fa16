"""An LLM judge's answer judgements calibrated against people's on the same answers: the
values equal scikit-learn's, the krippendorff package's and scipy's, computed here from
the stored judgements independently of Assay; the page, the API and the command give
them, with TREC's reference figure beside citation support."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.importing import run_import
from annotator.sources import SourcesError
from answers.calibration import calibrate_answers
from answers.judging import Target, change_judgment
from answers.models import AnswerAdjudication, AnswerJudgment, Aspect, Citation
from judges.engine import execute_job
from tests.answers.conftest import simple_line, write_jsonl
from tests.judges.conftest import Sleeps

pytestmark = pytest.mark.django_db


def _line(qid, first, second):
    return simple_line(
        qid,
        [
            (first, [{"doc_id": "a", "start": 0, "end": 16}]),
            (second, [{"doc_id": "a", "start": 17, "end": 46}, {"doc_id": "b"}]),
        ],
    )


@pytest.fixture
def calibrated(judged, tmp_path):
    """Runs sys (the fixture's), alt and weak answer q1; the judge judged all of them;
    anna judged every nugget and citation of q1's answers, arno some of them (the lower of
    two values counts), and adam adjudicated one."""
    project = judged["project"]
    for name, lines in (
        ("alt", [_line("q1", "Wings make lift.", "Flaps raise drag.")]),
        ("weak", [_line("q1", "Slats help.", "Engines push.")]),
    ):
        path = write_jsonl(tmp_path / f"{name}.jsonl", lines)
        run_import("answers", project, path, options={"name": name})
    call_command("judge_answers", "acme", "fake", stdout=io.StringIO())
    from judges.models import JudgeJob

    job = execute_job(JudgeJob.objects.get().pk, sleep=Sleeps())
    assert job.status == "done" and not job.pairs.filter(status="failed").exists()
    anna, arno = judged["annotator"], judged["annotator2"]
    nuggets = [judged["nuggets"][k] for k in ("n1", "n2", "n3")]
    # anna's values, set to agree with the judge on some targets and not on others.
    anna_nuggets = {"sys": (2, 1, 0), "alt": (2, 0, 1), "weak": (0, 0, 1)}
    anna_support = {"sys": (2, 1, 0), "alt": (2, 2, 0), "weak": (1, 0, 0)}
    for run in project.answer_runs.all():
        answer = run.answers.get(query__qid="q1")
        for nugget, value in zip(nuggets, anna_nuggets[run.name], strict=True):
            change_judgment(
                answer=answer, annotator=anna, target=Target(Aspect.NUGGET, nugget.pk), value=value
            )
        citations = Citation.objects.filter(answer=answer).order_by("sentence__number", "number")
        for citation, value in zip(citations, anna_support[run.name], strict=True):
            change_judgment(
                answer=answer,
                annotator=anna,
                target=Target(Aspect.SUPPORT, citation.pk),
                value=value,
            )
        if run.name == "alt":  # arno: lower on n1 (the low median of 2 and 1 is 1)
            change_judgment(
                answer=answer, annotator=arno, target=Target(Aspect.NUGGET, nuggets[0].pk), value=1
            )
            first = citations.first()
            AnswerAdjudication.objects.create(
                answer=answer,
                aspect=Aspect.SUPPORT,
                citation=first,
                value=0,
                adjudicator=judged["adjudicator"],
            )
    return {**judged, "job": job}


def people_and_judge(calibrated, aspect):
    """(people's, the judge's) values on the targets both judged, from the rows."""
    key = "nugget_id" if aspect == Aspect.NUGGET else "citation_id"
    judge_user = calibrated["judge"].current.annotator
    people, judge = {}, {}
    for row in AnswerJudgment.objects.filter(aspect=aspect).values(
        "answer_id", key, "annotator", "value"
    ):
        target = (row["answer_id"], row[key])
        if row["annotator"] == judge_user.pk:
            judge[target] = row["value"]
        else:
            people[target] = min(people.get(target, 9), row["value"])
    for row in AnswerAdjudication.objects.filter(aspect=aspect).values("answer_id", key, "value"):
        people[(row["answer_id"], row[key])] = row["value"]
    shared = sorted(set(people) & set(judge))
    return [people[k] for k in shared], [judge[k] for k in shared]


def test_agreement_on_each_aspect_equals_scikit_learn_and_krippendorff(calibrated):
    import krippendorff
    from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix

    result = calibrate_answers(calibrated["project"], "people", "judge:fake")
    assert (result.a, result.b) == ("people", "judge:fake")
    by_aspect = {row.aspect: row for row in result.aspects}
    for aspect, n in ((Aspect.NUGGET, 9), (Aspect.SUPPORT, 9)):
        people, judge = people_and_judge(calibrated, aspect)
        row = by_aspect[aspect]
        assert row.n == len(people) == n
        assert 0 < row.exact_agreement < 1  # some agreement, some not: a real test
        assert row.exact_agreement == pytest.approx(accuracy_score(people, judge))
        assert row.kappa == pytest.approx(cohen_kappa_score(people, judge, labels=[0, 1, 2]))
        assert row.kappa_linear == pytest.approx(
            cohen_kappa_score(people, judge, labels=[0, 1, 2], weights="linear")
        )
        for level in ("ordinal", "nominal"):
            expected = krippendorff.alpha(
                reliability_data=np.array([people, judge], dtype=float),
                level_of_measurement=level,
                value_domain=[0, 1, 2],
            )
            assert getattr(row, f"alpha_{level}") == pytest.approx(expected, abs=1e-12)
        assert row.confusion == confusion_matrix(people, judge, labels=[0, 1, 2]).tolist()
    assert by_aspect[Aspect.SUPPORT].reference["exact_agreement"] == 0.56
    assert by_aspect[Aspect.NUGGET].reference is None


def test_run_rankings_agree_as_scipys_kendall_tau_says(calibrated):
    from scipy.stats import kendalltau

    result = calibrate_answers(calibrated["project"], "people", "judge:fake")
    rankings = {r.measure: r for r in result.rankings}
    # all strict of q1's answer per run, worked by hand from the values above: people
    # (low median, adjudication first) and the fake judge (nugget text in the answer).
    people_all_strict = {"sys": 1 / 3, "alt": 0.0, "weak": 0.0}
    judge_all_strict = {"sys": 2 / 3, "alt": 1 / 3, "weak": 0.0}
    row = rankings["all_strict"]
    assert {p.run: p.a for p in row.runs} == pytest.approx(people_all_strict)
    assert {p.run: p.b for p in row.runs} == pytest.approx(judge_all_strict)
    names = sorted(people_all_strict)
    expected = kendalltau(
        [people_all_strict[n] for n in names], [judge_all_strict[n] for n in names]
    ).statistic
    assert row.kendall_tau == pytest.approx(expected)
    for ranking in result.rankings:
        kept = [p for p in ranking.runs if p.answers]
        if len(kept) >= 2 and len({p.a for p in kept}) > 1 and len({p.b for p in kept}) > 1:
            tau = kendalltau([p.a for p in kept], [p.b for p in kept]).statistic
            assert ranking.kendall_tau == pytest.approx(tau)


def test_sides_must_name_two_different_things(calibrated):
    project = calibrated["project"]
    with pytest.raises(SourcesError):
        calibrate_answers(project, "people", "people")
    with pytest.raises(SourcesError):
        calibrate_answers(project, "people", "judge:nobody")
    with pytest.raises(SourcesError):
        calibrate_answers(project, "people", "judge:fake", runs=["nope"])
    # The judge by version number is the same side as by its slug.
    assert calibrate_answers(project, "people", "judge:fake@1").aspects[0].n == 9


def test_the_page_the_api_and_the_command_give_the_same_values(calibrated, client):
    from api.models import ApiToken

    expected = calibrate_answers(calibrated["project"], "people", "judge:fake").as_json()
    out = io.StringIO()
    call_command(
        "answer_calibration", "acme", "--a", "people", "--b", "judge:fake", "--json", stdout=out
    )
    assert json.loads(out.getvalue()) == json.loads(json.dumps(expected))
    out = io.StringIO()
    call_command("answer_calibration", "acme", stdout=out)
    text = out.getvalue()
    assert "Citation support" in text and "TREC 2024 RAG" in text and "56 %" in text

    token = ApiToken.create_for(calibrated["viewer"], "t")[1]
    url = reverse("answers:api_answer_calibration", args=["acme"])
    response = client.get(
        url, {"a": "people", "b": "judge:fake"}, HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert response.status_code == 200
    assert response.json() == json.loads(json.dumps(expected))
    bad = client.get(url, {"b": "judge:nobody"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert bad.status_code == 400

    client.force_login(calibrated["viewer"])
    page = client.get(reverse("answers:calibration", args=["acme"]), {"b": "judge:fake"})
    body = page.content.decode()
    assert page.status_code == 200
    support = expected["aspects"][1]
    assert f'data-exact="{support["exact_agreement"]:.4f}"' in body
    assert "56 %" in body and 'id="ranking-all_strict"' in body
    assert (
        client.get(reverse("answers:calibration", args=["acme"]), {"b": "judge:nobody"}).status_code
        == 400
    )


def test_the_api_takes_the_runs_as_the_command_does(calibrated, client):
    from api.models import ApiToken

    out = io.StringIO()
    call_command("answer_calibration", "acme", "--runs", "sys", "alt", "--json", stdout=out)
    from_command = json.loads(out.getvalue())
    expected = calibrate_answers(calibrated["project"], "people", "judge:fake", ["sys", "alt"])
    assert from_command == json.loads(json.dumps(expected.as_json()))
    assert [p["run"] for p in from_command["rankings"][0]["runs"]] == ["alt", "sys"]
    everything = calibrate_answers(calibrated["project"], "people", "judge:fake").as_json()
    assert from_command["aspects"] != everything["aspects"]

    token = ApiToken.create_for(calibrated["viewer"], "t")[1]
    url = reverse("answers:api_answer_calibration", args=["acme"])
    response = client.get(url, {"runs": ["sys", "alt"]}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert response.json() == from_command
    bad = client.get(url, {"runs": ["sys", "nope"]}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert bad.status_code == 400 and "nope" in bad.json()["error"]

    client.force_login(calibrated["viewer"])
    page = client.get(reverse("answers:calibration", args=["acme"]), {"runs": ["sys", "alt"]})
    body = page.content.decode()
    support = from_command["aspects"][1]
    assert f'data-exact="{support["exact_agreement"]:.4f}"' in body
    assert 'value="alt" checked' in body and 'value="weak">' in body
