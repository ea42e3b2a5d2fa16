"""Project backups: export, import elsewhere (another database engine, in another
process) and back, and everything is as it was; a bad backup writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Assignment, Document, Judgment, JudgmentHistory, Project, Query
from backups.tables import LEFT_OUT, TABLES
from gold.export import build_export, render_export
from gold.models import GoldSet
from gold.services import ConsensusPolicy, adjudicate, freeze_gold_set
from metrics.evaluation import dashboard_measures, evaluate_run, evaluation_setting
from metrics.models import Run
from quality.dimensions import offer_source_quality
from quality.grades import QualitySource, change_quality
from quality.models import QualityDimension, QualityGrade, QualityHistory
from tests.demo_database import copy_database

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def full_project(personas, corpus):
    """Labels with history by two annotators, an adjudication, a gold set, a run."""
    project, query, chunk = personas["project"], corpus["query"], corpus["chunk"]
    document = corpus["document"]
    second = Document.objects.create(project=project, doc_id="d2", text="Other text 二.")
    q2 = Query.objects.create(project=project, qid="q2", text="second", tags=["t"])
    anna, arno = personas["annotator"], personas["annotator2"]
    change_label(query=query, annotator=anna, evidence=Evidence.for_chunk(chunk), grade=1)
    change_label(query=query, annotator=anna, evidence=Evidence.for_chunk(chunk), grade=3)
    change_label(query=query, annotator=arno, evidence=Evidence.for_chunk(chunk), grade=2)
    change_label(
        query=query,
        annotator=anna,
        evidence=Evidence.for_passage(document, 6, 10),
        grade=2,
        note="见第二页",
        seconds=4.5,
    )
    change_label(query=q2, annotator=arno, evidence=Evidence.for_document(second), grade=1)
    change_label(query=q2, annotator=arno, evidence=Evidence.for_document(second), grade=None)
    change_label(query=q2, annotator=anna, evidence=Evidence.for_page(document, 2), grade=3)
    Assignment.objects.create(
        project=project, query=q2, annotator=arno, assigned_by=personas["owner"]
    )
    adjudicate(
        query=query,
        evidence=Evidence.for_chunk(chunk),
        grade=3,
        reason="agreed",
        adjudicator=personas["adjudicator"],
    )
    freeze_gold_set(project, "release", policy=ConsensusPolicy(), created_by=personas["owner"])
    per_site = offer_source_quality(project)
    per_document = QualityDimension.objects.create(
        project=project,
        key="fresh",
        name="Freshness",
        labels=["old", "new"],
        max_grade=1,
        unit="document",
    )
    change_quality(dimension=per_site, annotator=anna, source=QualitySource(site="gov"), grade=3)
    change_quality(
        dimension=per_document, annotator=arno, source=QualitySource(document=second), grade=1
    )
    from quality.adjudication import adjudicate_quality

    adjudicate_quality(
        dimension=per_document,
        source=QualitySource(document=second),
        grade=0,
        reason="stale",
        by=personas["adjudicator"],
    )
    run = Run(project=project, name="bm25", level="document", parameters={"k1": 1.2})
    run.set_results(
        np.array([query.pk, query.pk, q2.pk]),
        np.array([document.pk, second.pk, second.pk]),
        np.array([2.0, 1.0, 0.5]),
    )
    run.save()
    chunk_run = Run(project=project, name="dense", level="chunk", chunking=corpus["chunking"])
    chunk_run.set_results(np.array([query.pk]), np.array([chunk.pk]), np.array([0.9]))
    chunk_run.save()
    return project


def picture(project: Project) -> dict:
    """Everything a user can see of a project, with no database keys in it."""
    labels = sorted(
        (
            j.annotator.username,
            j.query.qid,
            j.document.doc_id,
            j.granularity,
            j.start,
            j.end,
            j.chunk.chunk_id if j.chunk else "",
            j.grade,
            j.note,
            j.created_at,
            j.updated_at,
        )
        for j in Judgment.objects.filter(query__project=project).select_related(
            "annotator", "query", "document", "chunk"
        )
    )
    history = [
        (
            h.annotator.username,
            h.changed_by.username,
            h.event,
            h.query.qid,
            h.document.doc_id,
            h.start,
            h.end,
            h.chunk_id,
            h.old_grade,
            h.new_grade,
            h.old_note,
            h.new_note,
            h.at,
            getattr(getattr(h, "timing", None), "seconds", None),
        )
        for h in JudgmentHistory.objects.filter(query__project=project)
        .select_related("annotator", "changed_by", "query", "document")
        .order_by("at", "id")
    ]
    gold = {}
    for gold_set in GoldSet.objects.filter(project=project):
        for level in ("documents", "pages", "c256"):
            export = build_export(gold_set, level)
            for fmt in ("jsonl", "qrels"):
                gold[(gold_set.name, gold_set.version, level, fmt)] = render_export(export, fmt)
    numbers = {}
    for gold_set in [None, *GoldSet.objects.filter(project=project)]:
        setting = evaluation_setting(project, level="documents", gold_set=gold_set)
        measures = [name for name, _ in dashboard_measures(10)]
        for run in Run.objects.filter(project=project, level="document"):
            scores = evaluate_run(run, setting.gold, measures)
            numbers[(gold_set and gold_set.name, run.name)] = {m: scores.mean(m) for m in measures}
    memberships = sorted(
        (m.user.username, m.role, m.is_pseudo) for m in project.memberships.select_related("user")
    )
    runs = sorted(
        (r.name, r.level, r.parameters, r.n_results, r.created_at) for r in project.runs.all()
    )
    quality = sorted(
        (
            g.dimension.key,
            g.annotator.username,
            g.document.doc_id if g.document else g.site,
            g.grade,
        )
        for g in QualityGrade.objects.filter(dimension__project=project)
    )
    quality_history = sorted(
        (h.dimension.key, h.event, h.site, h.new_grade, h.at)
        for h in QualityHistory.objects.filter(dimension__project=project)
    )
    from quality.models import QualityAdjudication

    finals = sorted(
        (a.dimension.key, a.document.doc_id if a.document else a.site, a.grade, a.reason)
        for a in QualityAdjudication.objects.filter(dimension__project=project)
    )
    return {
        "quality": quality,
        "quality_finals": finals,
        "quality_history": quality_history,
        "labels": labels,
        "history": history,
        "gold": gold,
        "numbers": numbers,
        "memberships": memberships,
        "runs": runs,
        "documents": list(project.documents.values_list("doc_id", "title", "text", "page_starts")),
        "queries": list(project.queries.values_list("qid", "text", "tags")),
    }


def other_database(tmp_path: Path) -> dict[str, str]:
    """The environment of a second Assay with a database of its own: a fresh SQLite file.
    When the suite runs on PostgreSQL (as CI does) the trip is PostgreSQL → SQLite →
    PostgreSQL; on SQLite it still crosses to another database and another process."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["ASSAY_DATA_DIR"] = str(tmp_path / "elsewhere")
    return env


def manage(env, *args) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def elsewhere(tmp_path):
    """The environment of the second Assay (``other_database``), its database ready. On
    SQLite that is a copy of this worker's test database taken before the test writes
    anything (migrated, and as empty as ``migrate`` leaves a new one), which spares
    migrating a new file; on PostgreSQL the SQLite file is migrated by ``manage.py``."""
    env = other_database(tmp_path)
    source = connection.settings_dict["NAME"]
    if connection.vendor == "sqlite" and Path(source).exists():  # not an in-memory one
        target = Path(env["ASSAY_DATA_DIR"]) / "assay.sqlite3"
        target.parent.mkdir(parents=True)
        Path(copy_database(source, tmp_path)).rename(target)
    else:
        manage(env, "migrate", "--noinput")
    return env


def test_a_project_travels_to_another_database_and_back_unchanged(
    elsewhere, full_project, tmp_path
):
    before = picture(full_project)
    assert before["labels"] and before["history"] and before["gold"] and before["numbers"]
    assert before["quality_finals"] == [("fresh", "d2", 0, "stale")]
    exported = tmp_path / "acme.zip"
    call_command("export_project", "acme", "-o", str(exported))
    # Elsewhere: another process, another database (engine), imported and exported again.
    env = elsewhere
    assert "imported acme" in manage(env, "import_project", str(exported))
    returned = tmp_path / "returned.zip"
    manage(env, "export_project", "acme", "-o", str(returned))
    # Back here, beside the original.
    call_command("import_project", str(returned), "--slug", "acme-copy")
    copy = Project.objects.get(slug="acme-copy")
    assert copy.pk != full_project.pk and copy.name == full_project.name
    assert picture(copy) == before
    # The original is untouched, and both copies live side by side.
    assert picture(full_project) == before


def test_a_bad_backup_writes_nothing(full_project, tmp_path):
    exported = tmp_path / "acme.zip"
    call_command("export_project", "acme", "-o", str(exported))
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(exported) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "tables/annotator.JudgmentHistory.jsonl":
                rows = [json.loads(line) for line in data.decode().splitlines()]
                rows[-1]["query"] = 999999
                data = "".join(json.dumps(r) + "\n" for r in rows).encode()
            target.writestr(item, data)
    tables = {m._meta.label: m.objects.count() for m in apps.get_models()}
    with pytest.raises(CommandError) as refused:
        call_command("import_project", str(broken), "--slug", "acme-2")
    last = len(rows)
    assert str(refused.value) == (
        f"tables/annotator.JudgmentHistory.jsonl line {last}: query names no row"
    )
    assert {m._meta.label: m.objects.count() for m in apps.get_models()} == tables
    with pytest.raises(CommandError, match="already exists; choose another with --slug"):
        call_command("import_project", str(exported))
    not_zip = tmp_path / "x.zip"
    not_zip.write_text("hello")
    with pytest.raises(CommandError, match="not a project backup"):
        call_command("import_project", str(not_zip))


def test_every_table_that_belongs_to_a_project_is_backed_up():
    listed = {table.label for table in TABLES}
    for model in apps.get_models():
        label = model._meta.label
        points_in = any(
            f.is_relation and f.related_model._meta.label in listed
            for f in model._meta.concrete_fields
        )
        if points_in:
            assert label in listed or label in LEFT_OUT, f"{label}: back it up or say why not"


def _edited(exported: Path, target: Path, member: str, edit) -> Path:
    """A copy of the backup with one member's rows changed by ``edit(rows)``."""
    with zipfile.ZipFile(exported) as source, zipfile.ZipFile(target, "w") as copy:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == member:
                rows = [json.loads(line) for line in data.decode().splitlines()]
                edit(rows)
                data = "".join(json.dumps(r) + "\n" for r in rows).encode()
            copy.writestr(item, data)
    return target


@pytest.mark.parametrize(
    ("member", "edit", "message"),
    [
        (
            "tables/annotator.Project.jsonl",
            lambda rows: rows[0].update(mapping="everything"),
            "tables/annotator.Project.jsonl line 1: mapping 'everything' is no mapping policy",
        ),
        (
            "tables/annotator.Judgment.jsonl",
            lambda rows: rows[-1].update(grade=7),
            "line {n}: grade must be 0, 1, 2 or 3, not 7",
        ),
        (
            "tables/annotator.JudgmentHistory.jsonl",
            lambda rows: rows[0].update(new_grade="3"),
            "line 1: new_grade must be 0, 1, 2 or 3, not '3'",
        ),
    ],
)
def test_a_backup_is_validated_like_every_import(full_project, tmp_path, member, edit, message):
    exported = tmp_path / "acme.zip"
    call_command("export_project", "acme", "-o", str(exported))
    bad = _edited(exported, tmp_path / "bad.zip", member, edit)
    tables = {m._meta.label: m.objects.count() for m in apps.get_models()}
    with pytest.raises(CommandError) as refused:
        call_command("import_project", str(bad), "--slug", "acme-2")
    with zipfile.ZipFile(bad) as archive:
        n = len(archive.read(member).decode().splitlines())
    assert str(refused.value).endswith(message.format(n=n))
    assert {m._meta.label: m.objects.count() for m in apps.get_models()} == tables


@pytest.mark.parametrize("slug", ["../../evil slug", "Acme", "a" * 200, "evil/slug"])
def test_a_backup_slug_follows_the_slug_rule(full_project, tmp_path, slug):
    exported = tmp_path / "acme.zip"
    call_command("export_project", "acme", "-o", str(exported))
    with pytest.raises(CommandError, match="lower-case letters, digits and hyphens"):
        call_command("import_project", str(exported), "--slug", slug)
    assert not Project.objects.exclude(slug__in=["acme", "other"]).exists()


def test_an_oversized_member_is_refused_before_it_is_read(full_project, tmp_path, settings):
    exported = tmp_path / "acme.zip"
    call_command("export_project", "acme", "-o", str(exported))
    settings.ASSAY_MAX_UPLOAD_BYTES = 20  # the backup may unpack to 20 × that: 400 bytes
    with pytest.raises(CommandError, match="over 400 bytes unpacked"):
        call_command("import_project", str(exported), "--slug", "acme-2")
    assert not Project.objects.filter(slug="acme-2").exists()


def test_a_project_with_judges_is_restored_beside_itself(full_project, tmp_path):
    """The README's --slug restore on the same database: the copy's judge versions label
    as new pseudo-annotators named after the new slug."""
    from judges.models import JudgeVersion
    from judges.services import create_judge

    judge = create_judge(
        full_project,
        slug="gpt",
        name="GPT",
        base_url="https://api.example.org/v1",
        model="m",
        api_key_env="ASSAY_JUDGE_KEY_T",
        by_operator=True,
    )
    # A quality job of the judge, the dimension's own prompt and a lead's final grade.
    from judges.models import JudgeJob, QualityPrompt
    from judges.quality_jobs import plan_quality, start_quality
    from quality.adjudication import adjudicate_quality
    from quality.models import QualityAdjudication, QualityAdjudicationHistory

    per_site = QualityDimension.objects.get(project=full_project, key="source_quality")
    prompt = "Grade {{site}} on {{dimension}}: {{scale}}"
    fresh = QualityDimension.objects.get(project=full_project, key="fresh")
    start_quality(plan_quality(judge, fresh, prompt=prompt), enqueue=False)
    adjudicate_quality(
        dimension=per_site,
        source=QualitySource(site="gov"),
        grade=2,
        by=full_project.memberships.first().user,
    )
    exported = tmp_path / "acme.zip"
    call_command("export_project", "acme", "-o", str(exported))
    call_command("import_project", str(exported), "--slug", "acme-restored")
    restored = Project.objects.get(slug="acme-restored")
    copy = JudgeVersion.objects.get(judge__project=restored)
    restored_dimension = QualityDimension.objects.get(project=restored, key="source_quality")
    restored_fresh = QualityDimension.objects.get(project=restored, key="fresh")
    job = JudgeJob.objects.get(version=copy)
    assert (job.kind, job.dimension, job.prompt) == ("quality", restored_fresh, prompt)
    assert sorted(p.document.doc_id for p in job.pairs.all()) == ["d1", "d2"]
    assert {p.document.project for p in job.pairs.all()} == {restored}
    assert QualityPrompt.objects.get(dimension=restored_fresh).prompt == prompt
    final = QualityAdjudication.objects.get(dimension=restored_dimension)
    assert (final.site, final.grade) == ("gov", 2)
    assert QualityAdjudication.objects.filter(dimension__project=restored).count() == 2
    assert QualityAdjudicationHistory.objects.filter(dimension=restored_dimension).count() == 1
    assert copy.annotator.username == "judge-acme-restored-gpt-v1"
    assert judge.current.annotator.username == "judge-acme-gpt-v1"
    assert restored.memberships.filter(user=copy.annotator, is_pseudo=True).exists()
    # A backup may come from anyone: its judges are not the operator's.
    assert judge.configured_by_operator and not copy.judge.configured_by_operator
