"""The reader's vocabularies, kept as data (``mobility_env/reading/vocab/*.json``), each naming its source:

* :func:`travel_modes` — every way a user names a travel mode, by family, and which route tools each family describes;
* :func:`weather_phenomena` — the Amap weather API's phenomenon table, with a compatibility family per phenomenon;
* :func:`traffic_phrases` — the Amap traffic-status codes and the phrases that state them;
* :func:`units` — distance, duration and temperature units in both languages;
* :func:`step_cues` — the Amap route steps' actions and orientations, which mark a clause as one step.

Each file is read once, when first asked for (the claim readers ask when they build their tables); a missing or
broken file raises, it never reads as empty. A test checks that the synthetic world and the real sample use nothing
outside them (every condition, state and unit of the evidence is known).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

from .lexicon import Lexicon


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files("mobility_env.reading").joinpath("vocab").joinpath(name).read_text(encoding="utf-8")
    return dict(json.loads(text))


class ModeFamily(NamedTuple):
    name: str
    route_modes: frozenset[str]
    spellings: tuple[str, ...]


@cache
def travel_modes() -> tuple[ModeFamily, ...]:
    """The travel-mode families (walking, bicycling, two_wheeler, driving, taxi, bus, metro, rail, flight, ferry)."""
    data = _load("travel_modes.json")["families"]
    return tuple(ModeFamily(name, frozenset(entry["route_modes"]), tuple(entry["zh"]) + tuple(entry["en"]))
                 for name, entry in data.items())


@cache
def mode_place_suffixes() -> tuple[str, ...]:
    """Words that, right after a mode word, make it a place's name (火车站, 地铁口, 飞机场)."""
    return tuple(_load("travel_modes.json")["place_suffixes"])


class Phenomenon(NamedTuple):
    label: str
    family: str
    spellings: tuple[str, ...]  # the words answers use; empty for a phenomenon read only in the evidence


@cache
def weather_phenomena() -> tuple[Phenomenon, ...]:
    """Every phenomenon of the Amap table. A composite label (``小雨-中雨``) has no spelling of its own: the evidence
    reader splits it; an alternative label (``强风/劲风``) is spelled by its parts."""
    out = []
    for label, entry in _load("weather_phenomena.json")["phenomena"].items():
        own = () if "-" in label or "/" in label or entry.get("answer_word", True) is False else (label,)
        spellings = () if entry.get("answer_word", True) is False else own + tuple(entry.get("spellings", ()))
        out.append(Phenomenon(label, str(entry["family"]), spellings))
    return tuple(out)


@cache
def weather_generics() -> dict[str, str]:
    """Labels that name a whole family (雨 is compatible with every rain)."""
    return dict(_load("weather_phenomena.json")["generic"])


@cache
def traffic_phrases() -> dict[str, frozenset[int]]:
    """phrase -> the traffic-state codes it allows (1 畅通, 2 缓行, 3 拥堵, 4 严重拥堵)."""
    out: dict[str, frozenset[int]] = {}
    for entry in _load("traffic_states.json")["phrases"]:
        for phrase in entry["zh"] + entry["en"]:
            out[phrase] = frozenset(entry["states"])
    return out


@cache
def traffic_state_names() -> dict[int, str]:
    return {int(code): name for code, name in _load("traffic_states.json")["states"].items()}


class Unit(NamedTuple):
    kind: str  # distance, duration, temperature
    spelling: str
    factor: float  # base units (m, s, °C) per stated unit
    offset: float  # added to the stated number before the factor
    guard: str  # a pattern that must match right after the word ("" for none)


@cache
def units() -> tuple[Unit, ...]:
    """Every unit spelling, longest first within each kind."""
    data = _load("units.json")
    out = [Unit(kind, spelling, float(entry["factor"]), float(entry.get("offset", 0)), entry.get("guard", ""))
           for kind in ("distance", "duration", "temperature") for entry in data[kind]
           for spelling in entry["spellings"]]
    return tuple(sorted(out, key=lambda u: (u.kind, -len(u.spelling))))


def units_of(kind: str) -> tuple[Unit, ...]:
    return tuple(u for u in units() if u.kind == kind)


@cache
def step_cues() -> Lexicon[str]:
    """The words that mark a clause as one step of a route (``右转``, ``向东北行驶``, ``进入匝道``, ``turn left``,
    ``head east``): a quantity there is a step's, not the route's total."""
    data = _load("route_steps.json")
    headings = ["向" + o + v for o in data["orientations"] for v in data["moving_verbs"]]
    return Lexicon((word, "step") for word in [*data["actions"], *headings, *data["en"]])


@cache
def weather_lexicon() -> Lexicon[Phenomenon]:
    """Every spelling of every phenomenon (and the family generics: 雨, 雪, 沙尘 …), found in one pass."""
    generic = {"沙尘": Phenomenon("沙尘", "dust", ("沙尘", "sand"))}
    entries = [(word, p) for p in weather_phenomena() for word in p.spellings]
    entries += [(word, p) for p in generic.values() for word in p.spellings]
    return Lexicon(entries)


@cache
def traffic_lexicon() -> Lexicon[frozenset[int]]:
    """Every traffic phrase, with the state codes it allows, found in one pass (the longest phrase wins)."""
    return Lexicon(traffic_phrases().items())


@cache
def not_weather() -> Lexicon[str]:
    """Words holding a phenomenon's spelling that state no weather (雨伞, 雪碧, rainbow, hail a cab)."""
    return Lexicon((word, word) for word in _load("weather_phenomena.json")["not_weather"])
