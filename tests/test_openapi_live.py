"""Every API endpoint against the OpenAPI description the app serves, on a live server:
no server errors, only documented status codes and content types, bodies that match the
documented schemas (schemathesis generates the requests)."""

from __future__ import annotations

import numpy as np
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.models import ApiToken

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api_data(personas, corpus):
    """Two runs of the persona project and a token of its owner."""
    from annotator.evidence import Evidence
    from annotator.labels import change_label
    from metrics.models import Run

    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=2,
    )
    runs = []
    for name, score in (("a", 1.0), ("b", 2.0)):
        run = Run(
            project=personas["project"], name=name, level="chunk", chunking=corpus["chunking"]
        )
        run.set_results(
            np.array([corpus["query"].pk]), np.array([corpus["chunk"].pk]), np.array([score])
        )
        run.save()
        runs.append(run.pk)
    return {"token": ApiToken.create_for(personas["owner"], "ci")[1], "runs": runs}


def test_api_matches_its_openapi_description(live_server, api_data):
    import requests

    spec = requests.get(f"{live_server.url}/api/openapi.json", timeout=30).json()
    schema = schemathesis.openapi.from_dict(spec)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 15
    headers = {"Authorization": f"Bearer {api_data['token']}"}
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case):
            # Half the requests reach real objects: the project and its runs.
            if case.path_parameters is not None:
                case.path_parameters["slug"] = "acme"
                if case.path_parameters.get("id", 1) % 2 == 0:
                    case.path_parameters["id"] = api_data["runs"][0]
            if case.query and isinstance(case.query.get("baseline"), int):
                case.query["baseline"] = api_data["runs"][1]
            case.call_and_validate(base_url=live_server.url, headers=headers, checks=checks)

        check()
