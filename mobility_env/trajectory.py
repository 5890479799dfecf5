"""What an agent did in one episode: the records the env writes and the scorers read.

Declared once here so that the env (which fills them), ``rewards`` (which scores them) and
``agents`` (which store them in ``results.jsonl``) agree on one shape.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class CallRecord(BaseModel):
    """One non-terminal step: the call as parsed, how it was validated and replayed.

    ``name`` is the canonical tool name (aliases resolved) or the raw name when unknown;
    ``error`` is ``{"type", "message"}`` for a bad action (``invalid_json``,
    ``unknown_tool``, ``schema_error``, ``no_cached_result``, ...). ``match`` is the sandbox
    match type (``exact``, ``fuzzy``, ``nearest``, ``miss``) and ``response`` the replayed
    response (None when nothing was served).
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
    entry_arguments: dict[str, Any] | None = None
    response: Any = None

    @property
    def succeeded(self) -> bool:
        return self.error is None and self.match not in (None, "miss")


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
