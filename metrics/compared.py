"""Stored runs against a baseline: which runs a comparison takes (one rule for the page,
the API and the gate) and their ``Comparison`` (``numerics.comparison``).

A comparison takes the baseline, then each other run named, once; every run must be one
the setting can measure at its level (level ``own``: any run), else the answer is a 400
naming the runs it cannot measure — the page and the API give the same answer. The
per-query values are those of the queries judged at every run's level, put in canonical
order (qids in byte order) with the same seed as ``manage.py compare``, so that files,
pages and the API give the same p-values for the same data. Charts are the pages' own:
nothing here draws.
"""

from __future__ import annotations

from django.utils.translation import gettext as _

from annotator.models import Project, Query
from numerics.comparison import Comparison, compare
from web.errors import BadParameters

from .access import project_run
from .evaluation import EvaluationSetting
from .models import Run
from .reports import aligned_values


def chosen_runs(
    project: Project, setting: EvaluationSetting, ids: list[int], baseline: int | None
) -> list[Run]:
    """The baseline (the first of ``ids`` when none is named) and then the other runs of
    ``ids``, each once. A run not in the project is a 404 (``project_run``);
    ``BadParameters`` when fewer than two runs remain or some cannot be measured at the
    setting's level."""
    wanted = list(dict.fromkeys([baseline, *ids] if baseline else ids))
    runs = [project_run(project, pk) for pk in wanted]
    if len(runs) < 2:
        raise BadParameters(_("Compare at least one run with the baseline."))
    refused = [run.name for run in runs if not setting.can_evaluate(run)]
    if refused:
        raise BadParameters(
            _("These runs cannot be evaluated at that level: %(runs)s.")
            % {"runs": ", ".join(refused)}
        )
    return runs


def compare_runs(
    runs: list[Run], setting: EvaluationSetting, names: list[str], *, alpha: float = 0.05
) -> Comparison:
    """``runs[1:]`` against ``runs[0]`` on the measures ``names``."""
    query_pks, values = aligned_values(runs, setting, names)
    qid_of = dict(Query.objects.filter(pk__in=query_pks.tolist()).values_list("pk", "qid"))
    qids = [qid_of[int(pk)] for pk in query_pks.tolist()]
    return compare(qids, runs[0], runs[1:], values, names, alpha=alpha)
