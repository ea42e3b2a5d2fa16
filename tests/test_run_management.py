"""Runs owners manage: rename and edit, archive and restore, delete (cache freed), filters
and grouping on the dashboard, series trends, and uploads that say what they dropped or
name the chunking the ids belong to."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator.importing import run_import
from annotator.models import Chunk, Chunking
from formats import FileRejected
from metrics.models import Run
from metrics.rankings import RUN_KEYS, cache
from metrics.run_import import import_run
from tests import test_metrics_views

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db


def test_owner_renames_and_edits_a_run(login, personas, bench):
    run = bench["runs"][0]
    client = login(personas["owner"])
    response = client.post(
        url("run_edit", run.pk),
        {
            "name": "dense-e5",
            "parameters": '{"model": "e5", "size": 256}',
            "tags": "candidate, reranker, candidate",
            "series": "nightly",
        },
    )
    assert response.status_code == 302
    run.refresh_from_db()
    assert (run.name, run.parameters, run.tags, run.series) == (
        "dense-e5",
        {"model": "e5", "size": 256},
        ["candidate", "reranker"],
        "nightly",
    )
    page = client.get(url("run_detail", run.pk, level="halves"))
    assert b'id="run-edit"' in page.content
    for bad in (
        {"name": "bm25"},
        {"name": "x", "parameters": "[1]"},
        {"name": "x", "parameters": "{"},
    ):
        assert client.post(url("run_edit", run.pk), bad).status_code == 400
    run.refresh_from_db()
    assert run.name == "dense-e5"


@pytest.mark.parametrize("persona", ["adjudicator", "annotator", "viewer"])
def test_only_owners_change_runs(login, personas, bench, persona):
    run = bench["runs"][0]
    client = login(personas[persona])
    assert client.post(url("run_edit", run.pk), {"name": "x"}).status_code == 403
    assert client.post(url("run_archive", run.pk), {"action": "archive"}).status_code == 403
    assert client.post(url("run_delete", run.pk), {"confirm": run.name}).status_code == 403
    assert b'id="run-edit"' not in client.get(url("run_detail", run.pk, level="halves")).content
    run.refresh_from_db()
    assert run.name == "dense <b>" and run.archived_at is None


def test_archive_hides_and_restore_returns(login, personas, bench):
    dense = bench["runs"][0]
    client = login(personas["owner"])
    assert client.post(url("run_archive", dense.pk), {"action": "archive"}).status_code == 302
    board = client.get(url("dashboard", level="halves"))
    assert [r["run"].name for r in board.context["rows"]] == ["bm25"]
    assert "1 archived run hidden" in board.content.decode()
    runs_page = client.get(url("runs")).content.decode()
    assert "dense &lt;b&gt;" in runs_page.split('id="archived-runs"')[1]
    assert client.post(url("run_archive", dense.pk), {"action": "restore"}).status_code == 302
    board = client.get(url("dashboard", level="halves"))
    assert [r["run"].name for r in board.context["rows"]] == ["bm25", "dense <b>"]
    assert client.post(url("run_archive", dense.pk), {"action": "x"}).status_code == 400


def test_delete_asks_then_deletes_and_frees_the_cache(login, personas, bench):
    run = bench["runs"][0]
    client = login(personas["owner"])
    client.get(url("dashboard", level="halves"))
    client.get(url("dashboard", level="documents"))
    assert any(key[0] in RUN_KEYS and key[1] == run.pk for key in cache._items)
    confirm = client.get(url("run_delete", run.pk))
    assert confirm.status_code == 200 and b'name="confirm"' in confirm.content
    assert client.post(url("run_delete", run.pk), {"confirm": "nope"}).status_code == 400
    assert Run.objects.filter(pk=run.pk).exists()
    assert client.post(url("run_delete", run.pk), {"confirm": run.name}).status_code == 302
    assert not Run.objects.filter(pk=run.pk).exists()
    assert not any(key[0] in RUN_KEYS and key[1] == run.pk for key in cache._items)


def test_filter_and_group_by_tag_and_parameter(login, personas, bench):
    dense, bm25 = bench["runs"]
    Run.objects.filter(pk=dense.pk).update(tags=["dense"], parameters={"model": "e5", "k": 6})
    Run.objects.filter(pk=bm25.pk).update(tags=["sparse"], parameters={"model": "bm25", "k": 6})
    client = login(personas["viewer"])
    tagged = client.get(url("dashboard", level="documents", run_tag="dense"))
    assert [r["run"].name for r in tagged.context["rows"]] == ["dense <b>"]
    by_param = client.get(url("dashboard", level="documents", param="model=bm25"))
    assert [r["run"].name for r in by_param.context["rows"]] == ["bm25"]
    assert client.get(url("dashboard", param="model")).status_code == 400
    grouped = client.get(url("dashboard", level="documents", group="model"))
    assert [r["group"] for r in grouped.context["rows"]] == ["bm25", "e5", "—"]
    body = grouped.content.decode()
    assert body.count('class="group-row"') == 3
    refresh = re.search(r'hx-get="([^"]+)"', body).group(1)
    assert "group=model" in refresh  # the refresh keeps the grouping


def test_series_trend_of_chosen_measures(login, personas, bench):
    dense, bm25 = bench["runs"]
    Run.objects.filter(pk__in=[dense.pk, bm25.pk]).update(series="nightly")
    client = login(personas["viewer"])
    page = client.get(url("series", series="nightly", level="halves", chart=["P@10", "MRR@10"]))
    assert page.status_code == 200
    svg = page.context["chart"]
    board = client.get(url("dashboard", level="halves")).context["rows"]
    means = {r["run"].pk: r["scores"].mean("P@10") for r in board}
    ordered = sorted([dense, bm25], key=lambda r: (r.created_at, r.pk))
    values = [float(v) for v in re.findall(r'data-measure="P@10" data-value="([^"]+)"', svg)]
    assert values == pytest.approx([means[r.pk] for r in ordered])
    assert svg.count('data-measure="MRR@10"') == 2 and 'class="tick"' in svg
    # A series name no run can hold is a bad parameter (PostgreSQL refused to compare it).
    assert client.get(url("series", series="night\x00ly", level="halves")).status_code == 400


def _write(tmp_path, lines):
    path = tmp_path / "run.trec"
    path.write_text("".join(f"{q} Q0 {i} 1 {s} t\n" for q, i, s in lines))
    return path


def test_upload_against_the_wrong_chunking_is_refused_with_a_hint(personas, bench, tmp_path):
    project = bench["project"]
    thirds = Chunking.objects.create(project=project, name="thirds")
    for doc in bench["docs"]:
        Chunk.objects.create(
            chunking=thirds, chunk_id=f"{doc.doc_id}/t0", document=doc, start=0, end=5
        )
    halves = Chunking.objects.get(name="halves")
    path = _write(tmp_path, [("q0", f"d{d}/t0", 6 - d) for d in range(6)])
    for keep_known in (False, True):
        with pytest.raises(FileRejected) as refused:
            import_run(project, path, name="x", chunking=halves, keep_known=keep_known)
        assert len(refused.value.errors) == 1
        assert (
            "'thirds'" in refused.value.errors[0] and "--chunking thirds" in refused.value.errors[0]
        )
    docs = _write(tmp_path, [("q0", f"d{d}", 6 - d) for d in range(6)])
    with pytest.raises(FileRejected) as refused:
        import_run(project, docs, name="x", chunking=halves)
    assert "--documents" in refused.value.errors[0]
    assert not Run.objects.filter(name="x").exists()


def test_keep_known_upload_says_how_many_lines_were_dropped(personas, bench, tmp_path):
    path = _write(
        tmp_path, [("q0", "d0#0", 3), ("q0", "d1#1", 2), ("q0", "nope", 1), ("q9", "d0#1", 1)]
    )
    result = run_import(
        "run",
        bench["project"],
        path,
        options={"name": "kk", "chunking": "halves", "keep_known": True},
    )
    assert result.created == 2 and "2 lines dropped" in result.detail


def test_import_page_shows_the_drop_count(login, personas, bench, tmp_path):
    from annotator import file_store
    from annotator.import_jobs import execute_job
    from annotator.models import ImportJob

    path = _write(tmp_path, [("q0", "d0#0", 3), ("q0", "nope", 1)])
    job = ImportJob.objects.create(
        project=bench["project"],
        kind="run",
        path=file_store.put(f"uploads/imports/{path.name}", path),
        filename="run.trec",
        size=path.stat().st_size,
        options={"name": "kk", "chunking": "halves", "keep_known": True},
        created_by=personas["owner"],
    )
    execute_job(job.pk)
    page = login(personas["owner"]).get(
        reverse("annotator:import_status", args=["acme", job.pk]), HTTP_HX_REQUEST="true"
    )
    assert "1 line dropped" in page.content.decode()


BAD_PARAMETERS = [
    '{"m": "\\udfff"}',  # a lone surrogate
    '{"m": NaN}',
    '{"m": Infinity}',
    '{"m": ' + "9" * 4301 + "}",  # over Python's 4,300 digits
    '{"m": "tab\\u0001"}',  # a control character
]


@pytest.mark.parametrize("parameters", BAD_PARAMETERS)
def test_unstorable_parameters_are_a_400_never_stored(login, personas, bench, parameters):
    from api.models import ApiToken

    run = bench["runs"][0]
    client = login(personas["owner"])
    edited = client.post(url("run_edit", run.pk), {"name": "x", "parameters": parameters})
    assert edited.status_code == 400
    run.refresh_from_db()
    assert run.name != "x" and run.parameters == {"k": 6}
    token = ApiToken.create_for(personas["owner"], "ci")[1]
    uploaded = client.post(
        reverse("api:upload_run", args=["acme"]),
        {
            "file": SimpleUploadedFile("r.trec", b"q1 Q0 d1 1 2.0 x\n"),
            "name": "api-run",
            "parameters": parameters,
        },
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert uploaded.status_code == 400 and not Run.objects.filter(name="api-run").exists()


def test_bad_parameters_stored_before_the_check_do_not_break_pages(login, personas, bench):
    """Rows written by older code: the Runs page, dashboard and export still answer."""
    from django.db import connection

    run = bench["runs"][0]
    stored = '{"huge": ' + "7" * 5000 + ', "ok": "e5"}'
    if connection.vendor == "sqlite":  # PostgreSQL's jsonb refuses lone surrogates itself
        stored = '{"huge": ' + "7" * 5000 + ', "ok": "e5", "bad": "\\udfff"}'
    with connection.cursor() as cursor:
        cursor.execute("UPDATE metrics_run SET parameters = %s WHERE id = %s", [stored, run.pk])
    run.refresh_from_db()
    assert run.parameters["ok"] == "e5" and run.parameters["huge"].startswith("7777")
    client = login(personas["owner"])
    for name, kwargs in (("runs", {}), ("dashboard", {}), ("export", {"format": "csv"})):
        answer = client.get(url(name, **kwargs))
        assert answer.status_code == 200, name
    assert client.get(url("run_detail", run.pk, level="halves")).status_code == 200
