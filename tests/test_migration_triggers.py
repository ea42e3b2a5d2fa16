"""Later migrations keep the triggers that keep the figures (annotator 0009_figures).

SQLite adds a NOT NULL column by rebuilding the table, which drops the table's triggers;
a migration that adds such a column to a table with triggers must create them again."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

figures = importlib.import_module("annotator.migrations.0009_figures")


def test_every_figures_trigger_exists_after_all_migrations():
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            expected = {s.split()[2] for s in figures.SQLITE_FORWARD}
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        else:
            expected = {name for name, _table in figures._PG_TRIGGERS}
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        present = {row[0] for row in cursor.fetchall()}
    assert expected and expected <= present, sorted(expected - present)
