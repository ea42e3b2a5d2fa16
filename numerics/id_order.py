"""Codes that sort like id strings in byte order, the order trec_eval breaks score ties by.

trec_eval ranks a query's results by score descending, then by document id descending
as ``strcmp`` compares them (``comp_sim_docno`` in ``form_res_rels.c``): byte by byte, so
``"d9"`` comes after ``"d10"``. Giving every id an integer code in that order lets the
ranking (``numerics.measures.rank_order``) break ties on integers. UTF-8 keeps code point
order, so byte order of the encoded ids is also the order of their code points.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_DIGITS = re.compile(r"(\d+)")


def byte_order_codes(ids: Sequence[str]) -> np.ndarray:
    """Code of each id (0 .. n-1): ``code[i] < code[j]`` iff ``ids[i] < ids[j]`` in byte
    order. Equal ids get distinct codes in input order (callers pass unique ids).

    >>> byte_order_codes(["d9", "d10", "d2"]).tolist()
    [2, 0, 1]
    """
    encoded = np.empty(len(ids), dtype=object)
    encoded[:] = [str(i).encode() for i in ids]
    order = np.argsort(encoded, kind="stable")
    code = np.empty(order.size, dtype=np.int64)
    code[order] = np.arange(order.size)
    return code


def natural_key(identifier: str) -> tuple:
    """Sort key putting ids in the order people read them: runs of digits by value.

    For files people look at (spreadsheets), not for trec_eval's tie order above.

    >>> sorted(["q10", "q2", "100", "9", "q1"], key=natural_key)
    ['9', '100', 'q1', 'q2', 'q10']
    """
    parts = _DIGITS.split(str(identifier))
    return tuple((1, int(p), p) if i % 2 else (0, 0, p) for i, p in enumerate(parts) if p or i == 0)
