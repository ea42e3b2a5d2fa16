"""Run index files: a fresh process reads a run's index instead of building it, the
worker writes it after an import, and a file that is damaged or gone is built again."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from django.conf import settings
from django_tasks_db.models import DBTaskResult

from metrics import run_indexes
from metrics.evaluation import evaluate_run, level_units, load_gold, own_level
from metrics.models import Run
from metrics.rankings import cache
from metrics.run_import import import_run
from metrics.tasks import write_own_index
from tests import test_metrics_views

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db

MEASURES = ["nDCG@10", "MAP", "Rprec", "Bpref", "Judged@10", "P@5"]


@pytest.fixture(autouse=True)
def index_dir(settings, tmp_path):
    """Each test's own folder of index files."""
    settings.ASSAY_RUN_INDEX_DIR = tmp_path / "run-index"


def index_files(run: Run) -> list:
    """The run's index files (not its stored rows, ranking or top rows)."""
    return [
        p
        for p in run_files(run)
        if not p.name.endswith(("-stored.npy", ".ranked.npy")) and ".top" not in p.name
    ]


def run_files(run: Run) -> list:
    """The run's index files and its file of stored rows (the labelling pool's)."""
    return sorted(settings.ASSAY_RUN_INDEX_DIR.glob(f"*-{run.pk}-*.npy"))


def fresh_process() -> None:
    """What a new process starts with: nothing cached."""
    cache.clear()


def values(run: Run, level: str) -> dict[str, np.ndarray]:
    gold = load_gold(run.project, level)
    return evaluate_run(run, gold, MEASURES).values


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("level", ["halves", "documents"])
def test_a_fresh_process_reads_the_index_a_first_one_built(bench, monkeypatch, level):
    run = Run.objects.get(pk=bench["runs"][0].pk)
    fresh_process()
    built = values(run, level)  # built here, and its file written
    assert len(index_files(run)) == 1
    fresh_process()

    def refuse(*args, **kwargs):
        raise AssertionError("the index was built again instead of read")

    monkeypatch.setattr(run_indexes, "build", refuse)
    assert same(values(run, level), built)


def test_the_file_holds_the_index_as_built(bench):
    run = bench["runs"][1]
    units = level_units(run.project, "halves")
    fresh_process()
    run_indexes.run_index(run, units)
    kept = run_indexes.read(run_indexes.index_path(run, units), n_items=len(units.ids))
    built = run_indexes.build(run, units, cached=False)
    for name in (*run_indexes.FIELDS, "n_items"):
        assert np.array_equal(getattr(kept, name), getattr(built, name)), name


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(path.read_bytes()[:100]),  # cut short
        lambda path: path.write_bytes(b"not an index"),
        lambda path: path.write_bytes(path.read_bytes().replace(b"<i8", b"<f8", 1)),  # floats
    ],
)
def test_a_damaged_file_is_built_again_and_replaced(bench, caplog, damage):
    run = bench["runs"][0]
    fresh_process()
    expected = values(run, "halves")
    (path,) = index_files(run)
    damage(path)
    fresh_process()
    for kept in path.parent.glob("values.*.npy"):  # the run's values, so the index is read
        kept.unlink()
    with caplog.at_level(logging.WARNING, logger="metrics.run_indexes"):
        assert same(values(run, "halves"), expected)
    assert "building it again" in caplog.text
    units = level_units(run.project, "halves")
    assert run_indexes.read(path, n_items=len(units.ids)) is not None  # written anew


def test_a_file_that_does_not_fit_its_units_is_not_used(bench):
    run = bench["runs"][0]
    units = level_units(run.project, "halves")
    fresh_process()
    run_indexes.run_index(run, units)
    path = run_indexes.index_path(run, units)
    assert run_indexes.read(path, n_items=len(units.ids)) is not None
    assert run_indexes.read(path, n_items=len(units.ids) + 1) is None


def test_an_unwritable_folder_costs_the_file_not_the_dashboard(bench, settings, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    settings.ASSAY_RUN_INDEX_DIR = blocker / "run-index"  # below a file: cannot be made
    run = bench["runs"][0]
    fresh_process()
    with caplog.at_level(logging.WARNING, logger="metrics.run_indexes"):
        scores = values(run, "halves")
    assert scores["nDCG@10"].size and "not kept" in caplog.text


def test_an_import_queues_the_worker_that_writes_the_file_at_the_runs_own_units(
    bench, tmp_path, django_capture_on_commit_callbacks
):
    project = bench["project"]
    chunking = bench["chunks"][0].chunking
    path = tmp_path / "run.trec"
    path.write_text("q0 Q0 d0#0 1 2.0 r\nq0 Q0 d1#1 2 1.0 r\nq1 Q0 d2#0 1 1.5 r\n")
    queued = DBTaskResult.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        run = import_run(project, path, name="fresh", chunking=chunking)
    assert DBTaskResult.objects.count() == queued + 1
    assert DBTaskResult.objects.order_by("-enqueued_at").first().args_kwargs["args"] == [run.pk]
    assert index_files(run) == []
    fresh_process()
    assert write_own_index(run.pk)
    assert len(cache._items) == 0  # the worker keeps nothing in its own memory
    units = level_units(project, own_level(run))
    assert index_files(run) == [run_indexes.index_path(run, units)]
    # … its ranking (a drill-down's) and the file of stored rows the labelling pool reads
    assert len(run_files(run)) == 3
    assert not write_own_index(10**9)  # a run deleted before the worker came to it


def test_deleting_a_run_deletes_its_files_and_the_worker_prunes_runs_gone_otherwise(
    login, personas, bench
):
    first, second = bench["runs"]
    for run in (first, second):
        write_own_index(run.pk)
        assert len(index_files(run)) == 1
    client = login(personas["owner"])
    assert client.post(url("run_delete", first.pk), {"confirm": first.name}).status_code == 302
    assert run_files(first) == []
    Run.objects.filter(pk=second.pk).delete()  # gone without the delete page (a project)
    write_own_index(bench["doc_run"].pk)
    assert run_files(second) == [] and len(index_files(bench["doc_run"])) == 1


@pytest.mark.parametrize("level", ["halves", "documents", "pages"])
def test_a_rankings_file_gives_the_ranking_without_the_stored_results(bench, monkeypatch, level):
    from metrics.rankings import rank_at, ranked_run

    run = bench["runs"][0]
    units = level_units(run.project, level)
    expected = rank_at(run, units)
    fresh_process()
    ranked_run(run, units)  # computed for an index (say): no file written
    assert not [p for p in run_files(run) if p.name.endswith(".ranked.npy")]
    fresh_process()
    ranked_run(run, units, keep=True)  # a drill-down's: computed once, and its file written
    (path,) = [p for p in run_files(run) if p.name.endswith(".ranked.npy")]
    fresh_process()
    monkeypatch.setattr(Run, "get_results", lambda *a, **k: pytest.fail("stored results read"))
    got = ranked_run(run, units)
    for name in ("query", "bounds", "item", "score"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    monkeypatch.undo()
    path.write_bytes(path.read_bytes()[:-8] + b"\xff" * 8)  # damaged: ranked again
    fresh_process()
    again = ranked_run(run, units)
    assert np.array_equal(again.item, expected.item)
