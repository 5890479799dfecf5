"""Parameter rules of phone tools (each a ``ParamSpec.check``: ``(name, value) -> ArgumentError | None``).

Patterns are matched in full (``fullmatch``): a trailing newline is not a valid time or number.
:func:`sample_argument` draws a value a format rule accepts, for ``MobilePA-v0``'s action space."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Callable

import numpy as np

from ..tools import (BUS_STRATEGIES, DRIVING_STRATEGIES, MAX_DRIVING_STRATEGIES, MAX_WAYPOINTS, ArgumentError,
                     ParamSpec, check_coordinate, check_coordinate_list, check_driving_strategies, check_short_text)
from ..mobilitybench.tool_samples import sample_coordinate, sample_driving_strategies, sample_waypoints

Check = Callable[[str, Any], "ArgumentError | None"]
_CLOCK = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
_DAY = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_DATETIME = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d$")
_PHONE = re.compile(r"^\+?[0-9][0-9 -]{2,22}$")
_FREQUENCY = re.compile(r"^(FM|AM) (\d{2,4}(?:\.\d)?)$")
#: Broadcast bands a phone's radio tunes: FM 87.5–108.0 MHz, AM 530–1700 kHz.
BANDS = {"FM": (87.5, 108.0), "AM": (530.0, 1700.0)}


def check_bool(name: str, value: Any) -> ArgumentError | None:
    if isinstance(value, bool):
        return None
    return ArgumentError(name, "type", f"expected true or false, got {value!r:.40}")


def int_range(low: int, high: int) -> Check:
    def check(name: str, value: Any) -> ArgumentError | None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return ArgumentError(name, "range", f"expected an integer in {low}..{high}, got {value!r:.40}")
        return None
    return check


def one_of(*allowed: str) -> Check:
    def check(name: str, value: Any) -> ArgumentError | None:
        if value not in allowed:
            return ArgumentError(name, "enum", f"expected one of {', '.join(allowed)}, got {value!r:.40}")
        return None
    return check


def check_clock(name: str, value: Any) -> ArgumentError | None:
    if not isinstance(value, str) or not _CLOCK.fullmatch(value):
        return ArgumentError(name, "format", f"expected a 24-hour time 'HH:MM', got {value!r:.40}")
    return None


def check_datetime(name: str, value: Any) -> ArgumentError | None:
    if not isinstance(value, str) or not _DATETIME.fullmatch(value):
        return ArgumentError(name, "format", f"expected 'YYYY-MM-DD HH:MM', got {value!r:.40}")
    return None


def check_day(name: str, value: Any) -> ArgumentError | None:
    """A calendar day ``YYYY-MM-DD`` that exists (no 2026-02-30)."""
    if isinstance(value, str) and _DAY.fullmatch(value):
        try:
            dt.date.fromisoformat(value)
            return None
        except ValueError:
            pass
    return ArgumentError(name, "format", f"expected a day 'YYYY-MM-DD', got {value!r:.40}")


def text_list(low: int, high: int, max_length: int = 200) -> Check:
    """``low``..``high`` distinct non-empty strings of at most ``max_length`` characters each."""
    def check(name: str, value: Any) -> ArgumentError | None:
        if not isinstance(value, list) or not low <= len(value) <= high:
            return ArgumentError(name, "items", f"expected a list of {low}..{high} strings, got {value!r:.40}")
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip() or len(item) > max_length:
                return ArgumentError(name, "items", f"item {i}: expected a non-empty string of at most {max_length} "
                                     f"characters, got {item!r:.40}")
        if len(set(value)) < len(value):
            return ArgumentError(name, "items", "the list names an item twice")
        return None
    return check


def check_phone(name: str, value: Any) -> ArgumentError | None:
    digits = sum(c.isdigit() for c in value) if isinstance(value, str) else 0
    if not isinstance(value, str) or not _PHONE.fullmatch(value) or not 3 <= digits <= 15:
        return ArgumentError(name, "format", f"expected a phone number of 3..15 digits (spaces, dashes and a "
                             f"leading + allowed), got {value!r:.40}")
    return None


def check_frequency(name: str, value: Any) -> ArgumentError | None:
    match = _FREQUENCY.fullmatch(value) if isinstance(value, str) else None
    if match is None or not BANDS[match.group(1)][0] <= float(match.group(2)) <= BANDS[match.group(1)][1]:
        return ArgumentError(name, "format", f"expected 'FM 87.5'..'FM 108.0' or 'AM 530'..'AM 1700', "
                             f"got {value!r:.40}")
    return None


def text_up_to(max_length: int) -> Check:
    """A non-empty string of at most ``max_length`` characters."""
    def check(name: str, value: Any) -> ArgumentError | None:
        if not isinstance(value, str) or not value.strip():
            return ArgumentError(name, "type", f"expected a non-empty string, got {value!r:.40}")
        if len(value) > max_length:
            return ArgumentError(name, "max_length", f"at most {max_length} characters, got {len(value)}")
        return None
    return check


def int_one_of(*allowed: int) -> Check:
    def check(name: str, value: Any) -> ArgumentError | None:
        if isinstance(value, bool) or value not in allowed:
            return ArgumentError(name, "enum", f"expected one of {', '.join(map(str, allowed))}, got {value!r:.40}")
        return None
    return check


def text(name: str, description: str, required: bool = True) -> ParamSpec:
    return ParamSpec(name, "string", description, required, "text", check=check_short_text)


def flag(name: str, description: str, required: bool = True) -> ParamSpec:
    return ParamSpec(name, "boolean", description, required, "flag", check=check_bool)


def integer(name: str, description: str, low: int, high: int, required: bool = True) -> ParamSpec:
    return ParamSpec(name, "integer", f"{description} ({low}..{high})", required, "number", check=int_range(low, high))


def choice(name: str, description: str, allowed: tuple[str, ...], required: bool = True) -> ParamSpec:
    return ParamSpec(name, "string", description, required, "option", enum=allowed, check=one_of(*allowed))


def clock(name: str, description: str, required: bool = True) -> ParamSpec:
    return ParamSpec(name, "string", f"{description} ('HH:MM', 24-hour)", required, "text", check=check_clock)


def moment(name: str, description: str, required: bool = True) -> ParamSpec:
    return ParamSpec(name, "string", f"{description} ('YYYY-MM-DD HH:MM')", required, "text", check=check_datetime)


def passage(name: str, description: str, required: bool = True, max_length: int = 2000) -> ParamSpec:
    """Free text longer than :func:`text` allows (a note's body, a memory)."""
    return ParamSpec(name, "string", f"{description} (at most {max_length} characters)", required, "text",
                     check=text_up_to(max_length))


def day(name: str, description: str, required: bool = True) -> ParamSpec:
    return ParamSpec(name, "string", f"{description} ('YYYY-MM-DD')", required, "text", check=check_day)


def names(name: str, description: str, low: int, high: int) -> ParamSpec:
    """A list of ``low``..``high`` distinct ids or names (the members of a group chat)."""
    return ParamSpec(name, "array", f"{description} ({low}..{high} distinct items)", True, "text",
                     items={"type": "string", "maxLength": 200}, check=text_list(low, high))


def phone(name: str, description: str, required: bool = True) -> ParamSpec:
    return ParamSpec(name, "string", f"{description} (digits; spaces, dashes and a leading + allowed)", required,
                     "text", check=check_phone)


def frequency(name: str, description: str, required: bool = True) -> ParamSpec:
    return ParamSpec(name, "string", f"{description} ('FM 97.4' or 'AM 1008')", required, "text",
                     check=check_frequency)


def integer_of(name: str, description: str, allowed: tuple[int, ...], required: bool = True) -> ParamSpec:
    """An integer from a fixed set (refresh rates, timeouts): the set is in the description."""
    return ParamSpec(name, "integer", f"{description} (one of {', '.join(map(str, allowed))})", required, "number",
                     check=int_one_of(*allowed))


def coordinate(name: str, description: str, required: bool = True) -> ParamSpec:
    """A ``'lng,lat'`` point, checked as the map tools check theirs (:func:`mobility_env.tools.check_coordinate`)."""
    return ParamSpec(name, "string", f"{description} ('lng,lat', e.g. '116.397428,39.90923')", required, "coordinate",
                     check=check_coordinate)


def waypoints(name: str, description: str, required: bool = False) -> ParamSpec:
    return ParamSpec(name, "array", f"{description} (up to {MAX_WAYPOINTS} 'lng,lat' points, in order)", required,
                     "coordinate_list", items={"type": "string"}, check=check_coordinate_list)


def driving_preferences(name: str, description: str, required: bool = False) -> ParamSpec:
    """Up to two driving strategies of :data:`mobility_env.tools.DRIVING_STRATEGIES` (English aliases accepted)."""
    allowed = ", ".join(dict.fromkeys(DRIVING_STRATEGIES))
    return ParamSpec(name, "array", f"{description} (up to {MAX_DRIVING_STRATEGIES} of: {allowed})", required,
                     "option", items={"type": "string"}, check=check_driving_strategies)


def transit_strategy(name: str, description: str, required: bool = False) -> ParamSpec:
    codes = tuple(BUS_STRATEGIES)
    return ParamSpec(name, "string", f"{description} (" + ", ".join(f"{k}={v}" for k, v in BUS_STRATEGIES.items())
                     + ")", required, "option", enum=codes, check=one_of(*codes))


def sample_argument(param: ParamSpec, rng: np.random.Generator) -> Any:
    """A value ``param``'s rule accepts, for the format rules its JSON schema does not spell out (clock times,
    days, dates, phone numbers, radio frequencies, coordinates, driving strategies); None for the others, which the
    action space draws from the schema (:func:`mobility_env.spaces.sample_json_value`)."""
    check = param.check
    if check is check_clock:
        return f"{int(rng.integers(24)):02d}:{int(rng.integers(60)):02d}"
    if check is check_datetime:
        return (f"2026-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d} "
                f"{int(rng.integers(24)):02d}:{int(rng.integers(60)):02d}")
    if check is check_day:
        return f"2026-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d}"
    if check is check_phone:
        return "1" + "".join(str(int(digit)) for digit in rng.integers(0, 10, size=10))
    if check is check_frequency:
        return f"FM {rng.uniform(*BANDS['FM']):.1f}"
    if check is check_coordinate:
        return sample_coordinate(rng)
    if check is check_coordinate_list:
        return sample_waypoints(rng)
    if check is check_driving_strategies:
        return sample_driving_strategies(rng)
    return None
