"""The SQLite bigram index's tokens (``sqlite_tokens``, called by the triggers for every
document and chunk written) are exactly those of the plain definition: the hex of each
pair of adjacent characters of the lowercased text and of its last character, each once,
in the order they first occur."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.search_grams import grams, sqlite_tokens


def reference(text: str | None) -> str:
    """The definition, a string per position (what the triggers called before)."""
    digits = (text or "").lower().encode("utf-32-be").hex()
    return " ".join(dict.fromkeys(digits[i : i + 16] for i in range(0, len(digits), 8)))


MIXED = st.text(
    alphabet=st.one_of(
        st.sampled_from("机翼升力合同法规定违约方应当承担赔偿责任。，、？！《》"),
        st.sampled_from("AbcXyz İßΣς 0123 \t\n.,;:!?-_'\"()[]<>%&"),
        st.characters(min_codepoint=0x20000, max_codepoint=0x2A6DF),  # astral Han
        st.characters(exclude_categories=("Cs",)),  # anything but lone surrogates
    ),
    max_size=300,
)


@settings(max_examples=400, deadline=None)
@given(MIXED)
def test_tokens_equal_the_definition_on_mixed_text(text):
    assert sqlite_tokens(text) == reference(text)


def test_edge_texts():
    for text in (None, "", "a", "A", "ab", "aa", "aaaa", "abab", "机", "机翼", "ΑΣ", "İ", "𠀀𠀁"):
        assert sqlite_tokens(text) == reference(text), text
    # Each token is a gram of the text: eight hex digits a character.
    text = "The Wing, 机翼的升力。"
    decoded = {bytes.fromhex(t).decode("utf-32-be") for t in sqlite_tokens(text).split(" ")}
    assert decoded == grams(text)
