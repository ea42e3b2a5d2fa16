"""Nugget recall of runs on hand-made cases at chunk, page and document level and across two
chunkings — a span split across two chunks, a span covered only under any_overlap — and
the dashboard's figures equal to ``evaluate --nuggets`` on the exported files."""

from __future__ import annotations

import csv
import io
import json
from urllib.parse import urlencode

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from metrics.evaluation import evaluation_setting
from metrics.models import Run
from nuggets.changes import Span, create_nugget
from nuggets.evaluation import NuggetSetting
from numerics.mapping import MappingPolicy

pytestmark = pytest.mark.django_db

D1 = "a" * 100  # pages [0, 50) and [50, 100)
D2 = "b" * 60  # no pages


@pytest.fixture
def case(personas):
    project = personas["project"]
    d1 = Document.objects.create(project=project, doc_id="D1", text=D1, page_starts=[0, 50])
    d2 = Document.objects.create(project=project, doc_id="D2", text=D2)
    halves = Chunking.objects.create(project=project, name="halves")
    small = Chunking.objects.create(project=project, name="small")
    chunks = {}
    for chunking, doc, bounds in (
        (halves, d1, [0, 50, 100]),
        (halves, d2, [0, 30, 60]),
        (small, d1, [0, 25, 50, 75, 100]),
        (small, d2, [0, 20, 40, 60]),
    ):
        prefix = "" if chunking is halves else "S-"
        for i in range(len(bounds) - 1):
            cid = f"{prefix}{doc.doc_id}#{i}"
            chunks[cid] = Chunk.objects.create(
                chunking=chunking, chunk_id=cid, document=doc, start=bounds[i], end=bounds[i + 1]
            )
    q1, q2, q3 = (Query.objects.create(project=project, qid=q, text=q) for q in ("q1", "q2", "q3"))
    owner = personas["owner"]
    # q1: n1 (vital) split across both halves of D1 and both of its pages; n2 inside D2#0;
    # n3 split across D2#0 and D2#1 (3 of its 5 characters in D2#1), inside S-D2#1.
    create_nugget(q1, text="n1", importance="vital", evidence=[Span(d1, 40, 60)], changed_by=owner)
    create_nugget(q1, text="n2", importance="okay", evidence=[Span(d2, 5, 10)], changed_by=owner)
    create_nugget(q1, text="n3", importance="okay", evidence=[Span(d2, 28, 33)], changed_by=owner)
    create_nugget(q2, text="m1", importance="okay", evidence=[Span(d1, 80, 90)], changed_by=owner)
    for query in (q1, q2, q3):  # some gold, so that the dashboard measures the runs
        change_label(
            query=query,
            annotator=personas["annotator"],
            evidence=Evidence.for_document(d1),
            grade=2,
        )

    def run(name, chunking, ranking):
        query, item = [], []
        for q, ids in ranking.items():
            for unit in ids:
                query.append(q.pk)
                item.append(chunks[unit].pk if chunking else {"D1": d1, "D2": d2}[unit].pk)
        made = Run(
            project=project, name=name, level="chunk" if chunking else "document", chunking=chunking
        )
        made.set_results(np.array(query), np.array(item), -np.arange(len(query), dtype=float))
        made.save()
        return made

    return {
        "project": project,
        "A": run("A", halves, {q1: ["D1#1", "D2#1", "D1#0"], q2: ["D2#0", "D1#1"]}),
        "B": run("B", small, {q1: ["S-D2#1", "S-D1#1"], q2: ["S-D1#3"]}),
        "C": run("C", None, {q1: ["D2", "D1"], q2: ["D1"]}),
        **personas,
    }


def scores(case, run, level, k, mapping="any_overlap"):
    setting = evaluation_setting(
        case["project"], level=level, k=k, mapping=MappingPolicy.parse(mapping)
    )
    nuggets = NuggetSetting.of(case["project"], setting)
    found = nuggets.scores(case[run])
    return {name: found.values[name].tolist() for name in found.values}, found


def at(case, run, level, k, mapping="any_overlap"):
    values, _ = scores(case, run, level, k, mapping)
    return values[f"NuggetRecall@{k}"], values[f"NuggetRecall(vital)@{k}"]


def test_chunk_level_a_split_span_counts_when_either_half_is_in_the_top_k(case):
    # A ranks D1#1 first: it holds the second half of n1's span.
    recall, vital = at(case, "A", "halves", 1)
    assert recall == [pytest.approx(1 / 3), 0.0]  # q1: n1; q2: D2#0 holds nothing of m1
    assert vital[0] == 1.0 and np.isnan(vital[1])  # q2 has no vital nugget: left out
    recall, _vital = at(case, "A", "halves", 2)
    assert recall == [pytest.approx(2 / 3), 1.0]  # D2#1 holds 3 of n3's 5 characters


def test_a_span_covered_only_under_any_overlap(case):
    assert at(case, "A", "halves", 2, "contains")[0] == [0.0, 1.0]
    assert at(case, "A", "halves", 2, "evidence_overlap>=0.7")[0] == [0.0, 1.0]
    # 3 of n3's 5 characters (0.6) are in D2#1; n1's half (0.5) in D1#1.
    assert at(case, "A", "halves", 2, "evidence_overlap>=0.5")[0] == [pytest.approx(2 / 3), 1.0]


def test_two_chunkings_compared_by_the_facts_their_top_k_brings(case):
    # The small chunks hold n3 whole: covered at rank 1 even under "contains".
    assert at(case, "B", "small", 1, "contains")[0] == [pytest.approx(1 / 3), 1.0]
    assert at(case, "B", "small", 2)[0] == [pytest.approx(2 / 3), 1.0]
    setting = evaluation_setting(
        case["project"], level="own", k=2, mapping=MappingPolicy("contains")
    )
    nuggets = NuggetSetting.of(case["project"], setting)
    own = {name: nuggets.scores(case[name]) for name in ("A", "B", "C")}
    assert {n: s.level for n, s in own.items()} == {"A": "halves", "B": "small", "C": "documents"}
    assert own["A"].mean("NuggetRecall@2") == pytest.approx(0.5)  # (0 + 1) / 2
    assert own["B"].mean("NuggetRecall@2") == pytest.approx((1 / 3 + 1) / 2)
    assert own["C"].mean("NuggetRecall@2") == pytest.approx(1.0)


def test_page_and_document_level(case):
    # A at pages: D1#1 → D1#p2 (first), D2#1 → D2#p1, D1#0 → D1#p1.
    assert at(case, "A", "pages", 1)[0] == [pytest.approx(1 / 3), 0.0]
    assert at(case, "A", "pages", 2)[0] == [1.0, 1.0]  # D2's one page covers n2 and n3
    assert at(case, "A", "pages", 2, "contains")[0] == [pytest.approx(2 / 3), 1.0]
    assert at(case, "C", "documents", 1)[0] == [pytest.approx(2 / 3), 1.0]
    assert at(case, "C", "documents", 1)[1][0] == 0.0  # the vital n1 is in D1, at rank 2
    assert at(case, "C", "documents", 2) == ([1.0, 1.0], [1.0, pytest.approx(np.nan, nan_ok=True)])


def test_the_dashboard_equals_evaluate_nuggets_on_the_exported_files(case, login, tmp_path):
    client = login(case["viewer"])
    params = {"level": "own", "k": 2, "mapping": "any_overlap"}
    response = client.get(reverse("metrics:dashboard", args=["acme"]) + "?" + urlencode(params))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="nugget-table"' in body and "Nugget recall over 2 of 3 queries" in body
    section = next(s.context for s in response.context["sections"] if "names" in s.context)
    assert len(section["rows"]) == 3
    for row in section["rows"]:
        run, level = row["run"], row["level"]
        run_file = client.get(
            reverse("metrics:run_file", args=["acme", run.pk]) + "?" + urlencode(params)
        )
        (tmp_path / "run.trec").write_bytes(run_file.content)
        for fmt, suffix in (("jsonl", "jsonl"), ("ndeval", "qrels")):
            nuggets = tmp_path / f"nuggets.{suffix}"
            call_command(
                "export_nuggets", "acme", "--format", fmt, "--level", level, "-o", str(nuggets)
            )
            names = [c["name"] for c in row["cells"]]
            if fmt == "ndeval":  # ndeval's file names covered nuggets only: the diversity ones
                names = [n for n in names if not n.startswith("NuggetRecall")]
            out, err = io.StringIO(), io.StringIO()
            call_command(
                "evaluate",
                str(nuggets),
                str(tmp_path / "run.trec"),
                "--json",
                "--nuggets",
                str(nuggets),
                *[a for n in names for a in ("-m", n)],
                stdout=out,
                stderr=err,
            )
            expected = json.loads(out.getvalue())["mean"]
            # The queries left out (no nuggets, or no vital nugget) are counted.
            if fmt == "jsonl":
                said = err.getvalue()
                assert "NuggetRecall@2: over 2 of 2 queries" in said
                assert "NuggetRecall(vital)@2: over 1 of 2 queries" in said
            for cell in row["cells"]:
                if cell["name"] in names:
                    assert cell["mean"] == pytest.approx(expected[cell["name"]], abs=1e-12), (
                        run.name,
                        fmt,
                        cell["name"],
                    )


def test_evaluate_counts_the_runs_queries_without_nuggets(tmp_path):
    """Files only: a run over q1–q3 against nuggets of q1 measures q1 and counts the rest."""
    (tmp_path / "run.trec").write_text(
        "q1 Q0 D1#0 1 3 r\nq1 Q0 D2#0 2 2 r\nq2 Q0 D1#0 1 1 r\nq3 Q0 D2#0 1 1 r\n"
    )
    (tmp_path / "nuggets.qrels").write_text("q1 n1 D2#0 1\nq1 n2 D9#0 1\n")
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "evaluate",
        str(tmp_path / "nuggets.qrels"),
        str(tmp_path / "run.trec"),
        "--nuggets",
        str(tmp_path / "nuggets.qrels"),
        "-m",
        "StRecall@1",
        "-m",
        "StRecall@2",
        stdout=out,
        stderr=err,
    )
    assert "StRecall@2: over 1 of 3 queries (those without nuggets left out)" in err.getvalue()
    lines = out.getvalue().split("\n")
    assert "StRecall@1\tall\t0.0000" in lines and "StRecall@2\tall\t0.5000" in lines


def test_the_drill_down_says_which_nuggets_are_covered_at_which_rank(case, login):
    client = login(case["owner"])
    url = reverse("metrics:run_query", args=["acme", case["A"].pk, "q1"])
    response = client.get(url + "?" + urlencode({"level": "halves", "k": 2}))
    section = next(s.context for s in response.context["sections"] if "items" in s.context)
    covered = {i["text"]: (i["first"], [h["unit"] for h in i["hits"]]) for i in section["items"]}
    assert covered == {"n1": (1, ["D1#1", "D1#0"]), "n2": (None, []), "n3": (2, ["D2#1"])}
    body = response.content.decode()
    assert 'id="nugget-coverage-table"' in body and 'data-first="1"' in body


def test_the_api_and_export_metrics_give_the_dashboards_figures(case, client, capsys):
    from api.models import ApiToken

    _token, secret = ApiToken.create_for(case["viewer"], "ci")
    url = reverse("api:run_metrics", args=["acme", case["A"].pk])
    answer = client.get(
        url, {"level": "halves", "k": 2}, HTTP_AUTHORIZATION=f"Bearer {secret}"
    ).json()
    nuggets = answer["nuggets"]
    assert (nuggets["level"], nuggets["queries"], nuggets["of"]) == ("halves", 2, 3)
    assert nuggets["mean"]["NuggetRecall@2"] == pytest.approx((2 / 3 + 1) / 2)
    assert nuggets["counted"]["NuggetRecall(vital)@2"] == 1
    assert nuggets["per_query"]["q2"]["NuggetRecall(vital)@2"] is None
    # ndeval's diversity measures over the nuggets come with them.
    assert {"StRecall@2", "alpha_nDCG@2", "ERR_IA@2"} <= set(nuggets["mean"])
    call_command("export_metrics", "acme", "--level", "halves", "--k", "2")
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    row = next(r for r in rows if r["run"] == "A")
    assert float(row["NuggetRecall@2"]) == pytest.approx((2 / 3 + 1) / 2)
    assert row["nugget queries"] == "2"
    assert float(row["alpha_nDCG@2"]) == pytest.approx(nuggets["mean"]["alpha_nDCG@2"])
    assert float(row["ERR_IA@2"]) == pytest.approx(nuggets["mean"]["ERR_IA@2"])


def test_figures_follow_a_change_of_the_nuggets_at_once(case):
    """Scores are kept per process, keyed by the nuggets' history: a change shows at once."""
    from nuggets.changes import edit_nugget
    from nuggets.models import Nugget

    assert at(case, "A", "halves", 1)[0][0] == pytest.approx(1 / 3)
    n2 = Nugget.objects.get(query__qid="q1", text="n2")
    d1 = Document.objects.get(doc_id="D1")
    edit_nugget(n2, changed_by=case["owner"], add=[Span(d1, 70, 75)])  # inside D1#1, rank 1
    assert at(case, "A", "halves", 1)[0][0] == pytest.approx(2 / 3)
    Nugget.objects.filter(pk=n2.pk).delete()  # no history row: the count tells
    assert at(case, "A", "halves", 1)[0][0] == pytest.approx(1 / 2)
