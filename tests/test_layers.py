"""Dependencies point one way: answers → nuggets → judges → metrics → gold → annotator → formats,
numerics.

Read from the source (every import statement, also those inside functions), so a new
import against the grain fails here rather than in review.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DJANGO_SIDE = (
    "annotator",
    "answers",
    "api",
    "config",
    "demo",
    "gold",
    "judges",
    "metrics",
    "nuggets",
    "quality",
    "web",
)
PACKAGES = (*DJANGO_SIDE, "bench", "formats", "numerics")


def imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, node.module or ""))
            names.add(module.rstrip("."))
    return names


def modules(*folders: str):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path.relative_to(ROOT).as_posix(), imports(path)


def test_annotator_imports_neither_metrics_nor_gold():
    wrong = {
        name: sorted(i for i in found if i.split(".")[0] in ("metrics", "gold"))
        for name, found in modules("annotator")
    }
    assert {name: found for name, found in wrong.items() if found} == {}


def test_quality_sits_on_annotator_which_never_imports_it():
    """Quality grades stand on documents and label revisions (annotator); gold sets,
    metrics and the screens above read them, never the other way round."""
    above = ("gold", "metrics", "api", "judges", "nuggets", "answers", "demo")
    wrong = {
        name: sorted(i for i in found if i.split(".")[0] in above)
        for name, found in modules("quality")
    }
    wrong |= {
        name: sorted(i for i in found if i.split(".")[0] == "quality")
        for name, found in modules("annotator", "formats", "numerics")
    }
    assert {name: found for name, found in wrong.items() if found} == {}


def test_judges_sit_on_top_nothing_below_imports_them():
    wrong = {
        name: sorted(i for i in found if i.split(".")[0] == "judges")
        for name, found in modules("annotator", "gold", "metrics", "api", "formats", "numerics")
    }
    assert {name: found for name, found in wrong.items() if found} == {}


def test_nuggets_sit_on_top_only_the_demo_imports_them():
    """Nuggets reach the pages below (query page, labelling, dashboards, gold sets) through
    their extension points, never by those apps importing them."""
    below = ("annotator", "gold", "metrics", "api", "judges", "web", "formats", "numerics")
    wrong = {
        name: sorted(i for i in found if i.split(".")[0] == "nuggets")
        for name, found in modules(*below)
    }
    assert {name: found for name, found in wrong.items() if found} == {}


def test_answers_sit_on_top_only_the_demo_imports_them():
    """Answers reach the pages below (the import page, gold sets, the API's description)
    through their extension points, never by those apps importing them."""
    below = ("annotator", "gold", "metrics", "api", "judges", "nuggets", "web", "formats")
    wrong = {
        name: sorted(i for i in found if i.split(".")[0] == "answers")
        for name, found in modules(*below, "numerics")
    }
    assert {name: found for name, found in wrong.items() if found} == {}


def test_nothing_imports_from_a_management_command_module():
    wrong = {
        name: sorted(i for i in found if ".management.commands" in f".{i}")
        for name, found in modules(*PACKAGES, "tests")
        if "/management/commands/" not in name
    }
    assert {name: found for name, found in wrong.items() if found} == {}


def test_the_reading_layer_stands_alone():
    wrong = {
        name: sorted(i for i in found if i.split(".")[0] in ("django", *DJANGO_SIDE))
        for name, found in modules("formats", "numerics")
    }
    assert {name: found for name, found in wrong.items() if found} == {}
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, formats, numerics; print('django' in sys.modules)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "False"
