"""A level's units at *large*'s size: what a first render derives from 5,000,000 chunk ids.

    .venv/bin/python -m bench units

5,000,000 chunk ids as the scale benchmark names them (``doc-0001234#c3``, shuffled) and
1,000,000 URL-like document ids sharing a 33-byte prefix. Timed, median of REPEATS:

- the ids' byte-order codes (``numerics.id_order.byte_order_codes``: trec_eval's tie
  order, needed by every page that ranks or evaluates at the level), beside an ``argsort``
  of the encoded ids as Python ``bytes`` (what the codes are defined by);
- reading the level's units back from their file's arrays (``gold.kept_units``) and what
  a page then takes from them (fingerprint, codes, size);
- finding the units of 300 adjudicated spans (``gold.units.adjudicated_units``: every
  gold, queue and coverage computation of a project with adjudications).

Needs Django set up (``gold.units`` is a Django module); no database is touched.
"""

from __future__ import annotations

import os

import numpy as np

from bench.bench_measures import median_time

N_CHUNKS = 5_000_000
N_URLS = 1_000_000
N_ADJUDICATIONS = 300
REPEATS = 3


def _ids(n: int, pattern: str, seed: int = 5) -> np.ndarray:
    order = np.random.default_rng(seed).permutation(n)
    ids = np.empty(n, dtype=object)
    ids[:] = [pattern.format(i // 5, i % 5, i) for i in order.tolist()]
    return ids


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from gold.kept_units import _arrays_of, _units_of
    from gold.units import Units, adjudicated_units
    from numerics.id_order import byte_order_codes

    chunks = _ids(N_CHUNKS, "doc-{0:07d}#c{1}")
    urls = _ids(N_URLS, "https://www.example.org/articles/{2}")

    def python_sort(ids):
        encoded = np.empty(ids.size, dtype=object)
        encoded[:] = [i.encode() for i in ids.tolist()]
        return np.argsort(encoded, kind="stable")

    print(f"median of {REPEATS} runs (Python sort: one run)\n")
    print("| step | seconds |")
    print("|---|---:|")
    for name, ids in [(f"{N_CHUNKS:,} chunk ids", chunks), (f"{N_URLS:,} URLs", urls)]:
        ours = median_time(lambda ids=ids: byte_order_codes(ids), REPEATS)
        python = median_time(lambda ids=ids: python_sort(ids), 1)
        print(f"| byte-order codes, {name} | {ours:.2f} |")
        print(f"| Python sort of the encoded ids, {name} | {python:.2f} |")
    units = Units("c", chunks, *[np.arange(N_CHUNKS, dtype=np.int64)] * 4)
    arrays = _arrays_of(units)

    def first_use():
        back = _units_of("c", arrays)
        return back.fingerprint, back.codes, back.nbytes

    seconds = median_time(first_use, REPEATS)
    print(f"| units from their file and first use, {N_CHUNKS:,} chunks | {seconds:.2f} |")
    labels = _adjudications(N_ADJUDICATIONS, N_CHUNKS // 5)
    spans = Units("c", chunks, np.arange(N_CHUNKS), *_chunk_spans(N_CHUNKS // 5))
    seconds = median_time(lambda: adjudicated_units(labels, spans), REPEATS)
    print(
        f"| units of {N_ADJUDICATIONS} adjudicated spans among {N_CHUNKS:,} chunks "
        f"| {seconds:.2f} |"
    )


def _chunk_spans(documents: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(document, start, end) of 5 chunks of 100 characters per document."""
    start = np.tile(np.arange(5, dtype=np.int64) * 100, documents)
    return np.repeat(np.arange(documents, dtype=np.int64), 5), start, start + 100


def _adjudications(n: int, documents: int):
    """``n`` adjudications of whole chunks of random documents."""
    from gold.units import LabelRows

    rng = np.random.default_rng(9)
    start = rng.integers(0, 5, n) * 100
    query, grade = rng.integers(1, 10_000, n), rng.integers(0, 4, n)
    document = rng.integers(0, documents, n)
    return LabelRows(query, np.full(n, -1), document, start, start + 100, grade, annotators=[])


if __name__ == "__main__":
    main()
