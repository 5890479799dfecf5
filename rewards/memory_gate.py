"""The memory gate of MobilePA's memory tasks: were the memories the task needs actually retrieved?

A memory task (``PhoneTask.memory_gate``, :class:`~mobility_env.mobilepa.tasks.MemoryGate`) passes only
when its bucket's checker passes **and** every one of its gold ``memory_ids`` was retrieved:

* retrieved means it came back in the payload of a **successful** ``search_memory`` (one of its
  ``memories``) or ``get_memory`` (its ``memory``) call. A refused call (a schema error, a planted
  fault, a tool outside the action space) retrieved nothing, whatever its payload holds.
* ``list_memories`` does **not** count. It shows the few most recently changed records of a category,
  without being asked for anything: counting it would let a policy pass by listing every category
  (five calls) instead of deciding what it needs to know, and a record it shows can still be read by
  its id (``get_memory``), which counts. Ids cannot be guessed (``mem-`` and 8 random hex digits), so a
  ``get_memory`` that succeeds found its id in an earlier answer.

:func:`memory_focus_check` adds that a memory task must not **sweep** the memory: reading more than half of the
user's records (or 3 per gold memory + 2, whichever is more) fails the gate.

The functions are pure: they read a :class:`~mobility_env.mobilepa.episode.PhoneTrajectory` (or its
calls) and nothing else, and never raise on a malformed payload (a trajectory read back from JSON).

    >>> from mobility_env.mobilepa.episode import PhoneCall
    >>> calls = [PhoneCall(1, "search_memory", {"query": "home"}, "success", None,
    ...                    {"memories": [{"memory_id": "mem-0a1b2c3d"}]})]
    >>> sorted(retrieved_memory_ids(calls))
    ['mem-0a1b2c3d']
"""

from __future__ import annotations

from typing import Any, Iterable

from mobility_env.mobilepa.episode import PhoneCall, PhoneTrajectory
from mobility_env.mobilepa.tasks import MemoryGate

#: The memory reads whose answers count as retrieval (see the module docstring).
RETRIEVING_TOOLS = ("search_memory", "get_memory")


def _memory_id(record: Any) -> str | None:
    value = record.get("memory_id") if isinstance(record, dict) else None
    return value if isinstance(value, str) else None


def retrieved_memory_ids(calls: Iterable[PhoneCall]) -> set[str]:
    """The ids of the memories the successful ``search_memory`` and ``get_memory`` calls returned."""
    found: set[str] = set()
    for call in calls:
        if not call.succeeded or call.name not in RETRIEVING_TOOLS or not isinstance(call.payload, dict):
            continue
        records = call.payload.get("memories") if call.name == "search_memory" else [call.payload.get("memory")]
        for record in records if isinstance(records, list) else ():
            memory_id = _memory_id(record)
            if memory_id is not None:
                found.add(memory_id)
    return found


def memory_gate_check(gate: MemoryGate, trajectory: PhoneTrajectory) -> tuple[bool, str]:
    """``(passed, detail)``: passed when every gold memory id was retrieved; ``detail`` says how many were and
    names the missing ones (a line for a verdict's check)."""
    required = list(dict.fromkeys(gate.memory_ids))
    retrieved = retrieved_memory_ids(trajectory.calls)
    missing = [memory_id for memory_id in required if memory_id not in retrieved]
    detail = f"retrieved {len(required) - len(missing)} of {len(required)} required memories"
    return not missing, detail + (f"; missing {', '.join(missing)}" if missing else "")


#: A memory task may read at most half of the user's memories (a sweep — a few generic searches at ``top_k=10`` —
#: brings back most of a profile), and never less than ``FOCUS_PER_MEMORY`` per gold memory plus ``FOCUS_SLACK``.
FOCUS_PER_MEMORY = 3
FOCUS_SLACK = 2


def memory_focus_check(gate: MemoryGate, trajectory: PhoneTrajectory, profile_size: int) -> tuple[bool, str]:
    """``(passed, detail)``: passed unless the episode read more distinct memories than
    ``max(FOCUS_PER_MEMORY × gold + FOCUS_SLACK, profile_size // 2)`` — reading most of the profile retrieves the
    gold without deciding what the task needs (``profile_size``: the memories in the task's ``S_0``)."""
    limit = max(FOCUS_PER_MEMORY * len(set(gate.memory_ids)) + FOCUS_SLACK, profile_size // 2)
    read = len(retrieved_memory_ids(trajectory.calls))
    return read <= limit, f"read {read} distinct memories of {profile_size} (at most {limit} for this task)"
