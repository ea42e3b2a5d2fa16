"""PostgreSQL's ``annotator_grams`` runs in any plan, parallel ones included: it opens a
subtransaction (its EXCEPTION block), which a parallel worker may not, so it must be
declared PARALLEL UNSAFE (migration 0016)."""

import pytest
from django.db import connection, transaction

pytestmark = pytest.mark.django_db


def _force_parallel(cursor) -> None:
    """Every plan that may run in parallel workers does (PostgreSQL 16 renamed it)."""
    cursor.execute("SHOW server_version_num")
    setting = (
        "debug_parallel_query" if int(cursor.fetchone()[0]) >= 160000 else "force_parallel_mode"
    )
    cursor.execute("SELECT set_config(%s, 'on', true)", [setting])


def test_grams_are_computed_in_a_plan_forced_parallel():
    if connection.vendor != "postgresql":
        pytest.skip("the grams function is PostgreSQL's")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT proparallel FROM pg_proc WHERE proname = 'annotator_grams'")
        assert cursor.fetchone()[0] == "u"
        _force_parallel(cursor)
        cursor.execute(
            "SELECT string_agg(annotator_grams(x)::text, ' | ' ORDER BY x) "
            "FROM (VALUES ('Wing'), ('合同法')) v(x)"
        )
        assert cursor.fetchone()[0] == "'g' 'in' 'ng' 'wi' | '合同' '同法' '法'"
