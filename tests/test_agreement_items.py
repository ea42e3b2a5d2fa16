"""Agreement's items are kept under the label version and, after label changes, read
again for the changed queries alone; whatever the way (same process, new process from the
file, or from scratch), the items and the report are the same, row for row."""

from __future__ import annotations

import random
from dataclasses import asdict

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.caches import cache
from annotator.sources import PEOPLE, resolve_sources
from gold import agreement_items as items_module
from gold.agreement import project_agreement
from gold.agreement_items import agreement_items
from gold.policy import resolve_mapping
from gold.units import level_units
from tests.test_disputes_file import label, label_reads, project_data, random_change  # noqa: F401

pytestmark = pytest.mark.django_db

LEVEL = "documents"
NAMES = ["anna", "arno", "olga"]


def items_of(project, *, new_process=False):
    """The items of the three people, and the judgment reads they took."""
    if new_process:
        cache.clear()  # what a new process starts with: nothing in memory, the files stay
    units = level_units(project, LEVEL)
    mapping = resolve_mapping(project, None, None)
    sources = resolve_sources(project, (PEOPLE,))
    with CaptureQueriesContext(connection) as captured:
        items = agreement_items(project, units, mapping, NAMES, sources)
    return items, label_reads(captured)


def from_scratch(project, folder):
    cache.clear()
    for path in folder.glob(f"{items_module.KIND}.*"):
        path.unlink()
    items, _reads = items_of(project)
    report = asdict(project_agreement(project, LEVEL))
    cache.clear()
    return items, report


def same(a, b) -> bool:
    return a.annotators == b.annotators and all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a.arrays, b.arrays, strict=True)
    )


def test_after_a_change_only_the_changed_query_is_read_again(project_data, tmp_path):  # noqa: F811
    project = project_data["project"]
    q0, q1 = project_data["queries"]
    first, reads = items_of(project)
    assert reads and first.annotators == ["anna", "olga"] and first.query.size == 12
    again, reads = items_of(project, new_process=True)
    assert reads == [] and same(again, first)  # from the file
    label(project_data, "arno", q1, project_data["documents"][3], 2)  # a new annotator
    changed, reads = items_of(project)
    assert len(reads) == 1 and f'"query_id" IN ({q1.pk})' in reads[0]
    assert changed.annotators == NAMES
    label(project_data, "olga", q0, project_data["documents"][0], None)  # a label removed
    # A new process starts from the file (kept at the first read) and catches up on both.
    changed, reads = items_of(project, new_process=True)
    assert len(reads) == 1 and f'"query_id" IN ({q0.pk}, {q1.pk})' in reads[0]
    assert same(changed, from_scratch(project, tmp_path)[0])


@pytest.mark.parametrize("seed", range(4))
def test_any_sequence_of_changes_gives_the_items_and_report_from_scratch(
    project_data,  # noqa: F811
    tmp_path,
    seed,
):
    """Labels given, changed and removed (an annotator's last label too), adjudications
    (which agreement leaves out), read in the same process or a new one after each."""
    chance = random.Random(seed)
    project = project_data["project"]
    for _step in range(14):
        random_change(chance, project_data, adjudicated=0.15, grades=[None, 0, 1, 2, 3])
        new_process = chance.random() < 0.5
        items, _reads = items_of(project, new_process=new_process)
        if new_process:
            cache.clear()  # the report too, from the items file
        report = asdict(project_agreement(project, LEVEL))
        expected_items, expected_report = from_scratch(project, tmp_path)
        assert same(items, expected_items)
        assert report == expected_report
        items_of(project)  # what later steps start from


def test_item_files_of_deleted_projects_are_pruned(project_data):  # noqa: F811
    project = project_data["project"]
    items_of(project)
    assert items_module.prune() == 0
    project.delete()
    assert items_module.prune() == 1


def test_an_annotator_whose_last_label_goes_is_no_longer_compared(project_data, tmp_path):  # noqa: F811
    project = project_data["project"]
    query, document = project_data["queries"][0], project_data["documents"][3]
    items_of(project)
    label(project_data, "arno", query, document, 2)
    assert items_of(project)[0].annotators == NAMES
    label(project_data, "arno", query, document, None)
    items, _reads = items_of(project)
    assert items.annotators == ["anna", "olga"]
    assert same(items, from_scratch(project, tmp_path)[0])
