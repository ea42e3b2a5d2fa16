"""`manage.py trec_eval`: trec_eval's names, flags, layout and inputs, checked by hand and
against pytrec_eval on files written in the shape of trec_eval's own test files."""

from __future__ import annotations

import gzip
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from django.core.management import CommandError, call_command

from numerics.measures.trec_eval import OFFICIAL, measure_columns_of

ROOT = Path(__file__).resolve().parent.parent

# In the shape of trec_eval's test files: comment lines, graded judgments with a pooled
# but unjudged item (-1), a query only the qrels know (q3), one only the run knows (q4),
# tabs and runs of spaces, extra fields after the run tag, a score tie (d1, d3).
QRELS = """# judged by hand: graded, one pooled but unjudged (-1)
q1 0 d1 2
q1 0 d2 0
q1 0 d3 1
q1 0 d4 -1
q2 0 e1 1
q3 0 f1 1
"""
RUN = """# run written by hand
q1 Q0 d2 1 3.0 hand extra fields
q1\tQ0\td9  2\t2.0\thand
q1 Q0   d1 3 1.0 hand
q1 Q0 d3 4 1.0 hand
q2 Q0 e2 1 5 hand
q2 Q0 e1 2 4 hand
q4 Q0 z1 1 1 hand
"""
MEASURES = ["-m", "map", "-m", "P.2,5", "-m", "recip_rank", "-m", "num_ret", "-m", "num_rel"]
MEASURES += ["-m", "num_rel_ret", "-m", "ndcg_cut.3", "-m", "bpref"]


def trec_eval(*args) -> str:
    out = StringIO()
    call_command("trec_eval", *map(str, args), stdout=out)
    return out.getvalue()


@pytest.fixture
def hand(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path / "qrels", tmp_path / "run"


def test_small_case_derived_by_hand_byte_for_byte(hand):
    # q1 ranks d2 (grade 0), d9 (unjudged), then the tie at 1.0 by id descending: d3 (1)
    # before d1 (2); R = 2. AP = (1/3 + 2/4) / 2 = 0.41667; RR = 1/3; P@5 = 2/5;
    # nDCG@3 = (1/log2 4) / (2/log2 2 + 1/log2 3) = 0.19005; bpref: one judged
    # non-relevant item above both relevant ones, N = 1 → 0.
    # q2 ranks e2 (unjudged), e1 (1): AP = RR = P@2 = 0.5, nDCG@3 = 1/log2 3 = 0.63093,
    # bpref = 1 (no judged non-relevant item). q3 (qrels only) and q4 (run only) are left
    # out; the counts' all lines are sums.
    expected = """\
num_ret               \tq1\t4
num_rel               \tq1\t2
num_rel_ret           \tq1\t2
map                   \tq1\t0.4167
bpref                 \tq1\t0.0000
recip_rank            \tq1\t0.3333
P_2                   \tq1\t0.0000
P_5                   \tq1\t0.4000
ndcg_cut_3            \tq1\t0.1900
num_ret               \tq2\t2
num_rel               \tq2\t1
num_rel_ret           \tq2\t1
map                   \tq2\t0.5000
bpref                 \tq2\t1.0000
recip_rank            \tq2\t0.5000
P_2                   \tq2\t0.5000
P_5                   \tq2\t0.2000
ndcg_cut_3            \tq2\t0.6309
num_ret               \tall\t6
num_rel               \tall\t3
num_rel_ret           \tall\t3
map                   \tall\t0.4583
bpref                 \tall\t0.5000
recip_rank            \tall\t0.4167
P_2                   \tall\t0.2500
P_5                   \tall\t0.3000
ndcg_cut_3            \tall\t0.4105
"""
    assert trec_eval("-q", *MEASURES, *hand) == expected
    per_query_only = "".join(expected.splitlines(keepends=True)[:18])
    assert trec_eval("-q", "-n", *MEASURES, *hand) == per_query_only


def test_complete_averages_over_every_qrels_query(hand):
    # -c: q3 counts with 0 (AP (0.41667 + 0.5 + 0) / 3); runid is the last line's tag;
    # num_rel's all line counts the judgments above 0, as trec_eval does under -c.
    expected = """\
runid                 \tall\thand
num_q                 \tall\t3
num_rel               \tall\t4
map                   \tall\t0.3056
"""
    assert trec_eval("-c", "-m", "map", "-m", "num_rel", "-m", "num_q", "-m", "runid", *hand) == (
        expected
    )
    per_query = trec_eval("-c", "-q", "-m", "num_ret", "-m", "num_rel", *hand).splitlines()
    assert [line.split("\t")[1] for line in per_query] == ["q1"] * 2 + ["q2"] * 2 + ["q3"] * 2 + [
        "all"
    ] * 2
    assert per_query[4:6] == ["num_ret               \tq3\t0", "num_rel               \tq3\t1"]


def test_official_is_the_default_with_trec_evals_names(hand):
    names = [line.split("\t")[0].rstrip() for line in trec_eval(*hand).splitlines()]
    levels = [f"iprec_at_recall_{x / 10:3.2f}" for x in range(11)]
    cutoffs = [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert names == OFFICIAL[:10] + levels + cutoffs
    assert trec_eval("-m", "official", *hand) == trec_eval(*hand)
    all_trec = [c.name for c in measure_columns_of(["all_trec"])]
    assert "Rprec_mult_0.20" in all_trec and "set_F" in all_trec and "11pt_avg" in all_trec


def test_relevance_level_and_interpolated_precision(tmp_path):
    # R = 4 relevant at level 1 (d1..d4), ranked 1, 3, 6, 8 of 8. Precision at each: 1,
    # 2/3, 1/2, 1/2. Recall level 0.3 stands for lround(1.2) = 1 relevant item (trec_eval
    # 10; pytrec_eval's trec_eval 9 took ⌊1.2 + 0.9⌋ = 2): the best precision from the
    # first relevant item down, 1. Level 0.5 → 2 items → max(2/3, 1/2, 1/2).
    qrels = tmp_path / "qrels"
    qrels.write_text(
        "".join(f"1 0 d{i} {g}\n" for i, g in zip(range(1, 6), (1, 3, 1, 1, 0), strict=True))
    )
    run = tmp_path / "run"
    order = ["d1", "x1", "d2", "x2", "d5", "d3", "x3", "d4"]
    run.write_text("".join(f"1 Q0 {d} {i} {10 - i} t\n" for i, d in enumerate(order, 1)))
    text = trec_eval("-m", "iprec_at_recall.0.3,0.5", "-m", "num_rel", "-m", "P.3", qrels, run)
    assert text.splitlines() == [
        "num_rel               \tall\t4",
        "iprec_at_recall_0.30  \tall\t1.0000",
        "iprec_at_recall_0.50  \tall\t0.6667",
        "P_3                   \tall\t0.6667",
    ]
    level3 = trec_eval("-l3", "-m", "num_rel", "-m", "P.3", "-m", "map", qrels, run)
    assert level3.splitlines() == [  # only d2 (grade 3) is relevant: rank 3
        "num_rel               \tall\t1",
        "map                   \tall\t0.3333",
        "P_3                   \tall\t0.3333",
    ]


def _dicts(qrels_text: str, run_text: str):
    qrels, run = {}, {}
    for line in qrels_text.splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    for line in run_text.splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            run.setdefault(f[0], {})[f[2]] = float(f[4])
    return qrels, run


def _collection(seed: int) -> tuple[str, str]:
    """Ten queries (one only judged, one only retrieved) in trec_eval's file shape; scores
    are float32-exact so that pytrec_eval (float32 scores) ranks as trec_eval 10 does."""
    rng = np.random.default_rng(seed)
    qrels, run = ["# qrels"], ["# run"]
    for q in range(10):
        docs = rng.permutation(60)[:40]
        if q != 9:
            for d in docs[:25]:
                qrels.append(f"q{q} 0 doc{d} {rng.choice([-1, 0, 0, 1, 2, 3, 4])}")
        if q != 8:
            scores = rng.integers(0, 12, size=docs.size) / 4  # ties on purpose
            for rank, (d, s) in enumerate(zip(docs, scores, strict=True), 1):
                extra = " more fields" if rank % 7 == 0 else ""
                run.append(f"q{q}\tQ0 doc{d}  {rank} {s} tag{extra}")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("seed", [1, 2])
def test_every_value_agrees_with_pytrec_eval(tmp_path, seed, level):
    qrels_text, run_text = _collection(seed)
    (tmp_path / "qrels").write_text(qrels_text)
    (tmp_path / "run").write_text(run_text)
    out = trec_eval("-q", "-m", "all_trec", f"-l{level}", tmp_path / "qrels", tmp_path / "run")
    qrels, run = _dicts(qrels_text, run_text)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, pytrec_eval.supported_measures, relevance_level=level
    )
    reference = evaluator.evaluate(run)
    compared = 0
    sums: dict[str, float] = {}
    for line in out.splitlines():
        name, qid, value = line.split("\t")
        name = name.strip()
        if qid == "all":
            continue
        if name == "relstring":
            continue
        sums[name] = sums.get(name, 0.0) + float(value)
        if name not in reference[qid]:  # trec_eval 10's rbp, rbp_resid, unj
            continue
        # Recall levels: pytrec_eval keeps trec_eval 9's rounding (docs/trec_eval.md).
        if name.startswith(("iprec_at_recall", "11pt_avg")):
            continue
        assert float(value) == pytest.approx(reference[qid][name], abs=5e-5), (name, qid)
        compared += 1
    assert sorted({line.split("\t")[1] for line in out.splitlines()}) == [
        "all",
        "q0",
        "q1",
        "q2",
        "q3",
        "q4",
        "q5",
        "q6",
        "q7",
    ]
    assert compared > 8 * 60
    summary = {
        line.split("\t")[0].strip(): line.split("\t")[2]
        for line in out.splitlines()
        if line.split("\t")[1] == "all"
    }
    for count in ("num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"):
        assert int(summary[count]) == sums[count]  # counts are summed, not averaged
    assert summary["num_q"] == "8"


def test_unsupported_names_and_bad_parameters_are_clear_errors(hand):
    with pytest.raises(CommandError, match="unsupported trec_eval measure 'yaap'; supported: "):
        trec_eval("-m", "yaap", *hand)
    with pytest.raises(CommandError, match="utility takes four weights"):
        trec_eval("-m", "utility.1,2", *hand)
    with pytest.raises(CommandError, match="write level=gain pairs"):
        trec_eval("-m", "ndcg.1", *hand)
    with pytest.raises(CommandError, match="must be positive"):
        trec_eval("-m", "P.0,5", *hand)
    with pytest.raises(CommandError, match="duplicate cutoffs"):
        trec_eval("-m", "P.5,5", *hand)
    with pytest.raises(CommandError, match="takes no parameters"):
        trec_eval("-m", "map.5", *hand)


def test_other_formats_and_gzip_give_the_same_output(hand, tmp_path):
    qrels, run = hand
    expected = trec_eval("-q", *MEASURES, qrels, run)
    packed = tmp_path / "run.trec.gz"
    packed.write_bytes(gzip.compress(run.read_bytes()))
    assert trec_eval("-q", *MEASURES, qrels, packed) == expected
    table = tmp_path / "run.csv"
    table.write_text(
        "qid,docid,score\n"
        + "".join(
            f"{f[0]},{f[2]},{f[4]}\n"
            for f in (line.split() for line in RUN.splitlines())
            if f and not f[0].startswith("#")
        )
    )
    assert trec_eval("-q", *MEASURES, qrels, table) == expected


def test_the_command_line_runs_without_the_web_stack(hand):
    """Through manage.py as a user runs it: --version, a closed pipe, no Django setup."""
    manage = [sys.executable, str(ROOT / "manage.py")]
    version = subprocess.run([*manage, "trec_eval", "--version"], capture_output=True, text=True)
    assert version.stderr.startswith("trec_eval version 10.0 (Assay ")  # as trec_eval: stderr
    # The reader is gone before the command writes: no traceback, as with `| head`.
    closed = subprocess.Popen(
        [*manage, "trec_eval", "-q", "-m", "all_trec", *map(str, hand)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    closed.stdout.close()
    errors = closed.stderr.read()
    closed.wait()
    assert "Traceback" not in errors and "BrokenPipe" not in errors
    probe = (
        "import sys, runpy; sys.argv = ['manage.py', 'trec_eval', '-m', 'map', "
        f"{str(hand[0])!r}, {str(hand[1])!r}]; runpy.run_path({str(ROOT / 'manage.py')!r}, "
        "run_name='__main__'); import django.apps; "
        "print('apps ready' if django.apps.apps.ready else 'no apps', file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout == "map                   \tall\t0.4583\n"
    assert result.stderr.strip() == "no apps"


def test_qrels_are_known_by_their_content_whatever_their_name(hand, tmp_path):
    # "qrels cannot be read from trec" was the answer for qrels.trec: the name decided.
    qrels, run = hand
    expected = trec_eval("-m", "map", qrels, run)
    for name in ("qrels.trec", "qrels.txt", "2019qrels-pass.txt", "test.qrels"):
        renamed = tmp_path / name
        renamed.write_bytes(qrels.read_bytes())
        assert trec_eval("-m", "map", renamed, run) == expected
    out = StringIO()
    call_command("evaluate", str(tmp_path / "qrels.trec"), str(run), "-m", "map", stdout=out)
    assert "map" in out.getvalue()


def test_run_from_standard_input_gzip_crlf_and_comments(hand, tmp_path):
    qrels, run = hand
    expected = trec_eval("-q", *MEASURES, qrels, run)
    windows = tmp_path / "run.any"
    windows.write_bytes(gzip.compress(run.read_bytes().replace(b"\n", b"\r\n")))
    assert trec_eval("-q", *MEASURES, qrels, windows) == expected
    done = subprocess.run(
        [sys.executable, "manage.py", "trec_eval", "-q", *MEASURES, str(qrels), "-"],
        input=run.read_bytes(),
        capture_output=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == expected


def test_version_and_trec_eval_s_long_options(hand):
    qrels, run = hand
    done = subprocess.run(
        [sys.executable, "manage.py", "trec_eval", "-v"], capture_output=True, cwd=ROOT
    )
    # -v was Django's verbosity and wanted the two files; trec_eval prints its version.
    assert done.returncode == 0 and done.stderr.startswith(b"trec_eval version 10.0 (Assay ")
    long = trec_eval(
        "--query_eval_wanted",
        "--measure",
        "map",
        "--complete_rel_info_wanted",
        "--level_for_rel",
        "2",
        "--nosummary",
        qrels,
        run,
    )
    assert long == trec_eval("-q", "-m", "map", "-c", "-l", "2", "-n", qrels, run)
    with pytest.raises(CommandError, match="prefs"):
        trec_eval("-R", "prefs", qrels, run)


def test_max_results_per_topic_and_judged_documents_only(hand):
    # q1 ranks d2 (0), d9 (unjudged), d3 (1), d1 (2); R = 2.
    qrels, run = hand
    top2 = trec_eval("-q", "-M", "2", "-m", "map", "-m", "num_ret", qrels, run)
    assert (
        "num_ret               \tq1\t2\n" in top2 and "map                   \tq1\t0.0000\n" in top2
    )
    # -J: d9 leaves before ranking; d2, d3, d1 rank 1, 2, 3: AP = (1/2 + 2/3) / 2.
    judged = trec_eval("-q", "-J", "-m", "map", "-m", "num_ret", qrels, run)
    assert (
        "num_ret               \tq1\t3\n" in judged
        and "map                   \tq1\t0.5833\n" in judged
    )


def test_every_command_ends_quietly_on_a_closed_pipe():
    # `export_run … | head` ended in a BrokenPipeError traceback: manage.py now catches it
    # for every command (diffsettings stands in here: it needs no database).
    closed = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "diffsettings", "--all"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    closed.stdout.close()
    errors = closed.stderr.read()
    closed.wait()
    assert "Traceback" not in errors and "BrokenPipe" not in errors
    assert closed.returncode == 1


def test_blank_qrels_lines_are_skipped_and_the_docs_say_trec_eval_10_stops(hand, tmp_path):
    # docs/trec_eval.md said blank lines are skipped "as trec_eval 10 reads them"; the
    # binary stops at a blank qrels line (Malformed line, exit 2). Assay skips it and the
    # docs list that among the differences.
    qrels, run = hand
    spaced = tmp_path / "qrels"
    spaced.write_text(qrels.read_text().replace("\n", "\n\n", 1))
    assert trec_eval("-m", "map", spaced, run) == trec_eval("-m", "map", qrels, run)
    docs = (ROOT / "docs" / "trec_eval.md").read_text()
    differences = docs.split("## Differences")[1]
    assert "**A blank line in qrels**: trec_eval 10 stops" in differences
    assert "as trec_eval 10 reads them" not in docs


def test_z_scores_by_hand_and_a_bad_z_file_is_named(hand, tmp_path):
    qrels = tmp_path / "qrels_q1_q2"
    qrels.write_text("".join(line + "\n" for line in QRELS.splitlines() if "q3" not in line))
    zscores = tmp_path / "z"
    # map: q1 0.4167, q2 0.5; P_2: q1 0, q2 0.5; num_ret has no line (−1000000).
    zscores.write_text("q1 map 0.5 0.25\nq2 map 0.5 0.5\nq1 P_2 0.5 0\nq2 P_2 0.5 0\n\n")
    out = trec_eval("-q", "-m", "map", "-m", "P.2", "-m", "num_ret", "-Z", zscores, qrels, hand[1])
    assert out.splitlines() == [
        "Znum_ret               \tq1\t-1000000.0000",
        "Zmap                   \tq1\t-0.3333",  # (0.4167 − 0.5) / 0.25
        "ZP_2                   \tq1\t-1000000.0000",  # stddev 0, not the mean
        "Znum_ret               \tq2\t-1000000.0000",
        "Zmap                   \tq2\t0.0000",
        "ZP_2                   \tq2\t0.0000",  # stddev 0, the mean
        "Znum_ret               \tall\t-2000000.0000",
        "Zmap                   \tall\t-0.1667",
        "ZP_2                   \tall\t-500000.0000",
    ]
    zscores.write_text("q1 map 0.5\nq1 map x 1\n")
    with pytest.raises(CommandError, match=r"z:\nline 1: .*\nline 2: .*found q1 map x 1"):
        trec_eval("-m", "map", "-Z", zscores, *hand)


def test_judgment_groups_average_each_group_and_refuse_other_measures(hand, tmp_path):
    groups = tmp_path / "qrels_jg"
    # q1's top 2 are d2, d9. Group a judges d2 relevant, group b d1: P_2 is 1/2, 0.
    groups.write_text("q1 a d2 1\nq1 a d1 0\nq1 b d1 1\nq2 a e1 1\n")
    out = trec_eval("-q", "-R", "qrels_jg", "-m", "P_avgjg.2", groups, hand[1]).splitlines()
    assert out == [
        "P_avgjg_2             \tq1\t0.2500",
        "P_avgjg_2             \tq2\t0.5000",
        "P_avgjg_2             \tall\t0.3750",
    ]
    with pytest.raises(CommandError, match="only runid, num_q and map_avgjg"):
        trec_eval("-R", "qrels_jg", "-m", "map", groups, hand[1])
    with pytest.raises(CommandError, match="'qrels_jgx' is not offered"):
        trec_eval("-R", "qrels_jgx", "-m", "map", groups, hand[1])


PREFS = """# q1: one subgroup (classes by level); q2: group g1 has two subgroups (closed under
# transitivity: e1 > e2 > e3 gives e1 > e3), group g2 one
q1 g1 s1 d1 2
q1 g1 s1 d2 1
q1 g1 s1 d3 0
q2 g1 a e1 2
q2 g1 a e2 1
q2 g1 b e2 2
q2 g1 b e3 1
q2 g2 a e3 1
q2 g2 a e1 0
q2 g2 a e4 0
"""
# d3 and d1 tie: the preference measures rank ties by docno ascending (d1 first).
PREFS_RUN = """q1 Q0 d2 1 3 r
q1 Q0 d3 2 2 r
q1 Q0 d1 3 2 r
q1 Q0 d9 4 1 r
q2 Q0 e3 1 3 r
q2 Q0 e1 2 2 r
"""


def test_preference_measures_as_trec_eval_10_prints_them(tmp_path):
    (tmp_path / "prefs").write_text(PREFS)
    (tmp_path / "run").write_text(PREFS_RUN)
    files = (tmp_path / "prefs", tmp_path / "run")
    out = trec_eval("-q", "-m", "all_prefs", "-R", "prefs", *files).splitlines()
    # trec_eval 10.0's own output for these files (lines for q2 and the summary).
    assert out[14:] == [
        "prefs_num_prefs_poss  \tq2\t5",
        "prefs_num_prefs_ful   \tq2\t3",
        "prefs_num_prefs_ful_ret\tq2\t1",
        "prefs_simp            \tq2\t0.6000",
        "prefs_pair            \tq2\t0.6250",
        "prefs_avgjg           \tq2\t0.6667",
        "prefs_avgjg_Rnonrel   \tq2\t0.4583",
        "prefs_simp_ret        \tq2\t0.5000",
        "prefs_pair_ret        \tq2\t0.5000",
        "prefs_avgjg_ret       \tq2\t0.5000",
        "prefs_avgjg_Rnonrel_ret\tq2\t0.7857",
        "prefs_simp_imp        \tq2\t0.6000",
        "prefs_pair_imp        \tq2\t0.6250",
        "prefs_avgjg_imp       \tq2\t0.6667",
        "runid                 \tall\tr",
        "num_q                 \tall\t2",
        "prefs_num_prefs_poss  \tall\t8",
        "prefs_num_prefs_ful   \tall\t5",
        "prefs_num_prefs_ful_ret\tall\t3",
        "prefs_simp            \tall\t0.6333",
        "prefs_pair            \tall\t0.6458",
        "prefs_avgjg           \tall\t0.6667",
        "prefs_avgjg_Rnonrel   \tall\t0.6292",
        "prefs_simp_ret        \tall\t0.5833",
        "prefs_pair_ret        \tall\t0.5833",
        "prefs_avgjg_ret       \tall\t0.5833",
        "prefs_avgjg_Rnonrel_ret\tall\t0.7929",
        "prefs_simp_imp        \tall\t0.6333",
        "prefs_pair_imp        \tall\t0.6458",
        "prefs_avgjg_imp       \tall\t0.6667",
    ]
    assert "prefs_simp            \tq1\t0.6667" in out  # d1 above d3: 2 of 3 kept
    cut = trec_eval("-q", "-M2", "-m", "prefs_simp_ret", "-R", "prefs", *files).splitlines()
    assert cut == [
        "prefs_simp_ret        \tq1\t0.0000",
        "prefs_simp_ret        \tq2\t0.5000",
        "prefs_simp_ret        \tall\t0.2500",
    ]
    with pytest.raises(CommandError, match="need -R prefs or -R qrels_prefs"):
        trec_eval("-m", "prefs_simp", tmp_path / "prefs", tmp_path / "run")
    with pytest.raises(CommandError, match="not map"):
        trec_eval("-m", "map", "-R", "prefs", *files)
    (tmp_path / "bad").write_text("q1 g1 s1 d1 2\nq1 g1 s2 d1 0\nq1 g1 s2 d2 1\n")
    with pytest.raises(CommandError, match="both level 0 and a level above 0 in group 'g1'"):
        trec_eval("-m", "all_prefs", "-R", "prefs", tmp_path / "bad", tmp_path / "run")


def test_judged_only_query_without_a_judged_result_prints_trec_eval_s_nan(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 e1 1\n")
    (tmp_path / "run").write_text("q1 Q0 x 1 1 r\nq2 Q0 e1 1 1 r\n")
    files = (tmp_path / "qrels", tmp_path / "run")
    measures = ("-m", "iprec_at_recall.0,0.5", "-m", "11pt_avg.0,1", "-m", "num_ret")
    # trec_eval 10.0's output: with -J, q1 keeps no result; precision 0/0 at level 0.
    assert trec_eval("-q", "-J", *measures, *files).splitlines() == [
        "num_ret               \tq1\t0",
        "iprec_at_recall_0.00  \tq1\t  -nan",
        "iprec_at_recall_0.50  \tq1\t0.0000",
        "11pt_avg_0,1          \tq1\t  -nan",
        "num_ret               \tq2\t1",
        "iprec_at_recall_0.00  \tq2\t1.0000",
        "iprec_at_recall_0.50  \tq2\t1.0000",
        "11pt_avg_0,1          \tq2\t1.0000",
        "num_ret               \tall\t1",
        "iprec_at_recall_0.00  \tall\t  -nan",
        "iprec_at_recall_0.50  \tall\t0.5000",
        "11pt_avg_0,1          \tall\t  -nan",
    ]
