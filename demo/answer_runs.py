"""Answer runs constructed for the demo (``python -m demo.answer_runs`` writes them into
``data/demo/<project>/answers/``; the demo loads the files as they are).

No system wrote these answers: each is composed from the nuggets' evidence passages (the
sentences of relevant documents that state each fact), with citations made correct,
wrong or missing on purpose, so that every answer measure has something to show:

- ``grounded`` (simple JSONL): one sentence per nugget, citing exactly its passage;
- ``loose`` (simple JSONL): the same sentences, but every third cites a document that the
  qrels do not list for the query (wrong), every third has no citation (missing), the
  rest cite the whole relevant document; the last nugget is left out;
- ``padded`` (TREC RAG 2024 JSONL): the first half of the nuggets, citing their documents
  through ``references``, then a sentence taken from a document not listed for the query,
  citing that document (an unsupported claim with a wrong citation).

Deterministic: the same data files give the same answers.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "data" / "demo"
RUNS = ("grounded", "loose", "padded")


def _sentence(text: str, chinese: bool) -> str:
    text = text.strip()
    if chinese:
        return text if text[-1:] in "。！？" else text + "。"
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?" else text + "."


def _first_sentence(text: str, chinese: bool) -> tuple[int, int]:
    """Characters of a document's first sentence (after its title line)."""
    start = text.find("\n") + 1 if "\n" in text[:200] else 0
    stops = "。" if chinese else "."
    ends = [text.find(s, start + 10) for s in stops]
    ends = [e for e in ends if e > 0]
    end = min(ends) + 1 if ends else min(len(text), start + 120)
    return start, min(end, start + 300)


def build(folder: Path, chinese: bool) -> dict[str, list[dict]]:
    nuggets: dict[str, list[dict]] = defaultdict(list)
    for line in (folder / "nuggets.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        nuggets[row["qid"]].append(row)
    listed: dict[str, set[str]] = defaultdict(set)
    for line in (folder / "qrels.txt").read_text(encoding="utf-8").splitlines():
        qid, _zero, doc_id, _grade = line.split()
        listed[qid].add(doc_id)
    documents = {}
    for line in (folder / "documents.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        documents[row["doc_id"]] = row["text"]
    ids = sorted(documents, key=lambda d: (len(d), d))

    def unlisted(qid: str, salt: int) -> str:
        """A document the qrels do not list for the query (deterministic)."""
        at = (sum(map(ord, qid)) * 31 + salt * 17) % len(ids)
        while ids[at] in listed[qid] or not documents[ids[at]].strip():
            at = (at + 1) % len(ids)
        return ids[at]

    runs: dict[str, list[dict]] = {name: [] for name in RUNS}
    for qid in sorted(nuggets, key=lambda q: (len(q), q)):
        facts = [(n, n["evidence"][0]) for n in nuggets[qid]]
        grounded, loose = [], []
        for i, (_n, ev) in enumerate(facts):
            text = _sentence(ev["text"], chinese)
            grounded.append(
                {
                    "text": text,
                    "citations": [{"doc_id": ev["doc_id"], "start": ev["start"], "end": ev["end"]}],
                }
            )
            if i == len(facts) - 1 and len(facts) > 1:
                continue  # the last fact left out
            if i % 3 == 0:
                cited = [{"doc_id": unlisted(qid, i)}]  # wrong
            elif i % 3 == 1:
                cited = []  # missing
            else:
                cited = [{"doc_id": ev["doc_id"]}]
            loose.append({"text": text, "citations": cited})
        runs["grounded"].append({"qid": qid, "run_id": "grounded", "sentences": grounded})
        runs["loose"].append({"qid": qid, "run_id": "loose", "sentences": loose})
        half = facts[: max(1, (len(facts) + 1) // 2)]
        references: list[str] = []
        answer = []
        for _n, ev in half:
            if ev["doc_id"] not in references:
                references.append(ev["doc_id"])
            answer.append(
                {
                    "text": _sentence(ev["text"], chinese),
                    "citations": [references.index(ev["doc_id"])],
                }
            )
        stray = unlisted(qid, 99)
        start, end = _first_sentence(documents[stray], chinese)
        references.append(stray)
        answer.append(
            {
                "text": _sentence(documents[stray][start:end], chinese),
                "citations": [len(references) - 1],
            }
        )
        runs["padded"].append(
            {
                "run_id": "padded",
                "topic_id": qid,
                "topic": "",
                "references": references,
                "response_length": sum(len(a["text"].split()) for a in answer),
                "answer": answer,
            }
        )
    return runs


def write(folder: Path, chinese: bool) -> None:
    out = folder / "answers"
    out.mkdir(exist_ok=True)
    for name, lines in build(folder, chinese).items():
        with (out / f"{name}.jsonl").open("w", encoding="utf-8", newline="\n") as handle:
            for line in lines:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":  # pragma: no cover - run by hand when the nuggets change
    for project, chinese in (("cranfield", False), ("lecard", True)):
        write(ROOT / project, chinese)
    sys.stdout.write("answer runs written\n")
