from hypothesis import given
from hypothesis import strategies as st

from annotator.chunking import token_spans, window_spans


def test_english_tokens_are_words():
    starts, ends = token_spans("flow over  a wing .")
    assert [("flow over  a wing ."[s:e]) for s, e in zip(starts, ends, strict=True)] == [
        "flow",
        "over",
        "a",
        "wing",
        ".",
    ]


def test_chinese_tokens_are_characters_and_latin_runs_stay_whole():
    text = "被告人张某于2019年盗窃"
    starts, ends = token_spans(text)
    tokens = [text[s:e] for s, e in zip(starts, ends, strict=True)]
    assert tokens == ["被", "告", "人", "张", "某", "于", "2019", "年", "盗", "窃"]


def test_windows_with_overlap():
    text = "a b c d e f g"
    spans = window_spans(text, size=3, overlap=1)
    assert [text[s:e] for s, e in spans] == ["a b c", "c d e", "e f g"]


def test_last_window_reaches_the_end():
    text = "a b c d e"
    spans = window_spans(text, size=3, overlap=0)
    assert [text[s:e] for s, e in spans] == ["a b c", "c d e"]


def test_short_and_empty_texts():
    assert window_spans("only two", size=5, overlap=1) == [(0, 8)]
    assert window_spans("   ", size=5, overlap=1) == []


@given(
    st.text(alphabet=st.sampled_from(list("ab 中文\n。")), max_size=200),
    st.integers(1, 12),
    st.data(),
)
def test_windows_cover_every_token_and_respect_size(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    spans = window_spans(text, size, overlap)
    starts, ends = token_spans(text)
    covered = set()
    for s, e in spans:
        inside = [i for i in range(len(starts)) if starts[i] >= s and ends[i] <= e]
        assert 1 <= len(inside) <= size
        assert text[s:e] == text[s:e].strip()
        covered.update(inside)
    assert covered == set(range(len(starts)))
    assert spans == sorted(spans)


def test_windows_can_stop_at_page_breaks():
    text = "a b c\n\nd e"
    plain = window_spans(text, size=4, overlap=1)
    assert [text[s:e] for s, e in plain] == ["a b c\n\nd", "b c\n\nd e"]
    pages = [0, text.index("d")]
    spans = window_spans(text, size=4, overlap=1, page_starts=pages)
    assert [text[s:e] for s, e in spans] == ["a b c", "d e"]


@given(
    st.lists(st.text(alphabet=st.sampled_from(list("ab 中\n")), max_size=40), min_size=1),
    st.integers(1, 8),
    st.data(),
)
def test_page_windows_never_cross_a_page_and_cover_every_token(pages, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    text = "\n\n".join(pages)
    page_starts, offset = [], 0
    for page in pages:
        page_starts.append(offset)
        offset += len(page) + 2
    spans = window_spans(text, size, overlap, page_starts=page_starts)
    bounds = [*page_starts, len(text)]
    for start, end in spans:
        page = max(i for i, first in enumerate(page_starts) if first <= start)
        assert end <= bounds[page + 1], "a chunk crosses a page break"
    starts, ends = token_spans(text)
    covered = {i for s, e in spans for i in range(len(starts)) if s <= starts[i] and ends[i] <= e}
    assert covered == set(range(len(starts)))
