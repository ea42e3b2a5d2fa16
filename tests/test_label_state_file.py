"""A new process reads a project's live labels from the file the last full read kept
(0.5 million labels took 0.7 s from the database on every first render) and re-reads only
the queries the history names since; a reset revision, or a file that does not hold
together, makes it read everything again. Whatever the way, the labels are the same."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Document
from gold.units import live_labels
from metrics import label_state as label_state_module
from metrics.label_state import label_state
from metrics.rankings import cache
from tests.test_label_revision import LABEL_TABLES, small_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project_data(settings, tmp_path):
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    owner = get_user_model().objects.create_user("olga", password="x")
    cache.clear()
    yield small_project("alpha", owner)
    cache.clear()


def _rows(labels) -> list[tuple]:
    """The labels as a sorted list of (query, annotator name, document, start, end, grade)."""
    names = [*labels.annotators, None]  # source -1: adjudicated
    columns = (labels.query, labels.source, labels.document, labels.start, labels.end)
    return sorted(
        (q, names[s], d, a, b, g)
        for q, s, d, a, b, g in zip(
            *(c.tolist() for c in columns), labels.grade.tolist(), strict=True
        )
    )


def _new_process_state(project):
    cache.clear()  # what a new process starts with: nothing in memory, the files stay
    with CaptureQueriesContext(connection) as captured:
        state = label_state(project)
    reads = [q["sql"] for q in captured if any(t in q["sql"] for t in LABEL_TABLES)]
    return state, [sql for sql in reads if '"grade"' in sql]


def test_a_new_process_reads_the_labels_from_the_file(project_data):
    project = project_data["project"]
    first, reads = _new_process_state(project)
    assert reads  # the first read of all: from the database
    assert list(label_state_module.kept_files.folder().glob("labels.*.npy"))
    again, reads = _new_process_state(project)
    assert reads == []
    assert _rows(again.labels) == _rows(first.labels) == _rows(live_labels(project, sources=None))
    assert again.version == first.version


def _label(data, annotator, document: int, grade) -> None:
    """``annotator``'s label of the second query on a document (None: removed)."""
    change_label(
        query=data["queries"][1],
        annotator=annotator,
        evidence=Evidence.for_document(data["documents"][document]),
        grade=grade,
    )


def test_a_new_process_reads_again_only_the_changed_queries(project_data):
    project, owner = project_data["project"], project_data["owner"]
    _new_process_state(project)
    query = project_data["queries"][1]
    other = get_user_model().objects.create_user("pia", password="x")
    for annotator, grade in ((owner, 2), (other, 1)):  # a new annotator among them
        _label(project_data, annotator, 3, grade)
    state, reads = _new_process_state(project)
    assert _rows(state.labels) == _rows(live_labels(project, sources=None))
    # Caught up and kept: the next new process reads nothing.
    state, reads = _new_process_state(project)
    assert reads == [] and _rows(state.labels) == _rows(live_labels(project, sources=None))
    _label(project_data, owner, 0, None)
    state, reads = _new_process_state(project)
    assert reads and all(f"= {query.pk}" in sql or "IN (" in sql for sql in reads), reads
    assert _rows(state.labels) == _rows(live_labels(project, sources=None))


def test_a_reset_or_a_damaged_file_reads_everything_again(project_data):
    project = project_data["project"]
    _new_process_state(project)
    Document.objects.filter(pk=project_data["documents"][0].pk).delete()  # a reset
    state, reads = _new_process_state(project)
    assert reads and all(f"{project.pk}" in sql for sql in reads)
    assert _rows(state.labels) == _rows(live_labels(project, sources=None))
    (path,) = label_state_module.kept_files.folder().glob("labels.*.npy")
    for damage in (lambda b: b[: len(b) // 2], lambda b: b[:-9] + b"\x00" * 9, lambda b: b""):
        path.write_bytes(damage(path.read_bytes()))
        state, reads = _new_process_state(project)
        assert reads and _rows(state.labels) == _rows(live_labels(project, sources=None))


def test_the_label_files_of_a_deleted_project_are_pruned(project_data):
    project = project_data["project"]
    other = small_project("beta", project_data["owner"])["project"]
    for each in (project, other):
        label_state(each)
    assert label_state_module.prune() == 0
    other.delete()
    assert label_state_module.prune() == 1
    (kept,) = label_state_module.kept_files.folder().glob("labels.*.npy")
    assert f".{project.pk}." in kept.name
    assert np.isfinite(label_state(project).labels.grade).all()
