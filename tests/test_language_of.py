"""``judges.prompts.language_of`` counts in C what its definition counts character by
character: the same answer on any text."""

from hypothesis import given, settings
from hypothesis import strategies as st

from judges.prompts import language_of


def definition(text: str) -> str:
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    letters = sum(1 for ch in text if ch.isalpha())
    return "zh" if letters and cjk * 2 >= letters else "en"


TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from("机翼升力合同法㐀䶵豈鿿\uf900\ufaffabcXYZ é²½Ⅷ五0123 .,;"),
        st.characters(exclude_categories=("Cs",)),
    ),
    max_size=200,
)


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_language_of_is_its_definition(text):
    assert language_of(text) == definition(text)


def test_edges():
    # Half the letters CJK is Chinese; fewer is not.
    texts = ("", "123", "机翼 wing", "机翼升力 wing", "合同法")
    assert [language_of(t) for t in texts] == ["en", "en", "en", "zh", "zh"]
