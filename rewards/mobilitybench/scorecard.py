"""Aggregate per-episode results into the paper's table, per scenario, per family and overall.

Input records are dicts with ``episode_id, task_scenario, intent_family, metrics`` (the
scores of :func:`mobility_rewards.mobilitybench.metrics.compute_metrics`), ``input_tokens, output_tokens`` and
optionally ``sample_index`` (several samples of one episode). Columns: the paper's, in its
order, ``ID IE DEC-P DEC-R TS-P TS-R SC DR FPR IT OT``, then this project's ``PF`` and the
extra metrics (:data:`EXTRA_COLUMNS`: ``CALL-NR`` = ``CALL_NR``). A paper metric missing from
a record counts 0; an extra metric that no record of a row has (results written before it
existed) shows as ``-``.

Aggregation: scores are averaged over the samples of an episode first, then over episodes
(every episode weighs the same however many samples it has); IT/OT are mean tokens per
sample. With ``n >= 2`` samples per episode, ``pass@k`` and ``pass^k`` (a sample passes when
its FPR is 1) are computed with the unbiased estimators, for ``k = 1..min n``:

    pass@k = 1 − C(n − c, k) / C(n, k)      (at least one of k samples passes)
    pass^k = C(c, k) / C(n, k)              (all k samples pass)

averaged over episodes. Episode ids in ``exclude`` (e.g. the audit's blocking findings) are
left out and listed in the result. A record whose ``metrics`` is not an object of numbers, or
whose token counts are not numbers (a hand-edited or corrupt results file), raises
:class:`RecordError` naming the episode and the field.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping

from mobility_env.mobilitybench.episode import FAMILY_OF, SCENARIOS, SCENARIOS_BY_FAMILY

from ..runs import RecordError, ScoreRow, ScoreTable, pass_columns
from .metrics import EXTRA_METRIC_KEYS

EXTRA_COLUMNS: dict[str, str] = {key.replace("_", "-"): key for key in EXTRA_METRIC_KEYS}
COLUMNS: tuple[str, ...] = ("ID", "IE", "DEC-P", "DEC-R", "TS-P", "TS-R", "SC", "DR", "FPR", "IT", "OT", "PF",
                            *EXTRA_COLUMNS)
METRIC_OF_COLUMN = {"ID": "ID", "IE": "IE", "DEC-P": "DEC_P", "DEC-R": "DEC_R", "TS-P": "TS_P", "TS-R": "TS_R",
                    "SC": "SC", "DR": "DR", "FPR": "FPR", "PF": "PF", **EXTRA_COLUMNS}
TOKEN_COLUMNS = {"IT": "input_tokens", "OT": "output_tokens"}


def _number(record: Mapping[str, Any], key: str, metric: str | None = None) -> float:
    """``record[key]`` (or ``record["metrics"][metric]``) as a float; missing counts 0."""
    container = record if metric is None else record.get("metrics") or {}
    if not isinstance(container, Mapping):
        raise RecordError(f"result of {record.get('episode_id')!r} sample {record.get('sample_index', 0)}: "
                          f"'metrics' must be an object, got {type(container).__name__}")
    value = container.get(metric or key) or 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        where = f"metric {metric!r}" if metric else repr(key)
        raise RecordError(f"result of {record.get('episode_id')!r} sample {record.get('sample_index', 0)}: "
                          f"{where} is not a number ({value!r:.60})")
    return float(value)


def _episode_rows(records: Iterable[Mapping[str, Any]], exclude: set[str]) -> dict[str, list[Mapping[str, Any]]]:
    by_episode: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("episode_id") in exclude:
            continue
        by_episode[str(record.get("episode_id"))].append(record)
    return by_episode


def _aggregate(samples_by_episode: list[list[Mapping[str, Any]]]) -> dict[str, Any]:
    row: dict[str, Any] = {"episodes": len(samples_by_episode), "samples": sum(map(len, samples_by_episode))}
    for column, metric in METRIC_OF_COLUMN.items():
        if column in EXTRA_COLUMNS and not any(isinstance(sample.get("metrics"), Mapping)
                                               and metric in sample["metrics"]
                                               for samples in samples_by_episode for sample in samples):
            row[column] = None
            continue
        per_episode = []
        for samples in samples_by_episode:
            values = [_number(s, "metrics", metric) for s in samples]
            per_episode.append(sum(values) / len(values))
        row[column] = sum(per_episode) / len(per_episode) if per_episode else None
    for column, key in TOKEN_COLUMNS.items():
        values = [_number(s, key) for samples in samples_by_episode for s in samples]
        row[column] = sum(values) / len(values) if values else None
    row.update(pass_columns([(len(samples), sum(_number(s, "metrics", "FPR") >= 1.0 for s in samples))
                             for samples in samples_by_episode]))
    return row


def build_scorecard(records: Iterable[Mapping[str, Any]], exclude: Iterable[str] = ()) -> dict[str, Any]:
    """The scorecard as plain data: ``{"columns", "rows": [{"group", "name", ...}], "excluded"}``.

    Rows come per task scenario (paper order), per intent family, then ``overall``.
    """
    excluded = set(exclude)
    records = list(records)
    by_episode = _episode_rows(records, excluded)
    scenario_of = {eid: str(samples[0].get("task_scenario")) for eid, samples in by_episode.items()}
    family_of = {eid: str(samples[0].get("intent_family") or FAMILY_OF.get(scenario_of[eid], "")) for eid, samples in
                 by_episode.items()}
    rows = []
    known = list(SCENARIOS) + sorted(set(scenario_of.values()) - set(SCENARIOS))
    for scenario in known:
        group = [s for eid, s in by_episode.items() if scenario_of[eid] == scenario]
        if group:
            rows.append({"group": "scenario", "name": scenario, **_aggregate(group)})
    families = list(SCENARIOS_BY_FAMILY) + sorted(set(family_of.values()) - set(SCENARIOS_BY_FAMILY))
    for family in families:
        group = [s for eid, s in by_episode.items() if family_of[eid] == family]
        if group:
            rows.append({"group": "family", "name": family, **_aggregate(group)})
    if by_episode:
        rows.append({"group": "overall", "name": "overall", **_aggregate(list(by_episode.values()))})
    present = {str(r.get("episode_id")) for r in records}
    return {"columns": list(COLUMNS), "rows": rows, "excluded": sorted(excluded & present)}


def score_table(records: Iterable[Mapping[str, Any]]) -> ScoreTable:
    """The scorecard as :class:`~mobility_rewards.runs.ScoreTable` rows (``mobility-env compare``): overall first,
    scores as shares, FPR the headline."""
    card = build_scorecard(records)
    rows = sorted(card["rows"], key=lambda row: row["group"] != "overall")
    extra = sorted({k for r in rows for k in r if k.startswith("pass")}, key=lambda k: (k[4], int(k[5:])))
    columns = [*card["columns"], *extra]
    return ScoreTable(rows=[ScoreRow(row["group"], row["name"], row["episodes"], {c: row.get(c) for c in columns})
                            for row in rows],
                      columns=columns, headline="FPR", shares=frozenset(set(columns) - set(TOKEN_COLUMNS)))


def _cell(column: str, value: Any) -> str:
    if value is None:
        return "-"
    if column in TOKEN_COLUMNS:
        return f"{value:.0f}"
    return f"{100 * value:.1f}"


def format_scorecard(scorecard: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> str:
    """A fixed-width terminal table (scores in %, IT/OT in tokens), one line per row.

    Takes a :func:`build_scorecard` result, or the result records themselves.
    """
    if not isinstance(scorecard, Mapping):
        scorecard = build_scorecard(scorecard)
    rows = scorecard.get("rows") or []
    extra = sorted({k for r in rows for k in r if k.startswith("pass")}, key=lambda k: (k[4], int(k[5:])))
    columns = list(scorecard.get("columns") or COLUMNS) + extra
    name_width = max([len("group"), *(len(r["name"]) for r in rows)]) + 2
    header = "group".ljust(name_width) + "n".rjust(5) + "".join(c.rjust(8) for c in columns)
    lines = [header, "-" * len(header)]
    previous = None
    for row in rows:
        if previous is not None and row["group"] != previous:
            lines.append("-" * len(header))
        previous = row["group"]
        lines.append(row["name"].ljust(name_width) + str(row["episodes"]).rjust(5)
                     + "".join(_cell(c, row.get(c)).rjust(8) for c in columns))
    if scorecard.get("excluded"):
        lines.append(f"excluded {len(scorecard['excluded'])} audited episode(s): {', '.join(scorecard['excluded'])}")
    return "\n".join(lines)
