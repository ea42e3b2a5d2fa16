"""`manage.py evaluate`: trec_eval's figures from files, text and JSON, bad lines named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from formats import FileRejected, read_qrels, read_run

CRANFIELD = Path(__file__).resolve().parent.parent / "data" / "demo" / "cranfield"
QRELS, BM25 = CRANFIELD / "qrels.txt", CRANFIELD / "runs" / "stevinjs_english_bm25.run"


def run_command(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("evaluate", *map(str, args), stdout=out)
    return out.getvalue()


def test_cranfield_bm25_reproduces_trec_eval():
    lines = run_command(QRELS, BM25, "-m", "nDCG@10", "-m", "RR").splitlines()
    assert [line.split() for line in lines] == [
        ["nDCG@10", "all", "0.3673"],
        ["RR", "all", "0.5268"],
    ]


def test_default_measures_and_json_with_per_query():
    result = json.loads(run_command(QRELS, BM25, "--json", "--per-query"))
    assert list(result["mean"]) == ["P@10", "R@100", "nDCG@10", "AP", "RR", "Success@10"]
    assert len(result["per_query"]) == 225
    assert round(result["mean"]["AP"], 4) == 0.2914
    assert set(result["per_query"]["1"]) == set(result["mean"])


def test_per_query_text_and_counts(tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 2\n1 0 b 0\n2 0 c 1\n")
    run = tmp_path / "r.jsonl"
    run.write_text('{"qid": "1", "retrieved": ["b", "a"], "scores": [2, 1]}\n')
    text = run_command(qrels, run, "-m", "RR", "-m", "NumRet", "--per-query")
    assert [line.split() for line in text.splitlines()] == [
        ["RR", "1", "0.5000"],
        ["NumRet", "1", "2"],
        ["RR", "2", "0.0000"],
        ["NumRet", "2", "0"],
        ["RR", "all", "0.2500"],
        ["NumRet", "all", "2"],  # counts are summed on the all line, as in trec_eval
    ]
    both = json.loads(run_command(qrels, run, "-m", "NumRet", "--json"))
    assert both == {"mean": {"NumRet": 1.0}, "sum": {"NumRet": 2.0}}
    only = json.loads(
        run_command(qrels, run, "-m", "RR", "--json", "--run-queries-only", "--per-query")
    )
    assert only == {"mean": {"RR": 0.5}, "sum": {}, "per_query": {"1": {"RR": 0.5}}}
    gold = tmp_path / "g.jsonl"
    gold.write_text('{"qid": "1", "gold_evidence": ["a"], "rel_map": {"b": 0}}\n')
    assert json.loads(run_command(gold, run, "-m", "RR", "--json"))["mean"]["RR"] == 0.5


def test_bad_files_name_their_lines(tmp_path):
    run = tmp_path / "r.run"
    run.write_text("1 Q0 a 1 2.0 x\n1 Q0 b 2\n1 Q0 a 3 1.0 x\n1 Q0 c 4 high x\n")
    with pytest.raises(FileRejected) as raised:
        read_run(run)
    assert raised.value.errors == [  # every bad line at once, as imports report them
        "line 2: expected 6 columns 'qid Q0 docid rank score tag', found 4",
        "line 3: item 'a' appears again for query '1' (first on line 1)",
        "line 4: score 'high' is not a number",
    ]
    run.write_text("1 Q0 a 1 2.0 x\n1 Q0 c 4 high x\n1 Q0 a 3 1.0 x\n")
    with pytest.raises(FileRejected) as raised:
        read_run(run)
    assert raised.value.errors == [
        "line 2: score 'high' is not a number",
        "line 3: item 'a' appears again for query '1' (first on line 1)",
    ]
    run.write_text("1 Q0 a 1 2.0 x\n1 Q0 b 4 1.5 x\n1 Q0 a 3 1.0 x\n")
    with pytest.raises(FileRejected) as raised:
        read_run(run)
    assert raised.value.errors == ["line 3: item 'a' appears again for query '1' (first on line 1)"]
    qrels = tmp_path / "q.txt"
    qrels.write_bytes(b"1 0 caf\xe9 1\n")
    with pytest.raises(FileRejected, match="not UTF-8"):
        read_qrels(qrels)
    qrels.write_text("1 0 a one\n")
    with pytest.raises(CommandError, match="line 1: grade must be a whole number, not 'one'"):
        run_command(qrels, BM25)
    with pytest.raises(CommandError, match="unknown measure 'Precision'"):
        run_command(QRELS, BM25, "-m", "Precision@5")
    with pytest.raises(CommandError, match="no such file"):
        run_command(tmp_path / "missing.txt", BM25)
    bad_json = tmp_path / "r.jsonl"
    bad_json.write_text('{"qid": "1", "retrieved": ["a"]}\nnot json\n{"qid": "2"}\n')
    with pytest.raises(FileRejected) as raised:
        read_run(bad_json)
    assert raised.value.errors[0].startswith("line 2: malformed JSON")
    assert raised.value.errors[1].startswith("line 3: expected an object with")


def test_trec_eval_names_are_aliases_beside_ir_measures_names():
    text = run_command(
        QRELS,
        BM25,
        "-m",
        "ndcg_cut_10",
        "-m",
        "nDCG@10",
        "-m",
        "recip_rank",
        "-m",
        "RR",
        "-m",
        "P.5,10",
        "-m",
        "num_rel_ret",
        "-m",
        "NumRelRet",
    )
    rows = [line.split() for line in text.splitlines()]
    assert [r[0] for r in rows] == [
        "ndcg_cut_10",
        "nDCG@10",
        "recip_rank",
        "RR",
        "P_5",
        "P_10",
        "num_rel_ret",
        "NumRelRet",
    ]
    assert rows[0][2] == rows[1][2] == "0.3673" and rows[2][2] == rows[3][2] == "0.5268"
    assert rows[6][2] == rows[7][2] and rows[6][2].isdigit()
    with pytest.raises(CommandError, match="or a trec_eval name: runid, num_q"):
        run_command(QRELS, BM25, "-m", "ndcg_cutoff_10")


def test_empty_inputs_are_errors_and_gz_is_read(tmp_path):
    import gzip

    empty = tmp_path / "empty.run"
    empty.write_text("# only a comment\n\n")
    with pytest.raises(CommandError, match="the file holds no results"):
        run_command(QRELS, empty)
    packed = tmp_path / "bm25.run.gz"
    packed.write_bytes(gzip.compress(BM25.read_bytes()))
    assert run_command(QRELS, packed, "-m", "RR") == run_command(QRELS, BM25, "-m", "RR")
    elsewhere = tmp_path / "elsewhere.run"
    elsewhere.write_text("no-such-query Q0 d 1 1.0 x\n")
    with pytest.raises(CommandError, match="no query of the run is in the qrels"):
        run_command(QRELS, elsewhere)
