"""TS_P/TS_R over tool-name sets, DEC_P/DEC_R over step sequences, CALL_NR: values by hand."""

from __future__ import annotations

import pytest

from mobility_env.mobilitybench.episode import Episode, RecordedCall, ToolCall
from mobility_env.mobilitybench.trajectory import CallRecord, FinishRecord, Trajectory
from mobility_rewards import compute_metrics
from mobility_rewards.mobilitybench.metrics import EXTRA_METRIC_KEYS, METRIC_KEYS, decomposition
from mobility_rewards.mobilitybench.plan import declared_plan_steps, decomposition_scores, gold_plan_steps
from mobility_rewards.mobilitybench.tooluse import (call_identity, call_non_redundancy, tool_selection_precision,
                                                    tool_selection_recall)

USER = "116.300000,39.900000"
A = "116.350000,39.950000"
B = "116.400000,39.980000"


def p2p_two_locates() -> Episode:
    """Gold: locate the origin, locate the destination, drive: [locate, locate, route_planning]."""
    gold = [ToolCall(name="query_poi", arguments={"keywords": "中关村", "city": "北京市"}),
            ToolCall(name="query_poi", arguments={"keywords": "国贸", "city": "北京市"}),
            ToolCall(name="driving_route", arguments={"origin": A, "destination": B})]
    return Episode(episode_id="t-two", query="从中关村开车去国贸", context={"user_current_location": USER, "city": "北京市"},
                   task_scenario="Point-to-Point Planning", intent_family="Basic Route Planning", gold_calls=gold,
                   recorded=[RecordedCall(name=c.name, arguments=c.arguments, response={}, gold_index=i)
                             for i, c in enumerate(gold)])


def call(step, name, arguments, **extra) -> CallRecord:
    return CallRecord(step=step, name=name, arguments=arguments, match="exact", **extra)


def trajectory(calls, plan=None) -> Trajectory:
    return Trajectory(episode_id="t-two", calls=calls, finish=FinishRecord(answer="x", plan=plan))


POI_A = call(0, "query_poi", {"keywords": "中关村", "city": "北京市"})
POI_B = call(1, "query_poi", {"keywords": "国贸", "city": "北京"})
ROUTE = call(2, "driving_route", {"origin": A, "destination": B})
WEATHER = call(3, "weather_query", {"city": "北京市"})
WALK = call(4, "walking_route", {"origin": A, "destination": B})
BAD = CallRecord(step=5, name="driving_route", arguments={"origin": A}, error={"type": "schema_error", "message": "x"},
                 schema_errors=[{"field": "destination", "rule": "required", "message": "missing"}])


def test_decomposition_is_a_multiset_match_of_step_sequences():
    episode = p2p_two_locates()
    assert gold_plan_steps(episode) == ("locate", "locate", "route_planning")
    # the brief's example: gold [locate, locate, route_planning] vs pred [locate, route_planning]
    assert decomposition_scores(("locate", "locate", "route_planning"), ("locate", "route_planning")) == (2 / 3, 1.0)
    assert decomposition_scores(("locate", "route_planning"), ("locate", "locate", "locate")) == (0.5, 1 / 3)
    assert decomposition_scores(("a", "b"), ("b", "a")) == (1.0, 1.0)  # order is not scored
    assert decomposition_scores((), ()) == (1.0, 1.0) and decomposition_scores((), ("a",)) == (1.0, 0.0)
    assert decomposition_scores(("a",), ()) == (0.0, 0.0)
    # declared plans: item by item, in order; items naming no atomic step add nothing
    assert declared_plan_steps(["定位起点", "定位终点", "规划驾车路线", "回答用户"]) == ("locate", "locate", "route_planning")
    assert declared_plan_steps(["", "  "]) is None and declared_plan_steps(["回答用户"]) == ()
    cases = {
        ("locate", "route planning"): (2 / 3, 1.0),
        ("locate", "locate", "route planning"): (1.0, 1.0),
        ("locate", "locate", "locate", "route planning", "weather"): (1.0, 3 / 5),
        ("tell the user",): (0.0, 0.0),  # a declared plan that names no step is no free pass
    }
    for plan, expected in cases.items():
        assert decomposition(episode, trajectory([], list(plan))) == pytest.approx(expected), plan


def test_decomposition_from_calls_counts_every_schema_valid_call():
    episode = p2p_two_locates()
    # no plan: pred = one step per schema-valid call, in order
    assert decomposition(episode, trajectory([POI_A, ROUTE])) == pytest.approx((2 / 3, 1.0))
    # label matching (the paper's): a repeated locate pairs with the second gold locate; the third is extra
    assert decomposition(episode, trajectory([POI_A, POI_A, POI_A, ROUTE])) == pytest.approx((1.0, 3 / 4))
    assert decomposition(episode, trajectory([POI_A, POI_B, ROUTE, BAD])) == pytest.approx((1.0, 1.0))  # BAD: no step
    assert decomposition(episode, trajectory([POI_A, WALK])) == pytest.approx((2 / 3, 1.0))  # walking still routes
    assert decomposition(episode, trajectory([])) == (0.0, 0.0)


def test_tool_selection_over_tool_name_sets():
    episode = p2p_two_locates()  # T_gold = {query_poi, driving_route}
    cases = [
        ([POI_A, ROUTE], 1.0, 1.0, 1.0),
        ([POI_A, POI_A, ROUTE], 1.0, 1.0, 2 / 3),  # a repeat leaves the sets alone; CALL_NR counts it
        ([POI_A, ROUTE, WEATHER], 1.0, 2 / 3, 2 / 3),  # T_pred = {query_poi, driving_route, weather_query}
        ([POI_A, WEATHER, WALK], 0.5, 1 / 3, 1 / 3),
        ([POI_A, BAD], 0.5, 1.0, 1.0),  # BAD selects nothing (schema error) but is not a redundant call
        ([BAD], 0.0, 0.0, 1.0),  # nothing selected: no free pass for TS
        ([], 0.0, 0.0, 0.0),
    ]
    for calls, ts_p, ts_r, call_nr in cases:
        got = (tool_selection_precision(episode, calls), tool_selection_recall(episode, calls),
               call_non_redundancy(episode, calls))
        assert got == pytest.approx((ts_p, ts_r, call_nr)), [c.name for c in calls]
    empty = Episode(episode_id="t-none", query="?", task_scenario="POI Query",
                    intent_family="Basic Information Retrieval")
    assert (tool_selection_precision(empty, []), tool_selection_recall(empty, [])) == (1.0, 1.0)
    assert (tool_selection_precision(empty, [WEATHER]), tool_selection_recall(empty, [WEATHER])) == (1.0, 0.0)


def test_redundancy_uses_the_sandbox_identity():
    """北京 and 北京市, 6-decimal coordinates, strategy aliases: the same sandbox key, the same call."""
    assert call_identity("query_poi", {"keywords": "国贸", "city": "北京"}) == \
        call_identity("query_poi", {"keywords": "国贸 ", "city": "北京市"})
    assert call_identity("driving_route", {"origin": A, "destination": B, "strategy": ["no_highway"]}) == \
        call_identity("driving_route", {"origin": "116.3500000001,39.95", "destination": B, "strategy": ["不走高速"]})
    assert call_identity("bus_route", {"origin": A, "destination": B}) == \
        call_identity("bus_route", {"origin": A, "destination": B, "strategy": "0"})
    assert call_identity("driving_route", {"origin": A, "destination": B}) != \
        call_identity("driving_route", {"origin": A, "destination": B, "strategy": ["不走高速"]})
    episode = p2p_two_locates()
    same_city = call(1, "query_poi", {"keywords": "中关村", "city": "北京"})
    assert call_non_redundancy(episode, [POI_A, same_city, ROUTE]) == pytest.approx(2 / 3)


def test_metric_keys_paper_first_then_extras():
    episode = p2p_two_locates()
    metrics = compute_metrics(episode, trajectory([POI_A, POI_B, ROUTE, WEATHER]))
    assert tuple(metrics) == METRIC_KEYS + EXTRA_METRIC_KEYS
    assert METRIC_KEYS == ("ID", "IE", "DEC_P", "DEC_R", "TS_P", "TS_R", "SC", "PF", "DR", "FPR")
    assert EXTRA_METRIC_KEYS == ("CALL_NR",)
    assert (metrics["TS_P"], metrics["TS_R"], metrics["CALL_NR"]) == pytest.approx((1.0, 2 / 3, 3 / 4))
    assert (metrics["DEC_P"], metrics["DEC_R"]) == pytest.approx((1.0, 3 / 4))  # no plan: weather is an extra step
