"""The capability gates sit on top of the bucket's checks in ``verify_phone_task`` (memory, skill, sub-agent).

A gate adds named checks to the verdict; a trajectory that passes its bucket but not its gate fails,
and the gate's checks pass exactly when the gate helper says so.
"""

from __future__ import annotations

import pytest

from mobility_env.mobilepa.episode import PhoneCall, PhoneTrajectory, play
from mobility_env.mobilepa.env import BUNDLED_TASKS
from mobility_env.mobilepa.tasks import HandoffGate, MemoryGate, SkillGate, load_tasks
from mobility_rewards.mobilepa.verify import PHONE_VERDICT_VERSION, verify_phone_task


@pytest.fixture(scope="module")
def state_task():
    return next(t for t in load_tasks(BUNDLED_TASKS) if t.bucket == "state_change" and not t.obstacles)


def _with(task, **gate):
    dimension = {"memory_gate": "memory", "skill_gate": "skill", "handoff_gate": "subagent"}[next(iter(gate))]
    return task.model_copy(update={"dimension": dimension, **gate})


def _names(verdict):
    return {c.name: c.passed for c in verdict.checks}


def test_a_gate_fails_a_trajectory_its_bucket_passes(state_task):
    trajectory = play(state_task)
    assert verify_phone_task(state_task, trajectory).passed and PHONE_VERDICT_VERSION >= 3
    for gate, name in ((dict(memory_gate=MemoryGate(memory_ids=["mem-0a1b2c3d"])), "memory_retrieved"),
                       (dict(skill_gate=SkillGate(skill_id="bedtime_dnd")), "skill_loaded"),
                       (dict(handoff_gate=HandoffGate(agent="route_to_ride_agent", payload={"destination": ["家"]})),
                        "routed")):
        verdict = verify_phone_task(_with(state_task, **gate), trajectory)
        assert not verdict.passed and _names(verdict)[name] is False, name
        assert _names(verdict)["state_delta"] is True  # the bucket still passed


def test_the_memory_gate_passes_once_the_memory_was_retrieved(state_task):
    base = play(state_task)
    task = _with(state_task, memory_gate=MemoryGate(memory_ids=["mem-0a1b2c3d"]))
    retrieved = PhoneCall(0, "search_memory", {"query": "家"}, "success", None,
                          {"memories": [{"memory_id": "mem-0a1b2c3d", "content": "我家在…", "match": "strong"}]})
    partial = PhoneCall(0, "search_memory", {"query": "家 公司 时间"}, "success", None,
                        {"memories": [{"memory_id": "mem-0a1b2c3d", "content": "我家在…", "match": "partial"}]})
    refused = PhoneCall(0, "search_memory", {"query": "家"}, "error", "transient_failure",
                        {"memories": [{"memory_id": "mem-0a1b2c3d", "match": "strong"}]})
    for calls, expected in (([retrieved], True), ([partial], False), ([refused], False), ([], False)):
        trajectory = PhoneTrajectory(base.task_id, calls + base.calls, base.delta, base.answer)
        verdict = verify_phone_task(task, trajectory)
        assert verdict.passed is expected and _names(verdict)["memory_retrieved"] is expected


def test_the_handoff_gate_checks_agent_payload_and_no_other_agent(state_task):
    base = play(state_task)
    task = _with(state_task, handoff_gate=HandoffGate(agent="route_to_ride_agent",
                                                      payload={"destination": ["家", "home"]}))

    def ride(agent, destination):
        return PhoneCall(0, agent, {"pickup": "公司", "destination": destination}, "success", None,
                         {"handoff_id": "delegation-1"})
    cases = [([ride("route_to_ride_agent", "家")], True), ([ride("route_to_ride_agent", "学校")], False),
             ([ride("route_to_ride_agent", "家"), ride("route_to_food_agent", "家")], False),
             ([ride("route_to_ticket_agent", "家")], False)]
    for calls, expected in cases:
        verdict = verify_phone_task(task, PhoneTrajectory(base.task_id, base.calls + calls, base.delta, base.answer))
        assert verdict.passed is expected, calls
        assert {"routed", "payload", "no_other_agent"} <= set(_names(verdict))
