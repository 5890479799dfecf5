"""DEC_P / DEC_R: the agent's task decomposition against the gold atomic steps.

Atomic steps (:data:`ATOMIC_STEPS`): ``locate``, ``nearby_search``, ``weather``, ``traffic``,
``route_planning``, ``waypoint_route_planning``, ``preference_route_planning``,
``time_calculation``.

Formulas (DESIGN.md, paper naming), over *sequences* of step labels matched by label:
``matched = |gold ∩ pred|`` as a multiset intersection (each gold step pairs with at most one
predicted step of the same label, order ignored), ``DEC_P = matched / |gold|`` and
``DEC_R = matched / |pred|``. Gold ``[locate, locate, route_planning]`` against predicted
``[locate, route_planning]`` gives DEC_P = 2/3 and DEC_R = 1; a repeated step the gold does
not repeat lowers DEC_R.

Where the sequences come from:

* a declared ``finish.plan`` (a list of labels or free text, Chinese or English): each item
  is mapped, in order, to the steps it names by :func:`steps_in_text` (bilingual cue words,
  then a fuzzy match to the step names); an item naming no atomic step (``"answer the
  user"``) is not an atomic action and adds nothing. ``gold`` is then the scenario's full
  decomposition (:func:`gold_plan_steps`: one step per gold call, plus the steps no call
  shows — ``time_calculation`` for arrival/departure queries, and route steps counted as
  ``preference_route_planning`` in the constrained-planning scenarios);
* **no plan declared** (None, an empty list, or only blank items): one step per schema-valid
  agent call (:func:`call_step`), in call order, compared with one step per gold call
  (:func:`gold_call_steps`) — without a plan only the steps that produce calls are
  observable, so only those are compared.

Edge cases: gold with no steps -> (1, 1) when pred is empty too, else (1, 0). Pred empty
(including a declared plan that names no step) with non-empty gold -> (0, 0).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable, Sequence

from rapidfuzz import fuzz

from mobility_env.mobilitybench.episode import Episode, ToolCall
from mobility_env.mobilitybench.toolkinds import TOOL_KINDS
from mobility_env.tools import TOOLS, bounded_text_cache, canonical_tool_name

ATOMIC_STEPS: tuple[str, ...] = ("locate", "nearby_search", "weather", "traffic", "route_planning",
                                 "waypoint_route_planning", "preference_route_planning", "time_calculation")
ROUTE_STEPS = frozenset({"route_planning", "waypoint_route_planning", "preference_route_planning"})

_STEP_CUES: dict[str, tuple[str, ...]] = {
    "time_calculation": ("time calculation", "calculate time", "departure time", "arrival time", "compute time",
                         "when to leave", "time_calculation", "计算时间", "时间计算", "出发时间", "到达时间", "几点出发",
                         "几点到", "推算时间", "计算出发", "计算到达"),
    "waypoint_route_planning": ("waypoint", "via ", "multi-stop", "multi stop", "stopover", "途经", "经过", "途径",
                                "中途", "多点", "经停"),
    "preference_route_planning": ("preference", "strategy", "avoid", "constraint", "constrained", "exclude",
                                  "no highway", "highway", "toll", "偏好", "策略", "避开", "不走", "高速", "不要坐",
                                  "不坐", "排除", "约束", "少收费", "躲避拥堵", "不乘"),
    "route_planning": ("route", "path", "navigation", "navigate", "directions", "driving", "walking", "cycling",
                       "transit", "bus", "路线", "路径", "导航", "规划", "驾车", "步行", "骑行", "公交", "地铁"),
    "nearby_search": ("nearby", "around", "surrounding", "vicinity", "search_around", "周边", "附近", "周围"),
    "weather": ("weather", "forecast", "temperature", "天气", "气温", "预报"),
    "traffic": ("traffic", "congestion", "road condition", "路况", "拥堵", "交通状况", "堵车", "畅通"),
    "locate": ("locate", "location", "geocod", "coordinate", "look up", "lookup", "poi", "address", "where am",
               "position", "定位", "坐标", "地点", "位置", "地址", "经纬度"),
}


def _fold(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.lower()).strip()


@bounded_text_cache(8192, 256)  # agents write plans: long items are not kept
def steps_in_text(text: str) -> frozenset[str]:
    """Atomic steps one plan item names (``"plan a driving route avoiding highways"`` ->
    ``{preference_route_planning}``).

    Route flavours: an item with waypoint cues is ``waypoint_route_planning``; with
    preference cues ``preference_route_planning``; otherwise ``route_planning``. Route words
    inside a time-calculation item do not add a route step. Labels equal to a step name
    (``"nearby_search"``, ``"nearby search"``) map directly; other text falls back to a
    fuzzy match (ratio >= 85) against the step names.
    """
    folded = _fold(text)
    if not folded:
        return frozenset()
    for step in ATOMIC_STEPS:
        if folded == step.replace("_", " "):
            return frozenset({step})
    found: set[str] = set()
    for step, cues in _STEP_CUES.items():
        if any(cue in folded for cue in cues):
            found.add(step)
    route_flavours = found & ROUTE_STEPS
    found -= ROUTE_STEPS
    if route_flavours and "time_calculation" not in found:
        for flavour in ("waypoint_route_planning", "preference_route_planning", "route_planning"):
            if flavour in route_flavours:
                found.add(flavour)
                break
    if "traffic" in found and "preference_route_planning" in found and "traffic" not in folded:
        found.discard("traffic")  # "躲避拥堵" is a route preference, not a traffic query
    if not found:
        best = max(ATOMIC_STEPS, key=lambda step: fuzz.ratio(folded, step.replace("_", " ")))
        if fuzz.ratio(folded, best.replace("_", " ")) >= 85:
            found.add(best)
    return frozenset(found)


def declared_plan_steps(plan: Iterable[Any] | None) -> tuple[str, ...] | None:
    """The step sequence of a declared plan (items in order; an item's own steps in
    :data:`ATOMIC_STEPS` order), or None when no plan was declared (None/empty/blank)."""
    if plan is None:
        return None
    items = [item for item in plan if isinstance(item, str) and item.strip()]
    if not items:
        return None
    steps: list[str] = []
    for item in items:
        named = steps_in_text(item)
        steps.extend(step for step in ATOMIC_STEPS if step in named)
    return tuple(steps)


def call_step(name: str | None, arguments: Any) -> str | None:
    """The atomic step one tool call performs: its tool kind's ``plan_step``
    (:data:`mobility_env.mobilitybench.toolkinds.TOOL_KINDS`); None for no map tool."""
    tool = canonical_tool_name(name)
    if tool is None or tool == "finish":
        return None
    return TOOL_KINDS[TOOLS[tool].kind].plan_step(arguments if isinstance(arguments, dict) else {})


def gold_call_steps(gold_calls: Iterable[ToolCall]) -> tuple[str, ...]:
    """One step per gold call, in order."""
    return tuple(step for call in gold_calls if (step := call_step(call.name, call.arguments)) is not None)


def gold_plan_steps(episode: Episode) -> tuple[str, ...]:
    """The scenario's full decomposition: the gold call steps plus the steps no call shows."""
    steps = list(gold_call_steps(episode.gold_calls))
    scenario = episode.task_scenario
    if scenario in ("Option-Constrained Route Planning", "Route-Constrained Planning"):
        steps = ["preference_route_planning" if step in ROUTE_STEPS else step for step in steps]
    if scenario == "Arrival/Departure Time Query":
        steps.append("time_calculation")
    return tuple(steps)


def decomposition_scores(gold: Sequence[str], pred: Sequence[str]) -> tuple[float, float]:
    """(DEC_P, DEC_R) with the multiset formulas and edge cases of the module docstring."""
    if not gold:
        return (1.0, 1.0) if not pred else (1.0, 0.0)
    if not pred:
        return 0.0, 0.0
    matched = sum((Counter(gold) & Counter(pred)).values())
    return matched / len(gold), matched / len(pred)
