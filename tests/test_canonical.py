"""Canonical forms: equal requests get equal keys, different requests different keys."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mobility_env.canonical import (canonical_city, canonical_coordinate, canonical_name, canonical_request,
                                    canonical_strategies)
from mobility_env.tools import DRIVING_STRATEGIES, validate_call

A, B = "116.397128,39.916527", "116.481499,39.990755"


def key(tool, **arguments):
    return canonical_request(tool, arguments).key


# ----------------------------------------------------------------------------- hand-computed forms
def test_coordinates_round_to_six_decimals():
    assert canonical_coordinate("116.4,39.9") == "116.400000,39.900000"
    assert canonical_coordinate(" 116.39712849 ,\t39.91652651 ") == "116.397128,39.916527"
    assert canonical_coordinate("123.77930045127867,41.306982717486775") == "123.779300,41.306983"
    assert canonical_coordinate("116.4;39.9") is None and canonical_coordinate(None) is None


@pytest.mark.parametrize("raw, expected", [
    ("北京市", "北京"), ("北京", "北京"), (" 北京 市 ", "北京"), ("北京\u3000市", "北京"), ("北京\t市\n", "北京"), ("广西壮族自治区", "广西壮族"),
    ("延边朝鲜族自治州", "延边朝鲜族"), ("浦东新区", "浦东"), ("香港特别行政区", "香港"), ("河北省", "河北"),
    ("朝阳区", "朝阳"), ("津市", "津市"), ("Beijing", "Beijing"), (None, ""), (3, ""),
])
def test_canonical_city(raw, expected):
    assert canonical_city(raw) == expected


def test_canonical_name_and_strategies():
    assert canonical_name("ＫＦＣ （中关村店）") == "kfc中关村店"
    assert canonical_name("龙湖中德开·春江悦茗") == "龙湖中德开春江悦茗"
    assert canonical_name(" T3 航站楼 ") == canonical_name("Ｔ３航站楼") == "t3航站楼"
    assert canonical_strategies(["高速优先", "躲避拥堵"]) == canonical_strategies(["avoid_congestion", "highway_priority"]) \
        == "躲避拥堵+高速优先"
    assert canonical_strategies("no_highway") == canonical_strategies(["不走高速", "不走高速"]) == "不走高速"
    assert canonical_strategies(None) == canonical_strategies([]) == ""


def test_request_keys_per_tool():
    assert key("query_poi", keywords="天安门 广场", city="北京市") == "天安门广场|北京"
    assert key("traffic_status_road_api", name="机场路", city="北京") == "机场路|北京"
    assert key("weather_query", city="淮安市") == "淮安|now"
    assert key("weather_query", city="淮安", need_forecast="true") == "淮安|forecast"
    assert key("search_around_poi", location=A, keywords="银行") == f"{A}|银行"
    assert key("reverse_geocoding", longitude="116.397128", latitude="39.916527") == A
    assert key("reverse_geocoding", longitude=116.397128, latitude=39.916527) == A
    assert key("reverse_geocoding", longitude="1e2", latitude=1e-07) == "100.000000,0.000000"  # valid numbers
    assert key("bus_route", origin=A, destination=B) == f"{A}|{B}|0|"
    assert key("bus_route", origin=A, destination=B, strategy="0") == f"{A}|{B}|0|"
    assert key("bus_route", origin=A, destination=B, strategy=5) == f"{A}|{B}|5|"
    assert key("driving_route", origin=A, destination=B, strategy=["fastest"], waypoints=[A]) == f"{A}|{B}|速度最快|{A}"
    request = canonical_request("driving_route", {"origin": A, "destination": B, "waypoints": [B, A]})
    a, b = (116.397128, 39.916527), (116.481499, 39.990755)
    assert request.points == (a, b, b, a)
    # different tools and modes never share a key space in the sandbox: the key is per tool
    assert canonical_request("walking_route", {"origin": A, "destination": B}).tool == "walking_route"


# ----------------------------------------------------------------------------- properties
_lng = st.floats(-180, 180, allow_nan=False)
_lat = st.floats(-90, 90, allow_nan=False)
_decimals = st.integers(0, 12)
_space = st.text(alphabet=" \t\u3000\u00a0\n", max_size=3)
_cjk = st.text(alphabet="北京上海天广深杭南宁武汉成都重庆西安苏大连青岛厦门长沙郑合肥昆明", min_size=2, max_size=5)
_suffix = st.sampled_from(["市", "省", "区", "县", "地区", "自治州", "自治区", "新区", "特别行政区", "盟", "旗"])
_strategy_names = st.sampled_from(sorted(DRIVING_STRATEGIES))


def _coord(lng, lat, decimals):
    return f"{lng:.{decimals}f},{lat:.{decimals}f}"


@settings(max_examples=100, deadline=None)
@given(_lng, _lat, _decimals)
def test_canonical_coordinate_is_a_fixed_point(lng, lat, decimals):
    text = _coord(lng, lat, decimals)
    once = canonical_coordinate(text)
    assert once is not None and canonical_coordinate(once) == once
    for tool, args in [("walking_route", {"origin": text, "destination": text}),
                       ("search_around_poi", {"location": text, "keywords": "银行"})]:
        canonical_args = {k: (once if v == text else v) for k, v in args.items()}
        assert canonical_request(tool, canonical_args) == canonical_request(tool, args)
    lng_text, lat_text = text.split(",")
    assert key("reverse_geocoding", longitude=lng_text, latitude=lat_text) == once


@settings(max_examples=100, deadline=None)
@given(_lng, _lat, _decimals, _space, _space, _space)
def test_coordinates_ignore_whitespace(lng, lat, decimals, s1, s2, s3):
    text = _coord(lng, lat, decimals)
    lng_text, lat_text = text.split(",")
    spaced = f"{s1}{lng_text}{s2},{s3}{lat_text}{s1}"
    assert key("driving_route", origin=spaced, destination=text, waypoints=[spaced]) == \
        key("driving_route", origin=text, destination=text, waypoints=[text])


@settings(max_examples=100, deadline=None)
@given(_cjk, _suffix, _cjk, _space, _space)
def test_names_and_cities_ignore_whitespace_and_city_suffixes(city, suffix, name, s1, s2):
    assume(not city.endswith(("地", "自治", "新", "特别行政")))
    spaced_city = f"{s1}{city[0]}{s2}{city[1:]}{s2}{suffix}{s1}"
    assert canonical_city(spaced_city) == canonical_city(city) == city
    spaced_name = f"{s1}{name[:1]}{s2}{name[1:]}{s1}"
    for tool, field in (("query_poi", "keywords"), ("traffic_status", "name")):
        assert key(tool, **{field: spaced_name, "city": spaced_city}) == key(tool, **{field: name, "city": city})
    assert key("weather_query", city=spaced_city) == key("weather_query", city=city) == f"{city}|now"


@settings(max_examples=100, deadline=None)
@given(st.lists(_strategy_names, min_size=1, max_size=2), st.randoms(use_true_random=False))
def test_driving_strategies_are_order_insensitive(strategies, rnd):
    shuffled = list(strategies)
    rnd.shuffle(shuffled)
    assert key("driving_route", origin=A, destination=B, strategy=strategies) == \
        key("driving_route", origin=A, destination=B, strategy=shuffled)
    english = {v: k for k, v in DRIVING_STRATEGIES.items() if k != v}
    translated = [english.get(s, s) for s in strategies]
    assert key("driving_route", origin=A, destination=B, strategy=translated) == \
        key("driving_route", origin=A, destination=B, strategy=strategies)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_lng, _lat), min_size=2, max_size=5, unique=True))
def test_waypoint_order_matters(points):
    waypoints = [_coord(lng, lat, 6) for lng, lat in points]
    assume(len(set(canonical_coordinate(w) for w in waypoints)) == len(waypoints))
    reordered = waypoints[1:] + waypoints[:1]
    assert key("driving_route", origin=A, destination=B, waypoints=waypoints) != \
        key("driving_route", origin=A, destination=B, waypoints=reordered)
    assert key("driving_route", origin=A, destination=B, waypoints=waypoints) == \
        key("driving_route", origin=A, destination=B, waypoints=list(waypoints))


_number_text = st.one_of(
    st.floats(-180, 180, allow_nan=False), st.integers(-180, 180),
    st.floats(-180, 180, allow_nan=False).map(repr), st.floats(-180, 180, allow_nan=False).map(lambda x: f"{x:e}"),
    st.floats(-180, 180, allow_nan=False).map(lambda x: f" {x:.3f} "),
)


@settings(max_examples=150, deadline=None)
@given(_number_text, _number_text)
def test_every_valid_reverse_geocoding_call_has_a_canonical_point(lng, lat):
    arguments = {"longitude": lng, "latitude": lat}
    assume(validate_call("reverse_geocoding", arguments) == [])
    request = canonical_request("reverse_geocoding", arguments)
    assert len(request.points) == 1
    assert request.points[0] == pytest.approx((float(lng), float(lat)), abs=1e-6)
    assert request.key == canonical_coordinate(f"{float(lng):.6f},{float(lat):.6f}")
