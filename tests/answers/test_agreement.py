"""Agreement on answer judgements equals scikit-learn's Cohen's kappa and the
krippendorff package's alpha on the same judgements."""

from __future__ import annotations

import numpy as np
import pytest

from answers.agreement import agreement, aspect_agreement
from answers.judging import Target, change_judgment
from answers.models import Aspect, Citation

from .test_metrics import judge_q1

pytestmark = pytest.mark.django_db


def test_support_agreement_equals_the_reference_implementations(answer_run, assessor):
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    anna, arno = answer_run["annotator"], answer_run["annotator2"]
    judge_q1(answer_run, anna, {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    judge_q1(answer_run, arno, {"n1": 2, "n2": 2, "n3": 0}, [2, 0, 0], 0, 1)
    judge_q1(answer_run, assessor, {"n1": 0, "n2": 0, "n3": 0}, [0, 0, 0], 0, 0)  # not a person
    other = answer_run["run"].answers.get(query__qid="q2")
    change_judgment(
        answer=other,
        annotator=anna,
        target=Target(Aspect.SUPPORT, Citation.objects.get(answer=other).pk),
        value=2,
    )
    found = aspect_agreement(answer_run["project"], Aspect.SUPPORT)
    assert found["annotators"] == ["anna", "arno"]
    assert (found["targets"], found["shared"]) == (4, 3)
    a, b = [2, 1, 0], [2, 0, 0]
    (pair,) = found["pairs"]
    assert pair["n"] == 3
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2]))
    assert pair["kappa_linear"] == pytest.approx(
        cohen_kappa_score(a, b, labels=[0, 1, 2], weights="linear")
    )
    assert found["percent"] == pytest.approx(2 / 3)
    reliability = np.array([[2, 1, 0, 2], [2, 0, 0, np.nan]])
    assert found["alpha_nominal"] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    )
    assert found["alpha_ordinal"] == pytest.approx(
        krippendorff.alpha(
            reliability_data=reliability,
            level_of_measurement="ordinal",
            value_domain=[0, 1, 2],
        )
    )
    nuggets = aspect_agreement(answer_run["project"], Aspect.NUGGET)
    assert nuggets["pairs"][0]["kappa"] == pytest.approx(
        cohen_kappa_score([2, 1, 0], [2, 2, 0], labels=[0, 1, 2])
    )
    assert [row["aspect"] for row in agreement(answer_run["project"])] == [a.value for a in Aspect]


def test_one_person_gives_no_agreement(answer_run):
    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    found = aspect_agreement(answer_run["project"], Aspect.CRAG)
    assert found["pairs"] == [] and found["percent"] is None


def test_leads_see_agreement_on_the_dashboard_viewers_do_not(answer_run, login):
    from django.urls import reverse

    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    judge_q1(answer_run, answer_run["annotator2"], {"n1": 2, "n2": 2, "n3": 0}, [2, 0, 0], 0, 3)
    url = reverse("answers:dashboard", args=["acme"])
    body = login(answer_run["adjudicator"]).get(url).content.decode()
    assert 'data-aspect="crag"' in body and "anna–arno (1)" in body
    assert 'id="answer-agreement"' not in login(answer_run["viewer"]).get(url).content.decode()


def test_crag_grades_of_three_people_equal_the_reference_implementations(answer_run, tmp_path):
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    from annotator.importing import run_import

    from .conftest import simple_line, write_jsonl

    path = write_jsonl(
        tmp_path / "alt.jsonl",
        [simple_line(qid, [("An answer.", [])]) for qid in ("q1", "q2", "q3")],
    )
    run_import("answers", answer_run["project"], path, options={"name": "alt"})
    answers = [
        a
        for run in ("sys", "alt")
        for a in answer_run["project"].answer_runs.get(name=run).answers.order_by("query__qid")
    ]
    people = [answer_run["annotator"], answer_run["annotator2"], answer_run["adjudicator"]]
    # A grade per answer and person (None: not judged): 5 answers, the last judged once.
    grades = [[3, 3, 2], [1, 0, 1], [2, 2, None], [0, 1, 0], [3, None, None]]
    for answer, row in zip(answers, grades, strict=True):
        for person, value in zip(people, row, strict=True):
            if value is not None:
                change_judgment(
                    answer=answer, annotator=person, target=Target(Aspect.CRAG), value=value
                )
    found = aspect_agreement(answer_run["project"], Aspect.CRAG)
    assert found["annotators"] == ["adam", "anna", "arno"]
    assert (found["targets"], found["shared"]) == (5, 4)
    by_person = {
        name: [row[i] for row in grades] for i, name in enumerate(["anna", "arno", "adam"])
    }
    for pair in found["pairs"]:
        both = [
            (x, y)
            for x, y in zip(by_person[pair["a"]], by_person[pair["b"]], strict=True)
            if x is not None and y is not None
        ]
        a, b = [x for x, _y in both], [y for _x, y in both]
        assert pair["n"] == len(both)
        assert pair["kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2, 3]))
        assert pair["kappa_linear"] == pytest.approx(
            cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="linear")
        )
    reliability = np.array(
        [[np.nan if v is None else v for v in by_person[name]] for name in ("adam", "anna", "arno")]
    )
    assert found["alpha_ordinal"] == pytest.approx(
        krippendorff.alpha(
            reliability_data=reliability,
            level_of_measurement="ordinal",
            value_domain=[0, 1, 2, 3],
        )
    )
    assert found["alpha_nominal"] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    )


def test_the_agreement_page_has_the_answers_section_in_english_and_chinese(answer_run, login):
    from django.urls import reverse

    url = reverse("gold:agreement", args=["acme"])
    client = login(answer_run["adjudicator"])
    assert 'id="answer-agreement"' not in client.get(url).content.decode()  # nothing judged
    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    judge_q1(answer_run, answer_run["annotator2"], {"n1": 2, "n2": 2, "n3": 0}, [2, 0, 0], 0, 1)
    body = client.get(url).content.decode()
    assert "Agreement on answer judgements" in body
    for aspect in ("nugget", "support", "needs_citation", "crag"):
        assert f'data-aspect="{aspect}"' in body
    assert "anna–arno (3)" in body and 'id="answer-disputes-link"' in body
    zh = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "答案评判的一致性" in zh and "Agreement on answer judgements" not in zh
    assert "Nugget support" not in zh and "Citation support" not in zh
