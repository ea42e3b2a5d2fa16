"""Measures people choose (remembered per user and project), the per-tag breakdown and the
charts: the chart's measures live in the URL, survive the refresh and make the downloads."""

from __future__ import annotations

import io
import itertools
import json
import re

import pytest
from django.core.management import call_command
from hypothesis import given
from hypothesis import strategies as st

from metrics import charts
from metrics.models import MeasureChoice
from tests import test_metrics_views

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db

CHOSEN = ["RR", "Bpref", "P(rel=2)@k", "nDCG(dcg='exp-log2')@k", "MRR@k"]


def test_chosen_measures_are_columns_and_equal_evaluate(login, personas, bench, tmp_path):
    client = login(personas["owner"])
    response = client.get(url("dashboard", level="halves", k=4, measure=CHOSEN))
    assert response.status_code == 200
    names = ["RR", "Bpref", "P(rel=2)@4", "nDCG(dcg='exp-log2')@4", "MRR@4"]
    assert response.context["setting"].names == names
    (tmp_path / "q").write_bytes(client.get(url("qrels_file", level="halves")).content)
    for row in response.context["rows"]:
        (tmp_path / "r").write_bytes(
            client.get(url("run_file", row["run"].pk, level="halves")).content
        )
        out = io.StringIO()
        args = [a for n in names for a in ("-m", n)]
        call_command(
            "evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "--json", *args, stdout=out
        )
        expected = json.loads(out.getvalue())["mean"]
        assert {c["name"]: c["mean"] for c in row["cells"]} == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "params",
    [{"measure": "nDCG@x"}, {"measure": "Foo@10"}, {"measure": "Bpref@5"}, {"chart": "P@99"}],
)
def test_bad_measure_or_chart_is_400(login, personas, bench, params):
    assert login(personas["viewer"]).get(url("dashboard", **params)).status_code == 400


def test_measures_are_remembered_per_user_and_project(login, personas, bench, client):
    login(personas["viewer"])
    response = client.post(
        url("choose_measures"),
        {"measure": ["RR", "P(rel=2)@k"], "other": "Bpref, nDCG@20", "back": "level=halves&k=3"},
    )
    assert response.status_code == 302 and "level=halves" in response["Location"]
    choice = MeasureChoice.objects.get(user=personas["viewer"], project=bench["project"])
    assert choice.measures == ["RR", "P(rel=2)@k", "Bpref", "nDCG@20"]
    page = client.get(url("dashboard", level="halves", k=3))
    assert page.context["setting"].names == ["RR", "P(rel=2)@3", "Bpref", "nDCG@20"]
    # The URL wins over the remembered choice; another user keeps the defaults.
    assert client.get(url("dashboard", measure="MAP")).context["setting"].names == ["MAP"]
    other = login(personas["adjudicator"]).get(url("dashboard", level="halves", k=3))
    assert other.context["setting"].names[0] == "Hit@3"
    login(personas["viewer"])
    bad = client.post(url("choose_measures"), {"other": "Nope@3"})
    assert bad.status_code == 400 and MeasureChoice.objects.get().measures[0] == "RR"


def test_chart_measure_survives_refresh_and_makes_the_downloads(login, personas, bench):
    client = login(personas["viewer"])
    page = client.get(url("dashboard", level="halves", k=5, chart="MRR@5"))
    body = page.content.decode()
    refresh = re.search(r'hx-get="([^"]+)"', body).group(1).replace("&amp;", "&")
    assert "chart=MRR%405" in refresh
    partial = client.get(refresh, HTTP_HX_REQUEST="true").content.decode()
    assert 'data-measure="MRR@5"' in partial.split('id="dashboard-chart"')[1].split("</div>")[0]
    svg_link = re.search(r'href="([^"]+)" id="chart-svg"', partial).group(1).replace("&amp;", "&")
    svg = client.get(svg_link).content.decode()
    values = [float(v) for v in re.findall(r'data-measure="MRR@5" data-value="([^"]+)"', svg)]
    means = sorted((r["scores"].mean("MRR@5") for r in page.context["rows"]), reverse=True)
    assert values == pytest.approx(means)  # sorted, best first
    assert 'data-png="' in partial
    grouped = client.get(url("dashboard_chart", level="halves", chart=["P@10", "R@10"]))
    assert grouped.content.count(b'data-measure="P@10"') == 2
    assert grouped.content.count(b'data-measure="R@10"') == 2


def test_tag_breakdown_means_over_tagged_queries(login, personas, bench):
    page = login(personas["viewer"]).get(url("dashboard", level="halves", measure="P@k"))
    breakdown = page.context["tag_breakdown"]
    assert breakdown["tags"] == ["even", "odd"]
    row = page.context["rows"][0]
    values = row["scores"].values["P@10"]
    qids = row["scores"].gold.qids
    even = [v for v, q in zip(values, qids, strict=True) if int(q[1:]) % 2 == 0]
    run, means = breakdown["measures"][0]["rows"][0]
    assert run == row["run"] and means[0] == pytest.approx(sum(even) / len(even))
    assert b'id="tag-breakdown"' in page.content


def test_a_tag_without_judged_queries_gets_no_column(login, personas, bench):
    """Before, a tag whose queries had no gold showed a column of dashes for every run."""
    from annotator.models import Query

    Query.objects.create(project=bench["project"], qid="unjudged", text="x", tags=["lonely"])
    page = login(personas["viewer"]).get(url("dashboard", level="halves", measure="P@k"))
    assert page.context["tag_breakdown"]["tags"] == ["even", "odd"]
    assert b"lonely" not in page.content


@given(
    st.floats(-5, 5, allow_nan=False),
    st.floats(0.0001, 10, allow_nan=False),
)
def test_ticks_cover_the_data_in_even_round_steps(low, span):
    ticks = charts.nice_ticks(low, low + span)
    assert ticks[0] <= low + 1e-9 and ticks[-1] >= low + span - 1e-9
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(ticks) <= 12 and max(steps) - min(steps) < 1e-6 * max(steps)
    assert ticks[-1] - ticks[0] <= 3.5 * span + max(steps)  # scaled to the data, not fixed


def test_value_labels_sit_above_the_whiskers():
    svg = charts.bar_chart(
        "t", ["A"], [("run one", [0.3459], [(0.30, 0.39)]), ("run two", [0.3423], [(0.1, 0.5)])]
    )
    whisker_tops = [float(m) for m in re.findall(r'<path d="M[\d.]+ [\d.]+V([\d.]+)', svg)]
    label_ys = [
        float(m)
        for m in re.findall(r'translate\([\d.]+ ([\d.]+)\) rotate\(-90\)" class="value"', svg)
    ]
    assert len(whisker_tops) == len(label_ys) == 2
    assert all(label < top for label, top in zip(label_ys, whisker_tops, strict=True))
    assert "0.3459" in svg and "0.3423" in svg and ">0.4<" in svg  # axis to 0.5, ticks
