"""Every metric on small constructed episodes, against values computed by hand."""

import pytest

from mobility_env.mobilitybench.episode import Episode, RecordedCall, ToolCall
from mobility_env.mobilitybench.trajectory import CallRecord, FinishRecord, Trajectory
from mobility_rewards import compute_metrics
from mobility_rewards.mobilitybench.intent import intent_score
from mobility_rewards.mobilitybench.plan import decomposition_scores, steps_in_text
from mobility_rewards.mobilitybench.slots import intent_extraction_score, line_uses, same_place_name

USER = "120.100000,30.200000"
DEST = "120.150000,30.250000"
DEST_2KM = "120.170000,30.250000"  # ~1.9 km east of DEST
ROUTE = {"status": "1", "count": "2", "route": {"paths": [
    {"distance": "10000", "cost": {"duration": "1200"}},
    {"distance": "12000", "cost": {"duration": "1500"}}]}}
POI = {"name": "西湖", "address": "浙江省 西湖区 龙井路1号", "location": DEST}


def p2p_episode() -> Episode:
    gold = [ToolCall(name="query_poi", arguments={"keywords": "西湖", "city": "杭州市"}),
            ToolCall(name="driving_route", arguments={"origin": USER, "destination": DEST})]
    return Episode(
        episode_id="t-p2p", query="开车去西湖", context={"user_current_location": USER, "city": "杭州市"},
        task_scenario="Point-to-Point Planning", intent_family="Basic Route Planning", gold_calls=gold,
        recorded=[RecordedCall(name=c.name, arguments=c.arguments, response=r, gold_index=i)
                  for i, (c, r) in enumerate(zip(gold, [POI, ROUTE]))],
        gold_slots={"origin": "current_location", "destination": "西湖", "travel_mode": "driving", "city": "杭州市"},
        fields={"city": "杭州市", "query_end_poi": "西湖"})


def served(step, name, arguments, response, entry=None):
    return CallRecord(step=step, name=name, arguments=arguments, match="exact", response=response,
                      entry_arguments=entry if entry is not None else arguments)


def test_hand_computed_mixed_trajectory():
    episode = p2p_episode()
    calls = [
        served(0, "query_poi", {"keywords": "杭州东站", "city": "杭州市"}, POI),  # wrong keywords
        served(1, "query_poi", {"keywords": "杭州东站", "city": "杭州市"}, POI),  # exact repeat -> redundant
        served(2, "weather_query", {"city": "杭州市"}, {"data": {}}),  # tool the gold does not use -> redundant
        CallRecord(step=3, name="driving_route", arguments={"origin": USER, "destination": DEST, "waypoints": "x"},
                   error={"type": "schema_error", "message": "bad"},
                   schema_errors=[{"field": "waypoints", "rule": "type", "message": "list"}]),  # SC 0
        served(4, "driving_route", {"origin": USER, "destination": DEST_2KM}, ROUTE),  # wrong destination
    ]
    finish = FinishRecord(answer="全程10.0公里", intent="Point-to-Point Planning",
                          slots={"origin": "当前位置", "destination": "西湖", "travel_mode": "驾车"},  # city missing
                          plan=["locate destination", "check weather", "route planning"])
    metrics = compute_metrics(episode, Trajectory(episode_id="t-p2p", calls=calls, finish=finish))
    assert metrics == pytest.approx({
        "ID": 1.0,
        "IE": 0.0,  # the gold city slot is missing
        "DEC_P": 1.0,  # gold {locate, route_planning} both declared
        "DEC_R": 2 / 3,  # declared {locate, weather, route_planning}
        "TS_P": 1.0,  # query_poi and driving_route both selected by valid calls
        "TS_R": 2 / 3,  # T_pred = {query_poi, weather_query, driving_route}; weather_query is not gold
        "SC": 4 / 5,
        "PF": 2 / 3,  # keywords wrong (0/1); the driving call paired is the one with both coordinates right (2/2)
        "DR": 1.0,  # route_index inferred from "10.0公里" -> option 0 of the last served route call
        "FPR": 0.0,  # that call's destination is 1.9 km from the gold destination
        "CALL_NR": 1 - 2 / 5,  # the repeat and the weather call
    })


def test_correct_trajectory_scores_one_everywhere():
    episode = p2p_episode()
    calls = [served(0, "query_poi", {"keywords": "西湖", "city": "杭州市"}, POI),
             served(1, "driving_route", {"origin": USER, "destination": DEST}, ROUTE)]
    finish = FinishRecord(answer="第二条路线全程12公里，约25分钟", intent="点到点规划", route_index=1,
                          slots={"origin": "current location", "destination": "西湖景区", "travel_mode": "car",
                                 "city": "杭州"}, plan=["定位目的地", "规划驾车路线"])
    metrics = compute_metrics(episode, Trajectory(episode_id="t-p2p", calls=calls, finish=finish))
    assert metrics == {k: 1.0 for k in metrics}


def test_wrong_reported_quantity_and_missing_index():
    episode = p2p_episode()
    calls = [served(0, "query_poi", {"keywords": "西湖"}, POI),
             served(1, "driving_route", {"origin": USER, "destination": DEST}, ROUTE)]

    def score(**finish):
        return compute_metrics(episode, Trajectory(episode_id="t", calls=calls, finish=FinishRecord(**finish)))

    assert score(answer="全程12公里", route_index=0)["FPR"] == 0.0  # option 0 is 10 km: +20 %
    assert score(answer="约20分钟", route_index=0)["FPR"] == 1.0
    assert score(answer="约30分钟", route_index=0)["FPR"] == 0.0
    missing = score(answer="全程10公里", route_index=2)
    assert missing["DR"] == 0.0 and missing["FPR"] == 0.0
    assert score(answer="已为您规划路线", route_index=None)["DR"] == 0.0  # nothing identifies a route


def test_edge_cases_no_calls_no_finish_truncated_empty_plan():
    episode = p2p_episode()
    no_calls = compute_metrics(episode, Trajectory(episode_id="t", finish=FinishRecord(answer="去西湖约10公里")))
    assert no_calls == {"ID": 0.0, "IE": 0.0, "DEC_P": 0.0, "DEC_R": 0.0, "TS_P": 0.0, "TS_R": 0.0, "SC": 0.0,
                        "PF": 0.0, "DR": 0.0, "FPR": 0.0, "CALL_NR": 0.0}
    calls = [served(0, "query_poi", {"keywords": "西湖"}, POI),
             served(1, "driving_route", {"origin": USER, "destination": DEST}, ROUTE)]
    no_finish = compute_metrics(episode, Trajectory(episode_id="t", calls=calls))
    assert no_finish["DR"] == no_finish["FPR"] == no_finish["ID"] == no_finish["IE"] == 0.0
    assert no_finish["TS_P"] == no_finish["PF"] == 1.0
    truncated = compute_metrics(episode, Trajectory(episode_id="t", calls=calls, truncated=True,
                                                    finish=FinishRecord(answer="全程10公里", route_index=0)))
    assert truncated["DR"] == truncated["FPR"] == 0.0
    # an empty plan counts as no plan: the executed calls {locate, route_planning} are the decomposition
    empty_plan = compute_metrics(episode, Trajectory(episode_id="t", calls=calls[:1],
                                                     finish=FinishRecord(answer="x", plan=[])))
    assert (empty_plan["DEC_P"], empty_plan["DEC_R"]) == (0.5, 1.0)


def test_episode_without_gold():
    episode = Episode(episode_id="t-empty", query="?", task_scenario="POI Query",
                      intent_family="Basic Information Retrieval")
    metrics = compute_metrics(episode, Trajectory(episode_id="t-empty", finish=FinishRecord(answer="?", slots={})))
    assert (metrics["TS_P"], metrics["TS_R"], metrics["SC"], metrics["PF"], metrics["CALL_NR"]) == (1.0,) * 5
    assert (metrics["DEC_P"], metrics["DEC_R"]) == (1.0, 1.0)
    assert metrics["IE"] == 1.0  # declared "no constraints" for an episode with none
    assert metrics["FPR"] == 0.0  # nothing retrieved, nothing verified
    assert intent_extraction_score(None, {}) == 0.0  # empty gold slots are no free pass


def test_intent_labels_in_both_languages():
    assert intent_score("Multi-stop Planning", "Multi-stop Planning") == 1.0
    assert intent_score("多途经点路线规划", "Multi-stop Planning") == 1.0
    assert intent_score("天气查询", "Weather Query") == 1.0
    assert intent_score("Point-to-Point Planning", "Multi-stop Planning") == 0.0
    assert intent_score("", "Weather Query") == intent_score(None, "Weather Query") == 0.0


def test_plan_items_in_both_languages():
    assert steps_in_text("规划不走高速的路线") == {"preference_route_planning"}
    assert steps_in_text("plan a driving route avoiding highways") == {"preference_route_planning"}
    assert steps_in_text("途经点路线规划") == {"waypoint_route_planning"}
    assert steps_in_text("计算出发时间") == {"time_calculation"}
    assert steps_in_text("nearby_search") == {"nearby_search"}
    assert steps_in_text("查询路况") == {"traffic"}
    assert decomposition_scores(("a", "b"), ("a", "c", "d")) == (0.5, 1 / 3)


def test_slot_normalization():
    gold = {"origin": "current_location", "destination": "大望路(地铁站)", "travel_mode": "transit",
            "excluded_lines": ["1号线", "八通线"]}
    agent = {"from": "我的位置", "to": "大望路", "mode": "地铁", "avoid_lines": ["地铁一号线", "八通线"]}
    assert intent_extraction_score(agent, gold) == 1.0
    assert intent_extraction_score({**agent, "avoid_lines": ["1号线"]}, gold) == 0.0
    assert intent_extraction_score({**agent, "strategy": ["不走高速"]}, gold) == 0.0  # invented constraint
    assert same_place_name("西安", "西安市") and not same_place_name("西安", "西安金伯爵婚礼中心")


def test_excluded_line_matching_respects_digits():
    assert line_uses("地铁1号线八通线(环球度假区--古城)", "1号线")
    assert line_uses("地铁1号线八通线(环球度假区--古城)", "八通线")
    assert not line_uses("地铁11号线(...)", "1号线") and not line_uses("地铁10号线(...)", "1号线")
    assert line_uses("地铁10号线外环(车道沟--车道沟)", "10号线")
    assert not line_uses("1206路(a--b)", "206路") and line_uses("206路(a--b)", "206路")
    assert line_uses("轨道交通2号线(佛祖岭--天河机场)", "二号线")
