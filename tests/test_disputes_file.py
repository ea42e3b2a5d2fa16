"""The adjudication queue's disputes are kept per process and in a file under the label
version they were derived at; after label changes only the queries the history names are
compared again (reading every label was most of the queue's first render at 500,000
labels). Whatever the way, the disputes are those a computation from scratch gives."""

from __future__ import annotations

import random

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.caches import cache
from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Membership, Role
from annotator.revisions import bump
from gold import disagreements as disagreements_module
from gold.disagreements import disagreements
from gold.services import adjudicate
from tests.test_label_revision import small_project

pytestmark = pytest.mark.django_db

LEVEL = "documents"


@pytest.fixture
def project_data(settings, tmp_path):
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    users = get_user_model().objects
    owner = users.create_user("olga", password="x")
    cache.clear()
    data = small_project("alpha", owner)
    data["people"] = [owner]
    for name in ("anna", "arno"):
        user = users.create_user(name, password="x")
        Membership.objects.create(project=data["project"], user=user, role=Role.ANNOTATOR)
        data["people"].append(user)
    for query in data["queries"]:  # anna disagrees with olga on every document
        for document, grade in zip(data["documents"][:3], (0, 2, 3), strict=True):
            label(data, "anna", query, document, grade)
    yield data
    cache.clear()


def label(data, name, query, document, grade):
    person = next(p for p in data["people"] if p.username == name)
    change_label(
        query=query, annotator=person, evidence=Evidence.for_document(document), grade=grade
    )


def adjudicate_document(data, query, document, grade):
    adjudicate(
        query=query,
        evidence=Evidence.for_document(document),
        grade=grade,
        reason="",
        adjudicator=data["owner"],
    )


def random_change(chance: random.Random, data, *, adjudicated: float, grades: list) -> None:
    """One label given, changed or removed (grade None), or one adjudication (with
    chance ``adjudicated``), on a random query and document."""
    query, document = chance.choice(data["queries"]), chance.choice(data["documents"])
    if chance.random() < adjudicated:
        adjudicate_document(data, query, document, chance.randrange(4))
    else:
        label(data, chance.choice(["olga", "anna", "arno"]), query, document, chance.choice(grades))


def rows(found) -> list[tuple]:
    return [(d.query_pk, d.qid, d.unit_id, d.grades, d.resolved) for d in found]


def label_reads(captured) -> list[str]:
    return [q["sql"] for q in captured if 'FROM "annotator_judgment"' in q["sql"]]


def read(project, *, new_process=False):
    """The disputes, and the judgment reads it took."""
    if new_process:
        cache.clear()  # what a new process starts with: nothing in memory, the files stay
    with CaptureQueriesContext(connection) as captured:
        found = disagreements(project, LEVEL)
    return found, label_reads(captured)


def from_scratch(project, folder):
    """The disputes computed with no memory and no file."""
    cache.clear()
    for path in folder.glob("disputes.*"):
        path.unlink()
    found = disagreements(project, LEVEL)
    cache.clear()
    return rows(found)


def test_a_new_process_reads_the_disputes_from_the_file(project_data, tmp_path):
    project = project_data["project"]
    first, reads = read(project)
    assert reads and len(first) == 6  # 2 queries x 3 documents
    assert len(list(tmp_path.glob("disputes.*.npy"))) == 1
    again, reads = read(project, new_process=True)
    assert reads == []
    assert rows(again) == rows(first)


def test_after_a_change_only_the_changed_query_is_compared_again(project_data, tmp_path):
    project = project_data["project"]
    q0, q1 = project_data["queries"]
    document = project_data["documents"][0]
    read(project)
    label(project_data, "anna", q1, document, 3)  # anna now agrees with olga there
    found, reads = read(project)  # the same process
    assert len(reads) == 1 and f"IN ({q1.pk})" in reads[0]
    assert len(found) == 5 and rows(found) == from_scratch(project, tmp_path)
    read(project)  # the file again, at this version
    label(project_data, "arno", q0, document, 1)
    found, reads = read(project, new_process=True)  # from the file, then q0 alone
    assert len(reads) == 1 and f"IN ({q0.pk})" in reads[0]
    assert rows(found) == from_scratch(project, tmp_path)


def test_an_adjudication_is_seen_from_the_file_too(project_data, tmp_path):
    project = project_data["project"]
    query, document = project_data["queries"][0], project_data["documents"][1]
    read(project)
    adjudicate_document(project_data, query, document, 2)
    found, _reads = read(project, new_process=True)
    resolved = [d for d in found if d.resolved is not None]
    assert [(d.query_pk, d.document_pk, d.resolved) for d in resolved] == [
        (query.pk, document.pk, 2)
    ]
    of_query = [d for d in found if d.query_pk == query.pk]
    assert of_query[-1] is resolved[0]  # after the open units of its query
    assert rows(found) == from_scratch(project, tmp_path)


def test_a_reset_revision_reads_every_label_again(project_data):
    project = project_data["project"]
    read(project)
    bump(project.pk, reset=True)  # a change the history does not explain
    _found, reads = read(project, new_process=True)
    assert len(reads) == 1 and '"query_id" IN (' not in reads[0]


def test_a_damaged_file_is_derived_again(project_data, tmp_path):
    project = project_data["project"]
    first, _reads = read(project)
    (path,) = tmp_path.glob("disputes.*.npy")
    data = bytearray(path.read_bytes())
    data[-20] ^= 0xFF
    path.write_bytes(bytes(data))
    again, reads = read(project, new_process=True)
    assert reads and rows(again) == rows(first)


def test_each_choice_has_its_own_file(project_data, tmp_path):
    project = project_data["project"]
    everyone = disagreements(project, LEVEL)
    two = disagreements(project, LEVEL, annotators=["anna", "olga"])
    spread = disagreements(project, LEVEL, rule="spread2")
    assert len(list(tmp_path.glob("disputes.*.npy"))) == 3
    cache.clear()
    assert rows(disagreements(project, LEVEL, rule="spread2")) == rows(spread)
    assert rows(disagreements(project, LEVEL, annotators=["anna", "olga"])) == rows(two)
    assert rows(disagreements(project, LEVEL)) == rows(everyone)
    assert disagreements_module.prune() == 0  # the project exists: its files stay
    project.delete()
    assert disagreements_module.prune() == 3


@pytest.mark.parametrize("seed", range(4))
def test_any_sequence_of_changes_gives_the_disputes_from_scratch(project_data, tmp_path, seed):
    """Random labels and adjudications, read in the same process or in a new one (from
    the file) after each: always the disputes a computation from scratch gives."""
    chance = random.Random(seed)
    project = project_data["project"]
    for _step in range(12):
        random_change(chance, project_data, adjudicated=0.2, grades=[0, 1, 2, 3])
        found, _reads = read(project, new_process=chance.random() < 0.5)
        assert rows(found) == from_scratch(project, tmp_path)
        read(project)  # what later steps start from: the file a full read wrote, or memory
