"""The character-bigram index behind search: which grams a text holds, and which a term needs.

Chinese has no spaces, and people search for one- and two-character terms (合同, 罪); a
trigram index cannot find those. So every text is also indexed by its character pairs:
each pair of adjacent characters of the lowercased text, and its last character alone
(the way CJK analyzers index). A term of two or more characters occurs only where all of
its pairs occur (candidates, then confirmed against the text: results are exact); a
one-character term occurs where a gram starts with it (a pair, or the text's last
character). The database keeps the grams beside the text (migration 0010): SQLite in
an FTS5 table whose tokens are the grams written in hex, eight digits a character (its
tokenizers split on punctuation and spaces, which grams may hold), PostgreSQL in a
GIN-indexed tsvector.
No Django here: the SQLite trigger calls ``sqlite_tokens`` through a registered function.
"""

from __future__ import annotations

import numpy as np


def grams(text: str) -> set[str]:
    """Every pair of adjacent characters of ``text.lower()``, and its last character."""
    folded = (text or "").lower()
    return {folded[i : i + 2] for i in range(len(folded))}


def term_grams(term: str) -> tuple[list[str], bool]:
    """(grams every occurrence of ``term`` has, whether they are prefixes).

    Two or more characters: its pairs (all present wherever it occurs). One character:
    itself as a prefix (it starts a pair, or it ends the text)."""
    folded = term.lower()
    if len(folded) == 1:
        return [folded], True
    return list(dict.fromkeys(folded[i : i + 2] for i in range(len(folded) - 1))), False


def _hex(gram: str) -> str:
    return gram.encode("utf-32-be").hex()


def sqlite_tokens(text: str | None) -> str:
    """The grams of ``text`` as FTS5 tokens (each character as eight hex digits: its
    UTF-32 code), space-separated, each once, in the order they first occur.

    The SQLite triggers call this for every document and chunk written, so it works on
    the characters' codes in arrays (one pair code per position, each distinct one kept
    at its first position) instead of a string per position."""
    encoded = (text or "").lower().encode("utf-32-be")
    if len(encoded) <= 4:  # no pair: the last character alone, or nothing
        return encoded.hex()
    codes = np.frombuffer(encoded, dtype=">u4").astype(np.int64)
    pairs = (codes[:-1] << 32) | codes[1:]
    _unique, first = np.unique(pairs, return_index=True)
    kept = pairs[np.sort(first)]  # each pair once, in the order they first occur
    digits = np.frombuffer(kept.astype(">i8").tobytes().hex().encode("ascii"), dtype=np.uint8)
    tokens = np.full((kept.size, 17), ord(" "), dtype=np.uint8)  # 16 digits and a space
    tokens[:, :16] = digits.reshape(-1, 16)
    return tokens.tobytes().decode("ascii") + encoded[-4:].hex()  # the last character


def sqlite_match(term: str) -> str:
    """An FTS5 query for the grams ``term`` needs (all of them)."""
    found, prefix = term_grams(term)
    return " AND ".join(f'"{_hex(g)}"' + ("*" if prefix else "") for g in found)


def postgres_tsquery(term: str) -> str:
    """A tsquery (its input syntax, not parsed into words) for the grams ``term`` needs."""
    found, prefix = term_grams(term)
    quoted = ("'" + g.replace("\\", "\\\\").replace("'", "''") + "'" for g in found)
    return " & ".join(q + (":*" if prefix else "") for q in quoted)
