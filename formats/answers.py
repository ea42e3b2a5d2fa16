"""Reading answer runs: TREC RAG 2024/2025 JSONL and Assay's simple JSONL, line by line.

TREC RAG 2024, one answer a line::

    {"run_id", "topic_id", "topic", "references": [id, …], "response_length",
     "answer": [{"text", "citations": [index into references, …]}, …]}

TREC RAG 2025 puts ``run_id`` and the topic's id (``narrative_id``) in ``"metadata"``;
both shapes are read. The simple JSONL::

    {"qid", "answer": "text", "sentences": [{"text", "citations": [
        {"doc_id", "start", "end"} | {"chunk_id"} | {"doc_id"}, …]}, …]}

``sentences`` is optional: without it the answer is split into sentences
(``formats.sentences``) and has no citations; with it (and ``answer``) each sentence must
be found in the answer's text, in order. An answer given only as sentences is their
text joined with a space (none between Chinese sentences). Nothing here knows the
project: ids are checked as ids, and resolved to spans by the importer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import BadLine, LineErrors, define, gettext_noop
from .records import MISSING, cell_text, not_whole, whole_number
from .sentences import _is_han_or_fullwidth, sentence_spans
from .values import id_problem

MAX_SENTENCES = 2000  # per answer
MAX_CITATIONS = 200  # per sentence

NOT_ANSWER = define(
    "answers.not_answer",
    gettext_noop(
        'expected a TREC RAG answer {"topic_id", "references", "answer": [...]} or '
        '{"qid", "answer": "text"}'
    ),
)
SHAPE_CHANGES = define(
    "answers.shape_changes",
    gettext_noop("this line is a %(shape)s answer, line %(line)s a %(other)s one"),
)
SENTENCES_LIST = define(
    "answers.sentences_list", gettext_noop('"%(name)s" must be a list of {"text", "citations"}')
)
SENTENCE_TEXT = define("answers.sentence_text", gettext_noop("sentence %(n)s has no text"))
CITATIONS_LIST = define(
    "answers.citations_list", gettext_noop('"citations" of sentence %(n)s must be a list')
)
REFERENCES_LIST = define(
    "answers.references_list", gettext_noop('"references" must be a list of ids')
)
REFERENCE_INDEX = define(
    "answers.reference_index",
    gettext_noop("sentence %(n)s cites %(value)s, which is no index into the %(count)s references"),
)
CITATION_FORM = define(
    "answers.citation_form",
    gettext_noop(
        'sentence %(n)s: a citation is {"doc_id", "start", "end"}, {"chunk_id"} or {"doc_id"}'
    ),
)
TOO_MANY_SENTENCES = define(
    "answers.too_many_sentences",
    gettext_noop("an answer has at most %(max)s sentences (this one %(n)s)"),
)
TOO_MANY_CITATIONS = define(
    "answers.too_many_citations",
    gettext_noop("sentence %(n)s has more than %(max)s citations"),
)
NOT_IN_ANSWER = define(
    "answers.not_in_answer",
    gettext_noop("sentence %(n)s is not in the answer's text (after sentence %(before)s)"),
)
ANSWER_TEXT = define("answers.answer_text", gettext_noop('"answer" must be text'))
RUN_ID_DIFFERS = define(
    "answers.run_id_differs",
    gettext_noop("run_id %(value)s differs from %(first)s on line %(line)s"),
)
REPEATS = define(
    "answers.repeats", gettext_noop("query %(qid)s is answered again (first on line %(line)s)")
)
NO_ANSWERS = define("answers.no_answers", gettext_noop("the file holds no answers"))

TREC_RAG = "trec_rag"
SIMPLE = "simple"


@dataclass(frozen=True)
class CitationIn:
    """One citation as written: a reference (TREC RAG: ``reference`` is its index and
    ``item`` the referenced id), a passage, a chunk or a whole document."""

    kind: str  # "reference", "passage", "chunk", "document"
    item: str  # the id: a document's, a chunk's, or the reference's
    start: int | None = None
    end: int | None = None
    reference: int | None = None


@dataclass
class SentenceIn:
    text: str
    start: int  # offsets in the answer's text
    end: int
    citations: list[CitationIn] = field(default_factory=list)


@dataclass
class AnswerIn:
    """One line's answer, read and checked as far as a file alone allows."""

    line: int
    shape: str
    qid: str
    text: str
    sentences: list[SentenceIn]
    run_id: str = ""
    references: list[str] = field(default_factory=list)
    response_length: int | None = None


def joined(texts: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """Sentences as one text: a space between them, none after a Chinese sentence before
    another (or before one starting with Chinese); with each sentence's offsets."""
    parts: list[str] = []
    spans = []
    at = 0
    for text in texts:
        if parts:
            previous = parts[-1]
            chinese = _is_han_or_fullwidth(previous[-1]) and _is_han_or_fullwidth(text[:1] or "a")
            if not chinese:
                parts.append(" ")
                at += 1
        spans.append((at, at + len(text)))
        parts.append(text)
        at += len(text)
    return "".join(parts), spans


def _shape(row: dict) -> str | None:
    if isinstance(row.get("answer"), list) or "topic_id" in row or "metadata" in row:
        return TREC_RAG
    if "qid" in row or isinstance(row.get("answer"), str):
        return SIMPLE
    return None


def _text_of(value) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _trec_rag(line: int, row: dict, errors: LineErrors) -> AnswerIn | None:
    meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    qid = next(
        (
            cell_text(v)
            for v in (row.get("topic_id"), meta.get("narrative_id"), meta.get("topic_id"))
            if v not in (None, "")
        ),
        None,
    )
    run_id = next(
        (cell_text(v) for v in (row.get("run_id"), meta.get("run_id")) if v not in (None, "")),
        "",
    )
    bad = _id_bad(line, "topic_id", qid, errors)
    references = row.get("references", [])
    if not isinstance(references, list) or not all(
        isinstance(r, str | int) and not isinstance(r, bool) for r in references
    ):
        errors.add(line, REFERENCES_LIST())
        return None
    references = [cell_text(r) for r in references]
    for ref in references:
        if problem := id_problem("references", ref):
            errors.add(line, problem)
            bad = True
    items = row.get("answer")
    if not isinstance(items, list):
        errors.add(line, SENTENCES_LIST(name="answer"))
        return None
    if len(items) > MAX_SENTENCES:
        errors.add(line, TOO_MANY_SENTENCES(max=MAX_SENTENCES, n=len(items)))
        return None
    texts, citations = [], []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            errors.add(line, SENTENCES_LIST(name="answer"))
            return None
        text = _text_of(item.get("text"))
        if text is None:
            errors.add(line, SENTENCE_TEXT(n=n))
            bad = True
            continue
        cited = item.get("citations", [])
        if not isinstance(cited, list):
            errors.add(line, CITATIONS_LIST(n=n))
            bad = True
            continue
        found = []
        for value in cited:
            index = whole_number(value) if not isinstance(value, str) else None
            if index is None or not 0 <= index < len(references):
                errors.add(line, REFERENCE_INDEX(n=n, value=repr(value), count=len(references)))
                bad = True
                continue
            found.append(CitationIn("reference", references[index], reference=index))
        if len(found) > MAX_CITATIONS:
            errors.add(line, TOO_MANY_CITATIONS(n=n, max=MAX_CITATIONS))
            bad = True
        texts.append(text)
        citations.append(_unique(found))
    length = row.get("response_length")
    response_length = None
    if length not in (None, ""):
        response_length = whole_number(length)
        if response_length is None or response_length < 0:
            errors.add(line, not_whole("response_length", length))
            bad = True
    if bad:
        return None
    text, spans = joined(texts)
    sentences = [
        SentenceIn(t, s, e, c) for t, (s, e), c in zip(texts, spans, citations, strict=True)
    ]
    return AnswerIn(line, TREC_RAG, qid, text, sentences, run_id, references, response_length)


def _unique(citations: list[CitationIn]) -> list[CitationIn]:
    """Each citation once, in the order first given (a repeated index cites nothing new)."""
    return list(dict.fromkeys(citations))


def _id_bad(line: int, name: str, value: str | None, errors: LineErrors) -> bool:
    if value is None:
        errors.add(line, MISSING(what=name))
        return True
    if problem := id_problem(name, value):
        errors.add(line, problem)
        return True
    return False


def _citation(line: int, n: int, value, errors: LineErrors) -> CitationIn | None:
    if not isinstance(value, dict):
        errors.add(line, CITATION_FORM(n=n))
        return None
    chunk_id = value.get("chunk_id")
    doc_id = value.get("doc_id", value.get("docid"))
    start, end = value.get("start"), value.get("end")
    if chunk_id not in (None, "") and doc_id in (None, "") and start is None and end is None:
        item = cell_text(chunk_id)
        if problem := id_problem("chunk_id", item):
            errors.add(line, problem)
            return None
        return CitationIn("chunk", item)
    if doc_id in (None, "") or chunk_id not in (None, ""):
        errors.add(line, CITATION_FORM(n=n))
        return None
    item = cell_text(doc_id)
    if problem := id_problem("doc_id", item):
        errors.add(line, problem)
        return None
    if start is None and end is None:
        return CitationIn("document", item)
    numbers = [whole_number(start), whole_number(end)]
    if None in numbers:
        for name, raw, number in zip(("start", "end"), (start, end), numbers, strict=True):
            if number is None:
                errors.add(line, not_whole(name, raw))
        return None
    return CitationIn("passage", item, numbers[0], numbers[1])


def _simple(line: int, row: dict, errors: LineErrors) -> AnswerIn | None:
    raw = row.get("qid")
    qid = None if raw in (None, "") else cell_text(raw)
    bad = _id_bad(line, "qid", qid, errors)
    answer = row.get("answer")
    if answer is not None and not isinstance(answer, str):
        errors.add(line, ANSWER_TEXT())
        return None
    listed = row.get("sentences")
    if listed is None:
        if answer is None:
            errors.add(line, MISSING(what="answer"))
            return None
        if bad:
            return None
        sentences = [SentenceIn(answer[s:e], s, e) for s, e in sentence_spans(answer)]
        if len(sentences) > MAX_SENTENCES:
            errors.add(line, TOO_MANY_SENTENCES(max=MAX_SENTENCES, n=len(sentences)))
            return None
        return AnswerIn(line, SIMPLE, qid, answer, sentences, cell_text(row.get("run_id") or ""))
    if not isinstance(listed, list) or not all(isinstance(s, dict) for s in listed):
        errors.add(line, SENTENCES_LIST(name="sentences"))
        return None
    if len(listed) > MAX_SENTENCES:
        errors.add(line, TOO_MANY_SENTENCES(max=MAX_SENTENCES, n=len(listed)))
        return None
    texts, cited = [], []
    for n, item in enumerate(listed, start=1):
        text = _text_of(item.get("text"))
        if text is None:
            errors.add(line, SENTENCE_TEXT(n=n))
            bad = True
            continue
        citations = item.get("citations", [])
        if not isinstance(citations, list):
            errors.add(line, CITATIONS_LIST(n=n))
            bad = True
            continue
        if len(citations) > MAX_CITATIONS:
            errors.add(line, TOO_MANY_CITATIONS(n=n, max=MAX_CITATIONS))
            bad = True
            continue
        found = [_citation(line, n, value, errors) for value in citations]
        bad = bad or None in found
        texts.append(text)
        cited.append(_unique([c for c in found if c is not None]))
    if bad:
        return None
    if answer is None:
        text, spans = joined(texts)
    else:
        text, spans, at = answer, [], 0
        for n, sentence in enumerate(texts, start=1):
            found = answer.find(sentence, at)
            if found < 0:
                errors.add(line, NOT_IN_ANSWER(n=n, before=n - 1))
                return None
            spans.append((found, found + len(sentence)))
            at = found + len(sentence)
    sentences = [SentenceIn(t, s, e, c) for t, (s, e), c in zip(texts, spans, cited, strict=True)]
    return AnswerIn(line, SIMPLE, qid, text, sentences, cell_text(row.get("run_id") or ""))


def read_answers(rows, errors: LineErrors) -> list[AnswerIn]:
    """Every answer of the file's numbered rows (``formats.rows``, JSONL), in file order;
    each problem reported by line. One shape per file, one run_id, one answer a query."""
    found: list[AnswerIn] = []
    first_shape: tuple[str, int] | None = None
    first_run: tuple[str, int] | None = None
    seen: dict[str, int] = {}
    for line, row in rows:
        if isinstance(row, BadLine):
            errors.add(line, row.problem)
            continue
        shape = _shape(row)
        if shape is None:
            errors.add(line, NOT_ANSWER())
            continue
        if first_shape is None:
            first_shape = (shape, line)
        elif shape != first_shape[0]:
            errors.add(line, SHAPE_CHANGES(shape=shape, line=first_shape[1], other=first_shape[0]))
            continue
        answer = _trec_rag(line, row, errors) if shape == TREC_RAG else _simple(line, row, errors)
        if answer is None:
            continue
        if answer.run_id:
            if first_run is None:
                first_run = (answer.run_id, line)
            elif answer.run_id != first_run[0]:
                errors.add(
                    line,
                    RUN_ID_DIFFERS(
                        value=repr(answer.run_id), first=repr(first_run[0]), line=first_run[1]
                    ),
                )
                continue
        if answer.qid in seen:
            errors.add(line, REPEATS(qid=repr(answer.qid), line=seen[answer.qid]))
            continue
        seen[answer.qid] = line
        found.append(answer)
    if not found and not errors:
        errors.add(0, NO_ANSWERS())
    return found


__all__ = [
    "SIMPLE",
    "TREC_RAG",
    "AnswerIn",
    "CitationIn",
    "SentenceIn",
    "joined",
    "read_answers",
]
