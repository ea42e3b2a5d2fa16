"""A small answer project: three documents (one Chinese), a chunking, three queries with
nuggets and evidence labels, and helpers that write answer files."""

from __future__ import annotations

import json

import pytest

from annotator.labels import Evidence, change_label
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
