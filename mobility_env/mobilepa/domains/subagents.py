"""Sub-agent entry tools: hand a task, with a declared payload, to a specialised downstream agent.

Each :class:`SubAgent` declares its handoff payload once — required and optional fields, each a
:class:`~mobility_env.tools.ParamSpec` with its check, and how a gate compares it (``value``: the whole
value; ``text``: a phrase inside free text, see :mod:`mobility_rewards.mobilepa.delegation_gates`). From it come
the entry tool's OpenAI schema (``required`` lists the required fields) and its code:

* a required field left out (or null) is ``missing_parameter`` naming the fields (``fields``): a detail the
  user has not given, to ask for — not a ``schema_error``, which is kept for values the schema refuses;
* a valid call records the delegation in the ``delegations`` table (``handoff_id`` = a generated
  ``delegation-N``, ``agent`` = the entry tool, ``payload`` = the fields given as canonical JSON, ``status``
  ``queued``, ``created_at`` = the phone's clock) and returns the handoff id. The downstream agent itself is
  outside the sandbox: the sub-agent dimension measures delegation quality (routing and payload), not
  downstream execution.

:data:`SUB_AGENTS` also describes the GUI operator, whose entry tool ``route_to_gui_agent`` (an app and
an instruction, recorded in ``handoffs``) lives in :mod:`.ai_assistant`; :data:`HANDOFF_TOOLS` are the
entry tools registered here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from ...tools import ArgumentError, ParamSpec, check_short_text
from ...trajectory import ErrorKind
from ..catalogue import PHONE_TOOLS, Feedback, PhoneTool, failure, success
from ..params import check_clock, check_datetime, int_range, one_of, text_up_to
from ..state import PhoneState
from . import ai_assistant  # noqa: F401  (registers route_to_gui_agent, the GUI operator described here)

DOMAIN = "sub_agents"  # an action category of its own (catalogue.CAPABILITY_DOMAINS); the GUI operator's entry
# tool, route_to_gui_agent, stays in ai_assistant
RIDE_CLASSES = ("economy", "comfort", "premium", "xl")
TICKET_KINDS = ("train", "flight", "coach")
SEAT_CLASSES = ("economy", "premium", "business", "first")
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")


def check_date(name: str, value: Any) -> ArgumentError | None:
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        return ArgumentError(name, "format", f"expected a date 'YYYY-MM-DD', got {value!r:.40}")
    return None


def check_when(name: str, value: Any) -> ArgumentError | None:
    """``now`` or a moment ``'YYYY-MM-DD HH:MM'``."""
    if value == "now" or check_datetime(name, value) is None:
        return None
    return ArgumentError(name, "format", f"expected 'now' or 'YYYY-MM-DD HH:MM', got {value!r:.40}")


@dataclass(frozen=True)
class PayloadField:
    """One field of a handoff payload: its parameter (type, description, check), whether the handoff needs it,
    and how a gate compares it with accepted values."""

    param: ParamSpec
    required: bool
    match: Literal["value", "text"] = "value"

    @property
    def name(self) -> str:
        return self.param.name


@dataclass(frozen=True)
class SubAgent:
    """A downstream agent: its entry tool's name, what it does (``summary``) and its declared payload."""

    tool: str
    summary: str
    fields: tuple[PayloadField, ...]

    @property
    def description(self) -> str:
        """The entry tool's description: the summary and the payload's required and optional fields."""
        return f"{self.summary} Payload: {', '.join(self.required)} (required); {', '.join(self.optional)}."

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if not f.required)

    def field(self, name: str) -> PayloadField | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class HandoffTool(PhoneTool):
    """A sub-agent entry tool: its parameters are all optional to the validator (a missing required field
    reaches the code, which answers ``missing_parameter``), while its OpenAI schema declares
    ``payload_required``."""

    payload_required: tuple[str, ...] = ()

    def openai_schema(self) -> dict[str, Any]:
        schema = super().openai_schema()
        schema["function"]["parameters"]["required"] = list(self.payload_required)
        return schema


def _param(name: str, kind: str, description: str, check: Any, enum: tuple[str, ...] | None = None) -> ParamSpec:
    role = "option" if enum else ("number" if kind == "integer" else "text")
    return ParamSpec(name, kind, description, False, role, enum=enum, check=check)  # type: ignore[arg-type]


def _place(name: str, description: str, required: bool = True) -> PayloadField:
    return PayloadField(_param(name, "string", description, check_short_text), required)


def _date(name: str, description: str, required: bool = True) -> PayloadField:
    return PayloadField(_param(name, "string", f"{description} ('YYYY-MM-DD')", check_date), required)


def _clock(name: str, description: str) -> PayloadField:
    return PayloadField(_param(name, "string", f"{description} ('HH:MM', 24-hour)", check_clock), False)


def _count(name: str, description: str, high: int) -> PayloadField:
    return PayloadField(_param(name, "integer", f"{description} (1..{high})", int_range(1, high)), False)


def _choice(name: str, description: str, allowed: tuple[str, ...], required: bool = False) -> PayloadField:
    return PayloadField(_param(name, "string", description, one_of(*allowed), enum=allowed), required)


def _free_text(name: str, description: str, required: bool = False) -> PayloadField:
    return PayloadField(_param(name, "string", f"{description} (at most 300 characters)", text_up_to(300)), required,
                        "text")


_GUI_PARAMS = {p.name: p for p in PHONE_TOOLS["route_to_gui_agent"].params}
#: Every downstream agent, by entry tool (the GUI operator's tool is registered in ``ai_assistant``).
SUB_AGENTS: dict[str, SubAgent] = {a.tool: a for a in (
    SubAgent("route_to_gui_agent", PHONE_TOOLS["route_to_gui_agent"].description, (  # its params, declared there
        PayloadField(_GUI_PARAMS["app"], True), PayloadField(_GUI_PARAMS["instruction"], True, "text"))),
    SubAgent("route_to_ride_agent", "Hand a ride to the ride-hailing agent, which books the car in the ride app.", (
                 _place("pickup", "where the car picks the user up (a place name or address)"),
                 _place("destination", "where the ride goes (a place name or address)"),
                 PayloadField(_param("time", "string", "when: 'now' or 'YYYY-MM-DD HH:MM'", check_when), False),
                 _choice("ride_class", "the car class", RIDE_CLASSES),
                 _count("passengers", "riders", 6),
                 _free_text("note", "anything the driver should know"))),
    SubAgent("route_to_ticket_agent", "Hand a trip to the ticketing agent, which books train, flight or coach "
             "tickets.", (
                 _choice("kind", "the ticket", TICKET_KINDS, required=True),
                 _place("origin", "the departure city or station"),
                 _place("destination", "the arrival city or station"),
                 _date("date", "the travel date"),
                 _count("passengers", "travellers", 9),
                 _choice("seat_class", "the seat class", SEAT_CLASSES),
                 _clock("depart_after", "the earliest departure"),
                 _free_text("note", "other wishes (a window seat, a direct connection)"))),
    SubAgent("route_to_movie_agent", "Hand a cinema booking to the movie-ticket agent.", (
                 _place("title", "the film"),
                 _date("date", "the day of the showing"),
                 _place("cinema", "the cinema", required=False),
                 _clock("showtime", "the showing's start"),
                 _count("seats", "tickets", 8),
                 _free_text("note", "seat wishes"))),
    SubAgent("route_to_food_agent", "Hand a meal order to the food-delivery agent.", (
                 _free_text("items", "what to order, with quantities", required=True),
                 _place("address", "where to deliver"),
                 _place("restaurant", "the restaurant", required=False),
                 _clock("deliver_by", "the latest delivery time"),
                 _free_text("note", "for the restaurant or the rider (no chilli, call on arrival)"))),
    SubAgent("route_to_hotel_agent", "Hand a hotel booking to the hotel agent.", (
                 _place("city", "the city"),
                 _date("check_in", "the arrival date"),
                 _date("check_out", "the departure date, after check_in"),
                 _count("guests", "guests", 8),
                 _count("rooms", "rooms", 5),
                 _place("area", "the district or landmark to stay near", required=False),
                 _place("hotel", "a particular hotel", required=False),
                 _free_text("note", "other wishes (breakfast, a quiet room)"))),
)}


def _new_handoff_id(state: PhoneState) -> str:
    # 'delegation-N': never one of the GUI handoffs' 'handoff-N' ids; moved past any id S_0 plants in delegations
    while True:
        candidate = state.next_id("delegation")
        if state.one("SELECT 1 AS hit FROM delegations WHERE handoff_id = ?", (candidate,)) is None:
            return candidate


def _consistency_error(agent: SubAgent, payload: dict[str, Any]) -> str | None:
    """What makes a complete payload meaningless (the same place at both ends, a stay of no nights)."""
    ends = {"route_to_ride_agent": ("pickup", "destination"), "route_to_ticket_agent": ("origin", "destination")}
    if agent.tool in ends:
        start, end = (payload[name].casefold() for name in ends[agent.tool])
        if start == end:
            return f"{ends[agent.tool][0]} and destination are the same place"
    if agent.tool == "route_to_hotel_agent" and payload["check_out"] <= payload["check_in"]:
        return "check_out must be after check_in"
    return None


def hand_off(agent: SubAgent, state: PhoneState, args: dict[str, Any]) -> Feedback:
    """The code of a registered entry tool (see the module docstring)."""
    missing = [name for name in agent.required if args.get(name) is None]
    if missing:
        return failure(ErrorKind.MISSING_PARAMETER, f"{agent.tool}: the handoff needs {', '.join(missing)} (ask "
                       "the user)", fields=missing, required=list(agent.required))
    payload = {f.name: args[f.name].strip() if isinstance(args[f.name], str) else args[f.name]
               for f in agent.fields if args.get(f.name) is not None}
    problem = _consistency_error(agent, payload)
    if problem is not None:
        return failure(ErrorKind.SCHEMA_ERROR, f"{agent.tool}: {problem}", fields=[])
    handoff_id = _new_handoff_id(state)
    state.execute("INSERT INTO delegations (handoff_id, agent, payload, status, created_at) VALUES (?, ?, ?, "
                  "'queued', ?)", (handoff_id, agent.tool, json.dumps(payload, ensure_ascii=False, sort_keys=True),
                                   state.setting("clock", "")))
    return success(handoff_id=handoff_id, agent=agent.tool, status="queued", payload=payload)


def _register(agent: SubAgent) -> None:
    if agent.tool in PHONE_TOOLS:
        raise ValueError(f"tool {agent.tool!r} is registered twice")

    def run(state: PhoneState, args: dict[str, Any]) -> Feedback:
        return hand_off(agent, state, args)

    PHONE_TOOLS[agent.tool] = HandoffTool(agent.tool, DOMAIN, agent.description, tuple(f.param for f in agent.fields),
                                          run, None, ("delegations", "counters"), payload_required=agent.required)


#: The entry tools registered here (every sub-agent but the GUI operator).
HANDOFF_TOOLS: tuple[str, ...] = tuple(name for name in SUB_AGENTS if name != "route_to_gui_agent")
for _name in HANDOFF_TOOLS:
    _register(SUB_AGENTS[_name])
