"""Move a run's results blob to the end of its row.

SQLite keeps a row's columns in order and a large blob in a chain of overflow pages: to
read any column after the blob (tags, archived_at, created_at ...) it walks the whole
chain, so listing a project's runs read every run's results (30 runs: 90–300 ms per
query). Added last, the blob is walked only when the results are read. PostgreSQL keeps
large values out of line and gains nothing, but loses nothing either.
"""

from django.db import migrations, models


def copy_results(apps, schema_editor):
    Run = apps.get_model("metrics", "Run")
    Run.objects.update(results_last=models.F("results"))


class Migration(migrations.Migration):
    dependencies = [("metrics", "0002_run_management")]

    operations = [
        migrations.AddField(
            model_name="run", name="results_last", field=models.BinaryField(default=b"")
        ),
        migrations.RunPython(copy_results, migrations.RunPython.noop),
        migrations.RemoveField(model_name="run", name="results"),
        migrations.RenameField(model_name="run", old_name="results_last", new_name="results"),
    ]
