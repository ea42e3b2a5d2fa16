"""Put a run's results blob back at the end of its row on SQLite.

Migration 0004 altered ``parameters``; SQLite alters a column by rebuilding the table and
puts the altered column last, after the results blob. Reading a run's parameters then
walked the blob's overflow pages again (see 0003), so every listing of runs read every
run's results: the dashboard took twice as long. Rebuilding the table in the model's field
order puts the blob last again. PostgreSQL keeps large values out of line: nothing to do.
"""

from django.db import migrations


def results_last(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor._remake_table(apps.get_model("metrics", "Run"))


class Migration(migrations.Migration):
    dependencies = [("metrics", "0004_readable_parameters")]

    operations = [migrations.RunPython(results_last, migrations.RunPython.noop)]
