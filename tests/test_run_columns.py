"""A run's results blob stays the last column of its row on SQLite.

SQLite reads a column stored after a large blob only by walking the blob's overflow pages;
with any column after ``results``, listing runs (the dashboard, the runs page) reads every
run's results. Altering a field of Run on SQLite rebuilds the table with that field last,
so a migration that alters one must put ``results`` back at the end (as 0005 does).
"""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_results_is_the_last_column_of_a_run_row():
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL keeps large values out of line")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA table_info(metrics_run)")
        columns = [row[1] for row in cursor.fetchall()]
    assert columns[-1] == "results"
    assert {"parameters", "tags", "archived_at", "series"} <= set(columns[:-1])


def test_the_rebuilt_table_keeps_its_constraints():
    if connection.vendor != "sqlite":
        pytest.skip("the rebuild runs on SQLite only")
    with connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'metrics_run'")
        sql = cursor.fetchone()[0]
        cursor.execute("PRAGMA index_list(metrics_run)")
        indexes = {row[1] for row in cursor.fetchall()}
    assert "run_unique_name" in sql and "run_chunking_iff_chunk_level" in sql
    assert any(name.startswith("metrics_run_project_id") for name in indexes)
