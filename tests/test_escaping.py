"""The escaping of HTML drawn in Python gives Django's characters, for any text."""

from django.utils.functional import lazy
from django.utils.html import conditional_escape, escape
from django.utils.safestring import mark_safe
from hypothesis import given
from hypothesis import strategies as st

from web.escaping import escaped, shown

TEXT = st.text(alphabet=st.sampled_from("ab<>&\"'; 中文\n"), max_size=40) | st.text(max_size=40)


@given(TEXT)
def test_escaped_is_djangos_escape(text):
    assert escaped(text) == str(escape(text))
    # Django's escape escapes safe strings too: a label is text, never markup.
    assert escaped(mark_safe(text)) == str(escape(mark_safe(text)))  # noqa: S308


@given(TEXT)
def test_shown_is_djangos_conditional_escape(text):
    assert shown(text) == str(conditional_escape(text))
    safe = mark_safe(text)  # noqa: S308 - the point: left as it is
    assert shown(safe) == str(conditional_escape(safe)) == text


@given(st.integers() | st.none() | st.floats(allow_nan=False))
def test_values_that_are_not_text(value):
    assert escaped(value) == str(escape(value))
    assert shown(value) == str(conditional_escape(value))


def test_lazy_text_is_escaped_as_its_value():
    lazy_text = lazy(lambda: "<b>R&D</b>", str)()
    assert escaped(lazy_text) == "&lt;b&gt;R&amp;D&lt;/b&gt;" == str(escape(lazy_text))
    assert shown(lazy_text) == str(conditional_escape(lazy_text))
