"""The memory gate of MobilePA's memory tasks: were the memories the task needs actually retrieved, on purpose?

A memory task (``PhoneTask.memory_gate``, :class:`~mobility_env.mobilepa.tasks.MemoryGate`) passes only
when its bucket's checker passes **and** every one of its gold ``memory_ids`` was retrieved:

* retrieved means it came back as a **strong** match (``"match": "strong"``: the query singles it out, see
  :mod:`mobility_env.mobilepa.domains.memory`) among the first :data:`FOCUS_RANK` (5, the default ``top_k``)
  results of a **successful** ``search_memory``, or as the ``memory`` of a successful ``get_memory``. A general
  query (``usually``, ``我 喜欢 习惯 平时``) or one about several things at once (``home work place 家 公司``)
  shows records as partial matches: shown, not retrieved; a broad query at ``top_k=10`` that lists a record lower
  down does not count either. A refused call (a schema error, a planted fault, a tool outside
  the action space) retrieved nothing, whatever its payload holds.
* ``list_memories`` does **not** count. It shows the few most recently changed records of a category,
  without being asked for anything: counting it would let a policy pass by listing every category
  instead of deciding what it needs to know, and a record it shows can still be read by
  its id (``get_memory``), which counts. Ids cannot be guessed (``mem-`` and 8 random hex digits), so a
  ``get_memory`` that succeeds found its id in an earlier answer.

:func:`memory_focus_check` adds that a memory task must not **sweep** the memory. With ``g`` gold memories it
allows at most ``g + 2`` successful memory reads (a search per memory, a reformulation and one more read) and at
most ``4g + 6`` distinct records shown by them (a search's first :data:`FOCUS_RANK` results, a ``get_memory``'s
record, a ``list_memories``' records). Both budgets depend on the task
only, never on the profile's size: a policy that reads broadly without knowing what it needs (generic queries at
``top_k=10``, listing every category, a question about every topic) runs out of budget before it finds the gold,
except by the luck of asking about the task's topic (``tests/test_mobilepa_memory_focus.py`` measures the
rates of honest readers denied and of attackers let through: 1–3 broad queries and nothing else 3–4 %, as
often as questions about random topics). What no read-based gate can refuse is a specific question about a
likely topic (most memory tasks need the home, the wake-up time or a preference): asking about the six likeliest,
two per query, passes the gate in about 42 % of memory tasks whatever they are; only the bucket's checker, which
needs the record's content, stops a wrong guess. Gold memories are
of distinct record keys (a conflict
task's gold is the record that holds), so ``g`` is also the number of topics the task needs.

The functions are pure: they read a :class:`~mobility_env.mobilepa.episode.PhoneTrajectory` (or its
calls) and nothing else, and never raise on a malformed payload (a trajectory read back from JSON).

    >>> from mobility_env.mobilepa.episode import PhoneCall
    >>> calls = [PhoneCall(1, "search_memory", {"query": "home"}, "success", None,
    ...                    {"memories": [{"memory_id": "mem-0a1b2c3d"}]})]
    >>> sorted(retrieved_memory_ids(calls))
    ['mem-0a1b2c3d']
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from mobility_env.mobilepa.domains.memory import hits
from mobility_env.mobilepa.episode import PhoneCall, PhoneTrajectory
from mobility_env.mobilepa.tasks import MemoryGate

#: The memory reads whose answers count as retrieval (see the module docstring).
RETRIEVING_TOOLS = ("search_memory", "get_memory")
#: Every memory read: what the focus budgets count.
READING_TOOLS = ("search_memory", "get_memory", "list_memories")
#: A search retrieves the records it ranks this high (its query was about them).
FOCUS_RANK = 5


def _memory_id(record: Any) -> str | None:
    value = record.get("memory_id") if isinstance(record, dict) else None
    return value if isinstance(value, str) else None


def _shown(call: PhoneCall) -> list[str]:
    """The ids a successful memory read showed, in its order ([] for anything else)."""
    if not call.succeeded or call.name not in READING_TOOLS or not isinstance(call.payload, dict):
        return []
    records = call.payload.get("memory") if call.name == "get_memory" else call.payload.get("memories")
    if call.name == "get_memory":
        records = [records]
    return [i for i in map(_memory_id, records if isinstance(records, list) else ()) if i is not None]


def retrieved_memory_ids(calls: Iterable[PhoneCall], memories: Sequence[Mapping[str, Any]] | None = None) -> set[str]:
    """The ids the successful ``search_memory`` calls returned as strong matches among their first
    :data:`FOCUS_RANK` results, and the ``memory`` of successful ``get_memory`` calls.

    A search recorded before results said whether they were strong (none of its results has ``match``: a run of
    MobilePA observation version 2 or older) is judged by ranking its query again over ``memories`` (the task's
    ``S_0`` records), when given: of its recorded first results, those the query singles out. Without
    ``memories`` such a search retrieves nothing."""
    found: set[str] = set()
    for call in calls:
        if call.name == "get_memory":
            found.update(_shown(call))
        elif call.name == "search_memory" and call.succeeded and isinstance(call.payload, dict):
            records = call.payload.get("memories")
            first = [r for r in records[:FOCUS_RANK] if isinstance(r, dict)] if isinstance(records, list) else []
            if first and all("match" not in r for r in first):
                found.update(_strong_again(call, first, memories))
                continue
            found.update(i for record in first if record.get("match") == "strong"
                         and (i := _memory_id(record)) is not None)
    return found


def _strong_again(call: PhoneCall, first: list[dict[str, Any]], memories: Sequence[Mapping[str, Any]] | None
                  ) -> set[str]:
    """Of a legacy search's recorded first results, the ids its query singles out among ``memories``."""
    query = call.arguments.get("query") if isinstance(call.arguments, dict) else None
    if memories is None or not isinstance(query, str):
        return set()
    rows = [(m.get("memory_id"), m.get("content"), m.get("category"), m.get("created_at"), m.get("updated_at"),
             m.get("key")) for m in memories if isinstance(m, Mapping)]
    try:
        strong = {rows[i][0] for i, singled_out in hits(rows, query, len(rows)) if singled_out}
    except (TypeError, ValueError):  # a malformed record read back from JSON
        return set()
    return {i for i in map(_memory_id, first) if i is not None and i in strong}


def memory_gate_check(gate: MemoryGate, trajectory: PhoneTrajectory,
                      memories: Sequence[Mapping[str, Any]] | None = None) -> tuple[bool, str]:
    """``(passed, detail)``: passed when every gold memory id was retrieved (``memories``: the task's ``S_0``
    records, for searches recorded before results said whether they were strong, see
    :func:`retrieved_memory_ids`); ``detail`` says how many were and names the missing ones."""
    required = list(dict.fromkeys(gate.memory_ids))
    retrieved = retrieved_memory_ids(trajectory.calls, memories)
    missing = [memory_id for memory_id in required if memory_id not in retrieved]
    detail = f"retrieved {len(required) - len(missing)} of {len(required)} required memories"
    return not missing, detail + (f"; missing {', '.join(missing)}" if missing else "")


#: The focus budgets for ``g`` gold memories: successful memory reads ``READS_PER_MEMORY × g + READS_SLACK`` and
#: distinct records shown ``SHOWN_PER_MEMORY × g + SHOWN_SLACK``.
READS_PER_MEMORY, READS_SLACK = 1, 2
SHOWN_PER_MEMORY, SHOWN_SLACK = 4, 6


def focus_budgets(gate: MemoryGate) -> tuple[int, int]:
    """``(reads, shown)``: the most successful memory reads and distinct records shown ``gate``'s task allows."""
    gold = len(set(gate.memory_ids))
    return READS_PER_MEMORY * gold + READS_SLACK, SHOWN_PER_MEMORY * gold + SHOWN_SLACK


def memory_focus_check(gate: MemoryGate, trajectory: PhoneTrajectory) -> tuple[bool, str]:
    """``(passed, detail)``: passed unless the episode made more successful memory reads, or was shown more
    distinct records, than :func:`focus_budgets` allows (a sweep retrieves the gold without deciding what the
    task needs)."""
    reads_allowed, shown_allowed = focus_budgets(gate)
    shown_by_call = [_shown(call)[:FOCUS_RANK] if call.name == "search_memory" else _shown(call)
                     for call in trajectory.calls if call.succeeded and call.name in READING_TOOLS]
    reads, shown = len(shown_by_call), len({i for ids in shown_by_call for i in ids})
    return reads <= reads_allowed and shown <= shown_allowed, \
        f"{reads} memory reads (at most {reads_allowed}) showing {shown} distinct records (at most {shown_allowed})"
