"""The quality rows drawn in Python (``quality.card_html``) are the markup the template
they replaced drew, for every kind of row and every text (escaped the same way)."""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template
from django.utils import translation
from hypothesis import given, settings
from hypothesis import strategies as st

from quality.card_html import draw_card_quality
from quality.labelling import QualityRow
from quality.models import QualityDimension, QualityUnit

# The template the Python drawing replaced (templates/quality/partials/card_quality.html at
# 685e436), with ``{% csrf_token %}`` written out as the tag draws it from ``csrf``.
REFERENCE = (
    "{% load i18n l10n %}{% localize off %}"
    '<div class="quality-part{% if not part.single %} several{% endif %}" '
    'data-document="{{ part.document }}" hx-get="{{ part.url }}?document={{ part.document }}" '
    'hx-trigger="quality-refresh" hx-target="this" hx-swap="outerHTML" '
    'hx-sync="#labelling:queue all">\n'
    '{% for row in part.rows %}<div class="quality-row{% if part.single %} is-active{% endif %}" '
    'data-dimension="{{ row.dimension.key }}" data-token="{{ row.token }}"'
    '{% if row.grade is not None %} data-quality-grade="{{ row.grade }}"{% endif %}>\n'
    '  <span class="quality-name">{{ row.dimension.shown_name }}</span>\n'
    '  <span class="quality-source" title="{% if row.site %}'
    "{% translate 'One grade for every document of this site' %}{% endif %}\">"
    "{% if row.site %}{% blocktranslate with site=row.site %}site {{ site }}{% endblocktranslate %}"
    '{% elif row.gradable %}{% translate "this document" %}{% endif %}</span>\n'
    '  {% if not row.gradable %}<span class="muted quality-no-site">'
    "{% blocktranslate with field=row.dimension.site_field %}names no site (field {{ field }})"
    "{% endblocktranslate %}</span>\n"
    '  {% elif part.can_label %}<form class="quality-form" method="post" action="{{ part.url }}" '
    'hx-post="{{ part.url }}" hx-target="closest .quality-part" hx-swap="outerHTML" '
    'hx-sync="#labelling:queue all" data-undoable>\n'
    '    <input type="hidden" name="csrfmiddlewaretoken" value="{{ part.csrf }}">'
    '<input type="hidden" name="dimension" value="{{ row.dimension.key }}">'
    '<input type="hidden" name="document" value="{{ row.document_pk }}">'
    '<input type="hidden" name="version" value="{{ row.version }}">\n'
    '    <span class="quality-buttons" role="group" aria-label="{{ row.dimension.shown_name }}">'
    '{% for g, label, pressed in row.buttons %}<button type="submit" name="grade" value="{{ g }}" '
    'class="quality-btn q{{ g }}{% if pressed %} is-set{% endif %}" '
    'aria-pressed="{% if pressed %}true{% else %}false{% endif %}" title="{{ label }}">'
    '<kbd class="shift-key">⇧{{ g }}</kbd> <span class="grade-label">{{ label }}</span></button>'
    "{% endfor %}</span>\n"
    '    {% if row.grade is not None %}<button type="submit" name="action" value="delete" '
    'class="quality-clear" title="{% translate \'Remove this quality grade\' %}">×</button>'
    "{% endif %}\n"
    "  </form>\n"
    '  {% elif row.grade is not None %}<span class="quality-grade q{{ row.grade }}">'
    "{{ row.grade }} · {{ row.label }}</span>"
    '{% else %}<span class="muted">{% translate "not graded" %}</span>{% endif %}\n'
    '  {% if part.sees_all and row.others %}<span class="quality-others">'
    '{% translate "Others:" %} {% for name, g in row.others %}<span class="other">{{ name }} '
    '<span class="quality-grade q{{ g }}">{{ g }}</span></span> {% endfor %}</span>{% endif %}\n'
    '  {% if row.refused %}<p class="refused" role="alert">{{ row.refused }}</p>{% endif %}\n'
    "</div>{% endfor %}\n"
    "</div>{% endlocalize %}"
)

TEXT = st.text(alphabet=st.sampled_from("ab <>&\"'站点质量 "), max_size=8)


def _normal(html: str) -> str:
    """The markup with the whitespace between tags (template line breaks) left out."""
    return re.sub(r">\s+<", "><", re.sub(r"\s+", " ", str(html))).strip()


@st.composite
def parts(draw):
    per_site = draw(st.booleans())
    max_grade = draw(st.integers(1, 4))
    dimension = QualityDimension(
        key=draw(st.sampled_from(["trust", "a-b", "q_1"])),
        name=draw(TEXT) or "n",
        name_zh=draw(TEXT),
        max_grade=max_grade,
        labels=[draw(TEXT) or "x" for _ in range(max_grade + 1)],
        labels_zh=draw(st.sampled_from([[], ["零"] * (max_grade + 1)])),
        unit=QualityUnit.SITE if per_site else QualityUnit.DOCUMENT,
        site_field=draw(TEXT),
    )
    rows = []
    for document_pk in draw(st.lists(st.integers(1, 10**9), min_size=1, max_size=3)):
        gradable = draw(st.booleans())
        site = (draw(TEXT) or "s") if per_site and gradable else ""
        grade = draw(st.none() | st.integers(0, max_grade))
        rows.append(
            QualityRow(
                dimension=dimension,
                document_pk=document_pk,
                site=site,
                token=f"{dimension.key}|{draw(TEXT)}" if gradable else "",
                grade=grade,
                version=draw(st.sampled_from(["none", "2026-11-27T09:00:00.000001+00:00"])),
                others=draw(st.lists(st.tuples(TEXT, st.integers(0, max_grade)), max_size=2)),
                refused=draw(TEXT),
            )
        )
    return {
        "rows": rows,
        "document": rows[0].document_pk,
        "url": "/p/x&y/label/3/quality/",
        "can_label": draw(st.booleans()),
        "sees_all": draw(st.booleans()),
        "single": len(rows) == 1,
        "csrf": draw(st.sampled_from(["tok123", 'a"b<c'])),
    }


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@settings(max_examples=150, deadline=None)
@given(part=parts())
def test_drawn_in_python_as_the_template_drew(part, language):
    with translation.override(language):
        expected = Template(REFERENCE).render(Context({"part": part}))
        assert _normal(draw_card_quality(part)) == _normal(expected)


def test_texts_are_escaped():
    dimension = QualityDimension(
        key="trust", name="<b>x</b>", max_grade=1, labels=["<i>", "ok"], unit=QualityUnit.SITE
    )
    row = QualityRow(
        dimension=dimension,
        document_pk=1,
        site="<s>",
        token="trust|site:<s>",
        grade=0,
        others=[("<u>", 1)],
        refused="<script>",
    )
    part = {
        "rows": [row],
        "document": 1,
        "url": "/u",
        "can_label": False,
        "sees_all": True,
        "single": True,
        "csrf": "t",
    }
    html = str(draw_card_quality(part))
    assert "<b>" not in html and "<i>" not in html and "<s>" not in html
    assert "<u>" not in html and "<script>" not in html
    assert "&lt;script&gt;" in html and "site &lt;s&gt;" in html
