"""Measure names: the parsed ``Measure``, the one registry of families, and ``parse_measure``.

Each family declares itself once, on its compute function, with ``@family(...)``: its
cutoff rule, whether it takes ``rel=``, its conventions and its gains. The parser and the
evaluator both read that one registry (``FAMILIES``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

    from .ranking import JudgedRows

Cutoff = Literal["required", "optional", "none", "fraction"]
ALIASES = {"Hit": "Success", "MRR": "RR", "MAP": "AP"}
_NAME = re.compile(
    r"^(?P<family>[A-Za-z0-9]+)(?:\((?P<params>[^)]*)\))?(?:@(?P<k>\d+(?:\.\d+)?))?$"
)
_PARAM = re.compile(
    r"^\s*(?P<key>[a-z_]+)\s*=\s*(?:'(?P<s>[^']*)'|\"(?P<d>[^\"]*)\"|(?P<n>-?\d+(?:\.\d+)?))\s*$"
)


@dataclass(frozen=True)
class Measure:
    """A parsed measure name, e.g. ``P(rel=2)@5`` → family P, cutoff 5, rel 2.

    ``name`` is kept exactly as given (results are keyed by it); ``rel`` is None when the
    name does not set it (``rel_default`` applies); ``dcg`` is ``'linear'`` (gain = grade,
    trec_eval) or ``'exp-log2'`` (gain = 2^grade − 1); ``convention`` is ``'trec'`` or the
    name of another library's definition (see ``docs/measures.md``).
    """

    name: str
    family: str
    cutoff: int | float | None = None
    rel: int | None = None
    dcg: str = "linear"
    convention: str = "trec"
    beta: float = 1.0


Compute = Callable[["JudgedRows", Measure, int], "np.ndarray"]


@dataclass(frozen=True)
class Family:
    """A measure family as its compute function declares it.

    ``cutoff``: ``@k`` is required, optional or refused, or ``fraction``: a required
    recall level in [0, 1] such as ``IPrec@0.5``; ``takes_rel``: ``rel=`` sets the
    relevance threshold (otherwise the family uses graded gains or none); ``conventions``:
    ``'trec'`` first, then other libraries' definitions by name; ``gains``: the ``dcg=``
    values accepted; ``beta``: whether ``beta=`` weighs recall against precision (SetF);
    ``compute(rows, measure, rel)`` gives the per-query values.
    """

    name: str
    cutoff: Cutoff
    takes_rel: bool
    conventions: tuple[str, ...]
    gains: tuple[str, ...]
    compute: Compute
    beta: bool = False


FAMILIES: dict[str, Family] = {}


def family(
    name: str,
    *,
    cutoff: Cutoff,
    rel: bool,
    conventions: tuple[str, ...] = ("trec",),
    gains: tuple[str, ...] = ("linear",),
    beta: bool = False,
) -> Callable[[Compute], Compute]:
    """Register the decorated compute function as measure family ``name``."""

    def register(compute: Compute) -> Compute:
        if name in FAMILIES or name in ALIASES:
            raise ValueError(f"measure family {name!r} is declared twice")
        FAMILIES[name] = Family(name, cutoff, rel, conventions, gains, compute, beta)
        return compute

    return register


def measure_names() -> tuple[str, ...]:
    """Every family name, then every alias."""
    return tuple(FAMILIES) + tuple(ALIASES)


def parse_measure(name: str | Measure) -> Measure:
    """Parse a measure name in ir_measures syntax: ``Family(param=value, ...)@k``.

    Families: Success (alias Hit), P, R, F1, RR (alias MRR), AP (alias MAP), nDCG, Rprec,
    Bpref, Judged, NumQ, NumRel, NumRet, NumRelRet, NumNonRelJudgedRet, infAP, IPrec@r
    (r a recall level), SetP, SetR, SetF, SetAP. Parameters: ``rel=L`` on the binary
    measures, ``dcg='exp-log2'`` on nDCG, ``beta=x`` on SetF, ``convention='…'`` for
    another library's definition.
    An unknown family raises ``ValueError`` listing the valid ones (``MEASURE_NAMES``); a
    missing/forbidden cutoff, unknown parameter or convention raises ``ValueError`` too.
    """
    if isinstance(name, Measure):
        return name
    match = _NAME.match(name.strip()) if isinstance(name, str) else None
    if not match:
        raise ValueError(
            f"cannot read measure {name!r}; write e.g. nDCG@10 or P(rel=2)@5 "
            f"(valid measures: {', '.join(measure_names())})"
        )
    declared = FAMILIES.get(ALIASES.get(match["family"], match["family"]))
    if declared is None:
        raise ValueError(
            f"unknown measure {match['family']!r}; valid measures: {', '.join(measure_names())}"
        )
    params = _params(name, match["params"])
    k = _cutoff(declared, match["k"])
    if declared.cutoff in ("required", "fraction") and k is None:
        raise ValueError(f"{declared.name} needs a cutoff, e.g. {declared.name}@10")
    if declared.cutoff == "none" and k is not None:
        raise ValueError(f"{declared.name} takes no cutoff")
    if k is not None and k < 1 and declared.cutoff != "fraction":
        raise ValueError("the cutoff must be at least 1")
    rel = None
    if "rel" in params:
        if not declared.takes_rel:
            raise ValueError(f"{declared.name} does not take rel= (it uses graded gains or none)")
        try:
            rel = int(params.pop("rel"))
        except ValueError:
            raise ValueError(f"rel must be an integer in {name!r}") from None
    dcg = params.pop("dcg", "linear")
    if dcg not in declared.gains:
        raise ValueError(f"dcg={dcg!r} is not supported here; nDCG takes 'linear' or 'exp-log2'")
    convention = params.pop("convention", "trec")
    if convention not in declared.conventions:
        raise ValueError(
            f"{declared.name} has no convention {convention!r}; "
            f"choose one of {', '.join(declared.conventions)}"
        )
    beta = 1.0
    if "beta" in params and declared.beta:
        beta = float(params.pop("beta"))
    if params:
        raise ValueError(f"unknown parameter(s) {', '.join(params)} in {name!r}")
    return Measure(name, declared.name, k, rel, dcg, convention, beta)


def _cutoff(declared: Family, text: str | None) -> int | float | None:
    """``@k``: a whole number of results, or a recall level in [0, 1] for ``fraction``."""
    if text is None:
        return None
    if declared.cutoff == "fraction":
        level = float(text)
        if level > 1:
            raise ValueError(f"{declared.name} takes a recall level between 0 and 1, e.g. @0.5")
        return level
    if "." in text:
        raise ValueError(f"the cutoff of {declared.name} must be a whole number")
    return int(text)


def _params(name: str, text: str | None) -> dict[str, str]:
    """``key=value`` pairs of a measure name's parentheses; a key given twice is an error."""
    params: dict[str, str] = {}
    for part in filter(None, (text or "").split(",")):
        param = _PARAM.match(part)
        if not param:
            raise ValueError(f"cannot read parameter {part.strip()!r} of {name!r}")
        value = param["n"] if param["n"] is not None else (param["s"] or param["d"] or "")
        if param["key"] in params:
            raise ValueError(f"parameter {param['key']!r} given twice in {name!r}")
        params[param["key"]] = value
    return params
