"""A level's units are kept per process while they stay the same: a dashboard reads no
document or chunk row until one is added, deleted or a document replaced in place."""

from __future__ import annotations

import hypothesis
import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from annotator.models import Chunk, Chunking, Document
from gold.units import DOCUMENTS, PAGES, level_units, units_for_level
from metrics.rankings import unit_codes
from numerics.id_order import byte_order_codes

pytestmark = pytest.mark.django_db


def _reads(project, level, table: str) -> tuple:
    with CaptureQueriesContext(connection) as captured:
        units = level_units(project, level)
    return units, sum(f'FROM "{table}"' in q["sql"] for q in captured)


def _same(a, b) -> bool:
    return a.fingerprint == b.fingerprint


@pytest.mark.parametrize("level", [DOCUMENTS, PAGES])
def test_document_units_are_read_again_only_when_documents_change(personas, level):
    project = personas["project"]
    first = Document.objects.create(project=project, doc_id="a", text="x" * 10)
    Document.objects.create(project=project, doc_id="b", text="y" * 20)
    level_units(project, level)
    units, reads = _reads(project, level, "annotator_document")
    assert reads == 0 and _same(units, units_for_level(project, level))
    Document.objects.create(project=project, doc_id="c", text="z" * 5)  # added
    units, reads = _reads(project, level, "annotator_document")
    assert reads == 1 and list(units.ids) == list(units_for_level(project, level).ids)
    first.text = "x" * 99  # replaced in place
    first.page_starts = [0, 50]
    first.save()
    units, reads = _reads(project, level, "annotator_document")
    assert reads == 1 and _same(units, units_for_level(project, level))
    assert int(units.end.max()) == 99
    first.delete()  # deleted (one added beside it: the count alone would not tell)
    Document.objects.create(project=project, doc_id="d", text="w")
    units, reads = _reads(project, level, "annotator_document")
    assert reads == 1 and _same(units, units_for_level(project, level))
    assert "a" not in {i.split("#")[0] for i in units.ids}


def test_chunk_units_are_read_again_only_when_chunks_change(personas):
    project = personas["project"]
    document = Document.objects.create(project=project, doc_id="a", text="x" * 30)
    chunking = Chunking.objects.create(project=project, name="c")
    Chunk.objects.create(chunking=chunking, chunk_id="a#0", document=document, start=0, end=10)
    level_units(project, "c")
    units, reads = _reads(project, "c", "annotator_chunk")
    assert reads == 0 and list(units.ids) == ["a#0"]
    added = Chunk.objects.create(
        chunking=chunking, chunk_id="a#1", document=document, start=10, end=20
    )
    units, reads = _reads(project, "c", "annotator_chunk")
    assert reads == 1 and list(units.ids) == ["a#0", "a#1"]
    added.delete()
    Chunk.objects.create(chunking=chunking, chunk_id="a#2", document=document, start=20, end=30)
    units, _n = _reads(project, "c", "annotator_chunk")
    assert list(units.ids) == ["a#0", "a#2"]
    with pytest.raises(ValueError):
        level_units(project, "no-such-chunking")


def _new_process():
    """What a new process starts with: nothing kept in memory (the files stay)."""
    from annotator.caches import cache

    cache.clear()


def _unit_files(settings, project):
    return sorted(settings.ASSAY_RUN_INDEX_DIR.glob(f"units.*.{project.pk}.*.npy"))


@pytest.mark.parametrize("level", [DOCUMENTS, PAGES, "c"])
def test_a_new_process_reads_the_units_from_their_file_not_the_database(
    personas, settings, tmp_path, level, monkeypatch
):
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="c")
    for number, text in enumerate(["x" * 30, "第二页：机翼的升力。", "ü" * 7]):
        document = Document.objects.create(
            project=project, doc_id=f"文档-{number}.pdf", text=text, page_starts=[0, 3]
        )
        Chunk.objects.create(
            chunking=chunking, chunk_id=f"文档-{number}#0", document=document, start=0, end=3
        )
    table = "annotator_chunk" if level == "c" else "annotator_document"
    _new_process()
    written, reads = _reads(project, level, table)
    assert reads == 1 and len(_unit_files(settings, project)) == 1
    _new_process()
    sorted_ids = []
    monkeypatch.setattr("gold.units.byte_order_codes", lambda ids: sorted_ids.append(ids))
    units, reads = _reads(project, level, table)
    assert reads == 0  # from the file
    assert unit_codes(units).tolist() == byte_order_codes(list(written.ids)).tolist()
    assert sorted_ids == []  # the codes came from the file too
    assert _same(units, written) and _same(units, units_for_level(project, level))
    assert units.ids.dtype == object and list(units.ids) == list(written.ids)


def test_a_changed_level_writes_a_new_file_and_drops_the_old_one(personas, settings, tmp_path):
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    project = personas["project"]
    Document.objects.create(project=project, doc_id="a", text="x" * 10)
    _new_process()
    level_units(project, DOCUMENTS)
    (old,) = _unit_files(settings, project)
    Document.objects.create(project=project, doc_id="b", text="y" * 20)
    _new_process()
    units, reads = _reads(project, DOCUMENTS, "annotator_document")
    assert reads == 1 and list(units.ids) == ["a", "b"]
    (new,) = _unit_files(settings, project)
    assert new != old


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: b"not numpy at all",
        lambda data: data.replace(b"<i8", b"<f8", 1),  # the lengths as floats
    ],
)
def test_a_broken_units_file_is_read_from_the_database_and_written_again(
    personas, settings, tmp_path, damage
):
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    project = personas["project"]
    Document.objects.create(project=project, doc_id="a", text="x" * 10)
    Document.objects.create(project=project, doc_id="é", text="y" * 20)
    _new_process()
    level_units(project, DOCUMENTS)
    (path,) = _unit_files(settings, project)
    path.write_bytes(damage(path.read_bytes()))
    _new_process()
    units, reads = _reads(project, DOCUMENTS, "annotator_document")
    assert reads == 1 and _same(units, units_for_level(project, DOCUMENTS))
    _new_process()
    units, reads = _reads(project, DOCUMENTS, "annotator_document")
    assert reads == 0 and list(units.ids) == ["a", "é"]


@given(st.lists(st.text(max_size=12), max_size=40))
def test_units_come_back_from_their_arrays_unchanged(ids):
    from gold.kept_units import _arrays_of, _units_of
    from gold.units import Units

    n = len(ids)
    id_array = np.empty(n, dtype=object)
    id_array[:] = ids
    spans = [np.arange(n, dtype=np.int64) * k for k in (1, 2, 3, 4)]
    units = Units("c", id_array, *spans)
    back = _units_of("c", _arrays_of(units))
    assert back is not None and list(back.ids) == ids
    # Taken from the file, not derived again: the same as the units derive.
    assert {"codes", "fingerprint"} <= set(back.__dict__)
    assert back.fingerprint == units.fingerprint
    assert back.codes.tolist() == byte_order_codes(ids).tolist()


@pytest.mark.parametrize(
    "codes",
    [[0, 0, 1], [0, 1, 3], [-1, 0, 1], [0, 1]],  # a repeat, out of range, negative, short
)
def test_a_units_file_whose_codes_are_not_a_permutation_is_not_used(codes):
    from gold.kept_units import _arrays_of, _units_of
    from gold.units import Units

    ids = np.array(["b", "a", "c"], dtype=object)
    units = Units("c", ids, *[np.arange(3, dtype=np.int64)] * 4)
    arrays = _arrays_of(units)
    assert _units_of("c", arrays) is not None
    assert _units_of("c", [*arrays[:-1], np.array(codes, dtype=np.int64)]) is None


def test_the_units_files_of_a_deleted_project_are_pruned(personas, settings, tmp_path):
    from gold import kept_units

    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    project, other = personas["project"], personas["other"]
    for owner in (project, other):
        Document.objects.create(project=owner, doc_id="a", text="x" * 10)
        level_units(owner, DOCUMENTS)
    assert kept_units.prune() == 0
    other.delete()
    assert kept_units.prune() == 1
    assert len(_unit_files(settings, project)) == 1 and not _unit_files(settings, other)


@given(st.lists(st.text(max_size=12), max_size=40))
def test_each_code_names_its_unit(ids):
    """``unit_of_code`` is the codes' inverse, for units derived and units read back from
    their file: the unit at each code's place is the one holding that code."""
    from gold.kept_units import _arrays_of, _units_of
    from gold.units import Units

    id_array = np.empty(len(ids), dtype=object)
    id_array[:] = ids
    units = Units("c", id_array, *[np.arange(len(ids), dtype=np.int64)] * 4)
    for kept in (units, _units_of("c", _arrays_of(units))):
        assert kept.unit_of_code[kept.codes].tolist() == list(range(len(ids)))
        assert not kept.unit_of_code.flags.writeable


@hypothesis.settings(max_examples=200, deadline=None)
@given(
    ids=st.lists(st.text(max_size=6), max_size=30),
    picks=st.lists(st.integers(-40, 40), max_size=6),
    data=st.data(),
)
def test_kept_ids_act_as_the_array_of_the_ids(ids, picks, data):
    """A units file's ids, decoded when asked for, answer every question a page or an
    export asks as the object array of the ids would, whether decoded yet or not."""
    from gold.kept_units import _arrays_of, _units_of
    from gold.units import Units

    n = len(ids)
    expected = np.empty(n, dtype=object)
    expected[:] = ids
    built = Units("c", expected, *[np.arange(n, dtype=np.int64)] * 4)
    kept = _units_of("c", _arrays_of(built)).ids
    assert len(kept) == kept.size == n and kept.shape == (n,)
    assert "_all" not in kept.__dict__  # nothing decoded by reading the file
    for i in picks:
        if -n <= i < n:
            assert kept[i] == expected[i] and kept[np.int64(i)] == expected[i]
        else:
            with pytest.raises(IndexError):
                kept[i]
    chosen = np.array(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=8)) if n else [])
    assert kept[chosen.astype(np.int64)].tolist() == expected[chosen.astype(np.int64)].tolist()
    probe = data.draw(st.sampled_from(ids) if ids else st.text(max_size=3))
    # Python's comparison: numpy's own drops trailing NULs of a str it compares with.
    assert (kept == probe).tolist() == [i == probe for i in ids]
    assert "_all" not in kept.__dict__  # a few ids and a search decode none of the others
    assert kept[1:4].tolist() == expected[1:4].tolist()
    mask = np.arange(n) % 2 == 0
    assert kept[mask].tolist() == expected[mask].tolist()
    assert kept.tolist() == ids and list(kept) == ids
    assert np.asarray(kept).tolist() == ids  # decoded now: compared the same way
    assert (kept == probe).tolist() == [i == probe for i in ids]


def test_kept_ids_read_one_by_one_past_a_sixteenth_are_decoded_at_once():
    """An export asks for every id one by one: past a sixteenth (at least 1,024) of them,
    all are decoded once instead, and the answers stay the same."""
    from gold.kept_units import _arrays_of, _units_of
    from gold.units import Units

    ids = np.array([f"doc-{i}#c{i % 5}" for i in range(3000)], dtype=object)
    kept = _units_of("c", _arrays_of(Units("c", ids, *[np.arange(3000, dtype=np.int64)] * 4))).ids
    assert [kept[i] for i in range(1024)] == ids[:1024].tolist()
    assert "_all" not in kept.__dict__
    assert [kept[i] for i in range(1024, 3000)] == ids[1024:].tolist()
    assert "_all" in kept.__dict__
