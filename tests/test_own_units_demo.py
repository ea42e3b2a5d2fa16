"""Level "each run's own units" on both demo projects as ``manage.py demo`` builds them:
every figure equals ``manage.py evaluate`` on the exported qrels and run files (the
demo-shaped project's checks are in ``tests/test_own_units.py``)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.models import Membership, Project, Role
from tests.test_own_units import _check_against_evaluate

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture(autouse=True, scope="module")
def _demo(demo_module):
    """The module runs on a copy of the demo database (tests.demo_database)."""


def test_own_units_equals_evaluate_on_both_demo_projects(client, tmp_path):
    """Both demo projects as ``manage.py demo`` builds them (two chunkings each, BM25 runs
    per chunking, the datasets' document runs, the assessors' document-level qrels)."""
    from demo.loading import build_demo

    build_demo(say=lambda _text: None)  # built already (tests.demo_database): adds nothing
    for slug in ("cranfield", "lecard"):
        project = Project.objects.get(slug=slug)
        owner = Membership.objects.filter(project=project, role=Role.OWNER).first().user
        client.force_login(owner)
        response = client.get(reverse("metrics:dashboard", args=[slug]))
        assert response.context["setting"].level == "own"
        levels = {r["unit_level"] for r in response.context["rows"]}
        assert {"tokens-256-32", "tokens-512-64", "documents"} <= levels
        assert _check_against_evaluate(client, slug, tmp_path, {"k": 10}) >= 3
        # Demo labels are the datasets' document qrels: the warning shows, with its share.
        assert 'id="document-label-warning"' in response.content.decode()
