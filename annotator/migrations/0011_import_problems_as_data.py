# Import problems become data (a code and its values, translated when shown); the free
# text that older jobs stored is kept as "text" problems, shown as it is.

import annotator.problems
from django.db import migrations


def _text(value):
    return {"code": "text", "params": {"text": str(value)}}


def to_problems(apps, schema_editor):
    ImportJob = apps.get_model("annotator", "ImportJob")
    for job in ImportJob.objects.only("pk", "errors", "detail").iterator():
        errors = job.errors if isinstance(job.errors, list) else [job.errors] if job.errors else []
        ImportJob.objects.filter(pk=job.pk).update(
            problems=[_text(error) for error in errors],
            notes=[_text(job.detail)] if job.detail else [],
        )


def to_text(apps, schema_editor):
    ImportJob = apps.get_model("annotator", "ImportJob")
    for job in ImportJob.objects.only("pk", "problems", "notes").iterator():
        ImportJob.objects.filter(pk=job.pk).update(
            errors=[str(problem) for problem in job.problems],
            detail="; ".join(str(note) for note in job.notes)[:500],
        )


class Migration(migrations.Migration):

    dependencies = [
        ("annotator", "0010_search_grams"),
    ]

    operations = [
        migrations.AddField(
            model_name="importjob",
            name="notes",
            field=annotator.problems.ProblemsField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="importjob",
            name="problems",
            field=annotator.problems.ProblemsField(blank=True, default=list),
        ),
        migrations.RunPython(to_problems, to_text),
        migrations.RemoveField(
            model_name="importjob",
            name="detail",
        ),
        migrations.RemoveField(
            model_name="importjob",
            name="errors",
        ),
    ]
