"""Splitting an answer's text into sentences: a documented rule, the same for every language.

A sentence ends

- after ``。``, ``！``, ``？`` (and their half-width ``!``/``?`` written without a following
  space in Chinese text), ``…`` and ``……`` when what follows is not a letter of a Latin
  word — no space is needed after Chinese punctuation;
- after ``.``, ``!`` or ``?`` followed by whitespace (or the end), unless the ``.`` closes
  a known abbreviation (``e.g.``, ``Dr.``, ``et al.`` …, see ``ABBREVIATIONS``) or a
  single letter (an initial, ``J. Smith``, ``U.S.``), or the next word starts with a
  lower-case letter (``approx. the``);
- at every line break (answers put list items and paragraphs on lines of their own).

Closing quotes and brackets right after the end (``。”``, ``.)``) stay with the sentence.
A decimal point (``3.5``) is never an end: nothing but a space or the end of the text
follows a ``.`` that ends a sentence. Sentences are trimmed of surrounding whitespace;
empty ones are dropped. Offsets are character offsets into the text (half-open).
"""

from __future__ import annotations

CHINESE_ENDS = "。！？｡"
LATIN_ENDS = ".!?"
ELLIPSIS = "…"
CLOSERS = "\"'”’)]}）】」』》〉"
ABBREVIATIONS = frozenset(
    {
        "al",
        "approx",
        "cf",
        "co",
        "dr",
        "e.g",
        "eq",
        "etc",
        "fig",
        "figs",
        "i.e",
        "inc",
        "jr",
        "ltd",
        "mr",
        "mrs",
        "ms",
        "no",
        "nos",
        "pp",
        "prof",
        "ref",
        "sr",
        "st",
        "vol",
        "vs",
    }
)


def _is_han_or_fullwidth(char: str) -> bool:
    code = ord(char)
    return (
        0x3000 <= code <= 0x303F  # CJK punctuation
        or 0x3400 <= code <= 0x9FFF  # CJK ideographs
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF  # full-width forms
        or 0x20000 <= code <= 0x2FA1F
    )


def _word_before(text: str, dot: int) -> str:
    """The word (letters and inner dots) that ends just before ``text[dot]``."""
    start = dot
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "."):
        start -= 1
    return text[start:dot]


def _closers(text: str, at: int) -> int:
    while at < len(text) and text[at] in CLOSERS:
        at += 1
    return at


def _latin_end(text: str, at: int) -> int | None:
    """Where a sentence ending with the ``.``, ``!`` or ``?`` at ``at`` ends, or None."""
    end = at + 1
    while end < len(text) and text[end] in LATIN_ENDS:
        end += 1
    end = _closers(text, end)
    if end < len(text) and not text[end].isspace():
        # "3.5", "a.b", or Chinese text using half-width punctuation: "好!然后".
        return end if text[at] in "!?" and _is_han_or_fullwidth(text[end]) else None
    if text[at] == "." and end == at + 1:
        word = _word_before(text, at)
        if word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            return None
        if "." in word and all(len(part) <= 1 for part in word.split(".")):
            return None  # "U.S", "e.g" written with inner dots
        following = text[end:].lstrip(" \t")
        if following[:1].islower():
            return None
    return end


def _chinese_end(text: str, at: int) -> int:
    end = at + 1
    while end < len(text) and (text[end] in CHINESE_ENDS or text[end] in "!?" + ELLIPSIS):
        end += 1
    return _closers(text, end)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as (start, end) character offsets, in order."""
    spans: list[tuple[int, int]] = []
    start = 0
    at = 0
    n = len(text)

    def cut(end: int) -> None:
        nonlocal start
        piece_start, piece_end = start, end
        while piece_start < piece_end and text[piece_start].isspace():
            piece_start += 1
        while piece_end > piece_start and text[piece_end - 1].isspace():
            piece_end -= 1
        if piece_end > piece_start:
            spans.append((piece_start, piece_end))
        start = end

    while at < n:
        char = text[at]
        if char in "\n\r":
            cut(at)
            at += 1
            start = at
            continue
        if char in CHINESE_ENDS:
            end = _chinese_end(text, at)
            cut(end)
            at = end
            continue
        if char == ELLIPSIS:
            end = _closers(text, at + len(text[at:]) - len(text[at:].lstrip(ELLIPSIS)))
            chinese = at > 0 and _is_han_or_fullwidth(text[at - 1])
            if end >= n or text[end].isspace() or (chinese and _is_han_or_fullwidth(text[end])):
                cut(end)
            at = end
            continue
        if char in LATIN_ENDS:
            end = _latin_end(text, at)
            if end is not None:
                cut(end)
                at = end
                continue
        at += 1
    cut(n)
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (``sentence_spans``), as text."""
    return [text[s:e] for s, e in sentence_spans(text)]
