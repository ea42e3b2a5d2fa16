"""trec_eval's own ``make quicktest``: its 15 commands, run with ``manage.py trec_eval`` in
place of ``./trec_eval`` on trec_eval's test files (tests/data/trec_eval, with their
licence), must print exactly the expected ``out.*`` files.
"""

from __future__ import annotations

import gzip
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "trec_eval"

# The Makefile's quicktest target, word for word (test/ → the copied files).
QUICKTEST = [
    ("test/qrels.test test/results.test", "out.test"),
    ("test/qrels.test.with-comments test/results.test", "out.test"),
    ("test/qrels.comment.test test/results.comment.test", "out.comment.test"),
    ("-m all_trec test/qrels.test test/results.test", "out.test.a"),
    ("-m all_trec -q test/qrels.test test/results.test", "out.test.aq"),
    ("-m all_trec -q -c test/qrels.test test/results.trunc", "out.test.aqc"),
    ("-m all_trec -q -c -M100 test/qrels.test test/results.trunc", "out.test.aqcM"),
    ("-m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test", "out.test.aql"),
    ("-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R prefs test/prefs.comment.test test/prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test", "out.test.qrels_prefs"),
    ("-m qrels_jg -q -R qrels_jg  test/qrels.123 test/results.test", "out.test.qrels_jg"),
    ("-m qrels_jg -q -R qrels_jg  test/qrels.comments.123 test/results.test", "out.test.qrels_jg"),
    (
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000"
        " -m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75"
        " -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20"
        " test/qrels.test test/results.test",
        "out.test.meas_params",
    ),
    ("-q -m all_trec -Z test/zscores_file test/qrels.test test/results.test", "out.test.aqZ"),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The test files where the commands expect them (``test/…``)."""
    root = tmp_path_factory.mktemp("quicktest")
    (root / "test").symlink_to(DATA)
    unpacked = root / "unpacked"
    unpacked.mkdir()
    (unpacked / "results.comment.test").write_bytes(
        gzip.decompress((DATA / "results.comment.test.gz").read_bytes())
    )
    return root


@pytest.mark.parametrize("number", range(len(QUICKTEST)))
def test_quicktest_command_prints_trec_eval_s_output_byte_for_byte(folder, number):
    arguments, expected = QUICKTEST[number]
    words = [
        str(folder / "unpacked" / "results.comment.test")
        if word == "test/results.comment.test"
        else word
        for word in shlex.split(arguments)
    ]
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "trec_eval", *words],
        capture_output=True,
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == (DATA / expected).read_bytes()
