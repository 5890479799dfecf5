"""Builders of the information scenarios: POI, Geolocation, Nearby, Weather, Traffic Info.

Each builder fills a :class:`~mobility_env.synth.draft.Draft` and returns the official row,
or None when the sampled situation cannot make a good episode (the caller retries with the
next sub-seed). Gold evidence columns are copied from the very responses recorded.
"""

from __future__ import annotations

from typing import Any

from . import queries
from .catalog import CATEGORIES, NEARBY_CATEGORIES
from .draft import Draft, loc
from .geo import haversine_m
from .names import pick
from .places import keyword_for, search_around
from .responses import around_response, poi_result_response, regeo_response, traffic_response, weather_response


def _context(d: Draft) -> dict[str, Any]:
    return {"user_current_location": d.user_loc, "city": d.city.name}


def build_poi_query(d: Draft) -> dict[str, Any] | None:
    poi = (d.neighbourhood_place(d.user, 8000) if d.u() < 0.3
           else d.city.landmarks[d.rng.randrange(len(d.city.landmarks))])
    kw = keyword_for(poi, d.city, d.u())
    response = poi_result_response(d.city, poi)
    d.gold("query_poi", {"keywords": kw, "city": d.city.name}, "poi_result", response)
    d.set(city=d.city.name, user_loc=d.user_loc, ans_loc=loc(poi))
    for salt in ("a", "b"):
        sibling = d.sibling(poi, salt)
        d.alternative("query_poi", {"keywords": sibling.name, "city": d.city.name},
                      poi_result_response(d.city, sibling))
    return d.finish(queries.voice(d.rng, pick(d.rng, queries.POI).format(kw=kw)), _context(d))


def build_geolocation_query(d: Draft) -> dict[str, Any] | None:
    lng, lat = d.user_loc.split(",")
    response = regeo_response(d.world, d.city, d.user)
    d.gold("reverse_geocoding", {"latitude": lat, "longitude": lng}, "location_ans", response)
    d.set(city=d.city.name, key_info={"longitude": lng, "latitude": lat},
          formatted_address=response["regeocode"]["formatted_address"])
    d.alternative("search_around_poi", {"location": d.user_loc, "radius": 1000},
                  around_response(d.world, d.city, d.user, None, radius_m=1000))
    return d.finish(queries.voice(d.rng, pick(d.rng, queries.GEO)), {"user_current_location": d.user_loc})


def build_nearby_query(d: Draft) -> dict[str, Any] | None:
    pool = d.city.landmarks + d.city.stations
    center = pool[d.rng.randrange(len(pool))]
    center_kw = keyword_for(center, d.city, d.u())
    category = CATEGORIES[NEARBY_CATEGORIES[d.rng.randrange(len(NEARBY_CATEGORIES))]]
    words = list(category.keywords) + [category.search_words(b)[-1] for b in category.brands]
    kw = words[d.rng.randrange(len(words))]
    if not search_around(d.world, d.city, center.location, kw):
        return None
    center_loc = loc(center)
    d.gold("query_poi", {"keywords": center_kw, "city": d.city.name}, "poi_result", poi_result_response(d.city, center))
    around = around_response(d.world, d.city, center.location, kw)
    d.gold("search_around_poi", {"location": center_loc, "keywords": kw}, "near_poi_ans", around)
    d.set(city=d.city.name, user_loc=d.user_loc, query_poi=center_kw, near_poi_info=kw, centre_loc=center_loc)
    if haversine_m(d.user, center.location) > 2000:
        d.alternative("search_around_poi", {"location": d.user_loc, "keywords": kw},
                      around_response(d.world, d.city, d.user, kw))
    sibling = d.sibling(center, "nearby")
    d.alternative("query_poi", {"keywords": sibling.name, "city": d.city.name}, poi_result_response(d.city, sibling))
    d.alternative("search_around_poi", {"location": loc(sibling), "keywords": kw},
                  around_response(d.world, d.city, sibling.location, kw))
    text = pick(d.rng, queries.NEARBY).format(center=center_kw, kw=kw)
    return d.finish(queries.voice(d.rng, text), _context(d))


def build_weather_query(d: Draft) -> dict[str, Any] | None:
    forecast = d.u() < 0.4
    template, time_word = pick(d.rng, queries.WEATHER_FORECAST if forecast else queries.WEATHER_NOW)
    target = d.city
    if "{city}" in template:
        other = d.world.city_names[d.rng.randrange(len(d.world.city_names))]
        target = d.world.city(other) if d.u() < 0.6 else d.city
    when = d.when
    response = weather_response(d.world, target, when, forecast)
    d.gold("weather_query", {"city": target.name, "need_forecast": forecast}, "weather", response)
    d.set(city=d.city.name, key_info={"user_current_location": d.user_loc, "city": d.city.name},
          weather_description=response["data"]["weather_description"], time=time_word or None)
    d.alternative("weather_query", {"city": target.name, "need_forecast": not forecast},
                  weather_response(d.world, target, when, not forecast))
    if target is not d.city:
        d.alternative("weather_query", {"city": d.city.name, "need_forecast": forecast},
                      weather_response(d.world, d.city, when, forecast))
    text = template.format(city=target.short)
    return d.finish(queries.voice(d.rng, text), _context(d))


def build_traffic_query(d: Draft) -> dict[str, Any] | None:
    city = d.city
    roads = ([r for r, _ in city.ew_roads + city.ns_roads] + city.elevated + [city.ring_highway]
             + [h for h, _ in city.highways])
    road = roads[d.rng.randrange(len(roads))]
    said = f"{city.name}{road}" if d.u() < 0.1 else road
    axis = city.ew_roads if any(r == road for r, _ in city.ew_roads) else city.ns_roads
    anchor = next((c for r, c in axis if r == road), 0.0)
    point = city.point(0.0, anchor) if axis is city.ew_roads else city.point(anchor, 0.0)
    poi = d.place_at(point, road)
    d.gold("query_poi", {"keywords": said, "city": city.name}, "poi_result", poi_result_response(city, poi))
    d.gold("traffic_status_road_api", {"name": said, "city": city.name}, "ans", traffic_response(d.world, city, road))
    d.set(city=city.name, user_loc=d.user_loc, road=said)
    others = [r for r in roads if r != road]
    for other in (others[d.rng.randrange(len(others))], others[d.rng.randrange(len(others))]):
        d.alternative("traffic_status_road_api", {"name": other, "city": city.name},
                      traffic_response(d.world, city, other))
    text = pick(d.rng, queries.TRAFFIC).format(road=said)
    return d.finish(queries.voice(d.rng, text), _context(d))
