"""The skill loader ``load_skill``: returns a skill's how-to and tools (see :mod:`~mobility_env.mobilepa.skills`).

The tool itself writes nothing (a load is not a change of the phone: it never counts as collateral
damage and leaves the delta alone); the loads are the ``load_skill`` calls of the trajectory, and the
action-space expansion is :class:`~mobility_env.mobilepa.episode.PhoneSession`'s, which adds the
loaded skill's tools to the episode's offered tools after a successful load.

A skill is offered in a task when its ``S_0`` has a ``skills`` row for it; loading a skill the library
lacks, or one the task does not offer, is ``not_found`` naming the offered ones. The registered
schema takes any ``skill_id`` and lists the whole library; ``MobilePAEnv`` shows each task
:func:`load_skill_schema`, which enumerates only that task's skills, in its language.
"""

from __future__ import annotations

from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import PHONE_TOOLS, Feedback, failure, success, tool
from ..params import text
from ..skills import LOAD_SKILL, SKILLS
from ..state import PhoneState

DOMAIN = "skills"  # an action category of its own (catalogue.CAPABILITY_DOMAINS)
_DESCRIPTION = ("Load a skill (a packaged routine of several tools): returns its how-to and its tools, which can "
                "be called from the next step on.")


@tool(LOAD_SKILL, DOMAIN, _DESCRIPTION,
      text("skill_id", "the skill to load; skills: " + ", ".join(SKILLS)))
def load_skill(state: PhoneState, args: dict[str, Any]) -> Feedback:
    skill_id = args["skill_id"].strip()
    offered = {row["skill_id"]: row["language"] for row in
               state.query("SELECT skill_id, language FROM skills ORDER BY skill_id")}
    skill = SKILLS.get(skill_id)
    if skill is None or skill_id not in offered:
        known = "no such skill" if skill is None else "not offered on this phone"
        return failure(ErrorKind.NOT_FOUND, f"{skill_id[:60]!r}: {known}; skills offered: "
                       f"{', '.join(offered) or 'none'}", offered=list(offered))
    language = offered[skill_id] or ("en" if (state.setting("language") or "").startswith("en") else "zh")
    return success(**skill.card(language))


def load_skill_schema(skill_ids: list[str], language: str = "zh") -> dict[str, Any]:
    """The OpenAI schema of ``load_skill`` as a task shows it: ``skill_id`` enumerates ``skill_ids`` and the
    description names and describes each (``zh`` unless ``language`` is ``en``)."""
    schema = PHONE_TOOLS[LOAD_SKILL].openai_schema()
    function = schema["function"]
    offered = [SKILLS[skill_id] for skill_id in skill_ids if skill_id in SKILLS]
    listing = "; ".join(f"{s.skill_id} ({s.name.get(language)}: {s.description.get(language)})" for s in offered)
    function["description"] = f"{_DESCRIPTION} Skills offered: {listing or 'none'}."
    parameter = function["parameters"]["properties"]["skill_id"]
    parameter["description"] = "the skill to load"
    if offered:
        parameter["enum"] = [s.skill_id for s in offered]
    return schema
