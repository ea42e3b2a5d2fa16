"""Dependencies point one way, down the layers written below as data.

Read from the source: every import statement (also those inside functions), and every
string that names another app's model (``"gold.GoldSet"``: foreign keys, ``apps.get_model``)
or module (``"api.middleware.JsonErrorsMiddleware"``: settings, ``importlib``), so a new
dependency against the grain fails here rather than in review.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The layer order, bottom to top. An app may depend only on the apps of the layers below
# its own: never on an app of its own layer, never on one above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("formats", "numerics"),  # the reading layer: files and numbers, no Django
    ("accounts", "web", "operations"),  # sign-in; page helpers; job leases, limits, logs
    ("annotator",),  # projects, documents, queries, labels, imports, labelling
    ("quality",),  # source quality grades of documents and sites
    ("gold",),  # gold sets frozen from labels, adjudication
    ("metrics",),  # runs and measures, against gold sets or live labels
    ("api",),  # the JSON API over the apps below
    ("judges",),  # LLM judges; they add to the queue by registration
    ("nuggets",),  # nuggets; they add to the pages below by registration
    ("answers",),  # answer runs, judged by people
    ("backups", "demo"),  # every table by name; the demo projects
    ("config",),  # settings and URLs name every app
    ("bench", "manage.py"),  # the benchmarks; the entry point
)
# Dependencies against the order, each with its reason: (module, what it names).
AGAINST_THE_ORDER = {
    # The request-size limit (a middleware, before any view) asks whether a bearer token
    # may write, by the token's own rule.
    ("operations/limits.py", "import api.models"),
}
RANK = {app: rank for rank, layer in enumerate(LAYERS) for app in layer}
APPS = tuple(RANK)
DJANGO_SIDE = tuple(app for app in APPS if RANK[app] > 0)
READING_LAYER = LAYERS[0]


def allowed(app: str, target: str) -> bool:
    """May ``app`` depend on ``target``? Only on an app of a lower layer."""
    return RANK[target] < RANK[app]


def read(path: Path, source: str | None = None) -> ast.AST:
    return _parsed(path) if source is None else ast.parse(source)


@functools.cache
def _parsed(path: Path) -> ast.AST:
    """A file's tree, parsed once for all the checks (they only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imports(path: Path, source: str | None = None) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    names = set()
    for node in ast.walk(read(path, source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, node.module or ""))
            names.add(module.rstrip("."))
    return names


DOTTED = re.compile(r"^([a-z_]+)((?:\.[A-Za-z_]\w*)+)\.?$")


@functools.cache
def is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def named_in_strings(path: Path, source: str | None = None) -> set[str]:
    """Apps' models and modules that ``path`` names in strings: ``"app.Model"`` labels,
    dotted paths that lead to a module of the repository (``"app.module.Name"`` too)."""
    names = set()
    for node in ast.walk(read(path, source)):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        match = DOTTED.match(node.value)
        if match is None or match.group(1) not in RANK:
            continue
        parts = node.value.rstrip(".").split(".")
        if len(parts) == 2 and parts[1][0].isupper():
            names.add(node.value)  # a model label
        elif any(is_module(".".join(parts[:n])) for n in range(2, len(parts) + 1)):
            names.add(node.value.rstrip("."))
    return names


def files(app: str):
    if app.endswith(".py"):
        yield ROOT / app
        return
    for path in sorted((ROOT / app).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def modules(*apps: str):
    for app in apps:
        for path in files(app):
            yield path.relative_to(ROOT).as_posix(), imports(path)


@functools.cache
def dependencies() -> tuple[tuple[str, str, str, str], ...]:
    """``(module, its app, the app it depends on, by what)`` for every dependency between two
    apps of the repository (found once for all the checks)."""
    return tuple(_dependencies())


def _dependencies():
    for app in APPS:
        for path in files(app):
            name = path.relative_to(ROOT).as_posix()
            for how, found in (("import", imports(path)), ("string", named_in_strings(path))):
                for dotted in sorted(found):
                    target = dotted.split(".")[0]
                    if target in RANK and target != app:
                        yield name, app, target, f"{how} {dotted}"


def test_every_app_of_the_repository_has_its_layer():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages | {"manage.py"} == set(APPS)
    assert len(APPS) == len(set(APPS))


def test_every_pair_of_apps_depends_only_downwards():
    """Over every ordered pair of apps: ``a`` depends on ``b`` only if ``b``'s layer is
    below ``a``'s, by import or by name."""
    found: dict[tuple[str, str], list[str]] = {}
    for module, app, target, how in dependencies():
        found.setdefault((app, target), []).append(f"{module}: {how}")
    wrong = {
        f"{a} → {b}": found[a, b]
        for a in APPS
        for b in APPS
        if a != b and (a, b) in found and not allowed(a, b)
    }
    excepted = {f"{module}: {how}" for module, how in AGAINST_THE_ORDER}
    wrong = {pair: found for pair, f in wrong.items() if (found := sorted(set(f) - excepted))}
    assert wrong == {}
    # Every exception is still needed (one that no longer is, is taken out of the list).
    every = {(module, how) for module, _app, _target, how in dependencies()}
    assert every >= AGAINST_THE_ORDER


def test_the_order_holds_the_rules_it_replaced():
    """The table says what the layer rules said one by one."""
    assert RANK["annotator"] < min(RANK["gold"], RANK["metrics"])
    assert RANK["gold"] < RANK["metrics"]  # gold sets know nothing of runs
    assert RANK["web"] < RANK["annotator"]  # the shared page helpers import no app
    # Quality grades stand on annotator; gold sets, metrics and the screens above read them.
    above_quality = ("gold", "metrics", "api", "judges", "nuggets", "answers", "demo")
    assert RANK["annotator"] < RANK["quality"] < min(RANK[app] for app in above_quality)
    below_judges = ("annotator", "gold", "metrics", "api", "web", "formats", "numerics")
    assert all(RANK[app] < RANK["judges"] for app in below_judges)
    assert all(RANK[app] < RANK["nuggets"] for app in (*below_judges, "judges"))
    assert all(RANK[app] < RANK["answers"] for app in (*below_judges, "judges", "nuggets"))


def test_the_checker_sees_imports_and_names_against_the_grain():
    """A wrong import, a wrong model label and a wrong dotted path each count; a file
    name or a problem code that merely looks dotted does not."""
    module = ROOT / "web" / "probe.py"
    source = (
        "def f():\n"
        "    from gold.models import GoldSet\n"
        "    return GoldSet, 'annotator.Project', 'metrics.trec_files.join_files',"
        " 'gold.jsonl', 'answers.not_answer'\n"
    )
    assert imports(module, source) == {"gold.models"}
    assert named_in_strings(module, source) == {
        "annotator.Project",
        "metrics.trec_files.join_files",
    }
    assert not allowed("web", "gold") and not allowed("web", "annotator")


def test_nothing_imports_from_a_management_command_module():
    """Commands are leaves: no module imports one, another command included. Only
    ``manage.py`` names them (the file commands it runs without setting Django up)."""
    ours = tuple(app for app in APPS if not app.endswith(".py"))
    wrong = {
        name: sorted(
            i for i in found if ".management.commands." in f".{i}." and i.split(".")[0] in ours
        )
        for name, found in modules(*ours, "tests")
    }
    assert {name: found for name, found in wrong.items() if found} == {}
    by_name = {
        (module, how)
        for module, _app, _target, how in dependencies()
        if ".management.commands" in how
    }
    assert by_name == {("manage.py", "string metrics.management.commands")}


def test_the_reading_layer_stands_alone():
    wrong = {
        name: sorted(i for i in found if i.split(".")[0] in ("django", *DJANGO_SIDE))
        for name, found in modules(*READING_LAYER)
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


def test_the_apps_above_extend_annotator_only_through_its_extension_points():
    """``annotator.extensions`` names every registry and who registers into it; outside
    annotator, a registration is imported from there and nowhere else."""
    from annotator.extensions import PROVIDERS

    registries = ("importing", "pool", "queue_order", "suggestions")
    by_function: dict[str, set[str]] = {name: set() for name in PROVIDERS}
    wrong = []
    for app in APPS:
        if app == "annotator":
            continue
        for path in files(app):
            for node in ast.walk(read(path)):
                if not isinstance(node, ast.ImportFrom) or node.module is None:
                    continue
                for alias in node.names:
                    if node.module == "annotator.extensions" and alias.name in by_function:
                        by_function[alias.name].add(app)
                    elif alias.name.startswith("register") and node.module in {
                        f"annotator.{r}" for r in registries
                    }:
                        wrong.append(f"{path.relative_to(ROOT)}: {node.module}.{alias.name}")
    assert wrong == []
    assert {name: tuple(sorted(apps)) for name, apps in by_function.items()} == PROVIDERS
