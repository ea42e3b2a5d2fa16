"""A small answer project: three documents (one Chinese), a chunking, three queries with
nuggets and evidence labels, and helpers that write answer files."""

from __future__ import annotations

import json

import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Membership, Query, Role
from tests.conftest import make_user

DOC_A = "Wings make lift. Flaps raise lift at low speed. Slats delay the stall."
DOC_B = "Engines give thrust. Drag slows the aircraft."
DOC_C = "被告人未办理林木采伐许可证。擅自采伐杨树57棵。构成滥伐林木罪。"


@pytest.fixture
def answer_project(personas):
    project = personas["project"]
    docs = {
        doc_id: Document.objects.create(project=project, doc_id=doc_id, title=doc_id, text=text)
        for doc_id, text in (("a", DOC_A), ("b", DOC_B), ("c", DOC_C))
    }
    chunking = Chunking.objects.create(project=project, name="sent")
    for doc_id, document in docs.items():
        start = 0
        for number, piece in enumerate(
            document.text.replace("。", "。|").replace(". ", ".|").split("|")
        ):
            if not piece:
                continue
            index = document.text.index(piece, start)
            Chunk.objects.create(
                chunking=chunking,
                chunk_id=f"{doc_id}#{number}",
                document=document,
                start=index,
                end=index + len(piece),
            )
            start = index + len(piece)
    queries = {
        qid: Query.objects.create(project=project, qid=qid, text=text, reference_answer=ref)
        for qid, text, ref in (
            ("q1", "How do wings make lift?", "Wings make lift; flaps add lift."),
            ("q2", "What slows an aircraft?", ""),
            ("q3", "滥伐林木罪的要件？", ""),
        )
    }
    return {"project": project, "docs": docs, "chunking": chunking, "queries": queries}


def write_jsonl(path, lines) -> str:
    with open(path, "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line if isinstance(line, str) else json.dumps(line, ensure_ascii=False))
            handle.write("\n")
    return str(path)


@pytest.fixture
def assessor(answer_project):
    """A pseudo-annotator (imported assessors) whose labels are the gold evidence."""
    user = make_user("assessors")
    Membership.objects.create(
        project=answer_project["project"], user=user, role=Role.ANNOTATOR, is_pseudo=True
    )
    return user


def grade(query, annotator, document, start, end, value):
    return change_label(
        query=query,
        annotator=annotator,
        evidence=Evidence.for_passage(document, start, end),
        grade=value,
    )


def simple_line(qid, sentences):
    """A simple-format line: ``sentences`` as (text, [citation dicts])."""
    return {
        "qid": qid,
        "answer": " ".join(t for t, _c in sentences),
        "sentences": [{"text": t, "citations": c} for t, c in sentences],
    }


@pytest.fixture
def answer_run(answer_project, personas, tmp_path):
    """Run "sys" answering q1 (two cited sentences, one uncited) and q2 (one cited), and
    q1's nuggets: n1 (vital), n2 and n3 (okay)."""
    from annotator.importing import run_import
    from answers.models import AnswerRun
    from nuggets.models import Nugget, NuggetEvidence

    path = write_jsonl(
        tmp_path / "sys.jsonl",
        [
            simple_line(
                "q1",
                [
                    ("Wings make lift.", [{"doc_id": "a", "start": 0, "end": 16}]),
                    (
                        "Flaps raise lift.",
                        [{"doc_id": "a", "start": 17, "end": 46}, {"doc_id": "b"}],
                    ),
                    ("Pilots like them.", []),
                ],
            ),
            simple_line("q2", [("Drag slows it.", [{"doc_id": "b", "start": 21, "end": 45}])]),
        ],
    )
    run_import("answers", answer_project["project"], path, options={"name": "sys"})
    q1 = answer_project["queries"]["q1"]
    nuggets = {}
    for order, (key, text, importance, start, end) in enumerate(
        (
            ("n1", "Wings make lift", "vital", 0, 16),
            ("n2", "Flaps raise lift", "okay", 17, 46),
            ("n3", "Slats delay the stall", "okay", 47, len(DOC_A)),
        )
    ):
        nugget = Nugget.objects.create(
            query=q1, nugget_id=key, text=text, importance=importance, order=order
        )
        NuggetEvidence.objects.create(
            nugget=nugget, document=answer_project["docs"]["a"], start=start, end=end
        )
        nuggets[key] = nugget
    return {
        **personas,
        **answer_project,
        "run": AnswerRun.objects.get(name="sys"),
        "nuggets": nuggets,
    }


@pytest.fixture
def judged(answer_run, monkeypatch, settings):
    """``answer_run`` and an LLM judge "fake" on an OpenAI-compatible server on loopback
    (``tests/judges/fake_llm.py``)."""
    from tests.judges.conftest import KEY, KEY_ENV, fake_judge
    from tests.judges.fake_llm import FakeLLM

    settings.ASSAY_JUDGE_BACKOFF_SECONDS = 0.01
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLM(KEY) as server:
        judge = fake_judge(answer_run["project"], server, budget=100, timeout_seconds=5)
        yield {**answer_run, "server": server, "judge": judge}
