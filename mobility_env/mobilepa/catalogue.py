"""The MobilePA tool catalogue: one :class:`PhoneTool` per tool, in one registry, and :func:`execute`.

A tool is its OpenAI schema (parameters as :class:`~mobility_env.tools.ParamSpec`, each with its
validation rule), the app whose permission it needs (if any) and its code: a function of the
episode's :class:`~mobility_env.mobilepa.state.PhoneState` and the validated arguments that
returns a :class:`Feedback` ``⟨status, error_type, payload⟩`` — the paper's ``f``. Domain
modules (``mobility_env/mobilepa/domains/*.py``) declare their tools with :func:`tool` and are
registered in :data:`PHONE_TOOLS` by importing them.

:func:`execute` is the one way a call reaches tool code, in this order:

1. unknown tool → ``unknown_tool``; arguments refused by the schema → ``schema_error``
   (the state is not touched);
2. a runtime fault planted in ``S_0`` for this tool (``faults`` table) → its error type,
   ``transient_failure`` by default, and its count goes down (a retry can succeed);
3. the tool's app lacks its permission (``permissions.granted = 0``) → ``permission_denied``
   naming the permission (``grant_permission``, or asking the user, clears it);
4. the tool's code, inside a SAVEPOINT: an error feedback rolls its writes back, so a failed
   call never leaves half a change behind;
5. every call, valid or not, is appended to the audit log ``O_t``.

``execute`` never raises on an agent's call; a bug in tool code is a ``RuntimeError`` naming the
tool (a broken tool must not pass as an agent's mistake).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..tools import ArgumentError, ParamSpec
from ..trajectory import ErrorKind
from .state import PhoneState

DOMAINS: tuple[str, ...] = ("audio_entertainment", "apps_storage", "display_sound", "system_settings",
                            "time_management", "ai_assistant", "calls_communication", "maps_travel",
                            "messaging_social", "shopping_payments", "health_fitness", "smart_home", "files_photos")
#: The paper's other action categories, beside the domains' direct tools: skill loaders and sub-agent entry tools
#: (the GUI operator's entry tool stays in ``ai_assistant``, as the paper puts GUI routing there; memory tools too).
CAPABILITY_DOMAINS: tuple[str, ...] = ("skills", "sub_agents")


@dataclass(frozen=True)
class Feedback:
    """``f = ⟨Status, ErrorType, Payload⟩``: ``status`` is ``"success"`` or ``"error"``."""

    status: str
    error_type: ErrorKind | None = None
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "success"

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "error_type": None if self.error_type is None else self.error_type.value,
                "payload": self.payload}


def success(**payload: Any) -> Feedback:
    return Feedback("success", None, payload)


def failure(error_type: ErrorKind, message: str, **payload: Any) -> Feedback:
    return Feedback("error", error_type, {"message": message, **payload})


def cancel_record(state: PhoneState, table: str, key: str, value: str, *, what: str, pending: str,
                  listing: str) -> Feedback:
    """Set a ``pending`` record's ``status`` to ``cancelled`` (a queued hand-off, a requested ride):
    ``not_found`` when there is none (``listing`` names the tool that shows them), ``state_conflict`` when it
    is no longer ``pending``."""
    row = state.one(f"SELECT status FROM {table} WHERE {key} = ?", (value,))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no {what} {value!r}; {listing} shows them")
    if row["status"] != pending:
        return failure(ErrorKind.STATE_CONFLICT, f"{what} {value} is {row['status']}, not {pending}")
    state.execute(f"UPDATE {table} SET status = 'cancelled' WHERE {key} = ?", (value,))
    return success(**{key: value, "status": "cancelled"})


@dataclass(frozen=True)
class PhoneTool:
    """One tool: schema, the permission it needs (``(app, permission)``), the tables it may write, and code."""

    name: str
    domain: str
    description: str
    params: tuple[ParamSpec, ...]
    run: Callable[[PhoneState, dict[str, Any]], Feedback] = field(repr=False, compare=False)
    permission: tuple[str, str] | None = None
    writes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.domain not in DOMAINS and self.domain not in CAPABILITY_DOMAINS:
            raise ValueError(f"tool {self.name!r}: unknown domain {self.domain!r}")
        missing = [p.name for p in self.params if p.check is None]
        if missing:
            raise ValueError(f"tool {self.name!r}: parameter(s) without a check: {missing}")

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.required)

    def openai_schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": {"type": "object", "properties": {p.name: p.json_schema() for p in self.params},
                           "required": list(self.required), "additionalProperties": False}}}

    def validate(self, arguments: Any) -> list[ArgumentError]:
        if not isinstance(arguments, dict):
            return [ArgumentError("", "type", f"arguments must be a JSON object, got {type(arguments).__name__}")]
        params = {p.name: p for p in self.params}
        errors = [ArgumentError(name, "required", "required field is missing")
                  for name in self.required if arguments.get(name) is None]
        errors += [ArgumentError(str(key)[:40], "unknown_field", f"unknown field; {self.name} takes "
                                 f"{', '.join(params) or 'no arguments'}") for key in arguments if key not in params]
        for key, value in arguments.items():
            param = params.get(key)
            if param is not None and value is not None and param.check is not None:
                error = param.check(key, value)
                if error is not None:
                    errors.append(error)
        return errors


PHONE_TOOLS: dict[str, PhoneTool] = {}


ToolCode = Callable[[PhoneState, dict[str, Any]], Feedback]


def tool(name: str, domain: str, description: str, *params: ParamSpec, permission: tuple[str, str] | None = None,
         writes: tuple[str, ...] = ()) -> Callable[[ToolCode], ToolCode]:
    """Register the decorated function as a tool's code (one registry; a name registered twice raises)."""
    def register(run: ToolCode) -> ToolCode:
        if name in PHONE_TOOLS:
            raise ValueError(f"tool {name!r} is registered twice")
        PHONE_TOOLS[name] = PhoneTool(name, domain, description, tuple(params), run, permission, writes)
        return run
    return register


def execute(state: PhoneState, name: Any, arguments: Any, step: int = 0) -> Feedback:
    """Run one call against ``state`` (see the module docstring); the call is logged whatever happens."""
    feedback = _execute(state, name, arguments)
    state.log(step, name if isinstance(name, str) else repr(name)[:100], arguments, feedback.status,
              None if feedback.error_type is None else feedback.error_type.value)
    return feedback


def _execute(state: PhoneState, name: Any, arguments: Any) -> Feedback:
    spec = PHONE_TOOLS.get(name) if isinstance(name, str) else None
    if spec is None:
        return failure(ErrorKind.UNKNOWN_TOOL, f"unknown tool {str(name)[:60]!r}")
    errors = spec.validate(arguments)
    if errors:
        return failure(ErrorKind.SCHEMA_ERROR, f"{spec.name}: " + "; ".join(map(str, errors)),
                       fields=[e.field for e in errors])
    fault = state.one("SELECT error_type, remaining, message FROM faults WHERE tool = ? AND remaining > 0", (name,))
    if fault is not None:
        state.execute("UPDATE faults SET remaining = remaining - 1 WHERE tool = ?", (name,))
        kind = ErrorKind(fault["error_type"] or ErrorKind.TRANSIENT_FAILURE.value)
        return failure(kind, fault["message"] or f"{name} failed; try again")
    if spec.permission is not None:
        app, permission = spec.permission
        row = state.one("SELECT granted FROM permissions WHERE app = ? AND permission = ?", (app, permission))
        if row is not None and not row["granted"]:
            return failure(ErrorKind.PERMISSION_DENIED, f"{app} has no {permission} permission; grant it with "
                           f"grant_permission or ask the user", app=app, permission=permission)
    state.execute("SAVEPOINT tool_call")
    try:
        feedback = spec.run(state, arguments)
    except Exception as exc:  # a bug in tool code, not an agent's mistake: undo and say which tool
        state.execute("ROLLBACK TO tool_call")
        state.execute("RELEASE tool_call")
        raise RuntimeError(f"tool {spec.name} failed on {arguments!r:.200}: {type(exc).__name__}: {exc}") from exc
    state.execute("RELEASE tool_call" if feedback.ok else "ROLLBACK TO tool_call")
    if not feedback.ok:
        state.execute("RELEASE tool_call")
    return feedback


def openai_tools(names: list[str] | None = None) -> list[dict[str, Any]]:
    """The OpenAI function-calling list of ``names`` (all registered tools when None)."""
    return [PHONE_TOOLS[n].openai_schema() for n in (names if names is not None else PHONE_TOOLS)]
