"""The Gymnasium spaces both suites' envs use, apart from the envs (as Gymnasium keeps ``gymnasium.spaces``).

* :class:`UnicodeText`: the observation space, any Unicode text up to a length, with shared-memory support
  so ``AsyncVectorEnv`` works with its default ``shared_memory=True`` (:class:`SharedTexts`).
* :class:`ToolCallSpace`: the action space, one tool call. Its members are every action the parser reads
  (:func:`mobility_env.actions.parse_action`); its samples are calls of the tools it is given, as OpenAI
  function schemas: each suite's env passes its own (MobilityBench's nine map tools and ``finish``,
  :func:`mobility_env.mobilitybench.tool_samples.map_tool_space`; MobilePA the tools the current task offers, updated
  with
  :meth:`ToolCallSpace.offer` on reset and when a skill loads), with an optional sampler of argument values.

``mobility_env.mobilitybench.env`` re-exports ``UnicodeText`` and ``SharedTexts``, ``mobility_env.actions``
``ToolCallSpace``.
"""

from __future__ import annotations

import copy
import multiprocessing
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from .actions import DEFAULT_LIMITS, ActionLimits, parse_action
from .trajectory import ErrorKind

__all__ = ["MAX_OBSERVATION_CHARS", "SharedTexts", "ToolCallSpace", "UnicodeText", "ValueSampler", "sample_json_value",
           "tool_parameters"]

#: The observation space's length: ``UnicodeText(MAX_OBSERVATION_CHARS)`` in both suites' envs.
MAX_OBSERVATION_CHARS = 200_000


# --------------------------------------------------------------------------- observations
class UnicodeText(spaces.Text):
    """A Text space that contains any Unicode string up to ``max_length`` characters.

    Gymnasium's Text space only admits its charset; queries and responses are Chinese, so
    membership is by length alone. Sampling still draws from the alphanumeric charset.
    Subclassing Text keeps Gymnasium's vector-env batching of Text spaces.
    """

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


# Shared memory for UnicodeText, so AsyncVectorEnv works with its default shared_memory=True.
# Gymnasium's Text support stores charset indexes (KeyError on '{' or any Chinese character)
# and reads a snapshot once; here each env owns a row of int32 [length, code points...] and
# the vector env reads the rows live (SharedTexts), copying them to a tuple of str per step.
_CODE_UNIT = np.dtype("<i4")


class SharedTexts(Sequence):
    """The observations of an ``AsyncVectorEnv`` in shared memory, decoded on access.

    ``AsyncVectorEnv(copy=True)`` (the default) deep-copies it into a ``tuple`` of ``str``
    after every ``reset``/``step``; with ``copy=False`` this live view is returned itself.
    """

    def __init__(self, rows: np.ndarray):
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        row = self._rows[index]
        return row[1: 1 + int(row[0])].tobytes().decode("utf-32-le", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, (tuple, list, SharedTexts)) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"


@create_shared_memory.register(UnicodeText)
def _create_unicode_text_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = multiprocessing) -> Any:
    return ctx.Array(_CODE_UNIT.char, n * (space.max_length + 1))


def _shared_rows(space: UnicodeText, shared_memory: Any) -> np.ndarray:
    return np.frombuffer(shared_memory.get_obj(), dtype=_CODE_UNIT).reshape(-1, space.max_length + 1)


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_text_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(_shared_rows(space, shared_memory)[:n])


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_text_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    codes = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=_CODE_UNIT)
    if len(codes) > space.max_length:
        raise ValueError(f"observation of {len(codes)} characters does not fit {space!r}")
    row = _shared_rows(space, shared_memory)[index]
    row[0] = len(codes)
    row[1: 1 + len(codes)] = codes


# --------------------------------------------------------------------------- actions
#: A suite's sampler of argument values: ``(tool, argument, its JSON schema, rng) -> value``, or None to let
#: :func:`sample_json_value` draw one from the schema. Module-level functions keep the space picklable.
ValueSampler = Callable[[str, str, Mapping[str, Any], np.random.Generator], Any]

_SAMPLE_WORDS = ("好的", "明天上午", "提醒我", "家", "会议", "北京市", "home", "music", "tomorrow", "test")
_MAX_SAMPLE_DEPTH = 4  # nested objects and arrays a schema-drawn value may have (far inside ActionLimits' 16)


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # the common case without the ABC check


def tool_parameters(tool: Mapping[str, Any], *, copy_schema: bool = True) -> tuple[str, Mapping[str, Any]]:
    """``(name, parameters schema)`` of an OpenAI function-calling entry (``{"type": "function", "function":
    {"name", "parameters"}}``) or of a bare ``{"name", "parameters"}`` (the schema a deep copy unless
    ``copy_schema`` is False); ``ValueError`` when it is neither."""
    function: Any = tool.get("function", tool) if _is_mapping(tool) else None
    name = function.get("name") if _is_mapping(function) else None
    if type(name) is not str or not name:
        raise ValueError(f"a tool schema needs a 'name' (OpenAI function-calling shape), got {tool!r:.120}")
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    if not _is_mapping(parameters) or not _is_mapping(parameters.get("properties", {})):
        raise ValueError(f"tool {name!r}: 'parameters' must be a JSON object schema with 'properties'")
    return name, copy.deepcopy(dict(parameters)) if copy_schema else parameters


def sample_json_value(schema: Mapping[str, Any], rng: np.random.Generator, depth: int = 0) -> Any:
    """A value of a JSON schema: one of its ``enum``, else of its ``type`` (``minimum``/``maximum``,
    ``maxItems`` and object ``properties`` respected; strings are short words)."""
    enum = schema.get("enum")
    if isinstance(enum, (list, tuple)) and enum:
        return copy.deepcopy(enum[int(rng.integers(len(enum)))])
    kind = schema.get("type")
    if isinstance(kind, (list, tuple)):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "integer":
        return int(rng.integers(int(schema.get("minimum", 0)), int(schema.get("maximum", 100)) + 1))
    if kind == "number":
        return round(float(rng.uniform(schema.get("minimum", 0), schema.get("maximum", 100))), 2)
    if kind == "array":
        most = min(int(schema.get("maxItems", 3)), 3)
        if depth >= _MAX_SAMPLE_DEPTH or most < 1:
            return []
        items = schema.get("items")
        if not isinstance(items, Mapping):
            items = {"type": "string"}
        return [sample_json_value(items, rng, depth + 1) for _ in range(int(rng.integers(1, most + 1)))]
    if kind == "object":
        properties = schema.get("properties") if depth < _MAX_SAMPLE_DEPTH else None
        required = set(schema.get("required") or ())
        return {key: sample_json_value(sub, rng, depth + 1) for key, sub in (properties or {}).items()
                if isinstance(sub, Mapping) and (key in required or rng.random() < 0.5)}
    return _SAMPLE_WORDS[int(rng.integers(len(_SAMPLE_WORDS)))]


class ToolCallSpace(spaces.Space[Any]):
    """The action space of both suites' envs: one tool call, of the tools the space is given.

    **Tools** (``tools``): OpenAI function schemas (``info["tools"]``' shape, or bare ``{"name",
    "parameters"}``), copied. :attr:`tool_names` lists them; :meth:`offer` replaces them (MobilePA's env
    does on every reset and when a loaded skill adds tools: the space describes the tools the current
    task offers; a vector env batches a copy taken when it was built).

    **Members** (``contains``): any ``str`` of at most ``limits.max_action_chars`` characters
    (an agent's text is a legal action: the env answers malformed text with an
    ``invalid_json`` observation), and every object ``parse_action`` reads as a tool call under
    ``limits``: ``{"name", "arguments"}`` or an OpenAI tool call (dict or object with
    ``model_dump``), within every bound. The tool name and argument values are not judged
    here; an unknown tool or a schema violation is a legal action that costs a penalty.

    **Samples** are well-formed calls ``{"name": tool, "arguments": {...}}`` of the given tools: a
    uniformly drawn tool (``finish`` included), every required argument and each optional one with
    probability 1/2, each drawn by ``values(tool, argument, schema, rng)`` (the suite's sampler: map
    tools get coordinates inside China, radii in metres, known strategies, place names and cities)
    or, where it returns None, from the argument's JSON schema (:func:`sample_json_value`). Every sample
    is a member. ``sample(mask=...)`` restricts the draw to one tool name or a sequence of them, each among
    :attr:`tool_names`. Seeded by ``seed()`` like every Gymnasium space.

    >>> space = ToolCallSpace([{"name": "set_alarm", "parameters": {"type": "object", "properties": {
    ...     "time": {"type": "string", "enum": ["07:00", "08:30"]}}, "required": ["time"]}}], seed=0)
    >>> call = space.sample()
    >>> call["name"], call["arguments"]["time"] in ("07:00", "08:30"), space.contains(call)
    ('set_alarm', True, True)
    """

    def __init__(self, tools: Iterable[Mapping[str, Any]], limits: ActionLimits | None = None,
                 seed: int | Any | None = None, *, values: ValueSampler | None = None):
        self.limits = limits or DEFAULT_LIMITS
        self.values = values
        self._parameters: dict[str, Mapping[str, Any]] = {}
        self.offer(tools)
        super().__init__(shape=None, dtype=None, seed=seed)

    def offer(self, tools: Iterable[Mapping[str, Any]], *, copy_schemas: bool = True) -> None:
        """Sample from ``tools`` (OpenAI function schemas) from now on; the random state is kept. The schemas
        are copied unless ``copy_schemas`` is False (an env that builds them afresh for the space and never
        changes them afterwards saves the copy on every reset)."""
        parameters = dict(tool_parameters(tool, copy_schema=copy_schemas) for tool in tools)
        if not parameters:
            raise ValueError("a ToolCallSpace needs at least one tool to sample from")
        self._parameters = parameters

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of the tools samples are drawn from, in the order given."""
        return tuple(self._parameters)

    def parameters(self, name: str) -> dict[str, Any]:
        """A copy of tool ``name``'s parameters schema."""
        return copy.deepcopy(dict(self._parameters[name]))

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if isinstance(x, str):
            return len(x) <= self.limits.max_action_chars
        if isinstance(x, (bytes, bytearray)) or x is None:
            return False
        parsed = parse_action(x, self.limits)
        return parsed.error is None or not ErrorKind(parsed.error["type"]).is_envelope

    def sample(self, mask: str | Iterable[str] | None = None, probability: Any | None = None) -> dict[str, Any]:
        if probability is not None:
            raise ValueError("ToolCallSpace.sample takes no probability; pass mask=<tool name(s)> to restrict the draw")
        names = self._names(mask)
        rng = self.np_random
        name = names[int(rng.integers(len(names)))]
        schema = self._parameters[name]
        required = set(schema.get("required") or ())
        arguments = {}
        for param, param_schema in schema.get("properties", {}).items():
            if param in required or rng.random() < 0.5:
                value = self.values(name, param, param_schema, rng) if self.values is not None else None
                arguments[param] = value if value is not None else sample_json_value(param_schema, rng, 2)
        return {"name": name, "arguments": arguments}

    def _names(self, mask: str | Iterable[str] | None) -> list[str]:
        if mask is None:
            return list(self._parameters)
        names = [mask] if isinstance(mask, str) else list(mask)
        if not names or any(name not in self._parameters for name in names):
            raise ValueError(f"mask must name tools among {', '.join(self._parameters)}, got {mask!r}")
        return names

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, ToolCallSpace) and other.limits == self.limits
                and other._parameters == self._parameters and other.values == self.values)

    def __hash__(self) -> int:  # stable while offer() changes the tools: equal spaces have equal limits
        return hash((type(self).__name__, self.limits))

    def __repr__(self) -> str:
        limits, names = self.limits, list(self._parameters)
        shown = ", ".join(names[:6]) + (f", … ({len(names)} tools)" if len(names) > 6 else "")
        return (f"ToolCallSpace([{shown}], max_action_chars={limits.max_action_chars}, max_depth={limits.max_depth}, "
                f"max_string_chars={limits.max_string_chars}, max_number_digits={limits.max_number_digits})")
