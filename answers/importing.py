"""Importing an answer run: all or nothing, every bad line named, every citation a span.

The file is read by ``formats.answers`` (TREC RAG 2024/2025 JSONL or the simple JSONL);
here each answer's query must exist in the project and each citation must resolve to a
span of a document of the project: a whole document (``[0, len(text))``), a chunk of the
named chunking (its span) or a passage (``0 ≤ start < end ≤`` the document's length).
TREC RAG references are document ids, or chunk ids of the chunking named with
``--chunking``. Nothing is written when any line is bad.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Length

from annotator.importing import ImportResult
from annotator.models import Chunk, Chunking, Document, Project, Query
from formats import FileRejected, LineErrors, RowSource, check_file
from formats.answers import AnswerIn, CitationIn, read_answers
from formats.errors import TEXT, define, gettext_noop

from .models import Answer, AnswerRun, Citation, CitationGranularity, Sentence

BATCH = 2000

UNKNOWN_QUERY = define("answers.unknown_query", gettext_noop("no query %(qid)s in this project"))
UNKNOWN_DOCUMENT = define(
    "answers.unknown_document", gettext_noop("sentence %(n)s cites %(id)s: no such document")
)
UNKNOWN_CHUNK = define(
    "answers.unknown_chunk",
    gettext_noop("sentence %(n)s cites %(id)s: no such chunk in chunking %(chunking)s"),
)
NEEDS_CHUNKING = define(
    "answers.needs_chunking",
    gettext_noop("sentence %(n)s cites chunk %(id)s: name the chunking its ids belong to"),
)
SPAN_OUTSIDE = define(
    "answers.span_outside",
    gettext_noop(
        "sentence %(n)s cites characters %(start)s–%(end)s of document %(id)s, which has "
        "%(length)s characters"
    ),
)
NAME_TAKEN = define(
    "answers.name_taken", gettext_noop("the project already has an answer run named %(name)s")
)
NO_NAME = define("answers.no_name", gettext_noop("give the answer run a name"))
NO_CHUNKING = define("answers.no_chunking", gettext_noop("no chunking %(name)s in this project"))
IMPORTED = define(
    "answers.imported",
    gettext_noop("answer run %(name)s: %(sentences)s sentences, %(citations)s citations"),
)


@dataclass(frozen=True)
class Span:
    granularity: str
    document: int
    start: int
    end: int
    chunk: int | None = None
    reference: int | None = None


class Resolver:
    """The project's ids the file names, read in batches: queries, documents (with their
    lengths) and the named chunking's chunks."""

    def __init__(self, project: Project, chunking: Chunking | None, answers: list[AnswerIn]):
        self.chunking = chunking
        qids = {a.qid for a in answers}
        self.queries = self._by_id(Query.objects.filter(project=project), "qid", qids, ("pk",))
        doc_ids = {
            c.item
            for a in answers
            for s in a.sentences
            for c in s.citations
            if c.kind in ("document", "passage") or (c.kind == "reference" and chunking is None)
        }
        documents = Document.objects.filter(project=project).annotate(length=Length("text"))
        self.documents = self._by_id(documents, "doc_id", doc_ids, ("pk", "length"))
        chunk_ids = {
            c.item
            for a in answers
            for s in a.sentences
            for c in s.citations
            if c.kind == "chunk" or (c.kind == "reference" and chunking is not None)
        }
        self.chunks = (
            self._by_id(
                Chunk.objects.filter(chunking=chunking),
                "chunk_id",
                chunk_ids,
                ("pk", "document_id", "start", "end"),
            )
            if chunking is not None
            else {}
        )

    @staticmethod
    def _by_id(queryset, key: str, wanted: set[str], fields: tuple[str, ...]) -> dict:
        found = {}
        names = sorted(wanted)
        for start in range(0, len(names), 1000):
            for row in queryset.filter(**{f"{key}__in": names[start : start + 1000]}).values_list(
                key, *fields
            ):
                found[row[0]] = row[1:] if len(fields) > 1 else row[1]
        return found

    def span(self, line: int, n: int, citation: CitationIn, errors: LineErrors) -> Span | None:
        """The span a citation resolves to, or None (the problem reported)."""
        chunked = citation.kind == "chunk" or (
            citation.kind == "reference" and self.chunking is not None
        )
        if chunked:
            if self.chunking is None:
                errors.add(line, NEEDS_CHUNKING(n=n, id=repr(citation.item)))
                return None
            found = self.chunks.get(citation.item)
            if found is None:
                errors.add(
                    line,
                    UNKNOWN_CHUNK(
                        n=n, id=repr(citation.item), chunking=TEXT(text=self.chunking.name)
                    ),
                )
                return None
            pk, document, start, end = found
            return Span(CitationGranularity.CHUNK, document, start, end, pk, citation.reference)
        found = self.documents.get(citation.item)
        if found is None:
            errors.add(line, UNKNOWN_DOCUMENT(n=n, id=repr(citation.item)))
            return None
        pk, length = found
        if citation.kind == "passage":
            if not 0 <= citation.start < citation.end <= length:
                errors.add(
                    line,
                    SPAN_OUTSIDE(
                        n=n,
                        start=citation.start,
                        end=citation.end,
                        id=repr(citation.item),
                        length=length,
                    ),
                )
                return None
            return Span(CitationGranularity.PASSAGE, pk, citation.start, citation.end)
        return Span(CitationGranularity.DOCUMENT, pk, 0, length, None, citation.reference)


def resolve(project, answers: list[AnswerIn], chunking, errors: LineErrors):
    """Each answer's query pk and each citation's span; problems reported by line."""
    resolver = Resolver(project, chunking, answers)
    resolved = []
    for answer in answers:
        query = resolver.queries.get(answer.qid)
        if query is None:
            errors.add(answer.line, UNKNOWN_QUERY(qid=repr(answer.qid)))
        spans = [
            [resolver.span(answer.line, n, c, errors) for c in sentence.citations]
            for n, sentence in enumerate(answer.sentences, start=1)
        ]
        resolved.append((answer, query, spans))
    return resolved


def import_answers(
    project: Project,
    rows,
    *,
    name: str,
    chunking: str | Chunking | None = None,
    parameters: dict | None = None,
    tags: list[str] | None = None,
    created_by=None,
    source_name: str = "",
    tick=None,
) -> ImportResult:
    """A new answer run named ``name`` from the file's rows; ``FileRejected`` (nothing
    written) when the name is taken or any line is bad."""
    name = (name or "").strip()
    if not name:
        raise FileRejected([NO_NAME()])
    if isinstance(chunking, str) and chunking:
        found = Chunking.objects.filter(project=project, name=chunking).first()
        if found is None:
            raise FileRejected([NO_CHUNKING(name=repr(chunking))])
        chunking = found
    chunking = chunking or None
    if AnswerRun.objects.filter(project=project, name=name).exists():
        raise FileRejected([NAME_TAKEN(name=repr(name))])
    errors = LineErrors()
    answers = read_answers(rows, errors)
    resolved = resolve(project, answers, chunking, errors)
    errors.raise_if_any()
    with transaction.atomic():
        if AnswerRun.objects.filter(project=project, name=name).exists():
            raise FileRejected([NAME_TAKEN(name=repr(name))])
        run = AnswerRun.objects.create(
            project=project,
            name=name,
            run_tag=next((a.run_id for a in answers if a.run_id), "")[:255],
            shape=answers[0].shape,
            chunking=chunking,
            parameters=parameters or {},
            tags=tags or [],
            source=source_name[:255],
            created_by=created_by,
        )
        n_sentences, n_citations = _write(run, resolved, tick)
        AnswerRun.objects.filter(pk=run.pk).update(
            n_answers=len(answers), n_sentences=n_sentences, n_citations=n_citations
        )
    note = IMPORTED(name=TEXT(text=name), sentences=n_sentences, citations=n_citations)
    return ImportResult("answers", len(answers), notes=(note,))


def _write(run: AnswerRun, resolved, tick) -> tuple[int, int]:
    """Answers, then sentences, then citations, each in bulk (primary keys returned)."""
    answers = Answer.objects.bulk_create(
        [
            Answer(
                run=run,
                query_id=query,
                text=a.text,
                response_length=a.response_length,
                references=a.references,
            )
            for a, query, _spans in resolved
        ],
        batch_size=BATCH,
    )
    sentences = []
    for row, (answer, _query, _spans) in zip(answers, resolved, strict=True):
        for number, s in enumerate(answer.sentences, start=1):
            sentences.append(
                Sentence(answer=row, number=number, text=s.text, start=s.start, end=s.end)
            )
        if tick is not None:
            tick()
    sentences = Sentence.objects.bulk_create(sentences, batch_size=BATCH)
    if sentences and sentences[0].pk is None:
        raise RuntimeError("bulk_create did not return primary keys")
    citations = []
    at = 0
    for row, (_answer, _query, spans) in zip(answers, resolved, strict=True):
        for sentence_spans in spans:
            sentence = sentences[at]
            at += 1
            for number, span in enumerate(sentence_spans, start=1):
                citations.append(
                    Citation(
                        sentence=sentence,
                        answer=row,
                        number=number,
                        granularity=span.granularity,
                        document_id=span.document,
                        chunk_id=span.chunk,
                        start=span.start,
                        end=span.end,
                        reference=span.reference,
                    )
                )
    Citation.objects.bulk_create(citations, batch_size=BATCH)
    return len(sentences), len(citations)


def load_answers(project, path, *, fmt, options, progress, changed_by=None, source_name="", **_):
    """The "answers" import kind (the import page and ``import_answers``)."""
    check_file(path, settings.ASSAY_MAX_UPLOAD_BYTES)
    source = RowSource(
        path,
        fmt,
        max_chars=settings.ASSAY_MAX_DOCUMENT_CHARS,
        max_bytes=settings.ASSAY_MAX_UPLOAD_BYTES,
    )
    tick = None
    if progress is not None:
        count = 0

        def tick() -> None:
            nonlocal count
            count += 1
            if count % 200 == 0:
                progress(source.fraction())

    return import_answers(
        project,
        source,
        name=options.get("name", ""),
        chunking=options.get("chunking") or None,
        parameters=options.get("parameters") or {},
        tags=options.get("tags") or [],
        created_by=changed_by,
        source_name=source_name,
        tick=tick,
    )
