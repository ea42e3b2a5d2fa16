"""PostgreSQL: ``annotator_grams`` catches an over-long tsvector in an EXCEPTION block,
which opens a subtransaction, and no subtransaction may start in a parallel query
("cannot start subtransactions during a parallel operation"). Migration 0010 declared it
PARALLEL SAFE, so any query the planner ran in parallel over it failed (a check over
9,000,000 chunks did). PostgreSQL's rule: such a function is PARALLEL UNSAFE."""

from django.db import migrations


def _mark(schema_editor, mode: str) -> None:
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(f"ALTER FUNCTION annotator_grams(text) PARALLEL {mode}")


def forward(apps, schema_editor):
    _mark(schema_editor, "UNSAFE")


def backward(apps, schema_editor):
    _mark(schema_editor, "SAFE")


class Migration(migrations.Migration):
    dependencies = [("annotator", "0015_importjob_heartbeat_at_importjob_lease_until_and_more")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
