"""The reference libraries load only in the tests that use them.

scikit-learn, statsmodels, SciPy, ranx, ir_measures and krippendorff take seconds to
import; imported at the top of a test module, they are loaded by every pytest process
that collects it (each xdist worker, every run of a single file).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REFERENCES = {"sklearn", "statsmodels", "scipy", "ranx", "ir_measures", "krippendorff"}


def top_level_references(source: str) -> set[str]:
    found = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        found |= {name.split(".")[0] for name in names} & REFERENCES
    return found


def test_no_test_module_imports_a_reference_library_at_its_top():
    wrong = {
        path.relative_to(TESTS).as_posix(): sorted(found)
        for path in sorted(TESTS.rglob("*.py"))
        if (found := top_level_references(path.read_text(encoding="utf-8")))
    }
    assert wrong == {}


def test_the_check_sees_both_forms_and_leaves_function_imports_alone():
    source = "import krippendorff\nfrom scipy.stats import kendalltau\ndef f():\n    import ranx\n"
    assert top_level_references(source) == {"krippendorff", "scipy"}
