"""Every registered tool is one complete unit: schema, checks, kind (canonical key, compact view, match
stages, plan step), official column and evidence view — run on every recorded call of the bundled set."""

from __future__ import annotations

import json

import pytest

from mobility_env.canonical import CanonicalRequest, canonical_request
from mobility_env.mobilitybench.observation import COMPACTORS, format_response
from mobility_env.mobilitybench.official import RESPONSE_COLUMN_BY_TOOL
from mobility_env.mobilitybench.store import resolve_data
from mobility_env.mobilitybench.toolkinds import MATCH_STAGES, TOOL_KINDS, ToolKind, kind_of
from mobility_env.tools import MAP_TOOLS, TOOLS, validate_call
from mobility_env.mobilitybench.evidence import EVIDENCE_VIEWS
from mobility_rewards.mobilitybench.plan import ATOMIC_STEPS, call_step


def test_every_map_tool_has_a_complete_kind():
    for name in MAP_TOOLS:
        spec = TOOLS[name]
        kind = TOOL_KINDS.get(spec.kind)
        assert isinstance(kind, ToolKind), f"{name}: kind {spec.kind!r} is not registered"
        for part in ("canonical", "compact", "plan_step"):
            assert callable(getattr(kind, part)), f"{spec.kind}: no {part}"
        assert kind.match_stages and set(kind.match_stages) <= set(MATCH_STAGES)
        assert all(callable(param.check) for param in spec.params), f"{name}: a parameter has no check"
        assert COMPACTORS[name] is kind.compact
        assert name == "query_poi" or RESPONSE_COLUMN_BY_TOOL[name] == spec.official_column
    assert all(callable(param.check) for param in TOOLS["finish"].params)
    assert set(EVIDENCE_VIEWS) == set(TOOL_KINDS), "the scorer's evidence views and the kinds must name the same kinds"
    assert {TOOLS[name].kind for name in MAP_TOOLS} == set(TOOL_KINDS), "a kind no tool uses"


def test_an_unknown_tool_is_refused_not_guessed():
    with pytest.raises(ValueError, match="not a registered map tool"):
        format_response("teleport", {"data": 1}, "compact")
    with pytest.raises(ValueError, match="not a map tool"):
        kind_of("finish")
    assert kind_of("traffic_status_road_api") is TOOL_KINDS["traffic"]


@pytest.fixture(scope="module")
def recorded_calls():
    store = resolve_data(None)
    calls = [call for episode_id in store.ids for call in store.get(episode_id).recorded]
    assert {call.name for call in calls} == set(MAP_TOOLS), "the bundled set records every map tool"
    return calls


def test_every_part_runs_on_every_recorded_call(recorded_calls):
    seen: dict[str, int] = {}
    for call in recorded_calls:
        if validate_call(call.name, call.arguments):
            continue  # recorded with arguments the schema refuses: replayed as a miss, never canonicalized
        kind = kind_of(call.name)
        request = kind.canonical(call.name, call.arguments)
        assert isinstance(request, CanonicalRequest) and request.key
        assert request == canonical_request(call.name, call.arguments)
        json.loads(format_response(call.name, call.response, "compact"))
        assert kind.plan_step(call.arguments) in ATOMIC_STEPS
        assert call_step(call.name, call.arguments) == kind.plan_step(call.arguments)
        EVIDENCE_VIEWS[kind.name](call.response)  # parses without raising
        seen[kind.name] = seen.get(kind.name, 0) + 1
    assert set(seen) == set(TOOL_KINDS)
