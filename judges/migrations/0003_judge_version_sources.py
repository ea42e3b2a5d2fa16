"""Each judge version's pseudo-annotator records its judge and version number (its label
source), so that the sources resolver of the annotator app knows it."""

from django.db import migrations


def mark_judge_versions(apps, schema_editor):
    Membership = apps.get_model("annotator", "Membership")
    JudgeVersion = apps.get_model("judges", "JudgeVersion")
    for version in JudgeVersion.objects.select_related("judge"):
        Membership.objects.filter(
            project_id=version.judge.project_id, user_id=version.annotator_id
        ).update(source="judge", judge_slug=version.judge.slug, judge_version=version.number)


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0014_label_sources_and_revision"),
        ("judges", "0002_problems_as_data"),
    ]

    operations = [migrations.RunPython(mark_judge_versions, migrations.RunPython.noop)]
