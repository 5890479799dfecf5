"""RuleAgent: a deterministic, LLM-free baseline built from hand-written Chinese rules.

It acts like any other policy: it sees only what ``reset`` and ``step`` return — the query
and context of the reset info, and the observation text of each call (either observation
format) — and uses only public ``mobility_env`` modules (tool schemas, the observation
compactors). It never reads the env's internals (``env.unwrapped``, its store, sandbox or
state), the episode's gold (the scenario label included) or the scorer (``mobility_rewards``).

The rules: classify the scenario from cue words, pull places out of the query ("从A到B",
"去B", "经过X", "A附近的K"), look them up with ``query_poi``, call the one tool the scenario
needs with the mode and strategy words it heard, and answer from the observation
(:mod:`mobility_agents.baselines.mobilitybench.observations`). It is the default agent of ``mobility-env run``: a real,
non-trivial score with no model and no network.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from . import observations as answers
from ...base import Agent, EpisodeSession

_FILLERS = re.compile(r"小德小德|小德|小布小布|小布|你好|嗯+|呃+|啊|那个|帮我|给我|请|麻烦|一下|查查|查询|看看|看一下|我想|我要|我们|现在|的话|呀|吧|呢|吗|？|\?|。|，|,|！|!")
_TRAIL = re.compile(r"(怎么走|怎么去|的路线|路线|导航|规划|有多远|多远|多少公里|多久|要多久|距离|的距离|坐公交|坐地铁|开车|驾车|自驾|步行|骑行|"
                    r"骑车|走路|不走高速|走高速|高速优先|高速路优先|少走高速|走低速|少收费|躲避拥堵|避开拥堵|大路优先|应该|几点出发|出发|可以|吗)+$")

MODE_CUES = (("bicycling", ("骑行", "骑车", "单车")), ("walking", ("步行", "走路", "走过去")),
             ("transit", ("公交", "地铁", "坐车", "号线", "乘车")), ("driving", ("开车", "驾车", "自驾", "打车")))
STRATEGY_CUES = (("不走高速", ("不走高速", "走低速", "少走高速", "避开高速", "不上高速")),
                 ("高速优先", ("高速优先", "走高速", "高速路优先", "上高速")), ("少收费", ("少收费", "不收费", "避免收费", "省钱")),
                 ("躲避拥堵", ("躲避拥堵", "避开拥堵", "不堵")), ("大路优先", ("大路优先", "走大路")))
_FORECAST = ("明天", "后天", "未来", "预报", "这几天", "周末", "下周")
_LINE = re.compile(r"(?:地铁)?[\u4e00-\u9fa5A-Za-z]{0,4}?\d{1,4}(?:号线|路)|[\u4e00-\u9fa5]{2,4}线")
_EXCLUDE = re.compile(r"(不要坐|不想坐|不坐|不乘坐|不要乘坐|不乘|别坐|避开|不走)((?:[\u4e00-\u9fa5A-Za-z0-9]{1,12}?(?:号线|路|线)[和与、及,，]?)+)")
_CONSTRAINT_CLAUSE = re.compile(r"(不要坐|不想坐|不坐|不乘坐|不要乘坐|不乘|别坐|避开|但是?|并且)[^，。？！,?!]*")
_ROAD = re.compile(r"([\u4e00-\u9fa5A-Za-z0-9]{2,16}?(?:高速|大道|大街|环路|环城路|快速路|国道|省道|路|街|桥|隧道))")


@dataclass
class Parse:
    scenario: str
    origin: str | None = None
    destination: str | None = None
    waypoints: list[str] = field(default_factory=list)
    mode: str = "driving"
    strategies: list[str] = field(default_factory=list)
    excluded_lines: list[str] = field(default_factory=list)
    keyword: str | None = None
    center: str | None = None
    road: str | None = None
    forecast: bool = False


def clean_place(text: str | None) -> str | None:
    if not text:
        return None
    text = _FILLERS.sub("", text).strip()
    previous = None
    while previous != text:
        previous, text = text, _TRAIL.sub("", text).strip()
    text = re.sub(r"^(从|去|到|往|在|的)", "", text).strip()
    return text or None


def _mode(query: str) -> str:
    return next((mode for mode, cues in MODE_CUES if any(c in query for c in cues)), "driving")


def strategies_in(q: str) -> list[str]:
    """Strategy names a query asks for; '不走高速' is not also '走高速'."""
    found, rest = [], q
    for name, cues in STRATEGY_CUES:
        for cue in sorted(cues, key=len, reverse=True):
            if cue in rest:
                found.append(name)
                rest = rest.replace(cue, " ")
                break
    return found


def parse_query(query: str) -> Parse:
    """Pull every slot out of the query, then classify the scenario from cue words."""
    q = query.strip()
    parse = Parse("POI Query")
    parse.strategies = strategies_in(q)
    parse.excluded_lines = []
    for match in _EXCLUDE.finditer(q):
        parse.excluded_lines += [re.sub(r"^[和与及、]", "", m.group(0)) for m in _LINE.finditer(match.group(2))]
    parse.excluded_lines = list(dict.fromkeys(parse.excluded_lines))
    parse.forecast = any(w in q for w in _FORECAST)
    road = _ROAD.search(_FILLERS.sub("", q.replace("为什么", "").replace("为啥", "")))
    parse.road = road.group(1) if road else clean_place(q)
    near = re.split(r"(附近|周边|周围)", q, maxsplit=1)
    if len(near) == 3:
        parse.center = clean_place(near[0])
        parse.keyword = clean_place(re.sub(r"^(的|有没有|有|哪里有|最近的)+", "", near[2]))
    parse.origin, parse.destination, parse.waypoints = _places(q)
    parse.mode = _mode(q)
    parse.scenario = classify(q, parse)
    if parse.scenario == "POI Query" or parse.keyword is None:
        parse.keyword = parse.keyword or clean_place(q) or q
    return parse


def classify(q: str, parse: Parse) -> str:
    """The scenario a query asks for, from cue words and the slots found."""
    if "天气" in q or "下雨" in q or "气温" in q:
        return "Weather Query"
    if re.search(r"堵|路况|拥挤|车祸|事故|畅通", q) and not re.search(r"怎么走|导航|路线|出发|躲避拥堵|避开拥堵", q):
        return "Traffic Info Query"
    if parse.center is not None or re.search(r"(附近|周边|周围)", q):
        return "Nearby Query"
    if re.search(r"几点出发|什么时候出发|几点走|几点到|多久能到|什么时候到", q):
        return "Arrival/Departure Time Query"
    if parse.excluded_lines and parse.destination:
        return "Route-Constrained Planning"
    if parse.strategies and parse.destination:
        return "Option-Constrained Route Planning"
    if re.search(r"多远|多少公里|距离|多长时间|要多久|多久", q) and parse.destination:
        return "Route Property Query"
    if parse.waypoints and parse.destination:
        return "Multi-stop Planning"
    if re.search(r"(在哪|哪里|位置|哪儿)", q) and len(_FILLERS.sub("", q)) <= 10 and not re.search(r"去|到", q):
        return "Geolocation Query"
    if parse.destination and re.search(r"去|到|导航|怎么走|路线|回", q):
        return "Point-to-Point Planning"
    return "POI Query"


def _route_clause(q: str) -> str:
    """The clause that names the places: constraints and repeated clauses cut away."""
    text = _CONSTRAINT_CLAUSE.sub("", q)
    for _, cues in STRATEGY_CUES:
        for cue in cues:
            text = text.replace(cue, "")
    clauses = [c for c in re.split(r"[，。？！,?!；;]", text) if c.strip()]
    for clause in clauses:
        if re.search(r"从|去|到|离|至|经过|途经|导航|回", clause):
            return clause
    return clauses[0] if clauses else text


def _places(q: str) -> tuple[str | None, str | None, list[str]]:
    text = _FILLERS.sub("", _route_clause(q))
    away = re.search(r"离(.+?)(?:有)?(?:多远|多少公里|多久|多长时间|的距离|距离)", text)
    if away:
        return None, clean_place(away.group(1)), []
    waypoints: list[str] = []
    via = re.search(r"(经过|途经|途径|路过)([\u4e00-\u9fa5A-Za-z0-9()（）·]+?)(?=到|去|再|然后|$)", text)
    if via:
        waypoints.append(clean_place(via.group(2)) or via.group(2))
        text = (text[: via.start()] + "到" + text[via.end():] if not re.search(r"(到|去)", text[via.end():])
                else text[: via.start()] + text[via.end():])
    hops = re.search(r"^(?:从)?(.+?)(?:到|去)(.+?)(?:再到|再去|然后到|然后去)(.+)$", text)
    if hops:
        waypoints.append(clean_place(hops.group(2)) or hops.group(2))
        return clean_place(hops.group(1)), clean_place(hops.group(3)), waypoints
    span = re.search(r"从(.+?)(?:到|去|至)(.+)$", text) or re.search(r"^(.{2,20}?)(?:到|至)(.+)$", text)
    if span and not re.match(r"^(我|你)", span.group(1)):
        origin = clean_place(span.group(1))
        if origin and re.search(r"(现在|当前|这里|我的位置|所在)", origin):
            origin = None
        return origin, clean_place(span.group(2)), waypoints
    dest = re.search(r"(?:去|到|导航到|导航去|导航|回)(.+)$", text)
    if dest:
        return None, clean_place(dest.group(1)), waypoints
    return None, clean_place(text) if waypoints else None, waypoints


class RuleAgent(Agent):
    """Hand-written rules; see module docstring.

    ``scenario`` forces the procedure to run (used by the learning example, whose policy
    picks the procedure); by default the rules classify the query themselves.
    """

    name = "rule"

    def __init__(self, scenario: str | None = None):
        self.scenario = scenario

    @staticmethod
    def _poi_arguments(session: EpisodeSession, keywords: str) -> dict[str, Any]:
        city = session.context.get("city")
        return {"keywords": keywords, **({"city": city} if city else {})}

    def _lookup(self, session: EpisodeSession, keywords: str) -> str | None:
        """``query_poi`` for a place; its first location as ``"lng,lat"``, or None."""
        found = answers.places(self._call(session, "query_poi", self._poi_arguments(session, keywords)))
        if found and found[0].location:
            return f"{found[0].location[0]:.6f},{found[0].location[1]:.6f}"
        return None

    @staticmethod
    def _call(session: EpisodeSession, tool: str, arguments: dict[str, Any]) -> Any:
        """Call a tool; the observation parsed as JSON, or None when the call came back as an error."""
        observation = session.call(tool, arguments)
        if session.steps[-1].error is not None:
            return None
        try:
            return json.loads(observation)
        except ValueError:
            return None

    def play(self, session: EpisodeSession) -> None:
        parse = parse_query(session.query)
        if self.scenario is not None:
            parse.scenario = self.scenario
        if parse.scenario == "Route-Constrained Planning":
            parse.mode = "transit"
        elif parse.scenario in ("Option-Constrained Route Planning", "Arrival/Departure Time Query"):
            parse.mode = "driving"
        here = str(session.context.get("user_current_location") or "")
        city = session.context.get("city") or ""
        slots: dict[str, Any] = {}
        plan: list[str] = []
        route_index: int | None = None
        answer = "抱歉，没有查到相关信息。"
        if parse.scenario == "Weather Query":
            response = self._call(session, "weather_query",
                                  {"city": city or "北京市", "need_forecast": parse.forecast})
            answer = answers.describe_weather(response)
            slots, plan = {"city": city, "forecast": parse.forecast}, ["weather"]
        elif parse.scenario == "Traffic Info Query" and parse.road:
            response = self._call(session, "traffic_status", {"name": parse.road, "city": city or "北京市"})
            answer = answers.describe_traffic(response, parse.road)
            slots, plan = {"road": parse.road, "city": city}, ["locate", "traffic"]
        elif parse.scenario == "Geolocation Query" and here:
            lng, lat = here.split(",")[:2]
            response = self._call(session, "reverse_geocoding", {"longitude": lng, "latitude": lat})
            answer, slots, plan = answers.describe_geocode(response), {"location": here}, ["locate"]
        elif parse.scenario == "Nearby Query" and parse.keyword:
            center = self._lookup(session, parse.center) if parse.center else here
            if center:
                response = self._call(session, "search_around_poi",
                                      {"location": center, "keywords": parse.keyword})
                answer = answers.describe_nearby(response)
            slots = {"center": parse.center or "current_location", "keyword": parse.keyword}
            plan = ["locate", "nearby search"]
        elif parse.destination and parse.scenario not in ("POI Query", "Weather Query", "Traffic Info Query",
                                                          "Geolocation Query", "Nearby Query"):
            answer, route_index, slots, plan = self._route(session, parse, here)
        else:
            keyword = parse.keyword or session.query
            response = self._call(session, "query_poi", self._poi_arguments(session, keyword))
            answer = answers.describe_poi(response)
            slots, plan = {"keyword": keyword}, ["locate"]
            parse.scenario = "POI Query"
        if city:
            slots.setdefault("city", city)
        day = re.search(r"今天|明天|后天|大后天", session.query)
        if day and parse.scenario in ("Weather Query", "Arrival/Departure Time Query"):
            slots["time"] = day.group(0)
        if not session.done:
            session.finish(answer, intent=parse.scenario,
                           slots={k: v for k, v in slots.items() if v not in (None, "", [])},
                           plan=plan, route_index=route_index)

    def _route(self, session: EpisodeSession, parse: Parse,
               here: str) -> tuple[str, int | None, dict[str, Any], list[str]]:
        origin = self._lookup(session, parse.origin) if parse.origin else here
        waypoints = [w for w in (self._lookup(session, name) for name in parse.waypoints) if w]
        destination = self._lookup(session, parse.destination) if parse.destination else None
        slots = {"origin": parse.origin or "current_location", "destination": parse.destination,
                 "waypoints": parse.waypoints, "travel_mode": parse.mode, "strategy": parse.strategies,
                 "excluded_lines": parse.excluded_lines}
        plan = ["locate", "route planning"]
        if parse.waypoints:
            plan.append("waypoint route planning")
        if parse.strategies or parse.excluded_lines:
            plan.append("preference route planning")
        if parse.scenario == "Arrival/Departure Time Query":
            plan.append("time calculation")
        if not origin or not destination or session.done:
            return "没有找到起点或终点。", None, slots, plan
        tool = {"driving": "driving_route", "walking": "walking_route", "bicycling": "bicycling_route",
                "transit": "bus_route"}[parse.mode]
        args: dict[str, Any] = {"origin": origin, "destination": destination}
        if tool == "driving_route" and parse.strategies:
            args["strategy"] = parse.strategies[:2]
        if tool == "driving_route" and waypoints:
            args["waypoints"] = waypoints
        response = self._call(session, tool, args)
        index = 0
        if parse.excluded_lines:
            for choice in answers.route_choices(response):
                if not any(answers.rides_line(line, excluded)
                           for line in choice.lines for excluded in parse.excluded_lines):
                    index = choice.index
                    break
        if parse.scenario == "Arrival/Departure Time Query":
            answer = answers.describe_departure(session.query, session.context, response, index)
            return answer, index, slots, plan
        return answers.describe_route(response, index), index, slots, plan
