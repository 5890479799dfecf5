"""Audit of gold labels: episodes whose gold contradicts itself or lacks the evidence to score.

``audit_episodes(episodes) -> list[AuditFinding]``; each finding has ``episode_id``, ``kind``,
``detail`` and ``blocking`` (True when even a perfect agent cannot be scored correctly on
the episode, so scorecards should exclude it; False for label noise worth knowing about).

Kinds:

=============================  ========  ====================================================
kind                           blocking  meaning
=============================  ========  ====================================================
``excluded_line_requested``    yes       an excluded transit line is one the query asks to take
                                         (``从双井坐地铁10号线外环到中关村`` with ``不要10号线``)
``matched_transit_excluded``   yes       ``matched_transit_index`` points at a transit riding an
                                         excluded line
``matched_transit_missing``    yes       ``matched_transit_index`` is outside the transits list
``truncated_evidence``         yes       a truncated response lost what the answer depends on
                                         (the matched transit, or every transit avoiding the
                                         excluded lines)
``missing_evidence``           yes       the call the answer depends on has no recorded response,
                                         or the response is empty (no routes, no weather data,
                                         unknown traffic state)
``origin_not_current``         no        the query's origin is "my location" but the gold origin
                                         was geocoded more than 1 km from the user
``duration_mismatch``          no        the ``duration`` column disagrees (>5 %) with route 0
``invalid_gold_call``          no        a gold call fails the tool schema
=============================  ========  ====================================================
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Iterable

from mobility_env.episode import Episode
from mobility_env.geo import haversine_m
from mobility_env.tools import validate_call

from .evidence import route_count, route_options, traffic_facts, weather_facts
from .slots import is_current_location, point_of
from .units import arabize, parse_durations, within_tolerance
from .verify_route import gold_route_call, is_route_tool, uses_excluded_line

_NEGATION = re.compile(r"不要|不想|不坐|不乘|不走|别坐|别乘|避开|除了|不用|不搭")
_EVIDENCE_TOOL = {"POI Query": "query_poi", "Geolocation Query": "reverse_geocoding",
                  "Nearby Query": "search_around_poi", "Weather Query": "weather_query",
                  "Traffic Info Query": "traffic_status"}
BLOCKING_KINDS = frozenset({"excluded_line_requested", "matched_transit_excluded", "matched_transit_missing",
                            "truncated_evidence", "missing_evidence"})


@dataclass(frozen=True)
class AuditFinding:
    episode_id: str
    kind: str
    detail: str

    @property
    def blocking(self) -> bool:
        return self.kind in BLOCKING_KINDS

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "blocking": self.blocking}


def _requested_lines(query: str, excluded: list[str]) -> list[str]:
    """Excluded lines the query mentions in a clause without a negation before them."""
    requested = []
    for clause in re.split(r"[，,。.;；!！?？]", query):
        folded = arabize(clause)
        for line in excluded:
            token = re.sub(r"^(地铁|轨道交通)", "", line)
            position = folded.find(token)
            if position < 0:
                continue
            if not _NEGATION.search(folded[:position]):
                requested.append(line)
    return requested


def _matched_index(episode: Episode) -> int | None:
    value = episode.fields.get("matched_transit_index")
    try:
        return int(float(value)) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _audit_route(episode: Episode, findings: list[AuditFinding]) -> None:
    gold = gold_route_call(episode)
    index = next((i for i, c in enumerate(episode.gold_calls) if c is gold), None)
    record = episode.gold_response(index) if index is not None else None
    add = findings.append
    eid = episode.episode_id
    if record is None:
        add(AuditFinding(eid, "missing_evidence", f"gold {gold.name} call has no recorded response"))
        return
    options = route_options(record.response)
    if not options:
        add(AuditFinding(eid, "missing_evidence", f"gold {gold.name} response has no routes"))
        return
    excluded = list(episode.gold_slots.get("excluded_lines") or [])
    requested = _requested_lines(episode.query, excluded)
    if requested:
        add(AuditFinding(eid, "excluded_line_requested",
                         f"excluded {requested} but the query asks to take it: {episode.query!r}"))
    matched = _matched_index(episode)
    count = route_count(record.response)
    if matched is not None:
        if matched >= len(options):
            kind = "truncated_evidence" if record.truncated and count is not None and matched < count else \
                "matched_transit_missing"
            add(AuditFinding(eid, kind, f"matched_transit_index {matched} but only {len(options)} transits recorded"
                                        + (f" of {count} (response truncated)" if record.truncated else "")))
        elif excluded and uses_excluded_line(options[matched], excluded):
            add(AuditFinding(eid, "matched_transit_excluded",
                             f"matched transit {matched} rides {list(options[matched].lines)}, excluded {excluded}"))
    if excluded and gold.name == "bus_route" and all(uses_excluded_line(o, excluded) for o in options):
        kind = "truncated_evidence" if record.truncated else "missing_evidence"
        if not any(f.kind == kind for f in findings if f.episode_id == eid):
            add(AuditFinding(eid, kind, f"no recorded transit avoids {excluded}"
                                        + (" (response truncated)" if record.truncated else "")))
    origin = episode.fields.get("query_start_poi")
    gold_origin, user = point_of(gold.arguments.get("origin")), point_of(episode.user_location)
    if isinstance(origin, str) and is_current_location(origin) and gold_origin and user and \
            haversine_m(gold_origin, user) > 1000:
        add(AuditFinding(eid, "origin_not_current", f"origin {origin!r} means the user's location but the gold "
                                                    f"origin is {haversine_m(gold_origin, user) / 1000:.1f} km away"))
    stated = parse_durations(str(episode.fields.get("duration") or ""))
    if stated and options[0].duration_s and not within_tolerance(stated[0], options[0].duration_s):
        add(AuditFinding(eid, "duration_mismatch", f"duration column {episode.fields['duration']!r} vs route 0 "
                                                   f"{options[0].duration_s:.0f} s"))


def _audit_info(episode: Episode, findings: list[AuditFinding]) -> None:
    tool = _EVIDENCE_TOOL.get(episode.task_scenario)
    if tool is None:
        return
    indices = [i for i, c in enumerate(episode.gold_calls) if c.name == tool]
    record = episode.gold_response(indices[-1]) if indices else None
    eid = episode.episode_id
    if record is None:
        findings.append(AuditFinding(eid, "missing_evidence", f"no recorded {tool} response"))
        return
    if tool == "weather_query":
        facts = weather_facts(record.response)
        if facts is None or facts.is_empty:
            findings.append(AuditFinding(eid, "missing_evidence", "weather response states no condition/temperature"))
    if tool == "traffic_status":
        facts = traffic_facts(record.response)
        if facts is None or facts.state == "未知":
            findings.append(AuditFinding(eid, "missing_evidence", "traffic response states no traffic state"))


def audit_episode(episode: Episode) -> list[AuditFinding]:
    findings: list[AuditFinding] = []
    for index, call in enumerate(episode.gold_calls):
        errors = validate_call(call.name, call.arguments)
        if errors:
            findings.append(AuditFinding(episode.episode_id, "invalid_gold_call",
                                         f"gold call {index} ({call.name}): " + "; ".join(map(str, errors))))
    if any(is_route_tool(c.name) for c in episode.gold_calls):
        _audit_route(episode, findings)
    else:
        _audit_info(episode, findings)
    return findings


def audit_episodes(episodes: Iterable[Episode]) -> list[AuditFinding]:
    """Findings for every episode, in input order (see the module table)."""
    return [finding for episode in episodes for finding in audit_episode(episode)]


def blocking_episode_ids(findings: Iterable[AuditFinding]) -> set[str]:
    """Ids a scorecard should exclude (episodes with at least one blocking finding)."""
    return {f.episode_id for f in findings if f.blocking}
