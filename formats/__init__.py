"""Reading every file that comes into Assay: one set of readers, one error style.

Pure Python, numpy and openpyxl (no Django), so commands such as ``evaluate`` use it
without the web stack. ``rows`` streams numbered rows of JSONL, CSV, XLSX and TREC
files; ``records`` says what rows mean (results, judgments, cell values); ``arrays``
reads whole runs and qrels into numpy arrays (TREC through ``trec``'s vectorised path);
``agreement`` reads label files for agreement. Every problem is reported as
``line N: reason`` through one ``LineErrors`` and raised as one ``FileRejected``.
"""

from .agreement_files import read_agreement_labels
from .arrays import Qrels, Ranked, read_qrels, read_run
from .errors import MAX_REPORTED, BadLine, FileRejected, LineErrors
from .files import FORMATS, check_file, detect_format
from .ids import Encoded, encode, factorize
from .nuggets import read_nugget_file
from .records import (
    cell_text,
    first_id,
    judgments,
    not_whole,
    repeated,
    results,
    span_judgments,
    whole_number,
)
from .rows import Row, Rows, RowSource, read_rows

__all__ = [
    "FORMATS",
    "MAX_REPORTED",
    "BadLine",
    "Encoded",
    "FileRejected",
    "LineErrors",
    "Qrels",
    "Ranked",
    "Row",
    "RowSource",
    "Rows",
    "cell_text",
    "check_file",
    "detect_format",
    "encode",
    "factorize",
    "first_id",
    "judgments",
    "not_whole",
    "read_agreement_labels",
    "read_nugget_file",
    "read_qrels",
    "read_rows",
    "read_run",
    "repeated",
    "results",
    "span_judgments",
    "whole_number",
]
