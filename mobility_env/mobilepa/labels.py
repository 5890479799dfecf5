"""The labels a MobilePA result is grouped by: the task's behaviour category, bucket, language, obstacles,
capability dimension, tool domain and (memory tasks) the memory axes.

:func:`task_labels` is what ``MobilePA-v0`` puts in its terminal ``info["labels"]`` and the runner copies into
every result, so the scorecard, report and export read them from the results alone.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .catalogue import PHONE_TOOLS
from .tasks import PhoneTask

#: Calls that say nothing about the task's domain: asking the user, reading memory, loading a skill.
CAPABILITY_TOOLS = frozenset({"ask_user", "finish", "load_skill", "search_memory", "get_memory", "list_memories"})


def task_domain(task: PhoneTask) -> str:
    """The tool domain the task is about: the most frequent domain of its known-good solution's calls (the
    first in call order on a tie), capability calls left out; ``"none"`` for a task answered without a call."""
    domains = [PHONE_TOOLS[c.name].domain for c in task.oracle_calls
               if c.name not in CAPABILITY_TOOLS and c.name in PHONE_TOOLS]
    if not domains:
        return "none"
    counts = Counter(domains)
    best = max(counts.values())
    return next(d for d in domains if counts[d] == best)


def task_labels(task: PhoneTask) -> dict[str, Any]:
    """``category``, ``bucket``, ``language``, ``obstacles`` (kinds), ``dimension``, ``domain``, and for a
    memory task ``memory_reasoning``, ``memory_operation`` and ``memory_domain``."""
    labels: dict[str, Any] = {"category": task.category, "bucket": task.bucket, "language": task.language,
                              "obstacles": sorted({o["kind"] for o in task.obstacles}),
                              "dimension": task.dimension, "domain": task_domain(task)}
    if task.memory_gate is not None:
        labels.update(memory_reasoning=task.memory_gate.reasoning, memory_operation=task.memory_gate.operation,
                      memory_domain=task.memory_gate.domain or labels["domain"])
    return labels
