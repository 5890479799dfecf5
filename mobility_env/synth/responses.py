"""API-shaped responses for the non-route tools, in the shapes of the released data.

* ``query_poi``: ``poi_result`` style ``{'status': 'SUCCESS', 'data': {location, name, address},
  'error': None}`` or ``std_*`` style flat dicts (``name, address, location, lng, lat`` and
  empty admin fields), depending on the column the answer lives in;
* ``reverse_geocoding``: Amap ``regeocode`` with roads, a road intersection, the formatted
  address, the address component and nearby POIs;
* ``search_around_poi``: ``{'status': 'SUCCESS', 'data': {'status': '1', 'info': 'OK', 'pois': [...]}}``;
* ``weather_query``: one ``weather_description`` text, current or a 4-day forecast;
* ``traffic_status``: ``trafficinfo`` with a description and an ``evaluation``.

Addresses read '省 区 街道地址' like the real data.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .catalog import CATEGORIES
from .geo import Point, format_location, haversine_m, heading_between
from .names import WEATHER_CONDITIONS, WIND_DIRECTIONS
from .places import AROUND_RADIUS_M, search_around
from .seeding import rng_for, stable_seed
from .world import City, Poi, World

_WEEKDAYS = "一二三四五六日"
_TRAFFIC_CODES = {"畅通": "1", "缓行": "2", "拥堵": "3"}


def poi_address(city: City, poi: Poi) -> str:
    return f"{city.province} {poi.district} {poi.address}"


def poi_result_response(city: City, poi: Poi) -> dict[str, Any]:
    """The ``poi_result`` shape of a query_poi answer."""
    return {"status": "SUCCESS", "data": {"location": format_location(poi.location), "name": poi.name,
                                          "address": poi_address(city, poi)}, "error": None}


def std_poi_response(city: City, poi: Poi) -> dict[str, Any]:
    """The ``std_start/std_transit/std_end`` shape of a query_poi answer."""
    lng, lat = (float(v) for v in format_location(poi.location).split(","))
    return {"name": poi.name, "address": poi_address(city, poi), "location": format_location(poi.location),
            "lng": lng, "lat": lat, "city": "", "district": "", "adcode": "", "poi_id": "", "type": "",
            "pcode": "", "citycode": ""}


def around_response(world: World, city: City, center: Point, keyword: str | None,
                    radius_m: float = AROUND_RADIUS_M) -> dict[str, Any]:
    pois = [{"location": format_location(p.location), "name": p.name, "address": poi_address(city, p)}
            for p, _ in search_around(world, city, center, keyword, radius_m)]
    return {"status": "SUCCESS", "data": {"status": "1", "info": "OK", "pois": pois}, "error": None}


def formatted_address(city: City, point: Point) -> str:
    head = city.province if city.province == city.name else city.province + city.name
    return f"{head}{city.district_of(point)}{city.township_of(point)}{city.street_address(point)}"


def regeo_response(world: World, city: City, point: Point) -> dict[str, Any]:
    """Reverse geocoding of ``point``: the three nearest arterials, one crossing, nearby POIs."""
    x, y = city.xy(point)
    roads = []
    for name, coord in (sorted(city.ew_roads, key=lambda r: abs(r[1] - y))[:2]
                        + sorted(city.ns_roads, key=lambda r: abs(r[1] - x))[:1]):
        on_road = city.point(x, coord) if (name, coord) in city.ew_roads else city.point(coord, y)
        roads.append({"id": f"R{hash_text(city.name + name) % 10**9:09d}", "location": format_location(on_road),
                      "direction": heading_between(on_road, point), "name": name,
                      "distance": f"{haversine_m(point, on_road):.1f}"})
    ew, ns = city.nearest_ew(point), city.nearest_ns(point)
    cross = city.point(ns[1], ew[1])
    district = city.district_of(point)
    pois = []
    for poi, distance in search_around(world, city, point, None, radius_m=800.0, limit=5):
        pois.append({"id": f"B{hash_text(poi.name) % 10**8:08d}", "direction": heading_between(point, poi.location),
                     "address": poi.address, "name": poi.name, "location": format_location(poi.location),
                     "distance": f"{distance:.1f}", "type": CATEGORIES[poi.category].type_code})
    street, number = _split_address(city.street_address(point))
    return {"status": "1", "info": "OK", "infocode": "10000", "regeocode": {
        "roads": roads,
        "roadinters": [{"first_name": ew[0], "second_name": ns[0], "location": format_location(cross),
                        "distance": f"{haversine_m(point, cross):.1f}", "direction": heading_between(cross, point)}],
        "formatted_address": formatted_address(city, point),
        "addressComponent": {"country": "中国", "province": city.province, "city": city.name, "district": district,
                             "township": city.township_of(point), "streetNumber": {"street": street, "number": number},
                             "businessAreas": [[]], "building": {"name": [], "type": []},
                             "neighborhood": {"name": [], "type": []}},
        "aois": [], "pois": pois}}


def _split_address(text: str) -> tuple[str, str]:
    for i, ch in enumerate(text):
        if ch.isdigit():
            return text[:i], text[i:]
    return text, ""


def hash_text(text: str) -> int:
    return stable_seed("id", text)


def _climate(world: World, city: City, day: dt.date) -> tuple[str, int, int, str, str, int]:
    """(condition, low, high, wind direction, wind power, humidity) of one city-day."""
    rng = rng_for(world.seed, "weather", city.name, day.isoformat())
    mean = 27.0 - 0.95 * (city.seed.lat - 20.0) - 0.12 * (day.timetuple().tm_yday - 305)
    condition = WEATHER_CONDITIONS[rng.randrange(len(WEATHER_CONDITIONS))]
    if condition == "小雪" and mean > 6:
        condition = "小雨"
    low = int(round(mean - rng.uniform(2, 6)))
    high = int(round(mean + rng.uniform(2, 6)))
    wind = WIND_DIRECTIONS[rng.randrange(len(WIND_DIRECTIONS))]
    power = ("1-3级", "≤3级", "3级", "4级", "5级")[rng.randrange(5)]
    return condition, low, high, wind, power, rng.randint(25, 95)


def weather_description(world: World, city: City, when: dt.datetime, forecast: bool) -> str:
    stamp = when.strftime("%Y-%m-%d %H:%M:%S")
    if not forecast:
        condition, low, high, wind, power, humidity = _climate(world, city, when.date())
        temp = int(round(low + (high - low) * min(1.0, abs(when.hour - 4) / 10.0)))
        return f"{city.name}当前天气{condition}，气温{temp}℃，湿度{humidity}%，{wind}风{power}。数据更新时间：{stamp}"
    lines = [f"{city.name}未来4天天气预报："]
    for k in range(4):
        day = when.date() + dt.timedelta(days=k)
        condition, low, high, wind, power, _ = _climate(world, city, day)
        lines.append(f"{day.isoformat()}（周{_WEEKDAYS[day.weekday()]}）：{condition}，气温{low}~{high}℃，{wind}风{power}")
    lines.append(f"数据更新时间：{stamp}")
    lines.append("（注：天气预报最多支持4天，超过此时间无法提供精准预报）")
    return "\n".join(lines)


def weather_response(world: World, city: City, when: dt.datetime, forecast: bool) -> dict[str, Any]:
    text = weather_description(world, city, when, forecast)
    return {"status": "SUCCESS", "data": {"status": "1", "info": "OK", "weather_description": text}, "error": None}


def traffic_response(world: World, city: City, road: str) -> dict[str, Any]:
    """Live traffic of a named road; the state is the one the route model drives on."""
    state = world.traffic_state(city.name, road)
    rng = rng_for(world.seed, "traffic-detail", city.name, road)
    if state == "畅通":
        expedite, congested, blocked = 100.0 - rng.uniform(0, 8), rng.uniform(0, 3), 0.0
        description = f"{road}：双向畅通。"
    elif state == "缓行":
        expedite, congested, blocked = rng.uniform(50, 75), rng.uniform(15, 30), rng.uniform(0, 5)
        description = f"{road}：{'自东向西' if rng.random() < 0.5 else '自南向北'}行驶缓慢，其余路段畅通。"
    else:
        expedite, congested, blocked = rng.uniform(15, 40), rng.uniform(30, 50), rng.uniform(8, 20)
        description = f"{road}：{'双向' if rng.random() < 0.5 else '自西向东'}拥堵，通行缓慢。"
    unknown = max(0.0, 100.0 - expedite - congested - blocked)
    return {"status": "1", "info": "OK", "infocode": "10000", "trafficinfo": {
        "description": description,
        "evaluation": {"expedite": f"{expedite:.2f}%", "congested": f"{congested:.2f}%", "blocked": f"{blocked:.2f}%",
                       "unknown": f"{unknown:.2f}%", "status": _TRAFFIC_CODES[state], "description": state}}}
