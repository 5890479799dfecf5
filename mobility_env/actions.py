"""Parsing an agent's action into a bounded tool call, or a typed error. Never raises.

Accepted shapes (a JSON string of any of them, or the object itself):

* ``{"name": "query_poi", "arguments": {...}}`` (arguments may also be a JSON string);
* OpenAI's tool call ``{"type": "function", "function": {"name": ..., "arguments": "<json>"}}``
  (``id``, ``index`` and other envelope keys are ignored), or an ``openai``
  ``ChatCompletionMessageToolCall`` (any object with ``model_dump()``).

**Bounds** (:class:`ActionLimits`; ``MobilityEnv`` takes each as a keyword argument). An
action is refused, never cut, when

* its JSON text is over ``max_action_chars`` characters (``invalid_json``, not parsed), or an
  object action would be (its size counted as compact JSON, escapes not counted);
* objects and arrays nest deeper than ``max_depth`` levels (the action object is level 1,
  ``arguments`` level 2: ``{"arguments": {"slots": {"origin": ...}}}`` is 3 levels);
* a string, key or value, is over ``max_string_chars`` characters;
* a number has more than ``max_number_digits`` digits (Python refuses to convert ints of
  more than 4,300 digits, and a 400-digit int does not fit a float), or is NaN or infinite;
* a string holds a lone surrogate (``"\\ud800"``: not Unicode, it cannot be written as UTF-8
  nor hashed into a sandbox key);
* a value is not JSON: a set, bytes, an arbitrary object (tuples count as arrays; subclasses
  of ``str``, ``int``, ``float`` and ``dict``, numpy scalars included, as their base type;
  objects with ``model_dump()`` as what it returns).

These are ``invalid_action`` errors whose message names the place (``arguments.slots.origin``)
and the limit. The arguments of a parsed call are a fresh copy made by that check: mutating
the caller's objects after ``step`` changes nothing the env recorded.

:class:`mobility_env.spaces.ToolCallSpace` is the Gymnasium action space built on the same rules (still
importable from here).
"""

from __future__ import annotations

import json
import math
import numbers
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from .errors import ConfigError
from .trajectory import ErrorKind
from .tools import TOOLS, canonical_tool_name

MAX_ACTION_CHARS = 20_000
MAX_DEPTH = 16
MAX_STRING_CHARS = 10_000
MAX_NUMBER_DIGITS = 40
_DEPTH_CEILING = 200  # the check, json and the scorers recurse once per level: stay far below Python's 1,000

ERROR_TYPES = tuple(kind.value for kind in ErrorKind)  # kept for callers of the tuple; ErrorKind is the vocabulary
_ACTION_HINT = 'send {"name": "<tool>", "arguments": {...}}'


@dataclass(frozen=True)
class ActionLimits:
    """The bounds every action is checked against (see the module docstring)."""

    max_action_chars: int = MAX_ACTION_CHARS
    max_depth: int = MAX_DEPTH
    max_string_chars: int = MAX_STRING_CHARS
    max_number_digits: int = MAX_NUMBER_DIGITS
    _int_bound: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, low, high in (("max_action_chars", 16, 100_000_000), ("max_depth", 2, _DEPTH_CEILING),
                                ("max_string_chars", 1, 100_000_000), ("max_number_digits", 1, 4_000)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
        object.__setattr__(self, "_int_bound", 10 ** self.max_number_digits)

    # json.loads hooks: a number literal is checked before Python converts it
    def _parse_int(self, text: str) -> int:
        self._check_literal(text)
        return int(text)

    def _parse_float(self, text: str) -> float:
        self._check_literal(text)
        value = float(text)
        if not math.isfinite(value):
            raise _Refused(f"the number {text[:24]} is out of the float range")
        return value

    @staticmethod
    def _parse_constant(text: str) -> float:
        raise _Refused(f"{text} is not a JSON number")

    def _check_literal(self, text: str) -> None:
        if len(text) > self.max_number_digits:
            digits = sum(ch.isdigit() for ch in text)
            if digits > self.max_number_digits:
                raise _Refused(f"a number of {digits:,} digits; "
                               f"the limit is max_number_digits={self.max_number_digits}")

    def loads(self, text: str) -> Any:
        """``json.loads`` that checks number literals before converting them (raises ``_Refused``)."""
        return _decoder(self).decode(text)


DEFAULT_LIMITS = ActionLimits()


@lru_cache(maxsize=32)
def _decoder(limits: ActionLimits) -> json.JSONDecoder:
    """One decoder per limits (``json.loads`` with hooks builds a new one per call)."""
    return json.JSONDecoder(parse_int=limits._parse_int, parse_float=limits._parse_float,
                            parse_constant=limits._parse_constant)


class _Refused(Exception):
    """An action broke one of the :class:`ActionLimits`; ``path`` is filled while unwinding."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.path: list[str | int] = []

    def describe(self) -> str:
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{_printable(part, 40)}"
                        for part in reversed(self.path)).lstrip(".")
        return f"{where or 'action'}: {self.message}; {_ACTION_HINT}"


def _printable(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, lone surrogates escaped (messages must be UTF-8)."""
    cut = text[:limit] + ("…" if len(text) > limit else "")
    return cut.encode("utf-8", "backslashreplace").decode("utf-8")


def _type_name(value: Any) -> str:
    """The name of ``value``'s type, read without running the object's code."""
    return type.__getattribute__(type(value), "__name__") if isinstance(type(value), type) else "object"


def _shown(value: Any) -> str:
    """``repr(value)`` cut to 40 characters, or its type's name when the object's ``__repr__`` fails."""
    try:
        return repr(value)[:40]
    except Exception:
        return f"<{_type_name(value)}>"


class _BoundedCopy:
    """Copies a JSON-like value while checking it against the limits (raises ``_Refused``).

    ``budget`` is the compact-JSON size still allowed (``sys.maxsize`` for parsed text, whose
    length was checked before parsing). Recursion is bounded by ``max_depth``.
    """

    __slots__ = ("limits", "left", "copying")

    def __init__(self, limits: ActionLimits, budget: int, *, copying: bool = True):
        self.limits = limits
        self.left = budget
        self.copying = copying  # False: only check a value that is already a fresh parse (json.loads' own objects)

    def _spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise _Refused(f"the action is over max_action_chars={self.limits.max_action_chars} characters as JSON")

    def _string(self, text: str) -> None:
        size = len(text)
        if size > self.limits.max_string_chars:
            raise _Refused(f"a string of {size:,} characters; "
                           f"the limit is max_string_chars={self.limits.max_string_chars}")
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise _Refused(f"lone surrogate U+{ord(text[exc.start]):04X} at character {exc.start}: "
                               "not valid Unicode") from None
        self._spend(size + 3)

    def copy(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            self._string(value)
            return value
        if kind is dict or kind is list or kind is tuple:
            if depth > self.limits.max_depth:
                raise _Refused(f"nested deeper than max_depth={self.limits.max_depth} levels")
            self._spend(2)
            if kind is dict:
                return self._object(value, depth)
            out: list[Any] = []
            for index, item in enumerate(value):
                try:
                    self._spend(1)
                    checked = self.copy(item, depth + 1)
                except _Refused as exc:
                    exc.path.append(index)
                    raise
                if self.copying:
                    out.append(checked)
            return out if self.copying else value
        if kind is int:
            if not -self.limits._int_bound < value < self.limits._int_bound:
                raise _Refused(f"an integer of more than max_number_digits={self.limits.max_number_digits} digits")
            self._spend(value.bit_length() * 77 // 256 + 1)
            return value
        if kind is float:
            if not math.isfinite(value):
                raise _Refused(f"{value} is not a JSON number")
            self._spend(len(float.__repr__(value)))
            return value
        if value is None or kind is bool:
            self._spend(5)
            return value
        return self.copy(self._as_json_type(value), depth)

    def _object(self, value: dict, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, item in value.items():
            try:
                if type(key) is not str:
                    if not isinstance(key, str):
                        raise _Refused(f"object key {_shown(key)} is not a string")
                    key = str.__str__(key)
                self._string(key)
                checked = self.copy(item, depth + 1)
            except _Refused as exc:
                exc.path.append(key if type(key) is str else _shown(key))
                raise
            if self.copying:
                out[key] = checked
        return out if self.copying else value

    @staticmethod
    def _as_json_type(value: Any) -> Any:
        """A subclass of a JSON type as its base type; a pydantic/openai object as its dump. Whatever the object's own
        code raises while it is converted (a dunder or ``__getattr__`` that raises, a ``Fraction`` too large for a
        float) makes the action refused, never an exception out of ``step``."""
        try:
            return _BoundedCopy._convert(value)
        except _Refused:
            raise
        except Exception as exc:  # the object's own code: a bad action, reported
            raise _Refused(f"a {_type_name(value)} could not be read as a JSON value ({type(exc).__name__})") from None

    @staticmethod
    def _convert(value: Any) -> Any:
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            return float(value)
        if isinstance(value, dict):
            return dict(value)
        if isinstance(value, (list, tuple)):
            return list(value)
        dump = getattr(value, "model_dump", None)
        if callable(dump):
            try:
                dumped = dump()
            except Exception as exc:  # an agent's object failing is a bad action, reported, not a crash
                raise _Refused(f"{_type_name(value)}.model_dump() failed ({type(exc).__name__})") from None
            if not isinstance(dumped, dict):
                raise _Refused(f"{_type_name(value)}.model_dump() returned {type(dumped).__name__}, not an object")
            return dumped
        raise _Refused(f"a {_type_name(value)} is not a JSON value")


def bounded_copy(value: Any, limits: ActionLimits = DEFAULT_LIMITS, *, depth: int = 1) -> Any:
    """A checked copy of a JSON-like ``value``; raises ``ValueError`` naming the broken bound."""
    try:
        return _BoundedCopy(limits, limits.max_action_chars).copy(value, depth)
    except _Refused as exc:
        raise ValueError(exc.describe()) from None


def copy_arguments(value: Any) -> Any:
    """A deep copy of already checked arguments (plain dicts, lists and scalars)."""
    kind = type(value)
    if kind is dict:
        return {key: copy_arguments(item) for key, item in value.items()}
    if kind is list:
        return [copy_arguments(item) for item in value]
    return value


@dataclass
class ParsedAction:
    """Either a call (``name`` canonical, ``arguments`` a fresh, bounded copy) or an ``error``."""

    name: str | None = None
    arguments: Any = None
    raw_name: Any = None
    error: dict[str, str] | None = None


_PLAIN = frozenset({str, bytes, bytearray, dict, list, tuple, int, float, bool, type(None)})


def _error(kind: str, message: str, **fields: Any) -> ParsedAction:
    return ParsedAction(error={"type": ErrorKind(kind), "message": message}, **fields)


def parse_action(action: Any, limits: ActionLimits | None = None, *,
                 resolve: Callable[[Any], str | None] | None = None) -> ParsedAction:
    """Parse one action under ``limits`` (default :data:`DEFAULT_LIMITS`); see the module docstring.

    ``resolve`` maps a tool name to the registered name, None when unknown (default: the map tools',
    :func:`~mobility_env.tools.canonical_tool_name`; MobilePA passes its own registry's).
    """
    limits = limits or DEFAULT_LIMITS
    budget = limits.max_action_chars
    if type(action) not in _PLAIN:  # an object of the policy's own: read as text or bytes once, its code contained
        try:
            if isinstance(action, (bytes, bytearray)):
                action = bytes(action)
            elif isinstance(action, str):
                action = str.__str__(action)
        except Exception as exc:
            return _error("invalid_action", f"a {_type_name(action)} could not be read as an action "
                                            f"({type(exc).__name__}); {_ACTION_HINT}")
    if isinstance(action, (bytes, bytearray)):
        if len(action) > 4 * limits.max_action_chars:
            return _error("invalid_json",
                          f"action is {len(action):,} bytes; the limit is {limits.max_action_chars:,} characters")
        try:
            action = action.decode("utf-8")
        except UnicodeDecodeError:
            return _error("invalid_json", "action bytes are not UTF-8")
    if isinstance(action, str):
        if len(action) > limits.max_action_chars:
            return _error("invalid_json",
                          f"action is {len(action):,} characters; the limit is {limits.max_action_chars:,}")
        parsed = _loads(action, limits, "action")
        if isinstance(parsed, ParsedAction):
            return parsed
        if _text_within(action, limits, 1):  # nothing parsed from it can break a cap: no walk needed
            action, budget = parsed, -1
        else:
            action, budget = parsed, sys.maxsize  # the text's length was the size check
    try:  # a parse of text is already the env's own object: checked, not copied
        if budget != -1:
            action = _BoundedCopy(limits, budget, copying=budget != sys.maxsize).copy(action, 1)
    except _Refused as exc:
        return _error("invalid_action", exc.describe())
    if not isinstance(action, dict):
        return _error("invalid_action", f"action must be a JSON object, got {_json_type(action)}; {_ACTION_HINT}")
    arguments_depth = 2
    if isinstance(action.get("function"), dict) or action.get("type") == "function":
        action, arguments_depth = action.get("function"), 3
        if not isinstance(action, dict):
            return _error("invalid_action", "'function' must be an object with 'name' and 'arguments'")
    raw_name = action.get("name")
    if not isinstance(raw_name, str) or not raw_name.strip():
        return _error("invalid_action", "missing tool 'name' (a string)", raw_name=raw_name)
    arguments = action.get("arguments", {})
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        if not arguments.strip():
            arguments = {}
        else:
            parsed = _loads(arguments, limits, "'arguments'", raw_name=raw_name)
            if isinstance(parsed, ParsedAction):
                return parsed
            try:
                if not _text_within(arguments, limits, arguments_depth):
                    _BoundedCopy(limits, sys.maxsize, copying=False).copy(parsed, arguments_depth)
                arguments = parsed
            except _Refused as exc:
                exc.path.append("arguments")
                return _error("invalid_action", exc.describe(), raw_name=raw_name)
    name = (resolve or canonical_tool_name)(raw_name)
    if name is None:
        available = ", ".join(TOOLS) if resolve is None else "see info['tools']"
        return _error("unknown_tool", f"unknown tool {_printable(raw_name, 60)!r}; available: {available}",
                      raw_name=raw_name, arguments=arguments)
    return ParsedAction(name=name, arguments=arguments, raw_name=raw_name)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _text_within(text: str, limits: ActionLimits, depth: int) -> bool:
    """True when nothing ``json.loads(text)`` returns can break a cap, so the parse needs no walk: no string
    in it can be longer than the text, no nesting deeper than its brackets (the parse sits at ``depth``),
    no lone surrogate without one in the text or a ``\\udXXX`` escape (number literals are checked by the
    parser's hooks). Conservative: False sends the parse through :class:`_BoundedCopy`."""
    if len(text) > limits.max_string_chars or text.count("{") + text.count("[") + depth - 1 > limits.max_depth:
        return False
    if _SURROGATE_ESCAPE.search(text):
        return False
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


def _loads(text: str, limits: ActionLimits, what: str, **fields: Any) -> Any:
    """The parsed JSON ``text``, or the ParsedAction error saying why not."""
    try:
        return limits.loads(text)
    except _Refused as exc:
        return _error("invalid_action", f"{what}: {exc.message}; {_ACTION_HINT}", **fields)
    except RecursionError:
        return _error("invalid_action", f"{what}: nested deeper than max_depth={limits.max_depth} levels", **fields)
    except json.JSONDecodeError as exc:
        return _error("invalid_json", f"{what} is not valid JSON ({exc}); {_ACTION_HINT}", **fields)


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__)


# --------------------------------------------------------------------------- the action space
def __getattr__(name: str) -> Any:
    """``ToolCallSpace``, which lives in :mod:`mobility_env.spaces` (it imports this module), resolved on use."""
    if name == "ToolCallSpace":
        import importlib

        return importlib.import_module("mobility_env.spaces").ToolCallSpace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
