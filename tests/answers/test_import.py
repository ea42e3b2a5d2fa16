"""Answer runs come in whole or not at all: TREC RAG 2024/2025 and the simple JSONL, every
bad line refused with its number and nothing written, every citation a span."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.importing import run_import
from annotator.models import Query
from answers.models import Answer, AnswerRun, Citation, Sentence
from formats import FileRejected
from formats.answers import joined

from .conftest import DOC_A, DOC_B, DOC_C, write_jsonl

pytestmark = pytest.mark.django_db


def counts() -> tuple[int, int, int, int]:
    return (
        AnswerRun.objects.count(),
        Answer.objects.count(),
        Sentence.objects.count(),
        Citation.objects.count(),
    )


def trec_line(qid, sentences, references, run_id="sys-1", **extra):
    return {
        "run_id": run_id,
        "topic_id": qid,
        "topic": "…",
        "references": references,
        "response_length": 12,
        "answer": [{"text": t, "citations": c} for t, c in sentences],
        **extra,
    }


def test_trec_rag_2024_answers_resolve_references_to_documents(answer_project, tmp_path):
    path = write_jsonl(
        tmp_path / "run.jsonl",
        [
            trec_line("q1", [("Wings make lift.", [0]), ("Flaps help.", [1, 0, 1])], ["a", "b"]),
            trec_line("q2", [("Drag slows it.", [])], []),
        ],
    )
    result = run_import("answers", answer_project["project"], path, options={"name": "gpt"})
    assert result.created == 2
    run = AnswerRun.objects.get()
    assert (run.name, run.run_tag, run.shape, run.n_answers) == ("gpt", "sys-1", "trec_rag", 2)
    assert (run.n_sentences, run.n_citations) == (3, 3)
    answer = Answer.objects.get(query__qid="q1")
    assert answer.text == "Wings make lift. Flaps help."
    assert answer.references == ["a", "b"] and answer.response_length == 12
    first, second = answer.sentences.order_by("number")
    assert answer.text[first.start : first.end] == "Wings make lift."
    assert answer.text[second.start : second.end] == "Flaps help."
    cited = [
        (c.sentence.number, c.number, c.document.doc_id, c.start, c.end, c.reference)
        for c in Citation.objects.order_by("sentence__number", "number")
    ]
    # A repeated index cites nothing new; a document is cited whole.
    assert cited == [
        (1, 1, "a", 0, len(DOC_A), 0),
        (2, 1, "b", 0, len(DOC_B), 1),
        (2, 2, "a", 0, len(DOC_A), 0),
    ]


def test_trec_rag_2025_metadata_and_chunk_references(answer_project, tmp_path):
    line = {
        "metadata": {"team_id": "t", "run_id": "rag25-x", "narrative_id": "q3", "type": "auto"},
        "references": ["c#0", "c#2"],
        "answer": [
            {"text": "被告人未办许可证。", "citations": [0]},
            {"text": "构成滥伐林木罪。", "citations": [1]},
        ],
    }
    path = write_jsonl(tmp_path / "run.jsonl", [line])
    run_import(
        "answers", answer_project["project"], path, options={"name": "r25", "chunking": "sent"}
    )
    answer = Answer.objects.get()
    assert answer.text == "被告人未办许可证。构成滥伐林木罪。"  # no space between Chinese sentences
    assert AnswerRun.objects.get().run_tag == "rag25-x"
    spans = [
        (c.granularity, c.chunk.chunk_id, DOC_C[c.start : c.end]) for c in Citation.objects.all()
    ]
    assert spans == [
        ("chunk", "c#0", "被告人未办理林木采伐许可证。"),
        ("chunk", "c#2", "构成滥伐林木罪。"),
    ]


def test_simple_answers_cite_passages_chunks_and_documents(answer_project, tmp_path):
    start = DOC_A.index("Flaps")
    line = {
        "qid": "q1",
        "answer": "Wings make lift. Flaps raise it. Slats too.",
        "sentences": [
            {"text": "Wings make lift.", "citations": [{"doc_id": "a", "start": 0, "end": 16}]},
            {"text": "Flaps raise it.", "citations": [{"chunk_id": "a#1"}, {"doc_id": "b"}]},
            {"text": "Slats too."},
        ],
    }
    path = write_jsonl(tmp_path / "run.jsonl", [line])
    run_import(
        "answers", answer_project["project"], path, options={"name": "s", "chunking": "sent"}
    )
    answer = Answer.objects.get()
    assert [answer.text[s.start : s.end] for s in answer.sentences.order_by("number")] == [
        "Wings make lift.",
        "Flaps raise it.",
        "Slats too.",
    ]
    spans = [
        (c.granularity, c.document.doc_id, c.start, c.end)
        for c in Citation.objects.order_by("sentence__number", "number")
    ]
    assert spans == [
        ("passage", "a", 0, 16),
        ("chunk", "a", start, start + len("Flaps raise lift at low speed.")),
        ("document", "b", 0, len(DOC_B)),
    ]


def test_an_answer_without_sentences_is_split_chinese_punctuation_included(
    answer_project, tmp_path
):
    path = write_jsonl(
        tmp_path / "run.jsonl",
        [{"qid": "q3", "answer": "未办许可证。擅自采伐！构成何罪？是滥伐林木罪。"}],
    )
    run_import("answers", answer_project["project"], path, options={"name": "zh"})
    sentences = [s.text for s in Sentence.objects.order_by("number")]
    assert sentences == ["未办许可证。", "擅自采伐！", "构成何罪？", "是滥伐林木罪。"]
    assert not Citation.objects.exists()


BAD_LINES = [
    ("not json at all", "line 2: malformed JSON"),
    ({"qid": "q9", "answer": "x"}, "line 3: no query 'q9' in this project"),
    (
        {"qid": "x4", "sentences": [{"text": "x", "citations": [{"doc_id": "zz"}]}]},
        "line 4: sentence 1 cites 'zz': no such document",
    ),
    (
        {
            "qid": "x5",
            "sentences": [{"text": "x", "citations": [{"doc_id": "a", "start": 60, "end": 99}]}],
        },
        "line 5: sentence 1 cites characters 60–99 of document 'a', which has 70 characters",
    ),
    ({"qid": "q1", "answer": "x"}, "line 6: query 'q1' is answered again (first on line 1)"),
    (
        {"qid": "x7", "sentences": [{"text": "x", "citations": [{"chunk_id": "a#0"}]}]},
        "line 7: sentence 1 cites chunk 'a#0': name the chunking its ids belong to",
    ),
    (
        {"qid": "x8", "answer": "Drag slows.", "sentences": [{"text": "Thrust."}]},
        "line 8: sentence 1 is not in the answer's text (after sentence 0)",
    ),
    (
        {"qid": "x9", "answer": "x", "run_id": "other"},
        "line 9: run_id 'other' differs from 'one' on line 1",
    ),
    ({"answer": "x"}, "line 10: missing qid"),
    (
        {
            "qid": "x11",
            "sentences": [{"text": "x", "citations": [{"doc_id": "a", "start": "2.5", "end": 4}]}],
        },
        "line 11: start must be a whole number, not '2.5'",
    ),
    (
        {"topic_id": "x12", "answer": []},
        "line 12: this line is a trec_rag answer, line 1 a simple one",
    ),
    ({"qid": "x13", "answer": 7}, 'line 13: "answer" must be text'),
    (
        {"qid": "x14", "sentences": [{"text": "x", "citations": [{"doc_id": "a b"}]}]},
        "line 14: doc_id 'a b'",
    ),
]


def test_every_bad_simple_line_is_refused_with_its_number_and_nothing_is_written(
    answer_project, tmp_path
):
    project = answer_project["project"]
    for n in range(4, 15):
        Query.objects.create(project=project, qid=f"x{n}", text="?")
    lines = [{"qid": "q1", "answer": "Wings make lift.", "run_id": "one"}]
    lines += [line for line, _message in BAD_LINES]
    path = write_jsonl(tmp_path / "bad.jsonl", lines)
    with pytest.raises(FileRejected) as refused:
        run_import("answers", answer_project["project"], path, options={"name": "bad"})
    assert len(refused.value.errors) == len(BAD_LINES)
    for (_line, expected), said in zip(BAD_LINES, refused.value.errors, strict=True):
        assert said.startswith(expected), said
    assert counts() == (0, 0, 0, 0)


def test_every_bad_trec_rag_line_is_refused_with_its_number(answer_project, tmp_path):
    lines = [
        trec_line("q1", [("ok", [0])], ["a"]),
        trec_line("q2", [("x", [2])], ["a", "b"]),
        trec_line("q3", [("x", [0])], ["nope"]),
        trec_line("q2", [("", [])], [], run_id="sys-1"),
        {"run_id": "sys-1", "topic_id": "q2", "references": "a", "answer": []},
        trec_line("q2", [("x", ["0"])], ["a"]),
    ]
    path = write_jsonl(tmp_path / "bad.jsonl", lines)
    with pytest.raises(FileRejected) as refused:
        run_import("answers", answer_project["project"], path, options={"name": "bad"})
    assert refused.value.errors == [
        "line 2: sentence 1 cites 2, which is no index into the 2 references",
        "line 3: sentence 1 cites 'nope': no such document",
        "line 4: sentence 1 has no text",
        'line 5: "references" must be a list of ids',
        "line 6: sentence 1 cites '0', which is no index into the 1 references",
    ]
    assert counts() == (0, 0, 0, 0)


def test_a_taken_name_and_an_unknown_chunking_write_nothing(answer_project, tmp_path):
    path = write_jsonl(tmp_path / "ok.jsonl", [{"qid": "q1", "answer": "Lift."}])
    project = answer_project["project"]
    run_import("answers", project, path, options={"name": "one"})
    with pytest.raises(FileRejected) as taken:
        run_import("answers", project, path, options={"name": "one"})
    assert taken.value.errors == ["the project already has an answer run named 'one'"]
    with pytest.raises(FileRejected) as unknown:
        run_import("answers", project, path, options={"name": "two", "chunking": "nope"})
    assert unknown.value.errors == ["no chunking 'nope' in this project"]
    assert counts()[:2] == (1, 1)


def test_command_imports_and_refuses_with_every_line(answer_project, tmp_path, capsys):
    good = write_jsonl(tmp_path / "ok.jsonl", [{"qid": "q1", "answer": "Lift. Flaps."}])
    call_command("import_answers", "acme", good, "--name", "cmd", "--param", "model=x")
    assert "1 answers imported" in capsys.readouterr().out
    assert AnswerRun.objects.get().parameters == {"model": "x"}
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"qid": "q9", "answer": "x"}, "{"])
    with pytest.raises(CommandError) as refused:
        call_command("import_answers", "acme", bad, "--name", "cmd2")
    assert "line 1: no query 'q9' in this project" in str(refused.value)
    assert "line 2: malformed JSON" in str(refused.value)
    assert AnswerRun.objects.count() == 1


def test_joined_sentences_keep_their_offsets():
    text, spans = joined(["Lift.", "升力。", "阻力。", "Drag."])
    assert text == "Lift. 升力。阻力。 Drag."
    assert [text[s:e] for s, e in spans] == ["Lift.", "升力。", "阻力。", "Drag."]


def test_crlf_bom_and_gzip_files_are_read(answer_project, tmp_path):
    import gzip

    body = "\ufeff" + json.dumps({"qid": "q1", "answer": "Lift."}) + "\r\n"
    path = tmp_path / "run.jsonl.gz"
    path.write_bytes(gzip.compress(body.encode("utf-8")))
    run_import("answers", answer_project["project"], path, options={"name": "gz"})
    assert Answer.objects.get().text == "Lift."


def test_the_import_page_takes_an_answer_run_with_its_name(login, answer_project):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from annotator.models import ImportJob, ImportStatus
    from tests.test_import_views import work_off_queue

    client = login(answer_project["project"].memberships.get(role="owner").user)
    body = json.dumps(
        {
            "qid": "q1",
            "answer": "Lift.",
            "sentences": [{"text": "Lift.", "citations": [{"chunk_id": "a#0"}]}],
        }
    ).encode()
    url = reverse("annotator:import_upload", args=["acme"])
    missing = client.post(url, {"file": SimpleUploadedFile("a.jsonl", body), "kind": "answers"})
    assert missing.status_code == 400 and not ImportJob.objects.exists()
    page = client.get(url).content.decode()
    assert 'value="answers"' in page
    response = client.post(
        url,
        {
            "file": SimpleUploadedFile("a.jsonl", body),
            "kind": "answers",
            "run_name": "web",
            "chunking": "sent",
            "parameters": "model=m",
        },
    )
    assert response.status_code == 302
    work_off_queue()
    job = ImportJob.objects.get()
    assert job.status == ImportStatus.DONE, job.errors
    run = AnswerRun.objects.get()
    assert (run.name, run.parameters, run.chunking.name) == ("web", {"model": "m"}, "sent")
    assert Citation.objects.get().chunk.chunk_id == "a#0"
