# A judge job's error and a pair's failure detail become problems (a code and its values,
# translated when shown); the free text kept so far becomes "text" problems, shown as is.

import annotator.problems
from django.db import migrations, models


def _text(value):
    return {"code": "text", "params": {"text": value}} if value else None


def to_problems(apps, schema_editor):
    for model, old, new in (("JudgeJob", "error_text", "error"), ("JudgePair", "detail_text", "detail")):
        rows = apps.get_model("judges", model).objects
        for pk, text in rows.exclude(**{old: ""}).values_list("pk", old).iterator():
            rows.filter(pk=pk).update(**{new: _text(text)})


def to_text(apps, schema_editor):
    for model, old, new in (("JudgeJob", "error_text", "error"), ("JudgePair", "detail_text", "detail")):
        rows = apps.get_model("judges", model).objects
        for row in rows.exclude(**{f"{new}__isnull": True}).only("pk", new).iterator():
            value = getattr(row, new)
            rows.filter(pk=row.pk).update(**{old: str(value)[:300] if value else ""})


class Migration(migrations.Migration):

    dependencies = [
        ("judges", "0001_initial"),
    ]

    operations = [
        migrations.RenameField(model_name="judgejob", old_name="error", new_name="error_text"),
        migrations.RenameField(model_name="judgepair", old_name="detail", new_name="detail_text"),
        migrations.AddField(
            model_name="judgejob",
            name="error",
            field=annotator.problems.ProblemField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="judgepair",
            name="detail",
            field=annotator.problems.ProblemField(blank=True, null=True),
        ),
        migrations.RunPython(to_problems, to_text),
        migrations.RemoveField(model_name="judgejob", name="error_text"),
        migrations.RemoveField(model_name="judgepair", name="detail_text"),
    ]
