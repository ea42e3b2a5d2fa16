"""An LLM judge judges answers through the judges' job machinery, against an
OpenAI-compatible server on loopback (``tests/judges/fake_llm.py``): one call per answer
assigns every nugget, one call per citation grades its support; the stored judgements are
the server's replies, written by the judge version (its own label source), each in the
history; a reply that is not the JSON asked for fails its pair and writes nothing; a job
resumes and skips what the version has judged."""

from __future__ import annotations

import io
import json
import math

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotator.models import Membership, Query, SourceKind
from annotator.sources import resolve_sources
from answers.judge_jobs import plan_answers, start_answers
from answers.judge_prompts import UnreadableReply, read_nuggets, read_support
from answers.metrics import run_scores
from answers.models import AnswerJudgment, AnswerJudgmentHistory, Aspect, Citation
from judges.engine import execute_job
from judges.models import Failure, JobKind, JobStatus, JudgeJob, JudgePair, PairStatus
from judges.services import plan_job, resume_job, start_job
from numerics.answers import NUGGET_LEVELS, SUPPORT_LEVELS
from tests.answers.conftest import simple_line, write_jsonl
from tests.judges.conftest import Sleeps

pytestmark = pytest.mark.django_db


def run(job):
    return execute_job(job.pk, sleep=Sleeps())


def judge_values(judge, aspect):
    annotator = judge.current.annotator
    rows = AnswerJudgment.objects.filter(annotator=annotator, aspect=aspect)
    if aspect == Aspect.NUGGET:
        return {(j.answer_id, j.nugget_id): j.value for j in rows}
    return {j.citation_id: j.value for j in rows}


def test_the_command_prints_the_cost_and_the_stored_judgements_are_the_servers_replies(judged):
    out = io.StringIO()
    call_command("judge_answers", "acme", "fake", "--runs", "sys", stdout=out)
    said = out.getvalue()
    # q1 has three nuggets (one nugget call) and three citations; q2 no nuggets, one citation.
    assert "2 answers of sys: 1 nugget calls and 4 citation calls" in said
    assert "1 answers to queries without nuggets" in said and "prompt tokens" in said
    job = JudgeJob.objects.get()
    assert (job.kind, job.n_pairs, job.status) == (JobKind.ANSWERS, 5, JobStatus.PENDING)
    assert f"job {job.pk} queued" in said
    job = run(job)
    assert job.status == JobStatus.DONE
    assert job.calls == 5 and job.prompt_tokens > 0 and job.completion_tokens == 35
    assert set(job.pairs.values_list("status", flat=True)) == {PairStatus.JUDGED}

    server, judge = judged["server"], judged["judge"]
    q1 = judged["run"].answers.get(query__qid="q1")
    nuggets = [judged["nuggets"][k] for k in ("n1", "n2", "n3")]
    # Every reply, read independently of Assay, is what was stored.
    expected_nuggets, expected_support = {}, {}
    citations = {c.pk: c for c in Citation.objects.select_related("sentence", "document")}
    for request in server.requests:
        reply = json.loads(request["reply"])
        if "nuggets" in reply:
            for item in reply["nuggets"]:
                nugget = nuggets[item["nugget"] - 1]
                expected_nuggets[(q1.pk, nugget.pk)] = NUGGET_LEVELS.index(item["support"])
        else:
            sentence = request["prompt"].split("Sentence: ")[1].split("\n")[0]
            (citation,) = [
                c
                for c in citations.values()
                if c.sentence.text == sentence
                and c.document.text[c.start : c.end] in request["prompt"]
            ]
            expected_support[citation.pk] = SUPPORT_LEVELS.index(reply["support"])
    assert judge_values(judge, Aspect.NUGGET) == expected_nuggets
    assert judge_values(judge, Aspect.SUPPORT) == expected_support
    # The fake's rules, worked by hand: n1, n2 stated; n3 (slats) not.
    assert [expected_nuggets[(q1.pk, n.pk)] for n in nuggets] == [2, 2, 0]
    by_text = {
        (c.sentence.text, c.document.doc_id): expected_support[pk] for pk, c in citations.items()
    }
    assert by_text == {
        ("Wings make lift.", "a"): 2,
        ("Flaps raise lift.", "a"): 2,
        ("Flaps raise lift.", "b"): 0,
        ("Drag slows it.", "b"): 1,
    }
    # The support pair keeps its grade and the judge's reason is the judgement's note.
    support = AnswerJudgment.objects.filter(aspect=Aspect.SUPPORT).first()
    assert support.note.endswith("by the fake judge")
    assert JudgePair.objects.get(citation=support.citation_id).grade == support.value

    # Written by the judge version, a label source of its own; each change in history.
    annotator = judge.current.annotator
    membership = Membership.objects.get(user=annotator)
    assert (membership.is_pseudo, membership.source) == (True, SourceKind.JUDGE)
    assert set(AnswerJudgment.objects.values_list("annotator", flat=True)) == {annotator.pk}
    history = AnswerJudgmentHistory.objects.filter(annotator=annotator, changed_by=annotator)
    assert history.count() == 7 and set(history.values_list("event", flat=True)) == {"create"}
    sources = resolve_sources(judged["project"], "judge:fake")
    assert sources.judgments(AnswerJudgment.objects.all()).count() == 7
    people = resolve_sources(judged["project"], "people")
    assert people.judgments(AnswerJudgment.objects.all()).count() == 0
    # People's measures do not take the judge's judgements …
    scores = run_scores(judged["run"])
    assert scores.mean("all_strict") == (None, 0)
    # … the judge's own do: q1's all strict is 2 / 3.
    judge_scores = run_scores(judged["run"], sources=sources)
    assert judge_scores.mean("all_strict")[0] == pytest.approx(2 / 3)


def test_a_second_plan_skips_what_the_version_judged_and_a_new_version_asks_again(judged):
    job = run(start_answers(plan_answers(judged["judge"]), enqueue=False))
    assert job.status == JobStatus.DONE
    again = plan_answers(judged["judge"])
    assert (again.already, len(again.questions)) == (5, 0)
    out = io.StringIO()
    call_command("judge_answers", "acme", "fake", stdout=out)
    assert "nothing to ask" in out.getvalue() and JudgeJob.objects.count() == 1
    # Resuming a finished job asks nothing again.
    calls = len(judged["server"].requests)
    resume_job(job, enqueue=False)
    assert run(job).status == JobStatus.DONE
    assert len(judged["server"].requests) == calls


def test_bad_replies_are_faults_that_keep_the_reply_and_write_nothing(judged, tmp_path, client):
    from annotator.importing import run_import

    project = judged["project"]
    q4 = Query.objects.create(project=project, qid="q4", text="Tell me about flaps NUGGETPROSE")
    q5 = Query.objects.create(project=project, qid="q5", text="Tell me about wings NUGGETMISSING")
    q6 = Query.objects.create(project=project, qid="q6", text="Tell me about lift NUGGETLEVEL")
    from nuggets.models import Nugget

    for query in (q4, q5, q6):
        for order, text in enumerate(("Wings make lift", "Flaps raise lift")):
            Nugget.objects.create(
                query=query,
                nugget_id=f"{query.qid}-{order}",
                text=text,
                importance="okay",
                order=order,
            )
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            simple_line("q4", [("Wings make lift.", [])]),
            simple_line("q5", [("Wings make lift.", [])]),
            simple_line("q6", [("Wings make lift.", [])]),
            simple_line(
                "q1",
                [
                    ("Wings SUPPORTPROSE.", [{"doc_id": "a", "start": 0, "end": 16}]),
                    ("Wings SUPPORTBAD.", [{"doc_id": "a", "start": 0, "end": 16}]),
                ],
            ),
        ],
    )
    run_import("answers", project, path, options={"name": "bad"})
    plan = plan_answers(judged["judge"], runs=["bad"], aspects=["nugget", "support"])
    # q1's nuggets are judged well; its two citations and q4–q6's nuggets are not.
    job = run(start_answers(plan, enqueue=False))
    assert job.status == JobStatus.DONE
    failed = list(job.pairs.filter(status=PairStatus.FAILED).order_by("pk"))
    assert len(failed) == 5
    assert {p.failure for p in failed} == {Failure.MALFORMED}
    assert all(p.raw_reply for p in failed)
    codes = sorted(p.detail.code for p in failed)
    assert codes == [
        "answer_judge.bad_level",
        "answer_judge.bad_level",
        "answer_judge.missing_nuggets",
        "answer_judge.not_json",
        "answer_judge.not_json",
    ]
    bad = judged["run"].project.answer_runs.get(name="bad")
    written = AnswerJudgment.objects.filter(answer__run=bad)
    assert set(written.values_list("answer__query__qid", "aspect")) == {("q1", "nugget")}
    assert job.calls == 6  # a malformed reply is a fault, not retried
    # The job's state and page name each failed pair by its answer (and citation).
    from judges.status import judge_job_state

    units = sorted(p.unit for p in judge_job_state(job, failed_pairs=True).failed_pairs)
    assert [u.split(" citation ")[0].startswith("answer ") for u in units] == [True] * 5
    assert sum(" citation " in u for u in units) == 2
    client.force_login(judged["owner"])
    page = client.get(reverse("judges:job", args=["acme", job.pk])).content.decode()
    assert page.count('<pre class="raw-reply">') == 5 and "Failed pairs" in page


def test_the_prompt_speaks_the_querys_language_and_a_chinese_reply_is_read(judged, tmp_path):
    from annotator.importing import run_import
    from nuggets.models import Nugget

    project = judged["project"]
    q3 = judged["queries"]["q3"]
    Nugget.objects.create(
        query=q3, nugget_id="z1", text="未办理林木采伐许可证", importance="vital", order=0
    )
    Nugget.objects.create(query=q3, nugget_id="z2", text="构成盗窃罪", importance="okay", order=1)
    path = write_jsonl(
        tmp_path / "zh.jsonl",
        [simple_line("q3", [("被告人未办理林木采伐许可证。", [{"doc_id": "c"}])])],
    )
    run_import("answers", project, path, options={"name": "zh"})
    job = run(start_answers(plan_answers(judged["judge"], runs=["zh"]), enqueue=False))
    assert job.status == JobStatus.DONE, list(job.pairs.values("failure", "detail"))
    prompts = [r["prompt"] for r in judged["server"].requests]
    assert all(p.startswith("你要判断") for p in prompts) and len(prompts) == 2
    values = judge_values(judged["judge"], Aspect.NUGGET)
    answer = project.answer_runs.get(name="zh").answers.get()
    z1, z2 = Nugget.objects.filter(query=q3).order_by("order")
    # The fake answers the nuggets in reverse order: each is still its own.
    assert (values[(answer.pk, z1.pk)], values[(answer.pk, z2.pk)]) == (2, 0)
    # The sentence is in the cited document: full support.
    assert list(judge_values(judged["judge"], Aspect.SUPPORT).values()) == [2]


def test_relevance_jobs_are_unchanged_beside_answer_jobs(judged):
    """A labels job of the same judge still keys its pairs by (query, chunk)."""
    from annotator.models import Chunk, Chunking

    project = judged["project"]
    chunking = Chunking.objects.get(project=project)
    plan = plan_job(judged["judge"], scope="all", level="chunk", chunking=chunking.name)
    job = start_job(plan, enqueue=False)
    assert job.kind == JobKind.LABELS
    assert not job.pairs.filter(answer__isnull=False).exists()
    assert set(job.pairs.values_list("chunk", flat=True)) <= set(
        Chunk.objects.values_list("pk", flat=True)
    )


def test_the_plan_refuses_unknown_runs_queries_and_numbers(judged):
    for options, message in (
        ({"runs": ["nope"]}, "unknown answer runs: nope"),
        ({"qids": ["q9"]}, "unknown query ids: q9"),
        ({"max_answers": 0}, "at least 1"),
        ({"aspects": ["crag"]}, "judge nugget, support or both"),
    ):
        with pytest.raises(Exception, match=message):
            plan_answers(judged["judge"], **options)
    with pytest.raises(CommandError, match="no judge"):
        call_command("judge_answers", "acme", "nobody", stdout=io.StringIO())
    # --max takes the answers people judged first.
    from answers.judging import Target, change_judgment

    q2 = judged["run"].answers.get(query__qid="q2")
    change_judgment(answer=q2, annotator=judged["annotator"], target=Target(Aspect.CRAG), value=3)
    plan = plan_answers(judged["judge"], max_answers=1)
    assert plan.answers == 1 and {q.answer_pk for q in plan.questions} == {q2.pk}


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "support",
        '{"nuggets": [{"nugget": 1, "support": "support"}]} trailing',
        '{"nuggets": [{"nugget": 1, "support": "support"}], "note": "x"}',
        '{"nuggets": [{"nugget": 1, "support": "support"}, {"nugget": 1, "support": "not"}]}',
        '{"nuggets": [{"nugget": 3, "support": "support"}]}',
        '{"nuggets": [{"nugget": true, "support": "support"}]}',
        '{"nuggets": [{"nugget": 1, "support": "Support"}]}',
        '{"nuggets": {"1": "support"}}',
    ],
)
def test_the_nugget_reader_refuses_anything_but_the_json_asked_for(reply):
    with pytest.raises(UnreadableReply):
        read_nuggets(reply, 2 if "3" in reply else 1)


def test_the_readers_read_the_json_asked_for():
    text = '{"nuggets": [{"nugget": 2, "support": "partial"}, {"nugget": 1, "support": "not"}]}'
    assert read_nuggets(text, 2).values == (0, 1)
    assert read_support('{"support": "full", "reason": " ok "}').value == 2
    assert read_support('{"support": "none"}').reason == ""
    for bad in ('{"support": "yes"}', '{"grade": 2}', '{"support": "full", "x": 1}', "full"):
        with pytest.raises(UnreadableReply):
            read_support(bad)


def test_the_judges_judgements_stay_out_of_peoples_agreement_disputes_and_gold(judged):
    from answers.adjudication import disputes
    from answers.agreement import aspect_agreement
    from answers.judging import Target, change_judgment
    from gold.services import ConsensusPolicy, freeze_gold_set

    run(start_answers(plan_answers(judged["judge"]), enqueue=False))
    answer = judged["run"].answers.get(query__qid="q1")
    n3 = judged["nuggets"]["n3"]
    # anna says n3 is supported; the judge said not: people's figures do not see the judge.
    change_judgment(
        answer=answer, annotator=judged["annotator"], target=Target(Aspect.NUGGET, n3.pk), value=2
    )
    assert AnswerJudgment.objects.filter(nugget=n3).count() == 2
    agreement = aspect_agreement(judged["project"], Aspect.NUGGET)
    assert agreement["annotators"] == [judged["annotator"].username]
    assert disputes(judged["project"]) == []
    gold_set = freeze_gold_set(judged["project"], "g", policy=ConsensusPolicy())
    frozen = set(gold_set.answer_judgments.values_list("annotator", flat=True))
    assert judged["judge"].current.annotator.username not in frozen
    # People judged only n3 of q1: no people's nugget score (the judge's n1, n2 are not theirs).
    assert math.isnan(run_scores(judged["run"]).values["all_strict"][0])
