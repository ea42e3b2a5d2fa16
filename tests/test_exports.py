"""Exports people can script: a column per measure and per bound, the setting and run
parameters as columns; the commands write what the page downloads."""

from __future__ import annotations

import csv
import io
import json

import openpyxl
import pytest
from django.core.management import CommandError, call_command

from annotator.models import Membership, Role
from tests import test_metrics_views

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db


def test_metrics_csv_has_a_column_per_measure_bound_and_parameter(login, personas, bench):
    client = login(personas["owner"])
    params = {"level": "halves", "k": 5, "measure": ["nDCG@k", "RR"]}
    text = client.get(url("export", format="csv", **params)).content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    header = list(rows[0])
    assert header == [
        "run", "run id", "level", "requested level", "k", "mapping", "gold", "sources", "gain",
        "series", "tags",
        "param:k", "nDCG@5", "nDCG@5 low", "nDCG@5 high", "RR", "RR low", "RR high",
        "Judged@5", "units", "lines dropped",
    ]  # fmt: skip
    board = client.get(url("dashboard", **params)).context["rows"]
    for row, shown in zip(rows, board, strict=True):
        assert row["run"] == shown["run"].name and row["param:k"] == "6"
        assert (row["level"], row["k"], row["mapping"], row["gold"], row["sources"]) == (
            "halves",
            "5",
            "any_overlap",
            "live",
            "people,assessors",
        )
        low, high = shown["scores"].interval("nDCG@5")
        assert float(row["nDCG@5"]) == pytest.approx(shown["scores"].mean("nDCG@5"))
        assert (float(row["nDCG@5 low"]), float(row["nDCG@5 high"])) == pytest.approx((low, high))
    xlsx = client.get(url("export", format="xlsx", **params))
    workbook = openpyxl.load_workbook(io.BytesIO(xlsx.content))
    assert [c.value for c in workbook["metrics"][1]] == header
    # The policy the numbers stand on: the download's header and the workbook's about sheet.
    about = {row[0]: row[1] for row in workbook["about"].iter_rows(min_row=2, values_only=True)}
    assert about["sources"] == "people, assessors"
    policy = json.loads(about["policy"])
    assert policy["sources"] == ["people", "assessors"]
    assert (policy["level"], policy["k"]) == ("halves", 5)
    assert json.loads(xlsx["Assay-Policy"]) == policy
    chosen = client.get(url("export", format="csv", sources="people", **params))
    assert json.loads(chosen["Assay-Policy"])["sources"] == ["people"]


def test_export_metrics_command_writes_what_the_page_downloads(login, personas, bench, tmp_path):
    client = login(personas["owner"])
    page = client.get(url("export", format="csv", level="own", k=3, measure="P@k")).content
    out = io.StringIO()
    call_command(
        "export_metrics", "acme", "--level", "own", "--k", "3", "--measure", "P@k", stdout=out
    )
    assert out.getvalue().encode() == page
    per_query = client.get(url("export", format="csv", level="halves", run=bench["runs"][0].pk))
    out = io.StringIO()
    call_command(
        "export_metrics", "acme", "--level", "halves", "--run", str(bench["runs"][0].pk), stdout=out
    )
    assert out.getvalue().encode() == per_query.content
    call_command("export_metrics", "acme", "--format", "xlsx", "--output", str(tmp_path / "m.xlsx"))
    assert openpyxl.load_workbook(tmp_path / "m.xlsx")["metrics"].max_row == 4  # 3 runs
    with pytest.raises(CommandError):
        call_command("export_metrics", "acme", "--level", "nope")
    with pytest.raises(CommandError):
        call_command("export_metrics", "nope")


def test_export_metrics_calls_the_service_itself_not_a_members_form(login, personas, bench, capsys):
    """The command builds its evaluation setting from its options: it needs no owner to
    act as (it refused a project without one before), and every bad option is named."""
    page = login(personas["owner"]).get(url("export", format="csv", level="halves")).content
    Membership.objects.filter(project=personas["project"], role=Role.OWNER).delete()
    out = io.StringIO()
    call_command("export_metrics", "acme", "--level", "halves", stdout=out)
    assert out.getvalue().encode() == page
    for option, value, named in (
        ("--gold", "nope", "--gold"),
        ("--gold", "999999", "no gold set"),
        ("--k", "0", "--k"),
        ("--measure", "nDCG@k;", "nDCG@k;"),
        ("--run", "999999", "no run"),
        ("--sources", "nobody", "nobody"),
    ):
        with pytest.raises(CommandError, match=named):
            call_command("export_metrics", "acme", "--level", "halves", option, value)


def test_export_run_command_trec_and_jsonl(login, personas, bench):
    run = bench["runs"][0]
    page = login(personas["owner"]).get(url("run_file", run.pk, level="own")).content.decode()
    out = io.StringIO()
    call_command("export_run", "acme", run.name, stdout=out)
    assert out.getvalue() == page
    out = io.StringIO()
    call_command("export_run", "acme", str(run.pk), "--format", "jsonl", stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    trec = [line.split() for line in page.splitlines()]
    assert [(q["qid"], item) for q in lines for item in q["retrieved"]] == [
        (t[0], t[2]) for t in trec
    ]
    with pytest.raises(CommandError):
        call_command("export_run", "acme", "no such run")
