"""The metrics tables that downloads and ``manage.py export_metrics`` write: one column per
measure, its interval bounds in columns of their own, and the setting and run parameters
as columns, so a script reads them without parsing text."""

from __future__ import annotations

import json
from dataclasses import dataclass

from . import reports
from .evaluation import EvaluationSetting
from .figures import figures
from .models import Run


def _setting_columns(setting: EvaluationSetting, level: str) -> list:
    gold = setting.gold.description["gold"]
    sources = ",".join(setting.source_names)
    gain = str(setting.gold.gain)
    return [level, setting.level, setting.k, str(setting.mapping), gold, sources, gain]


SETTING_HEADER = ["level", "requested level", "k", "mapping", "gold", "sources", "gain"]


def _parameter(value) -> object:
    return value if isinstance(value, int | float | str) or value is None else json.dumps(value)


def means_table(rows: list[dict], setting: EvaluationSetting) -> tuple[list, list[list]]:
    """Means per run with their 95 % interval bounds, the setting and run parameters."""
    keys = sorted({k for row in rows for k in row["run"].parameters})
    header = ["run", "run id", *SETTING_HEADER, "series", "tags"]
    header += [f"param:{k}" for k in keys]
    for _name, label in setting.measures:
        header += [label, f"{label} low", f"{label} high"]
    header += [setting.judged, "units", "lines dropped"]
    # Figures other apps add (nugget measures …), each a block of columns.
    extra = [found.means(setting, [row["run"] for row in rows]) for found in figures()]
    for columns, _cells in extra:
        header += columns
    table = []
    for row in rows:
        run: Run = row["run"]
        line = [run.name, run.pk, *_setting_columns(setting, row["unit_level"])]
        line += [run.series, ", ".join(run.tags)]
        line += [_parameter(run.parameters.get(k)) for k in keys]
        for cell in row["cells"]:
            line += [cell["mean"], cell["low"], cell["high"]]
        line += [row["judged"], row["n_units"], run.n_dropped]
        for columns, cells in extra:
            line += cells.get(run.pk, [None] * len(columns))
        table.append(line)
    return header, table


def per_query_table(run: Run, setting: EvaluationSetting) -> tuple[list, list[list]]:
    """Each judged query's value of every measure for one run, with the setting."""
    at = setting.for_run(run)
    _scores, rows = reports.per_query(run, at)
    header = ["qid", "query", "run", *SETTING_HEADER, *(label for _n, label in at.measures)]
    header.append(at.judged)
    extra = [found.per_query(setting, run) for found in figures()]
    for columns, _cells in extra:
        header += columns
    table = [
        [
            r["query"].qid,
            r["query"].text,
            run.name,
            *_setting_columns(setting, at.level),
            *(r["values"][n] for n in at.names),
            r["values"][at.judged],
            *(
                value
                for columns, cells in extra
                for value in cells.get(r["query"].pk, [None] * len(columns))
            ),
        ]
        for r in rows
    ]
    return header, table


@dataclass(frozen=True)
class MetricsExport:
    """A metrics table to download: its file name (no extension), header and rows, and the
    policy its numbers stand on (the label sources, gold, mapping, level, k), which the
    download's ``Assay-Policy`` header and the workbook's about sheet state."""

    name: str
    header: list
    table: list[list]
    policy: dict

    def sheets(self) -> dict:
        """The workbook: the table, and an about sheet naming the sources and the policy."""
        about = [
            ["sources", ", ".join(self.policy.get("sources") or [])],
            ["policy", json.dumps(self.policy, ensure_ascii=False)],
        ]
        return {"metrics": (self.header, self.table), "about": (["key", "value"], about)}


def metrics_export(
    setting: EvaluationSetting,
    *,
    run: Run | None = None,
    run_tag: str = "",
    param: tuple[str, str] | None = None,
) -> MetricsExport | None:
    """The metrics table in ``setting``: each run's means (those carrying ``run_tag`` and
    the parameter ``param``), or ``run``'s per-query values; None when ``run`` cannot be
    evaluated at the level. The page's download and the command."""
    project = setting.project
    policy = {**setting.gold.description, "level": setting.level, "k": setting.k}
    if run is not None:
        if not setting.can_evaluate(run):
            return None
        header, table = per_query_table(run, setting)
        return MetricsExport(f"{project.slug}-{run.name}-per-query", header, table, policy)
    rows = reports.run_rows(project, setting, tag=run_tag, param=param)
    header, table = means_table(rows, setting)
    return MetricsExport(f"{project.slug}-runs-{setting.level}", header, table, policy)
