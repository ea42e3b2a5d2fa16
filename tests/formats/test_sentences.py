"""The answer sentence splitter: Chinese punctuation without spaces, abbreviations, decimals,
line breaks — and, for any text, sentences that cover every character that is not space."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from formats.sentences import sentence_spans, split_sentences


def test_chinese_sentences_need_no_space():
    text = "被告人未办理许可证。滥伐林木13立方米！构成滥伐林木罪？是的……他走了。"
    assert split_sentences(text) == [
        "被告人未办理许可证。",
        "滥伐林木13立方米！",
        "构成滥伐林木罪？",
        "是的……",
        "他走了。",
    ]


def test_closing_quotes_stay_with_their_sentence():
    assert split_sentences("他说：“好。”然后离开。") == ["他说：“好。”", "然后离开。"]
    assert split_sentences('He said "yes." Then he left.') == ['He said "yes."', "Then he left."]


def test_english_abbreviations_initials_and_decimals_do_not_end_sentences():
    text = "Dr. Smith et al. measured 3.5 N at Mach 2. See e.g. the U.S. report! Really? Yes."
    assert split_sentences(text) == [
        "Dr. Smith et al. measured 3.5 N at Mach 2.",
        "See e.g. the U.S. report!",
        "Really?",
        "Yes.",
    ]


def test_a_lower_case_word_after_a_dot_continues_the_sentence():
    assert split_sentences("The lift is approx. the same. Next.") == [
        "The lift is approx. the same.",
        "Next.",
    ]


def test_line_breaks_end_sentences_and_blank_text_has_none():
    assert split_sentences("First item\n- second item\r\n\nThird. Fourth") == [
        "First item",
        "- second item",
        "Third.",
        "Fourth",
    ]
    assert split_sentences("") == [] and split_sentences(" \n\t ") == []


def test_half_width_punctuation_in_chinese_text():
    assert split_sentences("好!然后离开?是的") == ["好!", "然后离开?", "是的"]


@given(st.text(alphabet=st.sampled_from("ab 。.!?\n”…x3Z"), max_size=60))
def test_sentences_are_ordered_trimmed_and_cover_every_non_space_character(text):
    spans = sentence_spans(text)
    covered = set()
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        assert not text[start].isspace() and not text[end - 1].isspace()
        covered.update(range(start, end))
        previous_end = end
    assert {i for i, c in enumerate(text) if not c.isspace()} <= covered
