"""The judge's prompt: a default in the style of UMBRELA (grades 0–3), placeholders, rendering.

The default prompt has an English and a Simplified Chinese version: a judge that keeps
the default speaks to the model in the language of each query (Chinese when the query is
mostly Chinese characters), with the project's grade labels in that language when they
are Assay's defaults. A prompt the owner wrote is sent as written.

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


DEFAULT_PROMPT_ZH = """\
你是一名相关性评估员。你会看到一个搜索查询和一段文字，请按以下等级评定这段文字对查询的\
回答程度：

3 = {{grade_3}}
2 = {{grade_2}}
1 = {{grade_1}}
0 = {{grade_0}}

项目评估准则（可能为空）：
{{guidelines}}

请在心里逐步思考：先想清楚提问的人需要什么，再判断这段文字是否与查询有关（M），以及它的\
回答是否可信、完整（T）；然后根据 M 和 T 定下一个等级。不要写出你的步骤。

查询：{{query}}

文字（出自“{{title}}”）：
{{passage}}

只回答一个 JSON 对象，不要有其他内容：{"grade": <0、1、2 或 3>, "reason": \
"<一句简短的中文理由>"}
"""
DEFAULT_PROMPTS = {"en": DEFAULT_PROMPT, "zh": DEFAULT_PROMPT_ZH}
# Assay's default grade labels (annotator's DEFAULT_GRADE_LABELS) in Chinese.
DEFAULT_GRADE_LABELS_ZH = {
    "Not relevant": "不相关",
    "Related, does not answer": "相关，但未回答",
    "Partially answers": "部分回答",
    "Fully answers": "完全回答",
}
LANGUAGE_NAMES = {"en": "English", "zh": "Simplified Chinese"}


_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]")


def language_of(text: str) -> str:
    """ "zh" when most letters of ``text`` are CJK characters, else "en".

    Counted in C (a regular expression, ``str.isalpha`` mapped): a cost estimate renders
    the prompts of a thousand documents, and a loop over their characters took 0.4 s."""
    cjk = len(_CJK.findall(text))
    letters = sum(map(str.isalpha, text))
    return "zh" if letters and cjk * 2 >= letters else "en"


def template_for(template: str, language: str) -> str:
    """The default prompt in ``language``; any other prompt as written."""
    defaults = {normalise_prompt(text) for text in DEFAULT_PROMPTS.values()}
    if normalise_prompt(template) in defaults:
        return DEFAULT_PROMPTS.get(language, DEFAULT_PROMPT)
    return template


def labels_for(grade_labels, language: str) -> list[tuple[int, str]]:
    """The project's grade labels, Assay's defaults put in ``language``."""
    if language != "zh":
        return list(grade_labels)
    return [(grade, DEFAULT_GRADE_LABELS_ZH.get(label, label)) for grade, label in grade_labels]


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


# A quality dimension's prompt (``judges.quality_jobs``): what a source is, not whether it
# answers a query. A document is sent with its title, metadata and text; a site with its
# name and a few of its documents (their titles, metadata and openings) as its text.
QUALITY_PLACEHOLDERS = (
    "dimension",
    "scale",
    "max_grade",
    "site",
    "title",
    "metadata",
    "text",
    "guidelines",
)

QUALITY_PROMPT = """\
You assess the quality of a source (how authoritative and reliable it is), not whether \
it answers any question. Grade the source below on "{{dimension}}" with this scale:

{{scale}}

Project guidelines (may be empty):
{{guidelines}}

Site: {{site}}
Title: {{title}}
Metadata: {{metadata}}
Text:
{{text}}

Answer with one JSON object and nothing else: {"grade": <a whole number from 0 to \
{{max_grade}}>, "reason": "<one short sentence>"}
"""

QUALITY_PROMPT_ZH = """\
你要评估一个来源的质量（它的权威性和可靠性），而不是它是否回答了某个问题。请按以下等级\
评定下面这个来源的“{{dimension}}”：

{{scale}}

项目评估准则（可能为空）：
{{guidelines}}

站点：{{site}}
标题：{{title}}
元数据：{{metadata}}
正文：
{{text}}

只回答一个 JSON 对象，不要有其他内容：{"grade": <0 到 {{max_grade}} 之间的整数>, "reason": \
"<一句简短的中文理由>"}
"""
QUALITY_PROMPTS = {"en": QUALITY_PROMPT, "zh": QUALITY_PROMPT_ZH}


def unknown_quality_placeholders(template: str) -> list[str]:
    """Names used in a quality prompt that are not its placeholders."""
    return sorted({n for n in _NAME.findall(template) if n not in QUALITY_PLACEHOLDERS})


def quality_template_for(template: str, language: str) -> str:
    """The default quality prompt in ``language``; any other prompt as written."""
    defaults = {normalise_prompt(text) for text in QUALITY_PROMPTS.values()}
    if normalise_prompt(template) in defaults:
        return QUALITY_PROMPTS.get(language, QUALITY_PROMPT)
    return template
