"""Judges record whether the server's operator configured them; key-like values stored as a
key's variable name (accepted before names had to be ASSAY_JUDGE_KEY_<NAME>) are cleared,
and failures that named them keep only their first characters."""

from django.db import migrations, models

from formats.errors import Problem
from judges.endpoints import looks_like_key


def forget_keys(apps, schema_editor):
    Judge = apps.get_model("judges", "Judge")
    JudgePair = apps.get_model("judges", "JudgePair")
    for judge in Judge.objects.exclude(api_key_env=""):
        if looks_like_key(judge.api_key_env):
            judge.api_key_env = ""
            judge.save(update_fields=["api_key_env"])
    for pair in JudgePair.objects.filter(failure="no_key").exclude(detail=None):
        detail = pair.detail  # a Problem (the field reads its JSON back as one)
        name = getattr(detail, "params", {}).get("name")
        if isinstance(name, str) and looks_like_key(name):
            pair.detail = Problem(detail.code, {**detail.params, "name": name[:4] + "…"})
            pair.save(update_fields=["detail"])


class Migration(migrations.Migration):
    dependencies = [
        ("judges", "0004_nugget_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="judge",
            name="configured_by_operator",
            field=models.BooleanField(default=False, editable=False),
        ),
        migrations.RunPython(forget_keys, migrations.RunPython.noop),
    ]
