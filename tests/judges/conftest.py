"""A small project to judge, a fake OpenAI-compatible server, and a judge pointed at it."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from judges.services import create_judge
from metrics.models import Run

from .fake_llm import MODEL, FakeLLM

KEY = "sk-test-Zq8s7Kx2Lm4Np6Rt9Vw1"  # a made-up key; tests check it never lands anywhere
KEY_ENV = "ASSAY_JUDGE_KEY_TEST"

# Passages: each one's marker decides what the fake model answers for it.
PASSAGES = [
    "Wing lift rises with the angle of attack. GRADE=3",
    "Boundary layers separate at high angles. GRADE=2",
    "A note on supersonic flutter. GRADE=1",
    "Catering menu of the wind tunnel canteen. GRADE=0",
    "Slipstream effects. RATE429 GRADE=2",
    "Heat transfer in hypersonic flow. FLAKY500 GRADE=1",
    "An unreadable passage. MALFORMED",
    "An overexcited passage. SEVEN",
    "A silent passage. EMPTY",
    "A verbose passage. LONG",
    "A sensitive passage. REFUSE",
    "A terse passage. DIGIT GRADE=3",
]


@pytest.fixture
def judging(personas, monkeypatch, settings):
    """Project acme with 12 one-chunk documents, 2 queries, one run pooling every chunk,
    anna's labels on 3 (query, chunk) pairs, and a judge on the fake server."""
    settings.ASSAY_JUDGE_BACKOFF_SECONDS = 0.5
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="c")
    chunks = []
    for index, text in enumerate(PASSAGES):
        document = Document.objects.create(
            project=project, doc_id=f"d{index}", title=f"Doc {index}", text=text
        )
        chunks.append(
            Chunk.objects.create(
                chunking=chunking, chunk_id=f"d{index}#0", document=document, start=0, end=len(text)
            )
        )
    queries = [
        Query.objects.create(project=project, qid="q1", text="How do wings lift?"),
        Query.objects.create(project=project, qid="q2", text="What is flutter?"),
    ]
    project.pool_depth = 20
    project.save()
    run = Run(project=project, name="bm25", level="chunk", chunking=chunking)
    rows_q = np.repeat([q.pk for q in queries], len(chunks))
    rows_c = np.tile([c.pk for c in chunks], len(queries))
    run.set_results(rows_q, rows_c, np.arange(rows_q.size, 0, -1, dtype=float))
    run.save()
    people = [(0, 0, 3), (0, 1, 1), (1, 2, 1)]  # (query, chunk, grade) by anna
    for q, c, grade in people:
        change_label(
            query=queries[q],
            annotator=personas["annotator"],
            evidence=Evidence.for_chunk(chunks[c]),
            grade=grade,
        )
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLM(KEY, slow_seconds=1.0) as server:
        judge = fake_judge(project, server, concurrency=3, budget=500, timeout_seconds=0.3)
        yield {
            "project": project,
            "chunking": chunking,
            "chunks": chunks,
            "queries": queries,
            "run": run,
            "server": server,
            "judge": judge,
            **personas,
        }


def fake_judge(project, server: FakeLLM, **settings):
    """A judge of the project pointed at the fake server with the test key's variable
    (configured by the operator; two calls at a time and no rate limit unless told)."""
    return create_judge(
        project,
        base_url=server.base_url,
        model=MODEL,
        api_key_env=KEY_ENV,
        by_operator=True,
        **{"slug": "fake", "name": "Fake judge", "concurrency": 2, "rpm": 0, **settings},
    )


def idle_judge(project, **settings):
    """A judge of the project whose endpoint nobody listens on: for plans and labels,
    never a call (operator-configured; slug "j" and the test key's variable unless told)."""
    return create_judge(
        project,
        **{
            "slug": "j",
            "name": "J",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "api_key_env": KEY_ENV,
            "by_operator": True,
            **settings,
        },
    )


class Sleeps(list):
    """A stand-in for time.sleep that records each wait instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


# Names the tests resolve without a network: a public address, and a name that resolves to
# loopback (as an attacker's DNS would).
FAKE_DNS = {"llm.example.org": "93.184.215.14", "evil.example.org": "127.0.0.1"}


@pytest.fixture
def public_dns(monkeypatch):
    """``socket.getaddrinfo`` answering FAKE_DNS's names, everything else as before."""
    import socket

    real = socket.getaddrinfo

    def resolve(host, port, *args, **kwargs):
        if host in FAKE_DNS:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (FAKE_DNS[host], port or 0))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return FAKE_DNS
