"""Prompt files of the LLM baselines, in English (``*.en.md``) and Chinese (``*.zh.md``).

Prompts are ``string.Template`` texts. :func:`render_prompt` fills the placeholders that
must stay in sync with the scorer from their single source: ``$scenarios`` (the 11 task
scenarios of :data:`mobility_env.mobilitybench.episode.SCENARIOS`) and ``$plan_steps`` (the atomic step
labels of :data:`mobility_rewards.mobilitybench.plan.ATOMIC_STEPS`); callers supply the rest (``$query``, ``$tools``…).
A placeholder left unfilled raises ``KeyError``, so a prompt never reaches a model half-made.

Prompts are per env *suite* (``info["suite"]`` at reset): ``MobilePA-v0`` (suite ``"mobilepa"``) has
its own ``phone_*`` texts for the roles whose instructions are about the domain (:data:`SUITE_PROMPTS`);
the protocol texts (``tool_protocol``, ``nudge``, ``cutoff``, ``worker_step``, ``reporter_input``)
are shared. ``render_prompt(name, language, suite=...)`` picks the suite's text when it has one.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files
from string import Template
from typing import Any

PROMPT_NAMES = ("react_system", "team", "planner", "worker", "worker_step", "reporter", "reporter_input", "task",
                "tool_protocol", "nudge", "cutoff", "phone_react_system", "phone_team", "phone_planner", "phone_worker",
                "phone_reporter", "phone_task")
#: Per suite, the prompts it replaces (by name) with its own.
SUITE_PROMPTS = {"mobilepa": {name: f"phone_{name}" for name in
                              ("react_system", "team", "planner", "worker", "reporter", "task")}}
_OBSERVATION_LABEL = {"en": "Observation:", "zh": "工具结果："}


@lru_cache(maxsize=None)
def prompt_text(name: str, language: str) -> str:
    """The raw text of ``agents/prompts/{name}.{language}.md``."""
    if name not in PROMPT_NAMES:
        raise KeyError(f"unknown prompt {name!r}; known: {', '.join(PROMPT_NAMES)}")
    if language not in _OBSERVATION_LABEL:
        raise KeyError(f"no prompts in language {language!r}; available: {', '.join(_OBSERVATION_LABEL)}")
    return files(__name__).joinpath(f"{name}.{language}.md").read_text(encoding="utf-8")


def render_prompt(name: str, language: str, *, suite: str | None = None, **values: Any) -> str:
    """Prompt ``name`` (the ``suite``'s own text if it has one) in ``language``, placeholders filled."""
    from mobility_env.mobilitybench.episode import SCENARIOS
    from mobility_rewards.mobilitybench.plan import ATOMIC_STEPS

    name = SUITE_PROMPTS.get(suite or "", {}).get(name, name)
    defaults = {"scenarios": "\n".join(f"  - {s}" for s in SCENARIOS), "plan_steps": ", ".join(ATOMIC_STEPS)}
    return Template(prompt_text(name, language)).substitute({**defaults, **values}).strip()


def task_prompt(language: str, *, suite: str | None, query: str, context: Any) -> str:
    """The user turn of an episode: the request and its context (MobilePA: the earlier dialogue) as JSON."""
    return render_prompt("task", language, suite=suite, query=query, context=json.dumps(context, ensure_ascii=False))


def observation_label(language: str) -> str:
    """How a tool result is introduced when tools travel as text (json tool mode)."""
    return _OBSERVATION_LABEL[language]
