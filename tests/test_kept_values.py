"""A new process reads the runs' per-query values and intervals that a process derived
from the same label file, and evaluates again only the queries changed since: the same
values and intervals, bit for bit, as evaluating everything (evaluating 20 runs of 10,000
queries was most of a dashboard's first second after a restart)."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from metrics import evaluation
from metrics import label_state as label_state_module
from metrics.evaluation import evaluate_run, load_gold
from metrics.models import Run
from metrics.rankings import cache
from tests import test_metrics_views
from tests.test_label_state_file import project_data

__all__ = ["project_data"]  # the fixture: a small project, its own folder of files

pytestmark = pytest.mark.django_db
MEASURES = ["nDCG@3", "P@2", "num_rel_ret"]
bench = test_metrics_views.bench  # the shared fixture


@pytest.fixture
def evaluated(monkeypatch):
    """The query keys each evaluation was asked for."""
    asked = []
    real = evaluation.evaluate_index

    def counting(*args, query_keys, **kwargs):
        asked.append(np.asarray(query_keys).tolist())
        return real(*args, query_keys=query_keys, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate_index", counting)
    return asked


def _scores(project):
    run = Run.objects.get(project=project)
    scores = evaluate_run(run, load_gold(project, "documents"), MEASURES)
    return {n: v.tolist() for n, v in scores.values.items()}, scores.intervals


def _everything(project):
    """What a process with no files and nothing in memory computes."""
    cache.clear()
    for path in label_state_module.kept_files.folder().glob("*.npy"):
        path.unlink()
    return _scores(project)


def _label(data, query, document, grade):
    change_label(
        query=data["queries"][query],
        annotator=data["owner"],
        evidence=Evidence.for_document(data["documents"][document]),
        grade=grade,
    )


def test_a_new_process_reads_the_values_instead_of_evaluating(project_data, evaluated):
    project = project_data["project"]
    first = _scores(project)
    assert evaluated and list(label_state_module.kept_files.folder().glob("values.*.npy"))
    cache.clear()
    evaluated.clear()
    again = _scores(project)
    assert evaluated == []
    assert label_state_module.label_state(project).step == 0  # the file's own labels
    assert again == first
    values = again[0]
    assert isinstance(values["num_rel_ret"][0], type(first[0]["num_rel_ret"][0]))


def test_after_changes_a_new_process_evaluates_only_the_changed_queries(
    project_data, evaluated, monkeypatch
):
    monkeypatch.setattr(label_state_module, "KEEP_AGAIN_SHARE", 1.0)
    project = project_data["project"]
    _scores(project)
    _label(project_data, 1, 3, 3)
    _label(project_data, 1, 0, None)
    cache.clear()
    evaluated.clear()
    got = _scores(project)
    assert evaluated == [[project_data["queries"][1].pk]]
    assert got == _everything(project)


def test_many_changes_start_a_new_label_file_and_new_values(project_data, evaluated):
    project = project_data["project"]
    _scores(project)
    assert len(list(label_state_module.kept_files.folder().glob("labels.*.npy"))) == 1
    old_version = label_state_module._read_kept(project, ("k",)).version
    _label(project_data, 0, 3, 2)  # one query of two: past a quarter
    cache.clear()
    evaluated.clear()
    got = _scores(project)
    assert len(evaluated) == 1 and len(evaluated[0]) == 2  # everything, once
    assert label_state_module._read_kept(project, ("k",)).version != old_version
    values_files = list(label_state_module.kept_files.folder().glob("values.*.npy"))
    assert len(values_files) == 1  # the older version's values deleted
    assert got == _everything(project)


def test_a_damaged_values_file_is_evaluated_again(project_data, evaluated):
    project = project_data["project"]
    first = _scores(project)
    (path,) = label_state_module.kept_files.folder().glob("values.*.npy")
    data = bytearray(path.read_bytes())
    data[-40] ^= 0xFF
    path.write_bytes(bytes(data))
    cache.clear()
    evaluated.clear()
    assert _scores(project) == first
    assert evaluated


def test_coverage_is_read_back_and_brought_up_to_date_the_same_way(project_data, monkeypatch):
    from metrics import coverage as coverage_module

    monkeypatch.setattr(label_state_module, "KEEP_AGAIN_SHARE", 1.0)
    asked = []
    real = coverage_module._shares

    def counting(run, gold, k, query_pks, *args):
        asked.append(query_pks.tolist())
        return real(run, gold, k, query_pks, *args)

    monkeypatch.setattr(coverage_module, "_shares", counting)
    project = project_data["project"]
    run = Run.objects.get(project=project)

    def shares():
        per_query = coverage_module.run_coverage(run, load_gold(project, "documents"), 3).per_query
        return {name: values.tolist() for name, values in per_query.items()}

    first = shares()
    cache.clear()
    asked.clear()
    assert shares() == first and asked == []
    _label(project_data, 0, 3, 3)
    cache.clear()
    asked.clear()
    got = shares()
    assert asked == [[project_data["queries"][0].pk]]
    cache.clear()
    for path in label_state_module.kept_files.folder().glob("*.npy"):
        path.unlink()
    assert got == shares()


def test_coverage_behind_the_labels_maps_the_changed_queries_labels_alone(
    project_data, monkeypatch
):
    """A new process whose coverage file stands one query behind maps that query's
    labels to find what each source judged, not every label (then the same shares)."""
    from metrics import coverage as coverage_module

    monkeypatch.setattr(label_state_module, "KEEP_AGAIN_SHARE", 1.0)
    mapped = []
    real = coverage_module._judged

    def counting(gold, labels, width):
        mapped.append(sorted(set(labels.query.tolist())))
        return real(gold, labels, width)

    monkeypatch.setattr(coverage_module, "_judged", counting)
    project = project_data["project"]
    runs = list(Run.objects.filter(project=project))

    def shares():
        gold = load_gold(project, "documents")
        return [
            {n: v.tolist() for n, v in coverage_module.run_coverage(run, gold, 3).per_query.items()}
            for run in runs
        ]

    shares()  # the coverage file, at the label file's version
    _label(project_data, 1, 2, 2)
    cache.clear()
    mapped.clear()
    got = shares()
    assert mapped == [[project_data["queries"][1].pk]]  # once for every run, that query alone
    cache.clear()
    for path in label_state_module.kept_files.folder().glob("*.npy"):
        path.unlink()
    assert got == shares()
    assert len(mapped[-1]) > 1  # from scratch: every labelled query's labels


def test_fragmentation_is_read_back_and_brought_up_to_date_per_query(
    bench, personas, monkeypatch, tmp_path, settings
):
    """The fragmentation figures' per-query counts come back from their file in a new
    process, and after label changes only the changed queries' evidence is mapped again,
    in a new process as in a warm one. Before, a new process behind the live labels mapped
    every label onto every chunk (1.6–2.5 s first renders at 4.5 million chunks)."""
    from metrics import reports
    from metrics.evaluation import evaluation_setting

    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    monkeypatch.setattr(label_state_module, "KEEP_AGAIN_SHARE", 1.0)
    cache.clear()
    counted = []  # the queries whose evidence each count mapped

    def counting(*args, **kwargs):
        counted.append(sorted(set(np.asarray(kwargs["query"]).tolist())))
        return real(*args, **kwargs)

    real = reports.fragmentation_counts
    monkeypatch.setattr(reports, "fragmentation_counts", counting)
    run, queries = bench["runs"][0], bench["queries"]

    def diagnostics():
        return reports.diagnostics(run, evaluation_setting(run.project, level="halves", k=3))

    def from_scratch():
        cache.clear()
        for path in tmp_path.glob("*.npy"):
            path.unlink()
        return diagnostics()

    first = diagnostics()
    assert counted == [sorted(q.pk for q in queries)]
    cache.clear()  # a new process: the counts from the file, nothing mapped
    assert diagnostics() == first and len(counted) == 1

    def relabel(query, chunk, grade):
        change_label(
            query=queries[query],
            annotator=personas["annotator"],
            evidence=Evidence.for_chunk(bench["chunks"][chunk]),
            grade=grade,
        )

    relabel(0, 11, 3)
    cache.clear()  # a new process behind the labels: query 0 alone is mapped again
    after_one = diagnostics()
    assert counted[1:] == [[queries[0].pk]]
    assert after_one == from_scratch()
    del counted[:]
    relabel(2, 3, 1)  # a warm process: query 2 alone
    after_two = diagnostics()
    assert counted == [[queries[2].pk]]
    assert after_two == from_scratch()


def test_resample_weights_come_back_from_their_file_bit_for_bit(settings, tmp_path, monkeypatch):
    from metrics import score_cache
    from numerics import significance

    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    cache.clear()
    significance._resample_weights.cache_clear()
    drawn = score_cache.kept_weights(300, 1000)
    assert np.array_equal(drawn, significance.resample_weights(300, 1000))
    cache.clear()
    monkeypatch.setattr(significance, "_resample_weights", lambda *a: pytest.fail("drawn again"))
    kept = score_cache.kept_weights(300, 1000)
    assert kept.dtype == np.float64 and np.array_equal(kept, drawn) and not kept.flags.writeable
    assert score_cache.kept_weights(0, 1000) is None
    assert score_cache.kept_weights(significance.WEIGHT_CELLS, 1000) is None
    monkeypatch.undo()
    for n in range(301, 301 + score_cache.WEIGHT_FILES + 2):  # only the newest files stay
        score_cache.kept_weights(n, 10)
    assert len(list(tmp_path.glob("weights.*.npy"))) == score_cache.WEIGHT_FILES
