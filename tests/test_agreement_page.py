"""Agreement page: coefficients with readings, pair heat map, confusion, queries, pseudo."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from numerics.agreement.report import agreement_report

pytestmark = pytest.mark.django_db

GRADES = {  # (query, chunk) -> anna, arno, llm-judge
    ("q1", 0): (3, 3, 2),
    ("q1", 1): (0, 1, 0),
    ("q1", 2): (2, 2, 2),
    ("q2", 0): (1, 3, 1),
    ("q2", 3): (0, 0, 0),
    ("q2", 4): (3, 2, 3),
}


@pytest.fixture
def labelled(personas, tmp_path):
    from annotator.importing import run_import

    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="cks")
    doc = Document.objects.create(project=project, doc_id="d", text="x" * 500)
    chunks = [
        Chunk.objects.create(
            chunking=chunking, chunk_id=f"c{i}", document=doc, start=100 * i, end=100 * i + 100
        )
        for i in range(5)
    ]
    queries = {q: Query.objects.create(project=project, qid=q, text=q) for q in ("q1", "q2")}
    judge_lines = []
    for (qid, c), (anna, arno, judge) in GRADES.items():
        for persona, grade in (("annotator", anna), ("annotator2", arno)):
            change_label(
                query=queries[qid],
                annotator=personas[persona],
                evidence=Evidence.for_chunk(chunks[c]),
                grade=grade,
            )
        judge_lines.append(f"{qid} 0 c{c} {judge}\n")
    path = tmp_path / "judge.qrels"
    path.write_text("".join(judge_lines))
    run_import(
        "labels",
        project,
        path,
        options={"annotator": "llm-judge", "level": "chunk", "chunking": "cks"},
    )


def expected(names, graded=None):
    index = {"anna": 0, "arno": 1, "llm-judge": 2}
    rows = [
        {"annotator": name, "item": f"{q}/{c}", "grade": grades[index[name]], "query": q}
        for (q, c), grades in (graded or GRADES).items()
        for name in names
    ]
    return agreement_report(rows, [0, 1, 2, 3])


def test_page_equals_the_agreement_command_on_the_same_items(login, personas, labelled):
    client = login(personas["adjudicator"])
    page = client.get(
        reverse("gold:agreement", args=["acme"]), {"level": "cks", "mapping": "contains"}
    )
    assert page.status_code == 200
    summary = page.context["summary"]
    reference = expected(["anna", "arno"])
    assert summary["krippendorff_alpha"] == pytest.approx(reference["krippendorff_alpha"])
    assert summary["percent_agreement"] == pytest.approx(reference["percent_agreement"])
    assert summary["fleiss_kappa"] == reference["fleiss_kappa"]
    pair = summary["pairs"][0]
    assert (pair["a"], pair["b"], pair["n"]) == ("anna", "arno", 6)
    assert pair["cohen_kappa"] == pytest.approx(reference["pairs"][0]["cohen_kappa"])
    body = page.content.decode()
    assert 'id="pair-matrix"' in body, body[body.find("Pairs") : body.find("Pairs") + 800]
    assert '<td class="heat-' in body, body[
        body.find("pair-matrix") : body.find("pair-matrix") + 1500
    ]
    # Queries by disagreement, worst first: anna and arno agree on 1 of q2's 3 items.
    assert [row["qid"] for row in page.context["report"].per_query] == ["q2", "q1"]
    judge = page.context["report"].pseudo[0]
    assert judge["name"] == "llm-judge"
    with_judge = expected(["anna", "arno", "llm-judge"])
    assert judge["alpha"] == pytest.approx(with_judge["krippendorff_alpha"])
    assert {(p["a"], p["b"]) for p in judge["pairs"]} == {
        ("anna", "llm-judge"),
        ("arno", "llm-judge"),
    }


def test_confusion_of_a_pair_and_htmx_partial(login, personas, labelled):
    client = login(personas["owner"])
    target = reverse("gold:agreement", args=["acme"])
    page = client.get(target, {"level": "cks", "mapping": "contains", "a": "anna", "b": "arno"})
    confusion = page.context["chosen"]["confusion"]
    assert confusion[1][3] == 1 and confusion[0][1] == 1 and sum(map(sum, confusion)) == 6
    partial = client.get(target, {"level": "cks"}, HTTP_HX_REQUEST="true")
    assert b"<html" not in partial.content and b'id="coefficients"' in partial.content
    assert client.get(target, {"level": "nope"}).status_code == 400


@pytest.mark.parametrize("persona", ["annotator", "viewer"])
def test_blind_roles_cannot_see_agreement(login, personas, labelled, persona):
    response = login(personas[persona]).get(reverse("gold:agreement", args=["acme"]))
    assert response.status_code == 403


def test_no_pairs_yet_is_not_an_error(login, personas):
    page = login(personas["owner"]).get(reverse("gold:agreement", args=["acme"]))
    assert page.status_code == 200 and page.context["summary"]["percent_agreement"] is None
    assert b"No item has two labels yet." in page.content


def test_agreement_is_kept_until_a_label_changes(login, personas, labelled):
    """A second view reads no label; a changed label (which moves the project's label
    revision) gives the new figures, equal to the command's on the same items."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = login(personas["adjudicator"])
    url = reverse("gold:agreement", args=["acme"])
    params = {"level": "cks", "mapping": "contains"}
    client.get(url, params)
    with CaptureQueriesContext(connection) as captured:
        again = client.get(url, params)
    assert not [q for q in captured if '"annotator_judgment"' in q["sql"]]
    assert again.context["summary"]["pairs"][0]["n"] == 6
    chunk = Chunk.objects.get(chunk_id="c4")
    change_label(  # anna now agrees with arno on (q2, c4): 3 → 2
        query=Query.objects.get(qid="q2"),
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(chunk),
        grade=2,
    )
    changed = client.get(url, params).context["summary"]
    before = again.context["summary"]
    assert changed["percent_agreement"] > before["percent_agreement"]
    reference = expected(["anna", "arno"], {**GRADES, ("q2", 4): (2, 2, 3)})
    assert changed["percent_agreement"] == pytest.approx(reference["percent_agreement"])
    assert changed["krippendorff_alpha"] == pytest.approx(reference["krippendorff_alpha"])
