"""manage.py compare_sources SLUG --a people,assessors --b judge:x -m nDCG@10."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from metrics.forms import SourceRankingForm
from metrics.source_rankings import compare_sources


def _number(value) -> str:
    return "—" if value is None else f"{value:.4f}"


class Command(BaseCommand):
    help = (
        "Rank the runs on one measure under the labels of two sets of sources (e.g. people,"
        "assessors against judge:x): Kendall's tau and tau_AP, the flipped pairs, per-query "
        "Pearson and Spearman."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--a", default="people,assessors", help="the reference sources")
        parser.add_argument("--b", required=True, help="the sources compared with them")
        parser.add_argument("-m", "--measure", default="nDCG@10")
        parser.add_argument("--level", default="", help="own, documents, pages or a chunking")
        parser.add_argument("--k", default="10")
        parser.add_argument("--mapping", default="")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        form = SourceRankingForm(
            {key: options[key] for key in ("a", "b", "measure", "level", "k", "mapping")},
            project=project,
        )
        if not form.is_valid():
            raise CommandError(
                "; ".join(f"--{k}: {' '.join(map(str, v))}" for k, v in form.errors.items())
            )
        data = form.cleaned_data
        result = compare_sources(project, data["a"], data["b"], data["measure"], **form.options())
        if options["format"] == "json":
            self.stdout.write(json.dumps(result.as_json(), ensure_ascii=False, indent=2))
            return
        self.stdout.write(
            f"{result.measure} at {result.level}: a = {','.join(result.a)}, "
            f"b = {','.join(result.b)}"
        )
        self.stdout.write(f"{'run':30} {'a':>8} {'rank':>4} {'b':>8} {'rank':>4}")
        for row in sorted(result.runs, key=lambda r: r["rank_a"]):
            self.stdout.write(
                f"{row['name'][:30]:30} {row['a']:8.4f} {row['rank_a']:4d} "
                f"{row['b']:8.4f} {row['rank_b']:4d}"
            )
        self.stdout.write(f"Kendall's tau: {_number(result.tau)}")
        self.stdout.write(f"tau_AP (b against a): {_number(result.tau_ap)}")
        flips = ", ".join(f"{f['above']} > {f['below']}" for f in result.flips) or "none"
        self.stdout.write(f"flipped (order under a): {flips}")
        self.stdout.write(
            f"per query ({result.queries} queries): Pearson {_number(result.pearson)}, "
            f"Spearman {_number(result.spearman)}"
        )
