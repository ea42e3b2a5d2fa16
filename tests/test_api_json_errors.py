"""Every answer under /api/ is JSON, errors included; pages keep their HTML errors."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_api_unknown_address_is_a_json_404():
    response = Client().get("/api/no/such/thing/")
    assert response.status_code == 404
    assert response.json() == {"error": "not found"}


def test_api_wrong_method_is_a_json_405_that_keeps_allow():
    response = Client().post("/api/openapi.json")
    assert response.status_code == 405
    assert response.json() == {"error": "method not allowed"}
    assert response["Allow"] == "GET"


def test_api_internal_error_is_a_json_500(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("api.openapi.JsonResponse", broken)
    response = Client(raise_request_exception=False).get("/api/openapi.json")
    assert response.status_code == 500
    assert response.json() == {"error": "internal server error"}


def test_pages_outside_the_api_keep_html_errors(personas, login):
    response = login(personas["owner"]).get("/no/such/page/")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")
