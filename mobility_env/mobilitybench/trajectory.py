"""MobilityBench's records of one episode: the records the env writes and the scorers read.

A :class:`CallRecord` (a :class:`~mobility_env.trajectory.ToolCallRecord`) is built once per step, by the env, from
the parsed call and the sandbox's :class:`~mobility_env.mobilitybench.sandbox.LookupResult`. Its ``response`` and
``entry_arguments`` may be held as :class:`~mobility_env.trajectory.LazyJSON`, the stored text, and are decoded on
first read (the scorer or ``obs_format="raw"``) — a step whose observation is the precomputed compact text decodes
nothing. A :class:`Trajectory` is a whole episode as the scorers see it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..trajectory import ErrorKind, LazyValue, MatchKind, error_kind, fast_constructor, lazy_fields


class CallRecord(BaseModel):
    """One non-terminal step: the call as parsed, how it was validated and replayed.

    ``name`` is the canonical tool name (aliases resolved) or the raw name when unknown;
    ``error`` is ``{"type", "message"}`` for a bad action, ``type`` an :class:`ErrorKind`
    (:attr:`error_kind`). ``match`` is a :class:`MatchKind` and ``response`` the replayed
    response (None when nothing was served). ``response`` and ``entry_arguments`` (the recorded
    arguments of the entry that served the call) may be held as :class:`LazyJSON` and are
    decoded on first read; ``model_dump`` writes them decoded.
    """

    step: int
    name: str | None = None
    arguments: Any = None
    error: dict[str, str] | None = None
    schema_errors: list[dict[str, str]] = Field(default_factory=list)
    match: str | None = None
    scope: str | None = None
    score: float | None = None
    distance_m: float | None = None
    entry: int | None = None
    entry_episode_id: str | None = None
    entry_gold_index: int | None = None
    entry_arguments: LazyValue = None
    response: LazyValue = None
    # the canonical key the sandbox matched on (mobility_env.canonical), so scorers need not recompute it;
    # not written by model_dump (a record read back recomputes it)
    canonical_key: str | None = Field(default=None, exclude=True, repr=False)

    @property
    def succeeded(self) -> bool:
        return self.error is None and self.match not in (None, MatchKind.MISS)

    @property
    def error_kind(self) -> ErrorKind | None:
        return error_kind(self.error)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


lazy_fields(CallRecord, "response", "entry_arguments")
#: Builds a trusted :class:`CallRecord` without validation (the env's one record per step).
new_call_record = fast_constructor(CallRecord)


class FinishRecord(BaseModel):
    """The arguments of the terminal ``finish`` call (only ``answer`` is required)."""

    answer: str = ""
    intent: str | None = None
    slots: dict[str, Any] | None = None
    plan: list[str] | None = None
    route_index: int | None = None


class Trajectory(BaseModel):
    """A whole episode as the scorers see it."""

    episode_id: str
    calls: list[CallRecord] = Field(default_factory=list)
    finish: FinishRecord | None = None
    truncated: bool = False
    input_tokens: int = 0
    output_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The whole record as plain data (``model_dump()``): every response decoded and copied."""
        return self.model_dump()
