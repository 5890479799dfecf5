"""Replay on the real sample: exact, fuzzy, nearest and miss, per episode then global."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_env.canonical import canonical_name, canonical_strategies
from mobility_env.mobilitybench.episode import Episode, RecordedCall, ToolCall
from mobility_env.errors import SandboxError
from mobility_env.mobilitybench.sandbox import LookupConfig, Sandbox
from mobility_env.tools import MAP_TOOLS, validate_call

from conftest import shift_coordinate

ROUTE_TOOLS = ("driving_route", "walking_route", "bicycling_route", "bus_route")
COORDINATE_TOOLS = ROUTE_TOOLS + ("search_around_poi", "reverse_geocoding")


def _great_circle_m(a: str, b: str) -> float:
    """Independent check of distances (spherical law of cosines, mean Earth radius)."""
    (lng1, lat1), (lng2, lat2) = ((math.radians(float(x)) for x in p.split(",")) for p in (a, b))
    c = math.sin(lat1) * math.sin(lat2) + math.cos(lat1) * math.cos(lat2) * math.cos(lng2 - lng1)
    return 6_371_008.8 * math.acos(min(1.0, c))


def _moved(name: str, arguments: dict, k: int, metres: float | None = None) -> tuple[dict, float]:
    """Arguments with every coordinate moved 10..60 m (or ``metres``) in a direction set by k; the largest move."""
    args, moves = dict(arguments), []

    def move(coord: str, j: int) -> str:
        distance = metres if metres is not None else 10 + (k * 7 + j * 23) % 51
        angle = math.radians((k * 37 + j * 101) % 360)
        moved = shift_coordinate(coord, distance * math.cos(angle), distance * math.sin(angle))
        moves.append(_great_circle_m(coord, moved))
        return moved

    if name in ROUTE_TOOLS:
        args["origin"], args["destination"] = move(args["origin"], 0), move(args["destination"], 1)
        if args.get("waypoints"):
            args["waypoints"] = [move(w, 2 + i) for i, w in enumerate(args["waypoints"])]
    elif name == "search_around_poi":
        args["location"] = move(args["location"], 0)
    else:
        lng, lat = move(f"{args['longitude']},{args['latitude']}", 0).split(",")
        args["longitude"], args["latitude"] = lng, lat
    return args, max(moves)


def _recorded(episodes, names):
    return [(e, c) for e in episodes for c in e.recorded if c.name in names]


@pytest.fixture(scope="module")
def memory_sandbox(sample_episodes) -> Sandbox:
    return Sandbox.from_episodes(sample_episodes)


# ----------------------------------------------------------------------------- exact replay
@pytest.mark.parametrize("which", ["built", "memory"])
def test_every_recorded_gold_call_replays_exactly(which, sandbox, memory_sandbox, sample_episodes):
    box = sandbox if which == "built" else memory_sandbox
    calls = [(e, c) for e in sample_episodes for c in e.recorded]
    assert len(calls) == len(box) == 151
    assert all(c.gold_index is not None for _, c in calls)
    for episode, call in calls:
        result = box.lookup(call.name, call.arguments, episode.episode_id)
        assert (result.match, result.scope) == ("exact", "episode"), (episode.episode_id, call.name, result.detail)
        assert result.response == call.response
        assert result.entry_episode_id == episode.episode_id
        assert result.entry_gold_index == call.gold_index
        assert result.entry_arguments == call.arguments
        assert result.hit and result.distance_m == 0.0


def test_gold_responses_replay_through_the_gold_call(sandbox, sample_episodes):
    # The gold call as the agent would send it (from gold_calls, not from recorded)
    replayed = 0
    for episode in sample_episodes:
        for index, call in enumerate(episode.gold_calls):
            recorded = episode.gold_response(index)
            if recorded is None:
                continue
            result = sandbox.lookup(call.name, call.arguments, episode.episode_id)
            assert result.match == "exact" and result.response == recorded.response
            replayed += 1
    assert replayed == 151


def test_opening_is_lazy_and_checked(built_dir, tmp_path):
    box = Sandbox.open(built_dir)
    assert box._table is None and box._index is None  # nothing read or mapped yet
    assert box.manifest["episodes"] == 81
    with pytest.raises(SandboxError, match="missing sandbox.parquet"):
        Sandbox.open(tmp_path)
    with pytest.raises(ValueError, match="not a map tool"):
        box.lookup("finish", {"answer": "x"})


def test_corrupt_sandbox_file_raises_sandbox_error(built_dir, tmp_path):
    import shutil
    broken = tmp_path / "broken"
    shutil.copytree(built_dir, broken)
    (broken / "sandbox.parquet").write_bytes(b"PAR1 not parquet")
    with pytest.raises(SandboxError, match="sandbox.parquet"):
        Sandbox.open(broken).lookup("query_poi", {"keywords": "天安门"})
    shutil.copy(built_dir / "sandbox.parquet", broken / "sandbox.parquet")
    (broken / "episodes.parquet").write_bytes(b"PAR1 not parquet")
    with pytest.raises(SandboxError, match="episodes.parquet"):
        Sandbox.open(broken).lookup("query_poi", {"keywords": "天安门"}, episode_id="mb-x")


# ----------------------------------------------------------------------------- nearest and far
def test_perturbed_coordinates_resolve_to_the_nearest_recording(sandbox, sample_episodes):
    calls = _recorded(sample_episodes, COORDINATE_TOOLS)
    assert len(calls) == 56
    for k, (episode, call) in enumerate(calls):
        arguments, largest = _moved(call.name, call.arguments, k)
        assert validate_call(call.name, arguments) == []
        result = sandbox.lookup(call.name, arguments, episode.episode_id)
        assert (result.match, result.scope) == ("nearest", "episode"), (episode.episode_id, call.name, result.detail)
        assert result.response == call.response and result.entry_episode_id == episode.episode_id
        assert 9.0 <= largest <= 61.0
        assert result.distance_m == pytest.approx(largest, abs=1.0)


def test_far_coordinates_miss(sandbox, sample_episodes):
    for k, (episode, call) in enumerate(_recorded(sample_episodes, COORDINATE_TOOLS)):
        arguments, _ = _moved(call.name, call.arguments, k, metres=2_500)
        result = sandbox.lookup(call.name, arguments, episode.episode_id)
        assert result.match == "miss" and not result.hit, (episode.episode_id, call.name)
        assert result.response is None and result.entry is None
        assert f"no recorded {call.name} call" in result.detail


def test_sub_metre_differences_are_nearest_with_their_distance(sandbox, sample_episodes):
    # Coordinates that round to another 6th decimal: a different key, a few centimetres away.
    episode, call = next((e, c) for e, c in _recorded(sample_episodes, ("reverse_geocoding",))
                         if c.arguments["latitude"] == "34.938856")
    result = sandbox.lookup("reverse_geocoding", dict(call.arguments, latitude="34.9388566"), episode.episode_id)
    assert result.match == "nearest" and result.response == call.response
    assert 0.0 < result.distance_m < 0.2
    episode, call = _recorded(sample_episodes, ("walking_route",))[0]
    assert call.arguments["destination"] == "112.18261,37.202231"
    moved = dict(call.arguments, destination="112.1826106,37.202231")
    result = sandbox.lookup("walking_route", moved, episode.episode_id)
    assert result.match == "nearest" and result.response == call.response
    assert 0.0 < result.distance_m < 0.2


def test_one_far_endpoint_is_enough_to_miss(sandbox, sample_episodes):
    for episode, call in _recorded(sample_episodes, ROUTE_TOOLS):
        arguments = dict(call.arguments, destination=shift_coordinate(call.arguments["destination"], 0, 3_000))
        assert sandbox.lookup(call.name, arguments, episode.episode_id).match == "miss"


def test_route_tools_do_not_answer_for_each_other(sandbox, sample_episodes):
    episode, call = _recorded(sample_episodes, ("walking_route",))[0]
    arguments = {"origin": call.arguments["origin"], "destination": call.arguments["destination"]}
    assert sandbox.lookup("walking_route", arguments, episode.episode_id).match == "exact"
    assert sandbox.lookup("bicycling_route", arguments, episode.episode_id).match == "miss"


# ----------------------------------------------------------------------------- strategies and waypoints
def test_other_driving_strategy_or_added_waypoint_is_an_explicit_miss(sandbox, sample_episodes):
    driving = _recorded(sample_episodes, ("driving_route",))
    assert len(driving) == 31
    for episode, call in driving:
        recorded = canonical_strategies(call.arguments.get("strategy")) or "default"
        other = ["少收费"] if recorded != "少收费" else ["速度最快"]
        changes = [dict(call.arguments, strategy=other),
                   dict(call.arguments, waypoints=list(call.arguments.get("waypoints") or [])
                        + [shift_coordinate(call.arguments["destination"], 5_000)])]
        if call.arguments.get("strategy"):
            changes.append({k: v for k, v in call.arguments.items() if k != "strategy"})  # no silent default either
        for arguments in changes:
            assert validate_call("driving_route", arguments) == []
            result = sandbox.lookup("driving_route", arguments, episode.episode_id)
            assert result.match == "miss" and result.response is None, (episode.episode_id, arguments)
            assert f"recorded with strategy {recorded!r}" in result.detail
            assert "strategies and waypoints must match" in result.detail


def test_dropped_or_reordered_waypoints_miss(sandbox, sample_episodes):
    with_waypoints = [(e, c) for e, c in _recorded(sample_episodes, ("driving_route",)) if c.arguments.get("waypoints")]
    assert len(with_waypoints) >= 5
    for episode, call in with_waypoints:
        dropped = {k: v for k, v in call.arguments.items() if k != "waypoints"}
        result = sandbox.lookup("driving_route", dropped, episode.episode_id)
        assert result.match == "miss" and f"{len(call.arguments['waypoints'])} waypoint(s)" in result.detail
        swapped = dict(call.arguments, origin=call.arguments["waypoints"][0], waypoints=[call.arguments["origin"]])
        assert sandbox.lookup("driving_route", swapped, episode.episode_id).match == "miss"


def test_other_bus_strategy_is_an_explicit_miss(sandbox, sample_episodes):
    bus = _recorded(sample_episodes, ("bus_route",))
    assert len(bus) == 9
    for episode, call in bus:
        recorded = str(call.arguments.get("strategy") or "0")
        assert sandbox.lookup("bus_route", dict(call.arguments, strategy=recorded), episode.episode_id).match == "exact"
        other = dict(call.arguments, strategy="2" if recorded != "2" else "3")
        result = sandbox.lookup("bus_route", other, episode.episode_id)
        assert result.match == "miss" and f"strategy {recorded!r}" in result.detail


# ----------------------------------------------------------------------------- fuzzy names
def _poi(episodes, keywords):
    return next((e, c) for e, c in _recorded(episodes, ("query_poi",)) if c.arguments["keywords"] == keywords)


def test_names_with_an_extra_char_resolve_fuzzy(sandbox, sample_episodes):
    calls = _recorded(sample_episodes, ("query_poi", "traffic_status", "search_around_poi"))
    assert len(calls) == 95
    for episode, call in calls:
        field = {"query_poi": "keywords", "traffic_status": "name", "search_around_poi": "keywords"}[call.name]
        arguments = dict(call.arguments, **{field: call.arguments[field] + "店"})
        result = sandbox.lookup(call.name, arguments, episode.episode_id)
        assert (result.match, result.scope) == ("fuzzy", "episode"), (episode.episode_id, arguments, result.detail)
        assert result.response == call.response
        n = len(canonical_name(call.arguments[field]))
        assert result.score == pytest.approx(200 * n / (2 * n + 1), abs=0.01)  # rapidfuzz ratio, one insertion


@pytest.mark.parametrize("recorded, asked, expected_score", [
    ("长沙市", "长沙", 80.0), ("凭祥市", "凭祥", 80.0), ("牡丹江东宁市", "牡丹江东宁", 2 * 5 / 11 * 100),
])
def test_names_with_the_city_suffix_dropped_resolve_fuzzy(sandbox, sample_episodes, recorded, asked, expected_score):
    episode, call = _poi(sample_episodes, recorded)
    result = sandbox.lookup("query_poi", dict(call.arguments, keywords=asked), episode.episode_id)
    assert (result.match, result.scope) == ("fuzzy", "episode")
    assert result.score == pytest.approx(expected_score) and result.response == call.response


def test_full_width_names_are_canonicalized(sandbox, sample_episodes):
    episode, call = _poi(sample_episodes, "T3航站楼")
    result = sandbox.lookup("query_poi", dict(call.arguments, keywords="Ｔ３航站楼"), episode.episode_id)
    assert result.match == "exact" and result.response == call.response  # NFKC: same canonical name
    result = sandbox.lookup("query_poi", dict(call.arguments, keywords="Ｔ３航站楼。"), episode.episode_id)
    assert result.match == "exact"  # full-width punctuation is dropped too
    result = sandbox.lookup("query_poi", {"keywords": "Ｔ３航站楼Ｂ座", "city": "北京"}, episode.episode_id)
    assert result.match == "fuzzy" and result.response == call.response
    assert result.score == pytest.approx(2 * 5 / 12 * 100)  # 't3航站楼' vs 't3航站楼b座'
    episode, call = _poi(sample_episodes, "咸阳机场t5")
    result = sandbox.lookup("query_poi", dict(call.arguments, keywords="咸阳国际机场Ｔ５"), episode.episode_id)
    assert result.match == "fuzzy" and result.response == call.response


def test_weather_city_suffix_and_forecast_flag(sandbox, sample_episodes):
    for episode, call in _recorded(sample_episodes, ("weather_query",)):
        city = call.arguments["city"]
        no_suffix = dict(call.arguments, city=city.removesuffix("市"))
        assert sandbox.lookup("weather_query", no_suffix, episode.episode_id).match == "exact"
        flipped = dict(call.arguments, need_forecast=not call.arguments.get("need_forecast", False))
        result = sandbox.lookup("weather_query", flipped, episode.episode_id)
        assert result.match == "miss" and result.response is None, (episode.episode_id, result)


def test_unrelated_name_misses(sandbox, sample_episodes):
    episode, call = _poi(sample_episodes, "长沙市")
    result = sandbox.lookup("query_poi", {"keywords": "完全不相干的地方名字"}, episode.episode_id)
    assert result.match == "miss" and result.response is None


# ----------------------------------------------------------------------------- scopes
def _unique_call(sample_episodes, sandbox, name):
    """A recorded call that only one episode has, and a second episode in another city."""
    for episode, call in _recorded(sample_episodes, (name,)):
        others = [e for e in sample_episodes if e.episode_id != episode.episode_id and e.city and e.city != episode.city
                  and not any(c.name == name for c in e.recorded)]
        if others:
            return episode, call, others[0]
    raise AssertionError(f"no unique {name} call")


@pytest.mark.parametrize("name", ["query_poi", "weather_query", "reverse_geocoding", "driving_route"])
def test_global_scope_serves_another_episodes_recording(sandbox, built_dir, sample_episodes, name):
    owner, call, other = _unique_call(sample_episodes, sandbox, name)
    result = sandbox.lookup(name, call.arguments, other.episode_id)
    assert (result.match, result.scope) == ("exact", "global")
    assert result.entry_episode_id == owner.episode_id and result.response == call.response
    for episode_id in (None, "not-an-episode"):
        unknown = sandbox.lookup(name, call.arguments, episode_id)
        assert (unknown.match, unknown.scope, unknown.entry_episode_id) == ("exact", "global", owner.episode_id)
    closed = Sandbox.open(built_dir, LookupConfig(global_fallback=False))
    result = closed.lookup(name, call.arguments, other.episode_id)
    assert result.match == "miss" and result.response is None
    assert closed.lookup(name, call.arguments, owner.episode_id).match == "exact"


def test_global_scope_also_matches_fuzzy_and_nearest(sandbox, sample_episodes):
    owner, call, other = _unique_call(sample_episodes, sandbox, "search_around_poi")
    arguments, largest = _moved(call.name, call.arguments, 3)
    result = sandbox.lookup(call.name, arguments, other.episode_id)
    assert (result.match, result.scope, result.entry_episode_id) == ("nearest", "global", owner.episode_id)
    assert result.distance_m == pytest.approx(largest, abs=1.0)
    owner, call, other = _unique_call(sample_episodes, sandbox, "traffic_status")
    result = sandbox.lookup(call.name, dict(call.arguments, name=call.arguments["name"] + "段"), other.episode_id)
    assert (result.match, result.scope, result.entry_episode_id) == ("fuzzy", "global", owner.episode_id)


# ----------------------------------------------------------------------------- configurable thresholds
def test_max_distance_changes_the_outcome(built_dir, sample_episodes):
    default, tight, loose = (Sandbox.open(built_dir, LookupConfig(max_distance_m=m)) for m in (300.0, 10.0, 1_000.0))
    calls = _recorded(sample_episodes, COORDINATE_TOOLS)
    for k, (episode, call) in enumerate(calls):
        near, _ = _moved(call.name, call.arguments, k, metres=40)
        assert default.lookup(call.name, near, episode.episode_id).match == "nearest"
        assert tight.lookup(call.name, near, episode.episode_id).match == "miss"
        farther, _ = _moved(call.name, call.arguments, k, metres=700)
        assert default.lookup(call.name, farther, episode.episode_id).match == "miss"
        result = loose.lookup(call.name, farther, episode.episode_id)
        assert result.match == "nearest" and result.response == call.response
        assert result.distance_m == pytest.approx(700, abs=2)


def test_fuzzy_threshold_changes_the_outcome(built_dir, sample_episodes):
    episode, call = _poi(sample_episodes, "长沙市")
    strict, lenient = (Sandbox.open(built_dir, LookupConfig(fuzzy_threshold=t)) for t in (90.0, 60.0))
    assert strict.lookup("query_poi", dict(call.arguments, keywords="长沙"), episode.episode_id).match == "miss"
    # two characters different: 67 similarity, a miss by default and a hit at 60
    two_off = dict(call.arguments, keywords="长沙站")
    assert Sandbox.open(built_dir).lookup("query_poi", two_off, episode.episode_id).match == "miss"
    result = lenient.lookup("query_poi", two_off, episode.episode_id)
    assert result.match == "fuzzy" and result.score == pytest.approx(200 / 3) and result.response == call.response


def test_city_mismatch_costs_points(sandbox, built_dir, sample_episodes):
    episode, call = _poi(sample_episodes, "牡丹江东宁市")  # ratio 90.9 without the suffix
    asked = {"keywords": "牡丹江东宁", "city": "牡丹江"}
    assert sandbox.lookup("query_poi", asked, episode.episode_id).score == pytest.approx(1000 / 11)
    wrong_city = sandbox.lookup("query_poi", dict(asked, city="上海"), episode.episode_id)
    assert wrong_city.match == "fuzzy" and wrong_city.score == pytest.approx(1000 / 11 - 10)
    harsh = Sandbox.open(built_dir, LookupConfig(city_mismatch_penalty=20.0))
    assert harsh.lookup("query_poi", dict(asked, city="上海"), episode.episode_id).match == "miss"


# ----------------------------------------------------------------------------- nearest means nearest
def _geocode_episode(episode_id: str, responses: list[tuple[str, str]]) -> Episode:
    recorded = []
    for i, (coord, label) in enumerate(responses):
        lng, lat = coord.split(",")
        recorded.append(RecordedCall(name="reverse_geocoding", arguments={"longitude": lng, "latitude": lat},
                                     response={"address": label}, gold_index=i, source_column="location_ans"))
    return Episode(episode_id=episode_id, query="我在哪", task_scenario="Geolocation Query",
                   intent_family="Basic Information Retrieval",
                   gold_calls=[ToolCall(name=c.name, arguments=c.arguments) for c in recorded], recorded=recorded)


CENTRE = "116.397128,39.916527"


@pytest.mark.parametrize("order", ["far_first", "near_first"])
def test_nearest_is_the_nearest_not_the_first_within_bound(order):
    at_50, at_20 = (shift_coordinate(CENTRE, 50), "fifty"), (shift_coordinate(CENTRE, 0, -20), "twenty")
    pair = [at_50, at_20] if order == "far_first" else [at_20, at_50]
    query = {"longitude": CENTRE.split(",")[0], "latitude": CENTRE.split(",")[1]}
    # within one episode
    box = Sandbox.from_episodes([_geocode_episode("t-1", pair)])
    result = box.lookup("reverse_geocoding", query, "t-1")
    assert (result.match, result.scope, result.response) == ("nearest", "episode", {"address": "twenty"})
    assert result.distance_m == pytest.approx(20, abs=0.5)
    # across episodes, through the global BallTree
    box = Sandbox.from_episodes([_geocode_episode("t-1", pair[:1]), _geocode_episode("t-2", pair[1:])])
    result = box.lookup("reverse_geocoding", query, "t-3")
    assert (result.match, result.scope, result.response) == ("nearest", "global", {"address": "twenty"})
    assert result.distance_m == pytest.approx(20, abs=0.5)


@pytest.mark.parametrize("order", [0, 1])
def test_nearest_route_uses_both_endpoints(order):
    destination = shift_coordinate(CENTRE, 3_000, 3_000)
    routes = [(shift_coordinate(CENTRE, 15), shift_coordinate(destination, 60), "origin 15 m, destination 60 m"),
              (shift_coordinate(CENTRE, 40), shift_coordinate(destination, 25), "origin 40 m, destination 25 m")]
    routes = routes if order == 0 else routes[::-1]
    recorded = [RecordedCall(name="walking_route", arguments={"origin": o, "destination": d}, response=label,
                             gold_index=i) for i, (o, d, label) in enumerate(routes)]
    episode = Episode(episode_id="w-1", query="走过去", task_scenario="Point-to-Point Planning",
                      intent_family="Basic Route Planning", recorded=recorded,
                      gold_calls=[ToolCall(name=c.name, arguments=c.arguments) for c in recorded])
    box = Sandbox.from_episodes([episode])
    result = box.lookup("walking_route", {"origin": CENTRE, "destination": destination}, "w-1")
    assert result.response == "origin 40 m, destination 25 m"  # worst endpoint 40 m beats worst endpoint 60 m
    assert result.distance_m == pytest.approx(40, abs=0.5)


# ----------------------------------------------------------------------------- robustness
_near_sample = st.sampled_from(["123.779300,41.306983", "112.938882,28.228304", "116.397128,39.916527"])


@st.composite
def _valid_calls(draw):
    name = draw(st.sampled_from(MAP_TOOLS))

    def coord() -> str:
        return shift_coordinate(draw(_near_sample), draw(st.floats(-500, 500)), draw(st.floats(-500, 500)))

    text = st.text(min_size=1, max_size=12).filter(str.strip)
    if name in ("query_poi", "traffic_status"):
        field = "keywords" if name == "query_poi" else "name"
        return name, {field: draw(text), "city": draw(st.sampled_from(["北京市", "长沙", "本溪市"]))}
    if name == "weather_query":
        return name, {"city": draw(text), "need_forecast": draw(st.booleans())}
    if name == "search_around_poi":
        return name, {"location": coord(), "keywords": draw(text)}
    if name == "reverse_geocoding":
        lng, lat = coord().split(",")
        return name, {"longitude": lng, "latitude": lat}
    arguments = {"origin": coord(), "destination": coord()}
    if name == "driving_route":
        arguments["strategy"] = draw(st.lists(st.sampled_from(["躲避拥堵", "不走高速", "fastest"]), max_size=2))
        arguments["waypoints"] = [coord() for _ in range(draw(st.integers(0, 2)))]
    if name == "bus_route":
        arguments["strategy"] = draw(st.sampled_from(["0", "2", "5"]))
    return name, arguments


@settings(max_examples=100, deadline=None)
@given(_valid_calls(), st.sampled_from([None, "mb-b398d105618e", "unknown"]))
def test_lookup_of_any_valid_call_is_deterministic_and_well_formed(memory_sandbox, call, episode_id):
    name, arguments = call
    if validate_call(name, arguments):
        return
    first = memory_sandbox.lookup(name, arguments, episode_id)
    assert first == memory_sandbox.lookup(name, arguments, episode_id)
    assert first.match in {"exact", "fuzzy", "nearest", "miss"}
    if first.hit:
        assert first.entry is not None and first.scope in {"episode", "global"}
        assert first.response == memory_sandbox.response(first.entry)
        if first.match == "nearest":
            assert 0.5 < first.distance_m <= 300.0
        if first.match == "fuzzy" and first.score is not None:
            assert first.score >= 80.0
    else:
        assert first.response is None and first.detail


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_envs_on_one_directory_share_one_mapped_index():
    """Each memory-mapped index array holds a file descriptor: 57 per env before they were shared."""
    from mobility_env.mobilitybench.env import MobilityEnv

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    envs = [MobilityEnv()]
    envs[0].reset(seed=0)
    after_one = open_fds()
    for seed in (1, 2, 3):
        env = MobilityEnv()
        env.reset(seed=seed)
        envs.append(env)
    assert open_fds() - after_one <= 3  # at most a file or two per env, not an index's worth
    assert len({id(env.sandbox.index) for env in envs}) == 1
