"""The OpenAPI 3 description of the token API, served at ``GET /api/openapi.json``.

Tests check every endpoint against it on a live server (schemathesis), so the paths,
parameters and response shapes below are what the views answer.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
NUMBER_OR_NULL = {"type": "number", "nullable": True}
INTERVAL = {
    "type": "array",
    "items": {"type": "number"},
    "minItems": 2,
    "maxItems": 2,
    "nullable": True,
}
PROBLEM = {
    "type": "object",
    "required": ["code", "params", "message"],
    "description": "a problem as data: a stable code, the values its message names (a value "
    "may itself be a problem, without message) and the message in the request's language",
    "properties": {
        "code": {"type": "string"},
        "params": {"type": "object"},
        "message": {"type": "string"},
    },
}
ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {"type": "string"},
        "lines": {
            "type": "array",
            "items": {"type": "string"},
            "description": "a refused file: each problem's message (line N: reason)",
        },
        "problems": {"type": "array", "items": PROBLEM, "description": "the same, as data"},
    },
}
SOURCES = {
    "type": "array",
    "items": {"type": "string"},
    "description": "the label sources the numbers stand on: people, assessors, judge:<slug>…",
}
GOLD = {
    "type": "object",
    "required": ["gold", "mapping", "level", "sources"],
    "properties": {
        "gold": {"type": "string"},
        "mapping": {"type": "string"},
        "sources": SOURCES,
    },
}
COVERAGE = {
    "type": "object",
    "description": "share of the top k judged by each source, and unjudged",
    "required": ["unjudged"],
    "additionalProperties": {"type": "number"},
}
RUN = {
    "type": "object",
    "required": ["id", "name", "level", "parameters", "tags", "series", "archived"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "level": {"type": "string", "description": "a chunking's name, or documents"},
        "parameters": {"type": "object"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "series": {"type": "string"},
        "archived": {"type": "boolean"},
        "results": {"type": "integer"},
        "queries": {"type": "integer"},
        "dropped": {"type": "integer"},
        "created_at": {"type": "string"},
    },
}
COMPARED = {
    "type": "object",
    "required": [
        "id",
        "name",
        "mean",
        "delta",
        "p_randomization",
        "p_t",
        "p_holm",
        "p_t_holm",
        "significant",
        "significant_t",
    ],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "mean": {"type": "number"},
        "delta": {"type": "number"},
        "delta_interval": INTERVAL,
        "wins": {"type": "integer"},
        "ties": {"type": "integer"},
        "losses": {"type": "integer"},
        "p_randomization": NUMBER_OR_NULL,
        "p_t": NUMBER_OR_NULL,
        "p_holm": NUMBER_OR_NULL,
        "p_t_holm": NUMBER_OR_NULL,
        "significant": {"type": "boolean"},
        "significant_t": {"type": "boolean"},
    },
}
JOB = {
    "type": "object",
    "required": ["job", "status", "percent", "run"],
    "properties": {
        "job": {"type": "integer"},
        "status": {"enum": ["pending", "running", "done", "failed"]},
        "percent": {"type": "integer"},
        "run": {"type": "object", "nullable": True},
        "poll": {"type": "string"},
        "lines": {"type": "array", "items": {"type": "string"}},
        "problems": {"type": "array"},
    },
}
CHECK = {
    "type": "object",
    "required": ["measure", "run_mean", "baseline_mean", "delta", "pass", "reasons"],
    "properties": {
        "measure": {"type": "string"},
        "run_mean": {"type": "number"},
        "baseline_mean": {"type": "number"},
        "delta": {"type": "number"},
        "delta_interval": INTERVAL,
        "p_randomization": NUMBER_OR_NULL,
        "p_t": NUMBER_OR_NULL,
        "max_drop": NUMBER_OR_NULL,
        "alpha": NUMBER_OR_NULL,
        "pass": {"type": "boolean"},
        "reasons": {"type": "array", "items": {"type": "string"}},
    },
}
GATE = {
    "type": "object",
    "required": ["sources", "pass", "run", "baseline", "checks", "failing"],
    "properties": {
        "sources": SOURCES,
        "pass": {"type": "boolean"},
        "run": {"type": "object"},
        "baseline": {"type": "object"},
        "level": {"type": "string"},
        "k": {"type": "integer"},
        "gold": GOLD,
        "queries": {"type": "integer"},
        "checks": {"type": "array", "items": CHECK},
        "failing": {"type": "array", "items": CHECK},
    },
}


def _query(name: str, description: str, schema: dict | None = None, **extra) -> dict:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema or {"type": "string"},
        **extra,
    }


SLUG = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}
RUN_ID = {
    "name": "id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 0},
}
SETTING = [
    _query("level", "own (each run at its own units), documents, pages or a chunking's name"),
    _query("k", "the cutoff of @k measures and Judged@k (default 10)", {"type": "integer"}),
    _query("gold", "live (default) or a gold set's id"),
    _query("mapping", "any_overlap (default), contains, evidence_overlap>=θ, chunk_overlap>=θ"),
    _query(
        "sources",
        "whose live labels count, comma-separated: people, assessors, judges, judge:<slug>, "
        "judge:<slug>@<n> (default people,assessors)",
    ),
    _query(
        "measure",
        "measures by registry name (nDCG@10, RR, Bpref, P(rel=2)@5 …; @k = the k above); "
        "repeat for several; default Hit, P, R, F1, MRR at k, MAP, nDCG at k, Rprec",
        {"type": "array", "items": {"type": "string"}},
        style="form",
        explode=True,
    ),
]


def _errors(*codes: int) -> dict:
    text = {
        400: "bad parameters (nothing computed)",
        401: "no valid API token",
        403: "your role in this project does not allow this, or the token may only read",
        404: "no such project (for you), run or gold set",
        405: "method not allowed",
    }
    return {
        str(code): {
            "description": text[code],
            "content": {"application/json": {"schema": ERROR}},
        }
        for code in codes
    }


def _ok(schema: dict, description: str = "OK") -> dict:
    return {
        "200": {"description": description, "content": {"application/json": {"schema": schema}}}
    }


def _object(required: list[str], properties: dict) -> dict:
    return {"type": "object", "required": required, "properties": properties}


def _operation(summary: str, parameters: list, responses: dict) -> dict:
    return {"summary": summary, "parameters": parameters, "responses": responses}


# A gate's limits and answers (retrieval and answer runs alike).
GATE_LIMITS = [
    _query(
        "max_drop",
        "per measure, in order: the largest allowed drop of the mean",
        {"type": "array", "items": {"type": "number"}},
        style="form",
        explode=True,
    ),
    _query(
        "alpha",
        "fail a measure when the run is significantly worse "
        "(paired randomization test) at this level",
        {"type": "number"},
    ),
]


def _gate_responses(gate: dict) -> dict:
    return {
        **_ok(gate, "the run passes every check"),
        "422": {
            "description": "the run fails a check; the failing figures are in failing",
            "content": {"application/json": {"schema": gate}},
        },
        **_errors(400, 401, 403, 404),
    }


SPEC = {
    "openapi": "3.0.3",
    "info": {
        "title": "Assay API",
        "version": "1",
        "description": "Runs, gold sets, metrics, comparisons and a CI gate. Send "
        "`Authorization: Bearer <token>` (create one under API tokens, or with "
        "`manage.py create_token USERNAME --name NAME [--read-only] [--project SLUG ...]`). "
        "A token acts with its user's roles; it may be limited to some projects (any other "
        "answers 404) and to reading (uploads answer 403), and changing the user's password "
        "revokes it (401).",
    },
    "components": {
        "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        "schemas": {"Error": ERROR, "Problem": PROBLEM},
    },
    "security": [{"token": []}],
    "paths": {
        "/api/p/{slug}/runs/": {
            "get": _operation(
                "The project's runs (archived ones with archived=true)",
                [
                    SLUG,
                    _query(
                        "archived", "true to include archived runs", {"enum": ["true", "false"]}
                    ),
                ],
                {
                    **_ok(_object(["runs"], {"runs": {"type": "array", "items": RUN}})),
                    **_errors(401, 404),
                },
            ),
            "post": {
                "summary": "Upload a run (owners); every bad line is reported, nothing written",
                "parameters": [SLUG],
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": _object(
                                ["file", "name"],
                                {
                                    "file": {"type": "string", "format": "binary"},
                                    "name": {"type": "string"},
                                    "chunking": {"type": "string"},
                                    "parameters": {
                                        "type": "string",
                                        "description": "a JSON object",
                                    },
                                    "keep_known": {"enum": ["true", "false"]},
                                    "replace": {"enum": ["true", "false"]},
                                    "tags": {"type": "string", "description": "comma-separated"},
                                    "series": {"type": "string", "description": "the pipeline"},
                                },
                            )
                        }
                    },
                },
                "responses": {
                    "202": {
                        "description": "a file over ASSAY_API_INLINE_RUN_BYTES: handed to the "
                        "worker; poll the job at the Location header (also in poll)",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                        "content": {"application/json": {"schema": JOB}},
                    },
                    "201": {
                        "description": "imported",
                        "content": {
                            "application/json": {
                                "schema": _object(
                                    ["id", "name"],
                                    {
                                        "id": {"type": "integer"},
                                        "name": {"type": "string"},
                                        "dropped": {"type": "integer"},
                                    },
                                )
                            }
                        },
                    },
                    **_errors(400, 401, 403, 404),
                },
            },
        },
        "/api/p/{slug}/jobs/{id}/": {
            "get": _operation(
                "A run upload handed to the worker: pending, running, done (with the run) or "
                "failed (with every problem; nothing imported) — owners",
                [SLUG, RUN_ID],
                {**_ok(JOB), **_errors(401, 403, 404)},
            )
        },
        "/api/p/{slug}/gold/{id}/export/": {
            "get": _operation(
                "A gold set as a file (owners)",
                [
                    SLUG,
                    RUN_ID,
                    _query(
                        "format",
                        "jsonl (default), qrels, beir (BEIR's qrels TSV) or xlsx",
                        {"enum": ["jsonl", "qrels", "beir", "xlsx"]},
                    ),
                    _query("level", "documents (default), pages or a chunking's name"),
                    _query("mapping", "the mapping policy"),
                ],
                {
                    "200": {
                        "description": "the file; how its grades were made (the policy) is in "
                        "the Assay-Policy header as JSON",
                        "headers": {"Assay-Policy": {"schema": {"type": "string"}}},
                        "content": {
                            "application/x-ndjson": {"schema": {"type": "string"}},
                            "text/plain": {"schema": {"type": "string"}},
                            "text/tab-separated-values": {"schema": {"type": "string"}},
                            XLSX: {"schema": {"type": "string", "format": "binary"}},
                        },
                    },
                    **_errors(400, 401, 403, 404),
                },
            )
        },
        "/api/p/{slug}/gold/": {
            "get": _operation(
                "The project's frozen gold sets",
                [SLUG],
                {
                    **_ok(_object(["gold_sets"], {"gold_sets": {"type": "array"}})),  # sources each
                    **_errors(401, 404),
                },
            )
        },
        "/api/p/{slug}/runs/{id}/metrics/": {
            "get": _operation(
                "A run's means with 95 % bootstrap intervals, Judged@k and per-query values",
                [SLUG, RUN_ID, *SETTING],
                {
                    **_ok(
                        _object(
                            [
                                "sources",
                                "run",
                                "level",
                                "k",
                                "gold",
                                "mean",
                                "interval",
                                "judged",
                                "coverage",
                            ],
                            {
                                "sources": SOURCES,
                                "run": RUN,
                                "level": {"type": "string"},
                                "requested_level": {"type": "string"},
                                "k": {"type": "integer"},
                                "gold": GOLD,
                                "units": {"type": "integer"},
                                "queries": {"type": "integer"},
                                "mean": {
                                    "type": "object",
                                    "additionalProperties": {"type": "number"},
                                },
                                "interval": {"type": "object", "additionalProperties": INTERVAL},
                                "judged": {"type": "number"},
                                "coverage": COVERAGE,
                                "per_query": {"type": "object"},
                                # Added by the nuggets app (metrics.figures) when the gold
                                # has nuggets: NuggetRecall@k (all, vital), StRecall@k,
                                # alpha_nDCG@k, ERR_IA@k over the queries with nuggets.
                                "nuggets": _object(
                                    ["level", "queries", "of", "mean", "counted", "interval"],
                                    {
                                        "level": {"type": "string"},
                                        "queries": {"type": "integer"},
                                        "of": {"type": "integer"},
                                        "mean": {
                                            "type": "object",
                                            "additionalProperties": {
                                                "type": "number",
                                                "nullable": True,
                                            },
                                        },
                                        "counted": {
                                            "type": "object",
                                            "additionalProperties": {"type": "integer"},
                                        },
                                        "interval": {
                                            "type": "object",
                                            "additionalProperties": INTERVAL,
                                        },
                                        "per_query": {"type": "object"},
                                    },
                                ),
                                "per_query_coverage": {
                                    "type": "object",
                                    "additionalProperties": COVERAGE,
                                },
                            },
                        )
                    ),
                    **_errors(400, 401, 403, 404),
                },
            )
        },
        "/api/p/{slug}/compare/": {
            "get": _operation(
                "Runs against a baseline: deltas, intervals, paired randomization and t-tests, "
                "Holm-corrected per measure",
                [
                    SLUG,
                    _query("runs", "run ids, comma-separated", required=True),
                    _query(
                        "baseline",
                        "the baseline run's id (default: the first run)",
                        {"type": "integer"},
                    ),
                    *SETTING,
                ],
                {
                    **_ok(
                        _object(
                            ["sources", "baseline", "level", "measures"],
                            {
                                "sources": SOURCES,
                                "baseline": {"type": "object"},
                                "level": {"type": "string"},
                                "k": {"type": "integer"},
                                "gold": GOLD,
                                "queries": {"type": "integer"},
                                "alpha": {"type": "number"},
                                "seed": {"type": "integer"},
                                "correction": {"type": "string"},
                                "measures": {
                                    "type": "object",
                                    "additionalProperties": _object(
                                        ["baseline_mean", "runs"],
                                        {
                                            "baseline_mean": {"type": "number"},
                                            "runs": {"type": "array", "items": COMPARED},
                                        },
                                    ),
                                },
                            },
                        )
                    ),
                    **_errors(400, 401, 403, 404),
                },
            )
        },
        "/api/p/{slug}/sources/compare/": {
            "get": _operation(
                "Runs ranked under two sets of label sources: Kendall's τ and τ_AP, flipped "
                "pairs, per-query Pearson and Spearman",
                [
                    SLUG,
                    _query("a", "the reference sources (default people,assessors)"),
                    _query("b", "the sources compared with them, e.g. judge:<slug>", required=True),
                    _query("measure", "a registry name (default nDCG@k)"),
                    _query("level", "own, documents, pages or a chunking's name"),
                    _query("k", "the cutoff of @k measures (default 10)", {"type": "integer"}),
                    _query("mapping", "the mapping policy"),
                ],
                {
                    **_ok(
                        _object(
                            ["sources", "measure", "level", "tau", "tau_ap", "flips", "runs"],
                            {
                                "a": SOURCES,
                                "b": SOURCES,
                                "sources": {"type": "object"},
                                "measure": {"type": "string"},
                                "level": {"type": "string"},
                                "k": {"type": "integer"},
                                "tau": NUMBER_OR_NULL,
                                "tau_ap": NUMBER_OR_NULL,
                                "flips": {"type": "array", "items": {"type": "object"}},
                                "per_query": {"type": "object"},
                                "runs": {"type": "array", "items": {"type": "object"}},
                            },
                        )
                    ),
                    **_errors(400, 401, 403, 404),
                },
            )
        },
        "/api/p/{slug}/runs/{id}/gate/": {
            "get": _operation(
                "Pass or fail a run against a baseline on per-measure thresholds",
                [
                    SLUG,
                    RUN_ID,
                    _query("baseline", "the baseline run's id", {"type": "integer"}, required=True),
                    *GATE_LIMITS,
                    *[p for p in SETTING if p["name"] != "measure"],
                    _query(
                        "measure",
                        "the gated measures, each with its max_drop",
                        {"type": "array", "items": {"type": "string"}},
                        style="form",
                        explode=True,
                        required=True,
                    ),
                ],
                _gate_responses(GATE),
            )
        },
    },
}


# What apps above the API use to describe the endpoints they serve (answers …).
parameter, errors, ok, schema_object, operation = _query, _errors, _ok, _object, _operation
gate_responses = _gate_responses


def register_paths(paths: dict) -> None:
    """Add the description of endpoints another app serves (called when it starts)."""
    SPEC["paths"].update(paths)


@require_GET
def schema(request: HttpRequest) -> JsonResponse:
    """The OpenAPI description (public: it holds no data)."""
    return JsonResponse(SPEC, json_dumps_params={"ensure_ascii": False})
