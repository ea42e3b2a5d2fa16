"""Export a whole project to a zip file and import it again, here or on another database.

The zip holds ``manifest.json`` and one JSON-lines file per table (``backups.tables``):
each row with its old primary key, its fields, references to other rows of the backup by
their old keys and references to users by username. Import reads and checks the whole
file first, then writes every row in one transaction (all or nothing), giving each row a
new key and rewriting references (and the keys inside a run's stored results) to match.
Timestamps (label history, gold sets) are kept as they were.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.utils.dateparse import parse_datetime
from django.utils.text import slugify

from annotator.models import Membership, Project, SourceKind
from annotator.projects import SLUG_MAX
from annotator.revisions import bump
from formats import FileRejected
from formats.errors import define, gettext_noop
from formats.rows import load_json
from numerics.grades import is_grade
from numerics.mapping import MappingPolicy

from .tables import TABLES, Table

TABLE = {table.label: table for table in TABLES}

FORMAT = "assay-project"
VERSION = 1
BATCH = 2000

NOT_A_ZIP = define("backup.not_a_zip", gettext_noop("not a project backup (zip): %(error)s"))
NO_MANIFEST = define(
    "backup.no_manifest", gettext_noop("not a project backup: manifest.json is missing or bad")
)
WRONG_VERSION = define(
    "backup.wrong_version", gettext_noop("not a project backup of version %(version)s")
)
MISSING_MEMBER = define("backup.missing_member", gettext_noop("%(member)s is missing"))
MEMBER_LINE = define("backup.member_line", gettext_noop("%(member)s line %(line)s: %(problem)s"))
NOT_JSON = define("backup.not_json", gettext_noop("not JSON"))
NO_PK = define("backup.no_pk", gettext_noop("no pk"))
ROW_COUNT = define(
    "backup.row_count", gettext_noop("%(member)s does not hold the rows the manifest says")
)
TOO_LARGE = define(
    "backup.too_large",
    gettext_noop("%(member)s takes the backup over %(limit)s bytes unpacked"),
)
LINE_TOO_LONG = define("backup.line_too_long", gettext_noop("the line is over the upload limit"))
NOT_UTF8 = define("backup.not_utf8", gettext_noop("not UTF-8 text"))
BAD_MAPPING = define("backup.bad_mapping", gettext_noop("mapping %(value)s is no mapping policy"))
BAD_GRADE = define(
    "backup.bad_grade", gettext_noop("%(field)s must be 0, 1, 2 or 3, not %(value)s")
)
BAD_SLUG = define(
    "backup.bad_slug",
    gettext_noop(
        "the slug %(slug)s must be lower-case letters, digits and hyphens (at most %(max)s)"
    ),
)
JUDGE_USER_TAKEN = define(
    "backup.judge_user_taken",
    gettext_noop("the judge version's annotator %(name)s exists already; choose another --slug"),
)
ONE_PROJECT = define("backup.one_project", gettext_noop("a backup holds exactly one project"))
SLUG_TAKEN = define(
    "backup.slug_taken",
    gettext_noop("a project %(slug)s already exists; choose another with --slug"),
)
NAMES_NO_ROW = define("backup.names_no_row", gettext_noop("%(field)s names no row"))
RUN_ROWS = define(
    "backup.run_rows", gettext_noop("run %(name)s retrieves rows the backup does not hold")
)


def _fields(model) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if not f.primary_key]


def _is_user(field: models.Field) -> bool:
    return field.is_relation and field.related_model is get_user_model()


def _encode(field: models.Field, obj) -> object:
    if field.is_relation:
        if _is_user(field):
            target = getattr(obj, field.name)
            return target.get_username() if target is not None else None
        return getattr(obj, field.attname)
    value = field.value_from_object(obj)
    if value is None:
        return None
    if isinstance(field, models.BinaryField):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(field, models.DateTimeField):
        return value.isoformat()
    if isinstance(field, models.JSONField):
        return field.get_prep_value(value)  # a problem field's problems as their JSON
    return value


def export_project(project: Project, path: str | Path) -> dict[str, int]:
    """Write ``project`` to the zip file at ``path``; the number of rows of each table."""
    counts: dict[str, int] = {}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for table in TABLES:
            model = table.model
            fields = _fields(model)
            users = [f.name for f in fields if _is_user(f)]
            lines = []
            for obj in table.rows(project).select_related(*users).iterator(chunk_size=BATCH):
                row = {"pk": obj.pk, **{f.name: _encode(f, obj) for f in fields}}
                lines.append(json.dumps(row, ensure_ascii=False))
            archive.writestr(_member(table), "".join(line + "\n" for line in lines))
            counts[table.label] = len(lines)
        manifest = {"format": FORMAT, "version": VERSION, "slug": project.slug, "rows": counts}
        archive.writestr("manifest.json", json.dumps(manifest, indent=1))
    return counts


def _member(table: Table) -> str:
    return f"tables/{table.label}.jsonl"


def _at(table: Table, line: int, problem):
    """A problem of one line of a table's member: ``tables/x.jsonl line 3: …``."""
    return _at_member(_member(table), line, problem)


def _at_member(member: str, line: int, problem):
    return MEMBER_LINE(member=member, line=line, problem=problem)


def _read(path: Path) -> tuple[dict, dict[str, list[dict]]]:
    """The manifest and every table's rows, checked for shape before anything is written."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise FileRejected([NOT_A_ZIP(error=str(error))]) from None
    with archive:
        try:
            manifest = json.loads(archive.read("manifest.json"))
        except (KeyError, ValueError):
            raise FileRejected([NO_MANIFEST()]) from None
        if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
            raise FileRejected([WRONG_VERSION(version=VERSION)])
        tables = {}
        unpacked = 0
        for table in TABLES:
            rows = []
            try:
                info = archive.getinfo(_member(table))
            except KeyError:
                raise FileRejected([MISSING_MEMBER(member=_member(table))]) from None
            unpacked += info.file_size
            if unpacked > settings.ASSAY_MAX_UPLOAD_BYTES * 20:
                limit = f"{settings.ASSAY_MAX_UPLOAD_BYTES * 20:,}"
                raise FileRejected([TOO_LARGE(member=_member(table), limit=limit)])
            for number, line in _lines(archive, info):
                try:
                    row = load_json(line)
                except ValueError:
                    raise FileRejected([_at(table, number, NOT_JSON())]) from None
                if not isinstance(row, dict) or not isinstance(row.get("pk"), int):
                    raise FileRejected([_at(table, number, NO_PK())])
                rows.append(row)
            if len(rows) != manifest.get("rows", {}).get(table.label):
                raise FileRejected([ROW_COUNT(member=_member(table))])
            tables[table.label] = rows
    if len(tables["annotator.Project"]) != 1:
        raise FileRejected([ONE_PROJECT()])
    _check_values(tables)
    return manifest, tables


def _lines(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[tuple[int, str]]:
    """A member's numbered lines, streamed (never read whole): at most its declared size,
    each line at most the upload limit."""
    longest = settings.ASSAY_MAX_UPLOAD_BYTES
    with archive.open(info) as raw, io.TextIOWrapper(raw, encoding="utf-8") as text:
        number = 0
        try:
            while line := text.readline(longest + 1):
                number += 1
                if len(line) > longest:
                    raise FileRejected([_at_member(info.filename, number, LINE_TOO_LONG())])
                if line.strip():
                    yield number, line
        except UnicodeDecodeError:
            raise FileRejected([_at_member(info.filename, number + 1, NOT_UTF8())]) from None


def _check_values(tables: dict[str, list[dict]]) -> None:
    """What every import checks: the slug's rule, the mapping policy, grades 0–3."""
    project = tables["annotator.Project"][0]
    mapping = project.get("mapping")
    try:
        if mapping:
            MappingPolicy.parse(str(mapping))
    except ValueError:
        bad = BAD_MAPPING(value=repr(mapping))
        raise FileRejected([_at(TABLE["annotator.Project"], 1, bad)]) from None
    graded = ("annotator.Judgment", "annotator.JudgmentHistory", "gold.Adjudication")
    for label in (*graded, "gold.AdjudicationHistory", "gold.GoldLabel"):
        for number, row in enumerate(tables.get(label, []), start=1):
            for field in ("grade", "old_grade", "new_grade"):
                grade = row.get(field)
                if grade is not None and not (isinstance(grade, int) and is_grade(grade)):
                    problem = BAD_GRADE(field=field, value=repr(grade))
                    raise FileRejected([_at(TABLE[label], number, problem)])


def check_slug(slug: str) -> None:
    """The slug rule of every new project (``annotator.projects``), as a problem."""
    if not slug or slugify(slug) != slug or len(slug) > SLUG_MAX:
        raise FileRejected([BAD_SLUG(slug=repr(slug), max=SLUG_MAX)])


@contextlib.contextmanager
def _keeping_timestamps(model) -> Iterator[None]:
    """Let bulk inserts keep the stored values of auto_now / auto_now_add fields."""
    changed = [f for f in model._meta.concrete_fields if getattr(f, "auto_now_add", False)]
    changed += [f for f in model._meta.concrete_fields if getattr(f, "auto_now", False)]
    saved = [(f, f.auto_now, f.auto_now_add) for f in changed]
    try:
        for field in changed:
            field.auto_now = field.auto_now_add = False
        yield
    finally:
        for field, auto_now, auto_now_add in saved:
            field.auto_now, field.auto_now_add = auto_now, auto_now_add


def import_project(path: str | Path, *, slug: str | None = None) -> Project:
    """Create a new project from a backup; ``FileRejected`` and nothing written on error."""
    _, tables = _read(Path(path))
    old_slug = tables["annotator.Project"][0]["slug"]
    slug = slug or old_slug
    check_slug(slug)
    if Project.objects.filter(slug=slug).exists():
        raise FileRejected([SLUG_TAKEN(slug=repr(slug))])
    with transaction.atomic():
        users = _users(tables, _judge_users(tables, old_slug, slug))
        keys: dict[str, dict[int, int]] = {}
        for table in TABLES:
            keys[table.label] = _insert(table, tables[table.label], keys, users, slug)
        project = Project.objects.get(slug=slug)
        mark_sources(project)
        bump(project.pk, reset=True)  # labels written without the label-change path
    return project


def mark_sources(project: Project) -> None:
    """Give every pseudo-annotator its label source (backups written before sources were
    recorded hold only ``is_pseudo``): a judge version's, else an imported assessor set."""
    from judges.models import JudgeVersion

    pseudo = Membership.objects.filter(project=project, is_pseudo=True)
    pseudo.filter(source=SourceKind.PERSON).update(source=SourceKind.ASSESSORS)
    for version in JudgeVersion.objects.filter(judge__project=project).select_related("judge"):
        pseudo.filter(user_id=version.annotator_id).update(
            source=SourceKind.JUDGE, judge_slug=version.judge.slug, judge_version=version.number
        )


def _judge_users(tables: dict[str, list[dict]], old_slug: str, slug: str) -> dict[str, str]:
    """New names for the backup's LLM-judge versions whose pseudo-annotators this database
    already holds (the project was exported from here): each version labels as its own
    user, so the copy's versions get users of their own, named after the new slug."""
    User = get_user_model()
    renamed = {}
    for row in tables.get("judges.JudgeVersion", []):
        name = row.get("annotator")
        if not name or not User.objects.filter(username=name).exists():
            continue
        prefix = f"judge-{old_slug}-"
        new = f"judge-{slug}-{name[len(prefix) :]}" if name.startswith(prefix) else f"{name}-{slug}"
        new = new[:150]
        if User.objects.filter(username=new).exists():
            raise FileRejected([JUDGE_USER_TAKEN(name=repr(new))])
        renamed[name] = new
    return renamed


def _users(tables: dict[str, list[dict]], renamed: dict[str, str]) -> dict[str, object]:
    """Every user the backup names, found by username or created without a password;
    ``renamed`` users (judge versions of a copy) are new users under their new name."""
    User = get_user_model()
    names: set[str] = set()
    for table in TABLES:
        fields = [f.name for f in _fields(table.model) if _is_user(f)]
        for row in tables[table.label]:
            names.update(row[name] for name in fields if row.get(name))
    lookup = {renamed.get(name, name): name for name in names}
    found = {lookup[u.get_username()]: u for u in User.objects.filter(username__in=list(lookup))}
    for name in sorted(names - found.keys()):
        user = User(username=renamed.get(name, name))
        user.set_unusable_password()
        user.save()
        found[name] = user
    return found


def _insert(table, rows, keys, users, slug) -> dict[int, int]:
    model = table.model
    fields = _fields(model)
    objects = []
    for number, row in enumerate(rows, start=1):
        values = {}
        for field in fields:
            value = row.get(field.name)
            if field.is_relation:
                if _is_user(field):
                    values[field.name] = users[value] if value else None
                    continue
                target = field.related_model._meta.label
                if value is not None:
                    value = keys.get(target, {}).get(value)
                    if value is None:
                        raise FileRejected([_at(table, number, NAMES_NO_ROW(field=field.name))])
                values[field.attname] = value
            elif value is not None and isinstance(field, models.BinaryField):
                values[field.name] = base64.b64decode(value)
            elif value is not None and isinstance(field, models.DateTimeField):
                values[field.name] = parse_datetime(value)
            elif field.name in row:
                values[field.name] = value
        if table.label == "annotator.Project":
            values["slug"] = slug
        if table.label == "judges.Judge":
            # A backup may come from anyone: its judges fall under the web's endpoint and
            # key rules (judges.endpoints) until the operator configures them.
            values["configured_by_operator"] = False
        obj = model(**values)
        if table.label == "metrics.Run":
            _rekey_results(obj, keys)
        objects.append(obj)
    with _keeping_timestamps(model):
        created = model.objects.bulk_create(objects, batch_size=BATCH)
    return {row["pk"]: obj.pk for row, obj in zip(rows, created, strict=True)}


def _rekey_results(run, keys: dict[str, dict[int, int]]) -> None:
    """A run stores query and item keys inside its results; give them the new keys, in
    the same order."""
    query, item, score = run.get_results()
    items = keys["annotator.Chunk" if run.level == "chunk" else "annotator.Document"]
    queries = keys["annotator.Query"]
    try:
        query = np.array([queries[int(q)] for q in query], dtype=np.int64)
        item = np.array([items[int(i)] for i in item], dtype=np.int64)
    except KeyError:
        raise FileRejected([RUN_ROWS(name=repr(run.name))]) from None
    run.store_results(query, item, score)
