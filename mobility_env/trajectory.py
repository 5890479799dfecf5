"""What every suite's call records share: one vocabulary and one shape.

* :class:`ErrorKind`: why a call did not do what it asked (the ``type`` of ``info["error"]`` in both suites,
  MobilityBench's ``CallRecord.error`` and MobilePA's ``PhoneCall.error_type``);
* :class:`MatchKind`: how MobilityBench's replay sandbox (and MobilePA's maps domain, which replays it) served a call;
* :class:`ToolCallRecord`: what every suite's call record answers (step, tool name, arguments, success, error
  kind, a JSON-safe dict), so the code that reads calls of any suite (the runner's counts, the scorer protocol's
  type) reads one shape. Each suite's record extends it with its own fields: MobilityBench's
  :class:`~mobility_env.mobilitybench.trajectory.CallRecord` (what the replay matched and served), MobilePA's
  :class:`~mobility_env.mobilepa.episode.PhoneCall` (the feedback and the tables it wrote).

The enums are ``str`` enums: a member equals its text (``ErrorKind.SCHEMA_ERROR == "schema_error"``) and serializes
as it, so records written before they existed read the same. :class:`LazyJSON` and :func:`lazy_fields` hold a
stored JSON text until first read (a step whose observation is precomputed decodes nothing).
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Callable, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, WrapSerializer

from .errors import CorruptDataError

_Model = TypeVar("_Model", bound=BaseModel)


class ErrorKind(str, Enum):
    """Why a step got no replayed response; ``info["error"]["type"]`` is one of these."""

    INVALID_JSON = "invalid_json"          # not JSON, or over max_action_chars
    INVALID_ACTION = "invalid_action"      # not a tool call, or a broken cap
    UNKNOWN_TOOL = "unknown_tool"          # a name no registered tool has
    SCHEMA_ERROR = "schema_error"          # arguments the tool's schema refuses
    NO_CACHED_RESULT = "no_cached_result"  # the sandbox has no recorded response that matches
    EPISODE_OVER = "episode_over"          # a step after the episode ended
    # raised by stateful tools (MobilePA): the call was valid, the state refused it
    PERMISSION_DENIED = "permission_denied"  # the app lacks a permission (grant it, or ask the user)
    STATE_CONFLICT = "state_conflict"      # the state makes the call meaningless (a toggle already on)
    NOT_FOUND = "not_found"                # the record the call names does not exist
    MISSING_PARAMETER = "missing_parameter"  # the state needs a value the call left out (ask the user)
    TRANSIENT_FAILURE = "transient_failure"  # a runtime failure that a retry can clear

    def __str__(self) -> str:
        return self.value

    @property
    def is_envelope(self) -> bool:
        """The action itself was unreadable (no tool call to record)."""
        return self in (ErrorKind.INVALID_JSON, ErrorKind.INVALID_ACTION)

    @property
    def is_bad_action(self) -> bool:
        """The agent sent something no tool accepts (as opposed to a call nothing was recorded for)."""
        return self in (ErrorKind.INVALID_JSON, ErrorKind.UNKNOWN_TOOL, ErrorKind.SCHEMA_ERROR)


class MatchKind(str, Enum):
    """How the replay sandbox served a call (see :mod:`mobility_env.mobilitybench.sandbox`)."""

    EXACT = "exact"
    FUZZY = "fuzzy"
    NEAREST = "nearest"
    MISS = "miss"

    def __str__(self) -> str:
        return self.value


def error_kind(error: dict[str, Any] | None) -> ErrorKind | None:
    """The :class:`ErrorKind` of an ``{"type", "message"}`` error (None for no error or an unknown type)."""
    if not error:
        return None
    try:
        return ErrorKind(error.get("type"))
    except ValueError:
        return None


_UNDECODED = object()


class LazyJSON:
    """A JSON value kept as its stored text until first read (see :class:`_Decoded`).

    ``source`` is the text, or a function returning it (a cell of a memory-mapped file, read only
    when needed). The decoded value is kept: records that share one ``LazyJSON`` (an episode's
    recorded response and the call it served, see :meth:`mobility_env.mobilitybench.sandbox.Sandbox.stored`)
    decode it once and share it, read-only. ``where`` = (file, row, column) names the cell a
    decoding failure is reported against, as a :class:`~mobility_env.errors.CorruptDataError`.
    """

    __slots__ = ("_source", "where", "_value", "evidence", "_views")

    def __init__(self, source: str | Callable[[], str],
                 where: tuple[Path | str | None, int | None, str | None] | None = None,
                 evidence: Callable[[], str] | None = None):
        self._source = source
        self.where = where
        self._value: Any = _UNDECODED
        # a recorded response's evidence views, stored by the build (mobility_env.mobilitybench.evidence): the
        # verifier reads them instead of decoding the response; None where the build stored none
        self.evidence = evidence
        self._views: dict[str, Any] | None = None

    def is_null(self) -> bool:
        """Is the value JSON ``null``? Read from the text when it is still undecoded (nothing decoded)."""
        value = self._value
        return value is None if value is not _UNDECODED else self.text.strip() == "null"

    def views(self) -> dict[str, Any] | None:
        """The stored evidence record (``{view name: encoded view}``), decoded once; None when there is none."""
        views = self._views
        if views is None and self.evidence is not None:
            try:
                views = json.loads(self.evidence())
                if not isinstance(views, dict):
                    raise TypeError(f"a JSON {type(views).__name__}, not an object")
                self._views = views
            except (TypeError, ValueError) as exc:
                file, row, _ = self.where or (None, None, None)
                raise CorruptDataError(file or "<sandbox>", f"stored evidence does not decode ({exc})", row=row,
                                       column="evidence") from exc
        return views

    @property
    def text(self) -> str:
        source = self._source
        if not isinstance(source, str):
            source = self._source = source()
        return source

    def decode(self) -> Any:
        value = self._value
        if value is _UNDECODED:
            try:
                value = self._value = json.loads(self.text)
            except (TypeError, ValueError) as exc:
                file, row, column = self.where or (None, None, None)
                raise CorruptDataError(file or "<sandbox>", f"stored JSON does not decode ({exc})", row=row,
                                       column=column) from exc
        return value

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, LazyJSON):
            return self is other or self.text == other.text or self.decode() == other.decode()
        return self.decode() == other

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as its text (a memory-mapped cell is read now), without the stored evidence (read from the text)
        return LazyJSON, (self.text, self.where)

    def __repr__(self) -> str:
        text = self.text
        return f"LazyJSON({text[:60]!r}{'…' if len(text) > 60 else ''})"


def _serialize_lazy(value: Any, handler: Any) -> Any:
    return handler(value.decode() if type(value) is LazyJSON else value)


#: A model field that may hold a :class:`LazyJSON`; serialized as the decoded value.
LazyValue = Annotated[Any, WrapSerializer(_serialize_lazy)]


class _Decoded:
    """Data descriptor over a :data:`LazyValue` field: decodes a :class:`LazyJSON` on first read and
    keeps the value (pydantic stores field values in the instance ``__dict__``)."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name]
        if type(value) is LazyJSON:
            value = obj.__dict__[self.name] = value.decode()
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


def lazy_fields(model: type, *names: str) -> type:
    """Install :class:`_Decoded` on ``names`` of a pydantic ``model`` (after class creation)."""
    for name in names:
        setattr(model, name, _Decoded(name))
    return model


_set = object.__setattr__


def fast_constructor(model: type[_Model]) -> Callable[..., _Model]:
    """A constructor of trusted ``model`` instances: what ``model.model_construct`` does (no validation),
    without its per-call overhead (``model_construct`` costs ~15 µs a call in pydantic 2.x; this ~2).

    Values are set as given; fields not given get their default (a fresh one from a default
    factory). For records the env builds from values it has checked (``CallRecord``) or from files
    whose checksums it verified (``RecordedCall``). ``tests/test_call_record.py`` checks that an
    instance built this way equals the validated one and dumps the same.
    """
    fixed: dict[str, Any] = {}
    factories: dict[str, Callable[[], Any]] = {}
    for name, info in model.model_fields.items():
        if info.default_factory is not None:
            factories[name] = info.default_factory  # type: ignore[assignment]
        else:
            fixed[name] = info.default
    names = tuple(model.model_fields)
    allowed = frozenset(names)

    def construct(**values: Any) -> _Model:
        if not allowed.issuperset(values):
            raise TypeError(f"{model.__name__} has no field(s) {sorted(set(values) - allowed)}")
        data = {name: values[name] if name in values else
                (factories[name]() if name in factories else fixed[name]) for name in names}
        obj = model.__new__(model)
        _set(obj, "__dict__", data)
        _set(obj, "__pydantic_fields_set__", set(values))
        _set(obj, "__pydantic_extra__", None)
        _set(obj, "__pydantic_private__", None)
        return obj

    return construct


@runtime_checkable
class ToolCallRecord(Protocol):
    """One tool call as every suite records it (see the module docstring); each suite's record has more."""

    @property
    def step(self) -> int: ...

    @property
    def name(self) -> str | None: ...

    @property
    def arguments(self) -> Any: ...

    @property
    def succeeded(self) -> bool:
        """The call did what it asked (a response was served, the state accepted it)."""
        ...

    @property
    def error_kind(self) -> ErrorKind | None:
        """Why it did not (None when it did, or when a suite's failure has no kind)."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """The record as written to ``trajectories.jsonl`` (JSON-safe)."""
        ...


def as_record(value: Any) -> Any:
    """A terminal info's ``trajectory`` as plain data: a suite's trajectory object handed out by reference
    (MobilityBench-v0's :class:`~mobility_env.mobilitybench.trajectory.Trajectory`) made into its dict with
    ``to_dict()``, which decodes and copies its responses; anything else (MobilePA-v0's dict, None) as it is."""
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) and not isinstance(value, dict) else value
