"""Run import: every format, every bad line reported by number, nothing written on error."""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotator.models import Chunk, Document, Query
from formats import FileRejected, LineErrors
from formats import trec as trec_reader
from metrics import run_rows
from metrics.models import Run
from metrics.run_import import import_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(personas, corpus):
    project = personas["project"]
    d2 = Document.objects.create(project=project, doc_id="d2", text="second document")
    Chunk.objects.create(chunking=corpus["chunking"], chunk_id="d2#0", document=d2, start=0, end=6)
    Query.objects.create(project=project, qid="q2", text="second")
    return project


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_trec_run_at_document_level(project, tmp_path):
    path = write(tmp_path, "r.run", "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.25 tag\nq2 Q0 d2 1 7 tag\n")
    run = import_run(project, path, name="r", parameters={"model": "bm25"})
    _query, item, score = run.get_results()
    assert run.level == "document" and run.n_results == 3 and run.n_queries == 2
    docs = dict(Document.objects.values_list("pk", "doc_id"))
    assert [docs[i] for i in item] == ["d1", "d2", "d2"]
    assert score.tolist() == [2.5, 1.25, 7.0]
    assert run.parameters == {"model": "bm25"}


def test_jsonl_run_over_chunks_with_and_without_scores(project, corpus, tmp_path):
    lines = [
        {"qid": "q1", "retrieved": ["d2#0", "d1#0"]},
        {"qid": "q2", "retrieved": ["d1#0"], "scores": [0.5]},
    ]
    path = write(tmp_path, "r.jsonl", "\n".join(json.dumps(x) for x in lines))
    run = import_run(project, path, name="r", chunking=corpus["chunking"])
    _query, _item, score = run.get_results()
    assert score.tolist() == [2.0, 1.0, 0.5]
    assert run.level == "chunk"


def test_bad_lines_are_all_reported_and_nothing_is_written(project, tmp_path):
    path = write(
        tmp_path,
        "bad.run",
        "\n".join(
            [
                "q1 Q0 d1 1 2.5 tag",
                "q1 Q0 d1 2",
                "q1 Q0 d2 2 high tag",
                "q9 Q0 d1 1 1 tag",
                "q1 Q0 d9 3 1 tag",
                "q1 Q0 d1 4 0.1 tag",
                "q1 Q0 d2 5 nan tag",
            ]
        ),
    )
    with pytest.raises(FileRejected) as failure:
        import_run(project, path, name="r")
    assert failure.value.errors == [
        "line 2: expected 6 columns 'qid Q0 docid rank score tag', found 4",
        "line 3: score 'high' is not a number",
        "line 4: unknown query id 'q9'",
        "line 5: unknown id 'd9'",
        "line 6: item 'd1' appears again for query 'q1' (first on line 1)",
        "line 7: score must be a finite number, not nan",
    ]
    assert Run.objects.count() == 0


def test_keep_known_drops_unknown_ids_and_counts_them(project, tmp_path):
    path = write(tmp_path, "r.run", "q1 Q0 d1 1 2 t\nq9 Q0 d1 1 1 t\nq1 Q0 d9 2 1 t\n")
    run = import_run(project, path, name="r", keep_known=True)
    assert run.n_results == 1 and run.n_dropped == 2
    assert run.dropped_summary["unknown_queries"] == {"results": 1, "ids": 1, "examples": ["q9"]}
    assert run.dropped_summary["unknown_items"]["examples"] == ["d9"]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "the file is empty"),
        (b"q1 Q0 d1 1 \xff\xfe 1 t\n", "the file is not UTF-8 text"),
        (b'{"qid": "q1", "retrieved": [\n', "line 1: malformed JSON"),
        (b"\n\n", "the file holds no results"),
    ],
)
def test_unreadable_files(project, tmp_path, content, message):
    name = "r.jsonl" if b"{" in content else "r.run"
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(FileRejected, match=message):
        import_run(project, path, name="r")
    assert Run.objects.count() == 0


def test_size_limit(project, tmp_path, settings):
    settings.ASSAY_MAX_UPLOAD_BYTES = 10
    path = write(tmp_path, "r.run", "q1 Q0 d1 1 2.5 tag\n")
    with pytest.raises(FileRejected, match="over the limit of 10 bytes"):
        import_run(project, path, name="r")
    assert Run.objects.count() == 0


def test_command_records_parameters_and_refuses_duplicates(project, tmp_path, corpus):
    path = write(tmp_path, "r.run", "q1 Q0 d1#0 1 2.5 tag\n")
    call_command(
        "import_run",
        "acme",
        str(path),
        "--name",
        "dense",
        "--chunking",
        "c256",
        "--param",
        "size=256",
        "--param",
        "model=e5",
    )
    run = Run.objects.get(name="dense")
    assert run.parameters == {"size": "256", "model": "e5"} and run.chunking == corpus["chunking"]
    with pytest.raises(CommandError, match="already exists"):
        call_command("import_run", "acme", str(path), "--name", "dense", "--chunking", "c256")
    with pytest.raises(CommandError, match="--param needs key=value"):
        call_command(
            "import_run", "acme", str(path), "--name", "x", "--documents", "--param", "oops"
        )
    # Chunk ids uploaded as a document run: refused with the chunking they belong to.
    with pytest.raises(CommandError, match=r"are in 'c256'.*--chunking c256"):
        call_command("import_run", "acme", str(path), "--name", "x", "--documents")
    assert Run.objects.count() == 1


def test_cranfield_run_imports_whole(personas, tmp_path):
    """The real public run: 225 queries × 50 results, ties included."""
    from pathlib import Path

    project = personas["project"]
    Document.objects.bulk_create(
        [Document(project=project, doc_id=str(i), text="x") for i in range(1, 1401)]
    )
    Query.objects.bulk_create([Query(project=project, qid=str(i), text="q") for i in range(1, 226)])
    path = Path(__file__).parent.parent / "data/demo/cranfield/runs/stevinjs_standard_boolean.run"
    run = import_run(project, path, name="boolean")
    assert (run.n_results, run.n_queries) == (11250, 225)
    assert np.isfinite(run.get_results()[2]).all()


@pytest.mark.parametrize("keep_known", [False, True])
def test_trec_files_read_fast_or_checked_get_the_same_checks(
    project, tmp_path, monkeypatch, keep_known
):
    text = "q1 Q0 d1 1 2.5 t\nq9 Q0 d1 1 1 t\nq1 Q0 d9 2 1 t\nq2 Q0 d2 1 7 t\nq9 Q0 d8 3 0.5 t\n"
    path = write(tmp_path, "r.run", text)
    pks = dict(Document.objects.values_list("doc_id", "pk"))
    rows = run_rows.read_rows(path, None, LineErrors(), {"q1": 1}, pks)
    assert isinstance(rows, run_rows.ColumnarRows)
    assert rows.lines(np.array([0, 4])).tolist() == [1, 5]
    outcomes = []
    for name in ("columnar", "checked"):
        if name == "checked":  # every block now takes the checked way
            monkeypatch.setattr(trec_reader, "_fast", lambda block, fmt: None)
            monkeypatch.setattr(trec_reader, "_normalised", lambda block, fmt: None)
        try:
            run = import_run(project, path, name=name, keep_known=keep_known)
        except FileRejected as failure:
            outcomes.append(failure.errors)
        else:
            results = [a.tolist() for a in run.get_results()]
            outcomes.append((run.n_results, run.n_dropped, run.dropped_summary, results))
    assert outcomes[0] == outcomes[1]
    if keep_known:
        assert outcomes[0][:3] == (
            2,
            3,
            {
                "unknown_queries": {"results": 2, "ids": 1, "examples": ["q9"]},
                "unknown_items": {"results": 1, "ids": 1, "examples": ["d9"]},
            },
        )
    else:
        assert outcomes[0] == [
            "line 2: unknown query id 'q9'",
            "line 3: unknown id 'd9'",
            "line 5: unknown query id 'q9'",
        ]


def test_a_repeated_result_in_a_regular_file_is_named_by_line(project, tmp_path):
    path = write(tmp_path, "r.run", "q1 Q0 d1 1 2.5 t\nq2 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n")
    with pytest.raises(FileRejected) as failure:
        import_run(project, path, name="r")
    assert failure.value.errors == [
        "line 3: item 'd1' appears again for query 'q1' (first on line 1)"
    ]
    assert Run.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_results_are_sorted_and_compressed_before_the_writing_transaction(project, tmp_path):
    """On SQLite a transaction takes the one writer lock at BEGIN: sorting and compressing
    a large run inside it made every label save wait seconds behind the import."""
    from django.db import connection

    inside = []
    store = Run.store_results

    def watched(run, *args, **kwargs):
        inside.append(connection.in_atomic_block)
        return store(run, *args, **kwargs)

    path = write(tmp_path, "r.run", "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.25 t\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Run, "store_results", watched)
        import_run(project, path, name="r")
        path = write(tmp_path, "r2.run", "q2 Q0 d2 1 7 t\n")
        import_run(project, path, name="r", replace=True)
    assert inside == [False, False]
    (run,) = Run.objects.filter(project=project, name="r")
    assert run.n_results == 1 and run.get_results()[2].tolist() == [7.0]
