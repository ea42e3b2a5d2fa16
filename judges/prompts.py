"""The judge's prompt: a default in the style of UMBRELA (grades 0–3), placeholders, rendering.

A template names what it needs with ``{{placeholder}}``; only the names in
``PLACEHOLDERS`` exist, so an edited template cannot reach anything else. Rendering is a
plain substitution (no template language, no escaping: the text goes to a model, not a page).
"""

from __future__ import annotations

import re

PLACEHOLDERS = (
    "query",
    "passage",
    "title",
    "guidelines",
    "grade_0",
    "grade_1",
    "grade_2",
    "grade_3",
)
_NAME = re.compile(r"\{\{\s*([a-z_0-9]+)\s*\}\}")
MAX_PASSAGE_CHARS = 6000  # a whole long document is cut here; the prompt says so

DEFAULT_PROMPT = """\
You are a relevance assessor. You will be given a search query and a passage, and you \
must grade how well the passage answers the query on this scale:

3 = {{grade_3}}
2 = {{grade_2}}
1 = {{grade_1}}
0 = {{grade_0}}

Project guidelines (may be empty):
{{guidelines}}

Work it out step by step, silently: decide what the person asking needs, judge whether \
the passage is about the query (M), and how trustworthy and complete its answer is (T); \
then settle on one grade from M and T. Do not explain your steps.

Query: {{query}}

Passage (from "{{title}}"):
{{passage}}

Answer with one JSON object and nothing else: {"grade": <0, 1, 2 or 3>, "reason": \
"<one short sentence>"}
"""


def normalise_prompt(text: str) -> str:
    """The prompt as it is kept and compared: line endings as ``\\n`` (a browser sends a
    textarea back with ``\\r\\n``), no spaces or tabs at the ends of lines, no blank space
    before the first line or after the last. Two prompts that normalise alike are the same
    prompt: saving one over the other makes no new judge version."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip()


def unknown_placeholders(template: str) -> list[str]:
    """Names used in ``template`` that are not placeholders (an edit error to report)."""
    return sorted({name for name in _NAME.findall(template) if name not in PLACEHOLDERS})


def render(template: str, values: dict[str, str]) -> str:
    """The template with every known placeholder replaced by its value."""
    return _NAME.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def values_for(*, query: str, passage: str, title: str, guidelines: str, grade_labels) -> dict:
    """Placeholder values; ``grade_labels`` is [(grade, label)] as the project names them."""
    if len(passage) > MAX_PASSAGE_CHARS:
        passage = passage[:MAX_PASSAGE_CHARS] + " […]"
    values = {"query": query, "passage": passage, "title": title, "guidelines": guidelines}
    values.update({f"grade_{grade}": label for grade, label in grade_labels})
    return values
