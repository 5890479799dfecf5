"""The ``MobilePA-v0`` scorecard: success overall and per bucket, behaviour category, obstacle and language.

Input records are the runner's ``results.jsonl`` lines of a MobilePA run (``episode_id``,
``sample_index``, ``metrics``, ``total_reward``, tokens, and the task's labels ``category``,
``bucket``, ``obstacles``, ``language``) or :func:`mobility_agents.baselines.mobilepa.scripted.play_tasks` records
(``task_id``, ``return``, obstacles as kinds). Columns:

* ``success``: the task's verification bucket passed (the paper's per-task pass; ``metrics["success"]``);
* ``DR``: a non-empty answer was delivered; ``progress``: the share of the gold reached at the end;
* ``return``: the episode's summed reward; ``IT`` / ``OT``: mean input / output tokens per sample;
* ``failures``: samples that ended in a recorded agent failure (a model server that kept failing…);
* with ``n >= 2`` samples per task, ``pass@k`` / ``pass^k`` of success (the unbiased estimators of
  :mod:`mobility_rewards.mobilitybench.scorecard`);
* ``overall.weighted``: the paper's overall score, success per capability dimension (basic tool use,
  sub-agent collaboration, memory use, skill use) weighted 0.5 / 0.1 / 0.2 / 0.2 (:func:`weighted_score`).

Groups: capability ``dimension``, ``bucket``, behaviour ``category``, ``obstacle``, ``language``, and, when
the results carry them, the tool ``domain`` and the memory axes ``memory_reasoning`` / ``memory_operation``.

Samples of one task are averaged first, then tasks (each task weighs the same). A task with
several obstacles counts in each obstacle's row; one with none in ``none``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping

from mobility_env.mobilepa.tasks import DIMENSION_WEIGHTS

from ..runs import RecordError, ScoreRow, ScoreTable, pass_columns

GROUPS = ("dimension", "bucket", "category", "obstacle", "language", "domain", "memory_reasoning", "memory_operation")
#: Groups every record has (older results without a dimension are basic tasks); the others appear when present.
_ALWAYS = ("dimension", "bucket", "category", "obstacle", "language")
COLUMNS = ("success", "DR", "progress", "return", "IT", "OT", "failures")


def _number(record: Mapping[str, Any], value: Any, what: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(f"result of {_key(record)[0]!r} sample {_key(record)[1]}: {what} is not a number "
                          f"({value!r:.60})")
    return float(value)


def _key(record: Mapping[str, Any]) -> tuple[str, int]:
    return str(record.get("episode_id", record.get("task_id"))), int(record.get("sample_index") or 0)


def _sample(record: Mapping[str, Any]) -> dict[str, float]:
    metrics = record.get("metrics") or {}
    if not isinstance(metrics, Mapping):
        raise RecordError(f"result of {_key(record)[0]!r}: 'metrics' must be an object, got {type(metrics).__name__}")
    total = record.get("total_reward", record.get("return"))
    return {"success": _number(record, metrics.get("success"), "metric 'success'"),
            "DR": _number(record, metrics.get("DR"), "metric 'DR'"),
            "progress": _number(record, metrics.get("progress"), "metric 'progress'"),
            "return": _number(record, total, "'total_reward'"),
            "IT": _number(record, record.get("input_tokens"), "'input_tokens'"),
            "OT": _number(record, record.get("output_tokens"), "'output_tokens'"),
            "failures": 1.0 if record.get("failure") else 0.0}


def _obstacles(record: Mapping[str, Any]) -> list[str]:
    kinds = [o.get("kind") if isinstance(o, Mapping) else o for o in record.get("obstacles") or []]
    return sorted({str(k) for k in kinds if k}) or ["none"]


def phone_scorecard(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"overall": row, "bucket": {name: row}, "category": ..., "obstacle": ..., "language": ...}``;
    a row is ``{"tasks", "samples", "success", "DR", "progress", "return", "IT", "OT", "failures"}``
    (plus ``pass@k`` / ``pass^k`` with several samples per task); scores are fractions in [0, 1]."""
    by_task: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_task[_key(record)[0]].append(record)
    tasks: list[dict[str, Any]] = []
    for task_id, samples in by_task.items():
        values = [_sample(r) for r in samples]
        first = samples[0]
        labels: dict[str, list[str]] = {
            "dimension": [str(first.get("dimension") or "basic")], "bucket": [str(first.get("bucket"))],
            "category": [str(first.get("category"))], "language": [str(first.get("language"))],
            "obstacle": _obstacles(first)}
        labels.update({group: [str(first[group])] for group in GROUPS if group not in _ALWAYS and first.get(group)})
        tasks.append({"task_id": task_id, "values": values, "labels": labels})

    def row(members: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"tasks": len(members), "samples": sum(len(t["values"]) for t in members)}
        for column in COLUMNS:
            per_task = [sum(v[column] for v in t["values"]) / len(t["values"]) for t in members]
            if column == "failures":
                out[column] = int(sum(sum(v[column] for v in t["values"]) for t in members))
            else:
                out[column] = round(sum(per_task) / len(per_task), 4) if per_task else 0.0
        passes = pass_columns([(len(t["values"]), sum(1 for v in t["values"] if v["success"] >= 1.0))
                               for t in members])
        out.update({column: round(value, 4) for column, value in passes.items()})
        return out

    card: dict[str, Any] = {"overall": row(tasks)}
    for group in GROUPS:
        members: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for task in tasks:
            for name in task["labels"].get(group, ()):
                members[name].append(task)
        if members or group in _ALWAYS:
            card[group] = {name: row(group_tasks) for name, group_tasks in sorted(members.items())}
    card["overall"]["weighted"] = weighted_score(card)
    return card


def weighted_score(card: Mapping[str, Any]) -> dict[str, Any]:
    """The paper's overall score: success per capability dimension weighted 0.5 (basic), 0.1 (sub-agent),
    0.2 (memory), 0.2 (skill) (:data:`~mobility_env.mobilepa.tasks.DIMENSION_WEIGHTS`). With dimensions
    missing from the records the weights of those present are renormalized (``complete`` is False then, and
    ``dimensions`` says which were scored)."""
    present = {name: values["success"] for name, values in (card.get("dimension") or {}).items()
               if name in DIMENSION_WEIGHTS}
    total = sum(DIMENSION_WEIGHTS[name] for name in present)
    score = sum(DIMENSION_WEIGHTS[name] * value for name, value in present.items()) / total if total else 0.0
    return {"score": round(score, 4), "complete": set(present) == set(DIMENSION_WEIGHTS),
            "dimensions": sorted(present)}


def phone_score_table(records: Iterable[Mapping[str, Any]]) -> ScoreTable:
    """The scorecard as :class:`~mobility_rewards.runs.ScoreTable` rows (``mobility-env compare``): overall first
    (with the paper's weighted score), success the headline."""
    card = phone_scorecard(records)
    rows = [("overall", "overall", card["overall"])]
    rows += [(group, name, values) for group in GROUPS for name, values in (card.get(group) or {}).items()]
    extra = sorted({k for _, _, r in rows for k in r if k.startswith("pass")}, key=lambda k: (k[4], int(k[5:])))
    columns = ["success", "weighted", "DR", "progress", "return", "IT", "OT", "failures", *extra]
    weighted = (card["overall"].get("weighted") or {}).get("score")
    table = [ScoreRow(group, str(name), int(values["tasks"]),
                      {**{c: values.get(c) for c in columns if c != "weighted"},
                       "weighted": weighted if group == "overall" else None})
             for group, name, values in rows]
    return ScoreTable(rows=table, columns=columns, headline="success",
                      shares=frozenset({"success", "weighted", "DR", "progress", *extra}))


def format_phone_scorecard(card: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> str:
    """A fixed-width terminal table (success, DR and progress in %), one line per group row."""
    if not isinstance(card, Mapping):
        card = phone_scorecard(card)
    rows = [("overall", "all", card["overall"])]
    rows += [(group, name, values) for group in GROUPS for name, values in (card.get(group) or {}).items()]
    weighted = card["overall"].get("weighted") or {}
    extra = sorted({k for _, _, r in rows for k in r if k.startswith("pass")}, key=lambda k: (k[4], int(k[5:])))
    columns = list(COLUMNS) + extra
    width = max(len(f"{g}: {n}") for g, n, _ in rows) + 2
    header = "group".ljust(width) + "n".rjust(5) + "".join(c.rjust(9) for c in columns)
    lines, previous = [header, "-" * len(header)], None
    for group, name, values in rows:
        if previous is not None and group != previous:
            lines.append("-" * len(header))
        previous = group
        cells = []
        for column in columns:
            value = values.get(column)
            if value is None:
                cells.append("-")
            elif column in ("return",):
                cells.append(f"{value:.3f}")
            elif column in ("IT", "OT", "failures"):
                cells.append(f"{value:.0f}")
            else:
                cells.append(f"{100 * value:.1f}")
        label = "overall" if group == "overall" else f"{group}: {name}"
        lines.append(label.ljust(width) + str(values["tasks"]).rjust(5) + "".join(c.rjust(9) for c in cells))
    if weighted:
        note = "" if weighted.get("complete") else \
            f" (dimensions present: {', '.join(weighted.get('dimensions') or []) or 'none'}; weights renormalized)"
        lines.append(f"overall score (paper's weights 0.5/0.1/0.2/0.2): {100 * weighted['score']:.1f}{note}")
    return "\n".join(lines)
