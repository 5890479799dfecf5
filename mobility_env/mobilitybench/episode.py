"""The episode model: one user query, its context, its frozen tool snapshot and its gold.

An :class:`Episode` is what every other part of the project consumes: the sandbox builder
turns ``recorded`` calls into replay entries, the env shows ``query``/``context`` to the agent,
and the scorers compare the agent's trajectory with ``gold_calls``, ``gold_slots`` and the
evidence in ``recorded`` / ``fields``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..trajectory import LazyValue, fast_constructor, lazy_fields

SCENARIOS_BY_FAMILY: dict[str, tuple[str, ...]] = {
    "Basic Information Retrieval": ("POI Query", "Geolocation Query", "Nearby Query", "Weather Query"),
    "Route-Dependent Information Retrieval": ("Route Property Query", "Arrival/Departure Time Query"),
    "Basic Route Planning": ("Point-to-Point Planning", "Multi-stop Planning", "Traffic Info Query"),
    "Preference-Constrained Route Planning": ("Option-Constrained Route Planning", "Route-Constrained Planning"),
}
SCENARIOS: tuple[str, ...] = tuple(s for group in SCENARIOS_BY_FAMILY.values() for s in group)
FAMILY_OF: dict[str, str] = {s: fam for fam, group in SCENARIOS_BY_FAMILY.items() for s in group}


class ToolCall(BaseModel):
    """A tool call: ``{"name": ..., "arguments": {...}}``."""

    model_config = ConfigDict(frozen=True)
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class RecordedCall(BaseModel):
    """A call with the response frozen in the snapshot.

    ``gold_index`` points into ``Episode.gold_calls`` for gold calls and is None for
    alternatives recorded so that a wrong choice gets a real (but wrong) answer.
    """

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    response: LazyValue = None  # a built directory's episodes hold it as stored text until read
    source_column: str = ""
    gold_index: int | None = None
    truncated: bool = False


lazy_fields(RecordedCall, "response")
#: Builds a trusted :class:`RecordedCall` without validation (rows of a checksummed built directory).
new_recorded_call = fast_constructor(RecordedCall)


class Repair(BaseModel):
    """Something the loader changed or dropped, so nothing is lost silently."""

    column: str
    kind: str  # "truncated", "unmatched_response", "missing_response", ...
    detail: str = ""


class Episode(BaseModel):
    """One MobilityBench episode.

    ``fields`` keeps every other official column (parsed), so an episode can be written
    back to the official row without loss; ``gold_slots`` is the normalized constraint set
    the IE metric compares against.
    """

    episode_id: str
    query: str
    context: dict[str, Any] = Field(default_factory=dict)
    task_scenario: str
    intent_family: str
    gold_calls: list[ToolCall] = Field(default_factory=list)
    recorded: list[RecordedCall] = Field(default_factory=list)
    gold_slots: dict[str, Any] = Field(default_factory=dict)
    fields: dict[str, Any] = Field(default_factory=dict)
    repairs: list[Repair] = Field(default_factory=list)
    source: str = ""
    row: int | None = None

    @property
    def city(self) -> str:
        return str(self.fields.get("city") or self.context.get("city") or "")

    @property
    def user_location(self) -> str:
        return str(self.context.get("user_current_location") or "")

    def gold_response(self, gold_index: int) -> RecordedCall | None:
        """The recorded response of gold call ``gold_index``, if the snapshot has one."""
        for call in self.recorded:
            if call.gold_index == gold_index:
                return call
        return None


def stable_episode_id(query: str, context: Any, task_scenario: str, tool_list: Any, prefix: str = "mb") -> str:
    """A content hash: the same row gives the same id in every load, file format and order."""
    payload = json.dumps([query, context, task_scenario, tool_list], ensure_ascii=False, sort_keys=True, default=str)
    return f"{prefix}-{hashlib.sha1(payload.encode('utf-8')).hexdigest()[:12]}"


#: Trusted constructors (no validation) for episodes read back from a checksummed built directory;
#: :func:`mobility_env.mobilitybench.build.episode_from_record` checks the types itself.
new_episode = fast_constructor(Episode)
new_tool_call = fast_constructor(ToolCall)
new_repair = fast_constructor(Repair)
