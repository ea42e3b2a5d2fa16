"""Document readers without Django: the PDF text clean-up keeps an exact index, zip names."""

from __future__ import annotations

import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from formats import FileRejected
from formats.documents.archive import ArchiveLimits, unpack
from formats.documents.extract import clean
from formats.documents.pdf import clean_with_index

RAW = st.text(alphabet=st.sampled_from(list("ab 中\r\n\t\x00\x02\x0c\x7f\ufffe𠀋")), max_size=80)


@given(RAW)
def test_stored_text_and_box_index_agree_for_any_pdfium_text(raw):
    """The text stored for a page and the text the boxes are looked up in are the same,
    and each stored character points at the PDFium character it came from."""
    text, index = clean_with_index(raw)
    assert text == clean(raw.replace("\x02", "-"))
    assert len(index) == len(text) and index == sorted(set(index))
    for char, at in zip(text, index, strict=True):
        source = raw[at]
        assert char == source or (char, source) in {("\n", "\r"), ("-", "\x02")}


def test_zip_limits_on_member_count_and_total_size(tmp_path):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(3):
            archive.writestr(f"{i}.txt", "x" * 100)
    with pytest.raises(FileRejected) as raised:
        unpack(path, "many.zip", tmp_path, ArchiveLimits(max_members=2))
    assert raised.value.errors == ["many.zip: 3 files, over the limit of 2"]
    with pytest.raises(FileRejected) as raised:
        unpack(path, "many.zip", tmp_path, ArchiveLimits(max_unpacked_bytes=250))
    assert raised.value.errors == [
        "many.zip: unpacks to 300 bytes, over the limit of 250 (a zip bomb?)"
    ]
    assert [name for name, _ in unpack(path, "many.zip", tmp_path)] == ["0.txt", "1.txt", "2.txt"]
