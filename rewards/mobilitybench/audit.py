"""Audit of gold labels: episodes whose gold contradicts itself or lacks the evidence to score.

``audit_episodes(episodes) -> list[AuditFinding]``; each finding has ``episode_id``, ``kind``,
``detail`` and ``blocking`` (True when even a perfect agent cannot be scored correctly on
the episode, so scorecards should exclude it; False for label noise worth knowing about).

Kinds:

=============================  ========  ====================================================
kind                           blocking  meaning
=============================  ========  ====================================================
``excluded_line_requested``    yes       an excluded transit line is one the query asks to take:
                                         a riding verb right before it (``坐``, ``乘``,
                                         ``换乘``… optionally + ``地铁``/``公交``), no negation
                                         before or after it in the clause, the same line (digits
                                         do not run on: ``1号线`` is not in ``11号线``)
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
``excluded_lines_unreadable``  no        ``llm_ner_ans`` held text that is not a line name (the
                                         loader's ``unparsed_excluded_lines`` repair), or a gold
                                         ``excluded_lines`` item is not one line name (an episode
                                         built by an older parser); such items are left out of
                                         the checks above
=============================  ========  ====================================================

Only real contradictions block: the excluded lines are those
:func:`mobility_env.mobilitybench.official.parse_excluded_lines` reads (``不要1号线不要八通线`` is two
lines, never one sentence), and an item that is not a line name never makes a finding
blocking.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Iterable

from mobility_env.mobilitybench.episode import Episode
from mobility_env.geo import haversine_m
from mobility_env.mobilitybench.official import is_line_name
from mobility_env.tools import validate_call

from mobility_env.mobilitybench.evidence import route_count, route_options, served, traffic_facts, weather_facts
from .slots import canonical_line, fold_text, is_current_location, point_of
from ..units import arabize, parse_durations, within_tolerance
from .verify_route import gold_route_call, is_route_tool, uses_excluded_line

_NEGATION = re.compile(r"不要|不想|不坐|不乘|不走|别坐|别乘|避开|除了|不用|不搭|不经|不换|绕开|避免|排除|算了|不行")
# a riding verb right before the line (text is folded: no spaces), e.g. "坐地铁" + "10号线"
_RIDE_BEFORE = re.compile(r"(?:乘坐|搭乘|换乘|转乘|改乘|坐|乘|搭|转|换|take|ride|via)"
                          r"(?:地铁|轨道交通|公交车?|巴士|the|metro|subway|bus)?$")
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


def _line_positions(folded: str, token: str) -> list[int]:
    """Where ``token`` occurs in ``folded`` as the same line (digits do not run on across it)."""
    positions = []
    for match in re.finditer(re.escape(token), folded):
        before = folded[match.start() - 1] if match.start() else ""
        after = folded[match.end()] if match.end() < len(folded) else ""
        if not (before.isdigit() or (token[-1].isdigit() and after.isdigit())):
            positions.append(match.start())
    return positions


def _requested_lines(query: str, excluded: list[str]) -> list[str]:
    """Excluded lines the query asks to take (see ``excluded_line_requested`` in the table)."""
    requested = []
    for clause in re.split(r"[，,。.;；!！?？]", query):
        folded = fold_text(arabize(clause.lower()))
        for line in excluded:
            token = canonical_line(line)
            if not token or line in requested:
                continue
            for position in _line_positions(folded, token):
                before, after = folded[:position], folded[position + len(token):]
                if _RIDE_BEFORE.search(before) and not _NEGATION.search(before) and not _NEGATION.search(after):
                    requested.append(line)
                    break
    return requested


def _readable_excluded(episode: Episode, findings: list[AuditFinding]) -> list[str]:
    """The gold excluded lines that are line names; a note for anything else."""
    excluded = [str(line) for line in episode.gold_slots.get("excluded_lines") or []]
    unreadable = [line for line in excluded if not is_line_name(line)]
    notes = [r.detail for r in episode.repairs if r.kind == "unparsed_excluded_lines"]
    if unreadable:
        notes.append(f"gold excluded_lines {unreadable} are not line names; left out")
    if notes:
        findings.append(AuditFinding(episode.episode_id, "excluded_lines_unreadable", "; ".join(notes)))
    return [line for line in excluded if line not in unreadable]


def _matched_index(episode: Episode) -> int | None:
    value = episode.fields.get("matched_transit_index")
    try:
        return int(float(value)) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _audit_route(episode: Episode, findings: list[AuditFinding]) -> None:
    gold = gold_route_call(episode)
    assert gold is not None  # audit_episode calls this only when a gold call is to a route tool
    index = next((i for i, c in enumerate(episode.gold_calls) if c is gold), None)
    record = episode.gold_response(index) if index is not None else None
    add = findings.append
    eid = episode.episode_id
    if record is None:
        add(AuditFinding(eid, "missing_evidence", f"gold {gold.name} call has no recorded response"))
        return
    options = route_options(served(record))
    if not options:
        add(AuditFinding(eid, "missing_evidence", f"gold {gold.name} response has no routes"))
        return
    excluded = _readable_excluded(episode, findings)
    requested = _requested_lines(episode.query, excluded)
    if requested:
        add(AuditFinding(eid, "excluded_line_requested",
                         f"excluded {requested} but the query asks to take it: {episode.query!r}"))
    matched = _matched_index(episode)
    count = route_count(served(record))
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
        facts = weather_facts(served(record))
        if facts is None or facts.is_empty:
            findings.append(AuditFinding(eid, "missing_evidence", "weather response states no condition/temperature"))
    if tool == "traffic_status":
        traffic = traffic_facts(served(record))
        if traffic is None or traffic.state == "未知":
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
