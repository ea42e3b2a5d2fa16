"""LLM judges grading a quality dimension against the OpenAI-compatible test server: the
grades stored are its answers (per site or per document, in the dimension's scale), bad
replies are faults that write nothing, the grades are the judge version's label source,
and calibration against people equals scikit-learn and krippendorff."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from annotator.models import Document
from annotator.sources import resolve_sources
from judges.calibration import calibrate_quality
from judges.engine import execute_job
from judges.models import Failure, JobKind, JudgeJob, PairStatus, QualityPrompt
from judges.prompts import QUALITY_PROMPT, normalise_prompt
from judges.quality_jobs import plan_quality, start_quality
from judges.services import JudgeError, update_judge
from quality.dimensions import offer_source_quality
from quality.grades import QualitySource, change_quality
from quality.models import QualityDimension, QualityGrade, QualityHistory

from .conftest import Sleeps
from .fake_llm import FakeLLM
from .test_calibration import assert_reference_values

pytestmark = pytest.mark.django_db

# What the test server answers for each document's marker (tests/judges/fake_llm.py):
# d0..d5 and d11 a grade (d4 after a 429, d5 after a 500, d11 a lone digit); d6 prose,
# d7 grade 7, d8 nothing, d9 a reason too long, d10 a refusal; d12 grade 5.
ANSWERED = {0: 3, 1: 2, 2: 1, 3: 0, 4: 2, 5: 1, 11: 3}
FAILED = {
    6: Failure.MALFORMED,
    7: Failure.MALFORMED,
    8: Failure.EMPTY,
    9: Failure.TOO_LONG,
    10: Failure.REFUSAL,
    12: Failure.MALFORMED,  # 5 is outside source quality's 0-3
}
# anna's grades of the sites (s6 the judge cannot grade: not shared).
PEOPLE = {0: 3, 1: 1, 2: 1, 3: 0, 4: 2, 5: 2, 11: 2, 6: 1}


@pytest.fixture
def sites(judging):
    """Every document its own site s<n> (field ``site``), one more document (d12) that
    the server grades 5, the default dimension per site and a 0–5 one per document."""
    project = judging["project"]
    Document.objects.create(
        project=project, doc_id="d12", title="Doc 12", text="An excellent source. GRADE=5"
    )
    for document in Document.objects.filter(project=project):
        document.metadata = {"site": f"s{document.doc_id[1:]}"}
        document.save(update_fields=["metadata"])
    dimension = offer_source_quality(project, site_field="site")
    depth = QualityDimension.objects.create(
        project=project, key="depth", name="Depth", max_grade=5, unit="document"
    )
    return {**judging, "dimension": dimension, "depth": depth}


def _run(plan):
    job = start_quality(plan, enqueue=False)
    return execute_job(job.pk, sleep=Sleeps())


def _judge_grades(dimension, version):
    return {
        (g.site or g.document.doc_id): g.grade
        for g in QualityGrade.objects.filter(dimension=dimension, annotator=version.annotator)
    }


def test_stored_site_grades_equal_the_servers_answers(sites):
    judge, dimension = sites["judge"], sites["dimension"]
    job = _run(plan_quality(judge, dimension))
    assert job.kind == JobKind.QUALITY and job.n_pairs == 13 and job.status == "done"
    assert _judge_grades(dimension, judge.current) == {f"s{n}": g for n, g in ANSWERED.items()}
    failed = {p.site: p.failure for p in job.pairs.filter(status=PairStatus.FAILED)}
    assert failed == {f"s{n}": kind for n, kind in FAILED.items()}
    outside = job.pairs.get(site="s12")
    assert outside.detail.code == "answer.outside" and '"grade": 5' in outside.raw_reply
    # Every grade through change_quality: one history row each, by the judge version.
    history = QualityHistory.objects.filter(dimension=dimension)
    assert history.count() == len(ANSWERED)
    assert {h.changed_by_id for h in history} == {judge.current.annotator_id}
    judged = job.pairs.get(site="s0")
    assert (judged.grade, judged.reason) == (3, "reason for grade 3")
    assert QualityGrade.objects.get(site="s0").note == "reason for grade 3"
    # The same counters as relevance jobs: every call (and its retries) counted.
    assert job.calls == sum(p.attempts for p in job.pairs.all()) and job.retries >= 2
    assert job.prompt_tokens > 0 and job.completion_tokens > 0


def test_the_prompt_sends_the_site_its_documents_and_the_scale(sites):
    judge, dimension = sites["judge"], sites["dimension"]
    _run(plan_quality(judge, dimension, max_units=1))
    (request,) = sites["server"].requests
    prompt = request["prompt"]
    assert "Site: s0" in prompt and "[d0] Doc 0" in prompt and "GRADE=3" in prompt
    assert "3 = Authoritative" in prompt and "0 = Unreliable" in prompt
    assert "from 0 to 3>" in prompt and '"Source quality"' in prompt


def test_a_dimensions_own_scale_and_document_units(sites):
    judge, depth = sites["judge"], sites["depth"]
    job = _run(plan_quality(judge, depth))
    grades = _judge_grades(depth, judge.current)
    assert grades == {**{f"d{n}": g for n, g in ANSWERED.items()}, "d12": 5}
    seven = job.pairs.get(document__doc_id="d7")
    assert seven.status == PairStatus.FAILED and seven.detail.code == "answer.outside_scale"
    assert dict(seven.detail.params) == {"grade": 7, "top": 5}
    assert str(seven.detail) == "grade 7 is outside 0–5"
    assert not QualityGrade.objects.filter(dimension=depth, document__doc_id="d7").exists()


def test_the_grades_are_the_judge_versions_label_source(sites):
    judge, dimension, project = sites["judge"], sites["dimension"], sites["project"]
    _run(plan_quality(judge, dimension, max_units=2))
    name = judge.current.annotator.username
    for tokens, counts in (
        ("judge:fake", True),
        ("judge:fake@1", True),
        ("judges", True),
        ("people", False),
        ("people,assessors", False),
    ):
        assert resolve_sources(project, tokens).counts(name) is counts, tokens
    assert resolve_sources(project, "judge:fake").judgments(QualityGrade.objects).count() == 2
    assert resolve_sources(project, "people").judgments(QualityGrade.objects).count() == 0


def test_units_a_version_graded_are_skipped_and_people_go_first(sites):
    judge, dimension = sites["judge"], sites["dimension"]
    change_quality(
        dimension=dimension,
        annotator=sites["annotator"],
        source=QualitySource(site="s3"),
        grade=1,
    )
    plan = plan_quality(judge, dimension, max_units=3)
    assert [u.site for u in plan.units] == ["s3", "s0", "s1"]
    people_only = plan_quality(judge, dimension, scope="people")
    assert [u.site for u in people_only.units] == ["s3"]
    _run(plan)
    again = plan_quality(judge, dimension)
    assert again.already == 3 and len(again.units) == 10
    # A job whose units were graded meanwhile skips them (as pairs judged meanwhile).
    job = start_quality(plan_quality(judge, dimension, max_units=2), enqueue=False)
    _run(plan_quality(judge, dimension, max_units=2))
    job = execute_job(job.pk, sleep=Sleeps())
    assert job.pairs.filter(status=PairStatus.SKIPPED).count() == 2 and job.calls == 0
    # A new version grades again, as its own source.
    update_judge(judge, temperature=0.5)
    assert len(plan_quality(judge, dimension).units) == 13


def test_a_dimensions_own_prompt(sites):
    judge, dimension = sites["judge"], sites["dimension"]
    with pytest.raises(JudgeError, match="query"):
        plan_quality(judge, dimension, prompt="Grade {{query}} on {{dimension}}")
    assert not QualityPrompt.objects.exists()
    own = "Rate the site {{site}} on {{dimension}} ({{scale}}):\n{{text}}\nJSON only."
    job = _run(plan_quality(judge, dimension, prompt=own, max_units=1))
    assert job.prompt == own and QualityPrompt.objects.get().prompt == own
    (request,) = sites["server"].requests
    assert request["prompt"].startswith("Rate the site s0 on Source quality (3 = Authoritative")
    # Planning writes nothing; the default again, once its job starts, keeps none.
    plan = plan_quality(judge, dimension, prompt=QUALITY_PROMPT, max_units=1)
    assert QualityPrompt.objects.get().prompt == own
    job = start_quality(plan, enqueue=False)
    assert not QualityPrompt.objects.exists() and job.prompt == normalise_prompt(QUALITY_PROMPT)


def test_a_chinese_site_gets_the_chinese_default_prompt(sites):
    judge, dimension = sites["judge"], sites["dimension"]
    Document.objects.filter(doc_id="d0").update(
        title="最高人民法院", text="最高人民法院公报刊登的判决书。GRADE=3"
    )
    _run(plan_quality(judge, dimension, max_units=1))
    (request,) = sites["server"].requests
    assert "请按以下等级" in request["prompt"] and "站点：s0" in request["prompt"]


def test_calibration_against_people_equals_the_reference_libraries(sites):
    judge, dimension, project = sites["judge"], sites["dimension"], sites["project"]
    for n, grade in PEOPLE.items():
        change_quality(
            dimension=dimension,
            annotator=sites["annotator"],
            source=QualitySource(site=f"s{n}"),
            grade=grade,
        )
    _run(plan_quality(judge, dimension))
    result = calibrate_quality(project, dimension, "people", "judge:fake")
    shared = sorted(set(PEOPLE) & set(ANSWERED), key=lambda n: f"s{n}")
    people = [PEOPLE[n] for n in shared]
    machine = [ANSWERED[n] for n in shared]
    assert result.n_a == len(PEOPLE) and result.n_b == len(ANSWERED)
    assert_reference_values(result.agreement, people, machine)
    assert [(p["source"], p["a"], p["b"]) for p in result.pairs] == [
        (f"s{n}", PEOPLE[n], ANSWERED[n]) for n in shared
    ]
    # One annotator by name is a side too; the same figures here.
    by_name = calibrate_quality(project, dimension, "anna", "judge:fake@1")
    assert by_name.agreement["kappa"] == result.agreement["kappa"]


def test_calibration_on_a_wider_scale(sites):
    """A 0–5 dimension: κ and α over six categories, as scikit-learn and krippendorff."""
    import krippendorff
    import numpy as np
    from sklearn.metrics import cohen_kappa_score

    judge, depth, project = sites["judge"], sites["depth"], sites["project"]
    mine = {0: 5, 1: 2, 2: 4, 3: 0, 4: 2, 5: 1, 11: 3, 12: 5}
    for n, grade in mine.items():
        document = Document.objects.get(project=project, doc_id=f"d{n}")
        change_quality(
            dimension=depth,
            annotator=sites["annotator"],
            source=QualitySource(document=document),
            grade=grade,
        )
    _run(plan_quality(judge, depth))
    answered = {**ANSWERED, 12: 5}
    order = sorted(mine, key=lambda n: Document.objects.get(project=project, doc_id=f"d{n}").pk)
    a, b = [mine[n] for n in order], [answered[n] for n in order]
    figures = calibrate_quality(project, depth, "people", "judge:fake").agreement
    for name, weights in (
        ("kappa", None),
        ("kappa_linear", "linear"),
        ("kappa_quadratic", "quadratic"),
    ):
        expected = cohen_kappa_score(a, b, labels=range(6), weights=weights)
        assert figures[name]["value"] == pytest.approx(expected, abs=1e-12)
    alpha = krippendorff.alpha(
        reliability_data=np.array([a, b], dtype=float),
        level_of_measurement="ordinal",
        value_domain=list(range(6)),
    )
    assert figures["alpha_ordinal"]["value"] == pytest.approx(alpha, abs=1e-12)
    assert len(figures["confusion"]) == 6 and figures["confusion"][0][0] == 1


def test_the_command_prints_the_cost_and_queues_the_job(
    sites, capsys, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("judge_quality", "acme", "fake", "--dimension", "source_quality", "--max", "4")
    out = capsys.readouterr().out
    assert "4 sites to grade on source_quality" in out and "about 4 calls" in out
    job = JudgeJob.objects.get()
    assert (job.kind, job.dimension, job.n_pairs) == (JobKind.QUALITY, sites["dimension"], 4)
    assert DBTaskResult.objects.filter(
        task_path__endswith="run_judge_job", args_kwargs__args=[job.pk]
    ).exists()
    job = execute_job(job.pk, sleep=Sleeps())
    assert _judge_grades(sites["dimension"], job.version) == {"s0": 3, "s1": 2, "s2": 1, "s3": 0}


def test_the_command_dry_run_and_its_errors(sites, capsys, tmp_path):
    call_command("judge_quality", "acme", "fake", "--dimension", "depth", "--dry-run")
    out = capsys.readouterr().out
    assert "13 documents to grade on depth" in out and "--- prompt ---" in out
    assert "dry run" in out and not JudgeJob.objects.exists()
    with pytest.raises(CommandError, match=r"no quality dimension 'nope'.*source_quality"):
        call_command("judge_quality", "acme", "fake", "--dimension", "nope")
    with pytest.raises(CommandError, match="no judge"):
        call_command("judge_quality", "acme", "ghost", "--dimension", "depth")
    bad = tmp_path / "prompt.txt"
    bad.write_text("{{passage}}", encoding="utf-8")
    with pytest.raises(CommandError, match=r"prompt\.txt.*passage"):
        call_command("judge_quality", "acme", "fake", "--dimension", "depth", "--prompt", str(bad))
    assert not QualityPrompt.objects.exists() and not JudgeJob.objects.exists()


def test_owners_start_a_quality_job_from_the_settings_page(login, sites):
    client = login(sites["owner"])
    page = client.get(reverse("quality:settings", args=["acme"]))
    body = page.content.decode()
    assert 'id="quality-judges"' in body and 'data-dimension="source_quality"' in body
    estimate = client.get(
        reverse("judges:quality_estimate", args=["acme"]),
        {"judge": sites["judge"].pk, "dimension": "depth", "max_units": 3},
    )
    assert estimate.status_code == 200 and 'data-units="3"' in estimate.content.decode()
    edited = client.get(
        reverse("judges:quality_estimate", args=["acme"]),
        {"judge": sites["judge"].pk, "dimension": "depth", "prompt": "{{text}}"},
    )
    assert edited.status_code == 200 and not QualityPrompt.objects.exists()
    start = reverse("judges:quality_start", args=["acme"])
    response = client.post(
        start, {"judge": sites["judge"].pk, "dimension": "depth", "scope": "all", "max_units": 2}
    )
    job = JudgeJob.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/jobs/{job.pk}/")
    assert (job.dimension, job.n_pairs, job.created_by) == (sites["depth"], 2, sites["owner"])
    execute_job(job.pk, sleep=Sleeps())
    page = client.get(reverse("judges:job", args=["acme", job.pk]))
    assert 'data-dimension="depth"' in page.content.decode()
    # A prompt with an unknown placeholder: refused, nothing kept or started.
    bad = client.post(
        start, {"judge": sites["judge"].pk, "dimension": "depth", "prompt": "{{query}}"}
    )
    assert bad.status_code == 400 and JudgeJob.objects.count() == 1
    assert not QualityPrompt.objects.exists()


def test_the_job_page_names_the_failed_sites(login, sites):
    job = _run(plan_quality(sites["judge"], sites["dimension"]))
    page = login(sites["owner"]).get(reverse("judges:job", args=["acme", job.pk]))
    body = page.content.decode()
    assert page.status_code == 200 and "<td>s7</td>" in body and "<td>s12</td>" in body


@pytest.mark.parametrize("persona", ["adjudicator", "annotator", "viewer"])
def test_only_owners_start_quality_jobs(login, sites, persona):
    client = login(sites[persona])
    response = client.post(
        reverse("judges:quality_start", args=["acme"]),
        {"judge": sites["judge"].pk, "dimension": "depth"},
    )
    assert response.status_code == 403 and not JudgeJob.objects.exists()


def test_an_endpoint_refusing_the_key_writes_nothing(sites, monkeypatch):
    monkeypatch.setenv("ASSAY_JUDGE_KEY_TEST", "sk-wrong")
    job = _run(plan_quality(sites["judge"], sites["dimension"]))
    assert job.pairs.filter(status=PairStatus.FAILED).count() == 13
    assert set(job.pairs.values_list("failure", flat=True)) == {Failure.AUTH}
    assert not QualityGrade.objects.exists() and not QualityHistory.objects.exists()


def test_a_paused_job_resumes_where_it_stopped(sites):
    from judges.services import resume_job

    judge = sites["judge"]
    judge.budget = 3
    judge.save()
    job = _run(plan_quality(judge, sites["dimension"], max_units=5))
    assert job.status == "paused" and job.calls == 3
    assert len(_judge_grades(sites["dimension"], judge.current)) == 3
    judge.budget = 100
    judge.save()
    resume_job(job, enqueue=False)
    job = execute_job(job.pk, sleep=Sleeps())
    assert job.status == "done"
    assert _judge_grades(sites["dimension"], judge.current) == {
        "s0": 3,
        "s1": 2,
        "s2": 1,
        "s3": 0,
        "s4": 2,
    }


def test_the_fake_server_grades_quality_prompts_by_their_markers():
    assert FakeLLM.grade("Site: s12\nAn excellent source. GRADE=5") == 5
