"""One registry of tool kinds: everything the project does with a kind of map tool, in one place.

A tool (:data:`mobility_env.tools.TOOLS`) declares its schema — parameters, each with its
validation rule (``ParamSpec.check``) — its kind, travel mode and official response column.
Its kind (:class:`ToolKind`, in :data:`TOOL_KINDS`) holds what tools of that kind share:

* ``canonical``: the canonical request (exact key, fuzzy name, coordinates, options) the
  sandbox matches on (:mod:`mobility_env.canonical`);
* ``compact``: the compact observation of a response (:mod:`mobility_env.mobilitybench.observation`);
* ``match_stages``: the sandbox stages after ``exact`` (:mod:`mobility_env.mobilitybench.sandbox`):
  ``"fuzzy"`` (recorded names), ``"nearest"`` (recorded coordinates), ``"near_name"`` (nearest
  coordinates, then the name must be similar: nearby search);
* ``plan_step``: the atomic plan step a call performs (:mod:`mobility_rewards.mobilitybench.plan`);
* the evidence view the verifier reads is declared by the scoring layer against the same kind
  names (``mobility_env.mobilitybench.evidence.EVIDENCE_VIEWS``), which the kernel may not import.

Adding a tool of an existing kind is one :class:`~mobility_env.tools.ToolSpec`; adding a kind is
one :class:`ToolKind` here plus its evidence view. ``tests/test_toolkinds.py`` fails when a
registered tool or kind lacks any part, and runs every part on the bundled set's recorded calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import observation
from ..canonical import CANONICALIZERS, CanonicalRequest
from ..tools import TOOLS, ToolSpec, canonical_tool_name

MATCH_STAGES = ("fuzzy", "nearest", "near_name")


def _route_step(arguments: dict[str, Any]) -> str:
    if arguments.get("waypoints"):
        return "waypoint_route_planning"
    if arguments.get("strategy") not in (None, "", [], "0", 0):
        return "preference_route_planning"
    return "route_planning"


@dataclass(frozen=True)
class ToolKind:
    """What the tools of one kind share (see the module docstring)."""

    name: str
    canonical: Callable[[str, dict[str, Any]], CanonicalRequest]
    compact: Callable[[Any], Any]
    match_stages: tuple[str, ...]
    plan_step: Callable[[dict[str, Any]], str]

    def __post_init__(self) -> None:
        unknown = set(self.match_stages) - set(MATCH_STAGES)
        if unknown:
            raise ValueError(f"tool kind {self.name!r}: unknown match stage(s) {sorted(unknown)}")


def _fixed(step: str) -> Callable[[dict[str, Any]], str]:
    return lambda arguments: step


TOOL_KINDS: dict[str, ToolKind] = {kind.name: kind for kind in (
    ToolKind("poi", CANONICALIZERS["poi"], observation.compact_poi, ("fuzzy",), _fixed("locate")),
    ToolKind("around", CANONICALIZERS["around"], observation.compact_around, ("near_name",), _fixed("nearby_search")),
    ToolKind("geocode", CANONICALIZERS["geocode"], observation.compact_geocode, ("nearest",), _fixed("locate")),
    ToolKind("weather", CANONICALIZERS["weather"], observation.compact_weather, ("fuzzy",), _fixed("weather")),
    ToolKind("traffic", CANONICALIZERS["traffic"], observation.compact_traffic, ("fuzzy",), _fixed("traffic")),
    ToolKind("route", CANONICALIZERS["route"], observation.compact_route, ("nearest",), _route_step),
)}


def kind_of(tool: str) -> ToolKind:
    """The :class:`ToolKind` of a registered map tool (aliases resolved); ``ValueError`` otherwise."""
    spec = spec_of(tool)
    return TOOL_KINDS[spec.kind]


def spec_of(tool: str) -> ToolSpec:
    name = canonical_tool_name(tool)
    if name is None or TOOLS[name].kind not in TOOL_KINDS:
        raise ValueError(f"not a map tool: {tool!r}")
    return TOOLS[name]
