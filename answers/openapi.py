"""The OpenAPI description of the answer endpoints, added to ``/api/openapi.json``."""

from __future__ import annotations

from api.openapi import (
    CHECK,
    COMPARED,
    ERROR,
    GATE_LIMITS,
    RUN_ID,
    SLUG,
    SOURCES,
    errors,
    gate_responses,
    ok,
    operation,
    parameter,
    schema_object,
)

ANSWER_RUN = schema_object(
    ["id", "name", "format", "parameters", "tags", "archived", "answers"],
    {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "run_tag": {"type": "string", "description": "the file's own run_id"},
        "format": {"enum": ["trec_rag", "simple"]},
        "chunking": {"type": "string", "nullable": True},
        "parameters": {"type": "object"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "archived": {"type": "boolean"},
        "answers": {"type": "integer"},
        "sentences": {"type": "integer"},
        "citations": {"type": "integer"},
        "created_at": {"type": "string"},
    },
)

UPLOAD = {
    "summary": "Upload an answer run (owners): TREC RAG 2024/2025 JSONL or the simple JSONL; "
    "every bad line is reported, nothing written",
    "parameters": [SLUG],
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": schema_object(
                    ["file", "name"],
                    {
                        "file": {"type": "string", "format": "binary"},
                        "name": {"type": "string"},
                        "chunking": {
                            "type": "string",
                            "description": "the chunking whose chunk ids the file cites",
                        },
                        "parameters": {"type": "string", "description": "a JSON object"},
                        "tags": {"type": "string", "description": "comma-separated"},
                    },
                )
            }
        },
    },
    "responses": {
        "201": {
            "description": "imported",
            "content": {"application/json": {"schema": ANSWER_RUN}},
        },
        **errors(400, 401, 403, 404),
    },
}

MEASURE = schema_object(
    ["mean", "answers"],
    {
        "mean": {"type": "number", "nullable": True},
        "answers": {"type": "integer", "description": "answers where the measure is defined"},
    },
)
MEASURE_NAMES = [
    "all_strict",
    "all_weak",
    "vital_strict",
    "vital_weak",
    "coverage_needed",
    "coverage_all",
    "support_precision_strict",
    "support_precision_weak",
    "citation_recall",
    "citation_validity",
    "crag",
    "correct",
]
SOURCES_PARAMETER = parameter(
    "sources",
    "whose judgements count, comma-separated: people, assessors, judges, judge:<slug>, "
    "judge:<slug>@<n> (default people)",
    {"type": "string"},
)
METRICS = schema_object(
    ["answer_run", "sources", "measures", "per_query"],
    {
        "answer_run": ANSWER_RUN,
        "sources": SOURCES,
        "measures": schema_object(MEASURE_NAMES, {name: MEASURE for name in MEASURE_NAMES}),
        "per_query": {
            "type": "array",
            "items": schema_object(
                ["qid", "answer"],
                {
                    "qid": {"type": "string"},
                    "answer": {"type": "integer"},
                    **{name: {"type": "number", "nullable": True} for name in MEASURE_NAMES},
                },
            ),
        },
    },
)

MEASURES_PARAMETER = parameter(
    "measure",
    "answer measures (default: all of them)",
    {"type": "array", "items": {"enum": MEASURE_NAMES}},
    style="form",
    explode=True,
)
COMPARISON = schema_object(
    ["baseline", "sources", "queries", "measures"],
    {
        "baseline": {"type": "object"},
        "sources": SOURCES,
        "queries": {"type": "integer", "description": "queries every run answered"},
        "alpha": {"type": "number"},
        "seed": {"type": "integer"},
        "correction": {"type": "string"},
        "measures": {
            "type": "object",
            "additionalProperties": schema_object(
                ["queries", "baseline_mean", "runs"],
                {
                    "queries": {
                        "type": "integer",
                        "description": "of them, those where every run's value is defined",
                    },
                    "baseline_mean": {"type": "number"},
                    "runs": {"type": "array", "items": COMPARED},
                },
            ),
        },
    },
)
ANSWER_CHECK = {**CHECK, "properties": {**CHECK["properties"], "queries": {"type": "integer"}}}
ANSWER_GATE = schema_object(
    ["pass", "run", "baseline", "sources", "checks", "failing"],
    {
        "pass": {"type": "boolean"},
        "run": {"type": "object"},
        "baseline": {"type": "object"},
        "sources": SOURCES,
        "queries": {"type": "integer"},
        "checks": {"type": "array", "items": ANSWER_CHECK},
        "failing": {"type": "array", "items": ANSWER_CHECK},
    },
)

NUMBER = {"type": "number", "nullable": True}
INTERVAL = {"type": "array", "items": {"type": "number"}, "nullable": True}
ASPECT_AGREEMENT = schema_object(
    ["aspect", "levels", "n", "exact_agreement", "kappa", "kappa_linear", "confusion"],
    {
        "aspect": {"enum": ["nugget", "support"]},
        "levels": {"type": "array", "items": {"type": "string"}},
        "n": {"type": "integer", "description": "targets both sides judged"},
        "n_a": {"type": "integer"},
        "n_b": {"type": "integer"},
        "exact_agreement": NUMBER,
        "kappa": NUMBER,
        "kappa_linear": NUMBER,
        "alpha_ordinal": NUMBER,
        "alpha_nominal": NUMBER,
        "intervals": {"type": "object", "additionalProperties": INTERVAL},
        "confusion": {
            "type": "array",
            "items": {"type": "array", "items": {"type": "integer"}},
            "description": "rows: side a's level, columns: side b's",
        },
        "reference": {
            "type": "object",
            "nullable": True,
            "description": "the published figure (TREC 2024 RAG: 0.56 for citation support)",
        },
    },
)
CALIBRATION = schema_object(
    ["a", "b", "aspects", "rankings"],
    {
        "a": {"type": "string"},
        "b": {"type": "string"},
        "aspects": {"type": "array", "items": ASPECT_AGREEMENT},
        "rankings": {
            "type": "array",
            "items": schema_object(
                ["measure", "runs", "kendall_tau"],
                {
                    "measure": {"type": "string"},
                    "kendall_tau": NUMBER,
                    "runs": {
                        "type": "array",
                        "items": schema_object(
                            ["run", "a", "b", "answers"],
                            {
                                "run": {"type": "string"},
                                "a": NUMBER,
                                "b": NUMBER,
                                "answers": {"type": "integer"},
                            },
                        ),
                    },
                },
            ),
        },
    },
)

PATHS = {
    "/api/p/{slug}/answers/calibration/": {
        "get": operation(
            "An LLM judge's answer judgements against people's on the same answers: per "
            "aspect exact agreement, Cohen's kappa, Krippendorff's alpha, confusion; "
            "Kendall's tau of the run rankings",
            [
                SLUG,
                parameter("a", "side a's label sources (default people)", {"type": "string"}),
                parameter(
                    "b", "side b's label sources (default the first judge)", {"type": "string"}
                ),
                parameter(
                    "runs",
                    "answer run names, one per value (default: every active run)",
                    {"type": "array", "items": {"type": "string"}},
                    style="form",
                    explode=True,
                ),
            ],
            {**ok(CALIBRATION), **errors(400, 401, 403, 404)},
        )
    },
    "/api/p/{slug}/answers/compare/": {
        "get": operation(
            "Answer runs against a baseline: deltas, intervals, wins/ties/losses, paired "
            "randomization and t-tests, Holm-corrected per measure; each measure over the "
            "queries where every run's value is defined",
            [
                SLUG,
                parameter("runs", "answer run ids, comma-separated", required=True),
                parameter(
                    "baseline", "the baseline's id (default: the first run)", {"type": "integer"}
                ),
                MEASURES_PARAMETER,
                SOURCES_PARAMETER,
            ],
            {**ok(COMPARISON), **errors(400, 401, 403, 404)},
        )
    },
    "/api/p/{slug}/answers/{id}/gate/": {
        "get": operation(
            "Pass or fail an answer run against a baseline on per-measure thresholds (the "
            "retrieval runs' gate)",
            [
                SLUG,
                RUN_ID,
                parameter("baseline", "the baseline's id", {"type": "integer"}, required=True),
                *GATE_LIMITS,
                {**MEASURES_PARAMETER, "required": True},
                SOURCES_PARAMETER,
            ],
            gate_responses(ANSWER_GATE),
        )
    },
    "/api/p/{slug}/answers/{id}/metrics/": {
        "get": operation(
            "An answer run's measures: nugget scores, citation coverage, support, recall "
            "and validity, CRAG; means over the answers where defined, and every answer's",
            [SLUG, RUN_ID, SOURCES_PARAMETER],
            {**ok(METRICS), **errors(400, 401, 403, 404)},
        )
    },
    "/api/p/{slug}/answers/": {
        "get": operation(
            "The project's answer runs (archived ones with archived=true)",
            [
                SLUG,
                parameter("archived", "true to include archived runs", {"enum": ["true", "false"]}),
            ],
            {
                **ok(
                    schema_object(
                        ["answer_runs"], {"answer_runs": {"type": "array", "items": ANSWER_RUN}}
                    )
                ),
                **errors(401, 404),
            },
        ),
        "post": UPLOAD,
    },
}

__all__ = ["ERROR", "PATHS"]
