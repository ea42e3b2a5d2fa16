import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.bm25 import build_index, search, tokenize


def reference_scores(texts, query, k1=1.2, b=0.75):
    """BM25 straight from the formula, one document at a time."""
    docs = [Counter(tokenize(t)) for t in texts]
    lengths = [sum(d.values()) for d in docs]
    avgdl = (sum(lengths) / len(docs)) if sum(lengths) else 1.0
    n = len(docs)
    scores = []
    for doc, length in zip(docs, lengths, strict=True):
        score = 0.0
        for term, qtf in Counter(tokenize(query)).items():
            df = sum(1 for d in docs if term in d)
            if df == 0 or term not in doc:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = doc[term]
            score += qtf * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))
        scores.append(score)
    return scores


def test_tokenize_english_and_chinese():
    assert tokenize("The Flow over a WING, 2 times.") == ["flow", "over", "wing", "2", "times"]
    assert tokenize("盗窃罪") == ["盗", "窃", "罪", "盗窃", "窃罪"]


def test_chinese_query_finds_the_right_case():
    texts = ["被告人盗窃财物", "被告人醉酒驾驶机动车", "滥伐林木"]
    q, d, s = search(build_index(texts), ["醉酒驾驶"], k=3)
    assert d[0] == 1 and q.tolist() == [0] * len(q)
    assert np.all(np.diff(s) <= 0)


WORDS = st.sampled_from(["wing", "lift", "flow", "drag", "mach", "升力", "机翼", "the"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(WORDS, max_size=12).map(" ".join), min_size=1, max_size=8),
    st.lists(st.lists(WORDS, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=4),
)
def test_scores_equal_the_formula(texts, queries):
    index = build_index(texts)
    q, d, s = search(index, queries, k=len(texts))
    for qi, query in enumerate(queries):
        expected = reference_scores(texts, query)
        got = dict(zip(d[q == qi].tolist(), s[q == qi].tolist(), strict=True))
        for doc, value in enumerate(expected):
            assert math.isclose(got.get(doc, 0.0), value, rel_tol=1e-12, abs_tol=1e-12)
        ranked = s[q == qi]
        assert np.all(np.diff(ranked) <= 0)


def test_batches_give_the_same_result():
    texts = [f"wing {'lift ' * i} flow" for i in range(30)]
    queries = ["lift", "flow wing", "drag"]
    whole = search(build_index(texts), queries, k=5)
    batched = search(build_index(texts), queries, k=5, batch_cells=31)
    for a, b in zip(whole, batched, strict=True):
        assert a.tolist() == b.tolist()
