"""The mutation registry: named ways to answer an episode, correct (must pass) or wrong (must fail), and scoring one
answer.

A family module registers each generator with :func:`mutation`; :data:`CORRECT` and :data:`WRONG` map kind to
:class:`Mutation`, in :data:`KIND_ORDER` once the package has imported every family (:func:`order_kinds`).
:func:`answers` and :func:`family_answers` draw them as hypothesis strategies (hypothesis is imported when they are
called: it is a dev dependency).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from mobility_env.mobilitybench.trajectory import FinishRecord, Trajectory
from mobility_rewards import score_episode

from .draw import Draw, HypothesisDraw
from .facts import FAMILIES, EpisodeFacts

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

#: The order the kinds are tried in: the sweep's round robin over the kinds that apply to an episode, a hypothesis
#: draw's index, the pool of another kind that the invisible and Traditional forms rewrite. It is the order in which
#: they were registered when every generator lived in one module, kept so that a seeded sweep writes the same answers
#: as before the split. A kind not listed (a new one) comes after these, in the order it was registered.
KIND_ORDER = (
    # correct
    "plain", "closing_remark", "markdown", "mixed_units", "chinese_numerals", "coarse_rounding", "english",
    "leg_before_total", "constraint_acknowledged", "rejected_alternative", "poi_name_only", "poi_address_only",
    "nearby_several", "nearby_with_remarks", "geo_spaced_address", "geo_two_components", "far_denial",
    "weather_all_days", "traffic_colloquial", "traffic_far_denial", "traffic_with_description", "invisible_chars",
    "invisible_lookalike_letters", "traditional_script", "mode_synonym", "other_units", "step_by_step", "main_roads",
    "destination_restated", "traffic_colloquial_light",
    # wrong
    "value_off", "hedge_two_values", "hedge_range", "contradiction", "route_stuffing", "other_option_facts",
    "twelve_hour_shift", "clock_off", "leave_at_deadline", "recommend_excluded_line", "choose_excluded_option",
    "opposite_strategy", "strategy_property", "skip_waypoint", "wrong_mode", "generic", "query_echo", "keyword_alone",
    "false_no_result", "far_denied_truth", "forecast_one_day_only", "forecast_day_wrong", "superstring_name",
    "name_other_province_address", "foreign_place", "other_branch", "place_hedge", "mixed_foreign_place",
    "place_stuffing", "bare_city", "one_character", "wrong_component", "wrong_street_number", "wrong_condition",
    "negated_condition", "condition_hedge", "condition_contradiction", "condition_stuffing", "temperature_off",
    "temperature_hedge", "temperature_stuffing", "other_day", "wrong_state", "far_denied_state", "negated_state",
    "state_hedge", "state_contradiction", "state_stuffing", "invisible_hedge", "invisible_lookalikes",
    "traditional_wrong", "wrong_mode_vocabulary", "other_unit_hedge", "unitless_alternative", "wrong_step",
    "foreign_road", "wrong_destination", "no_lights", "phenomenon_hedge", "traffic_colloquial_wrong",
)


# -- one answer, scored ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """An answer to an episode, and whether it should pass."""

    kind: str
    correct: bool
    text: str
    route_index: int | None = None
    calls: str = "gold"  # "gold": every gold call served; "none": no call at all


@dataclass(frozen=True)
class Outcome:
    """FPR and DR of an answer, and the verdict's reasons."""

    fpr: float
    dr: float
    verdict: dict[str, Any]

    @property
    def leaked(self) -> bool:
        return self.fpr == 1.0


def score(facts: EpisodeFacts, answer: Answer) -> Outcome:
    """The answer scored as a finish after the gold calls (or none): what the env's scored ``finish`` computes."""
    calls = facts.records if answer.calls == "gold" else []
    trajectory = Trajectory(episode_id=facts.episode_id, calls=calls,
                            finish=FinishRecord(answer=answer.text, route_index=answer.route_index))
    metrics, verdict = score_episode(facts.episode, trajectory)
    return Outcome(metrics["FPR"], metrics["DR"], verdict.to_dict())


def explain(facts: EpisodeFacts, answer: Answer, outcome: Outcome) -> str:
    """An assertion message: the mutation, the answer, the evidence facts and the verdict."""
    return json.dumps({"kind": answer.kind, "should_pass": answer.correct, "answer": answer.text,
                       "route_index": answer.route_index, "FPR": outcome.fpr, "DR": outcome.dr,
                       "facts": facts.describe(), "verdict": outcome.verdict}, ensure_ascii=False, indent=1,
                      default=str)


# -- the registry ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """A named way to answer: ``make(facts, draw)`` builds the answer; ``applies(facts)`` says where."""

    kind: str
    correct: bool
    families: tuple[str, ...]
    make: Callable[[EpisodeFacts, Draw], Answer]
    applies: Callable[[EpisodeFacts], bool]

    def usable_on(self, facts: EpisodeFacts) -> bool:
        return facts.family in self.families and self.applies(facts)


CORRECT: dict[str, Mutation] = {}
WRONG: dict[str, Mutation] = {}


def mutation(kind: str, *, correct: bool, families: Sequence[str] = FAMILIES,
             applies: Callable[[EpisodeFacts], bool] = lambda facts: True):
    """Register ``fn(facts, draw) -> str | (str, route_index) | Answer`` under ``kind``."""
    registry = CORRECT if correct else WRONG

    def register(fn: Callable[[EpisodeFacts, Draw], Any]) -> Callable[[EpisodeFacts, Draw], Any]:
        assert kind not in registry, kind

        def make(facts: EpisodeFacts, d: Draw) -> Answer:
            made = fn(facts, d)
            if isinstance(made, Answer):
                return made
            text, index = made if isinstance(made, tuple) else (made, facts.chosen)
            return Answer(kind, correct, text, index)
        registry[kind] = Mutation(kind, correct, tuple(families), make, applies)
        return fn
    return register


def applicable(registry: dict[str, Mutation], facts: EpisodeFacts) -> list[Mutation]:
    return [m for m in registry.values() if m.usable_on(facts)]


def order_kinds() -> None:
    """Put :data:`CORRECT` and :data:`WRONG` in :data:`KIND_ORDER` (the package calls it once every family module
    has registered its kinds); unlisted kinds keep their registration order, after the listed ones."""
    rank = {kind: i for i, kind in enumerate(KIND_ORDER)}
    for registry in (CORRECT, WRONG):
        kinds = sorted(registry.items(), key=lambda item: rank.get(item[0], len(rank)))
        registry.clear()
        registry.update(kinds)


# -- hypothesis strategies ---------------------------------------------------------------------------------------------


def mutated_answer(facts: EpisodeFacts, mutation: Mutation) -> SearchStrategy[Answer]:
    """The answers ``mutation`` makes on ``facts``, its choices drawn by hypothesis."""
    from hypothesis import strategies as st  # a dev dependency: imported only where a property test draws

    @st.composite
    def made(draw: Callable[[SearchStrategy[Any]], Any]) -> Answer:
        return mutation.make(facts, HypothesisDraw(draw))
    return made()


def answers(facts_list: Sequence[EpisodeFacts], mutation: Mutation) -> SearchStrategy[tuple[EpisodeFacts, Answer]]:
    """(episode facts, answer) for an episode where ``mutation`` applies."""
    from hypothesis import strategies as st

    eligible = [f for f in facts_list if mutation.usable_on(f)]
    assert eligible, f"no episode where {mutation.kind!r} applies"
    return st.sampled_from(eligible).flatmap(lambda f: mutated_answer(f, mutation).map(lambda a: (f, a)))


def family_answers(facts_list: Sequence[EpisodeFacts], family: str,
                   correct: bool) -> SearchStrategy[tuple[EpisodeFacts, Answer]]:
    """(facts, answer) for an episode of ``family`` and any correct (or wrong) mutation that applies to it."""
    from hypothesis import strategies as st

    registry = CORRECT if correct else WRONG
    eligible = [f for f in facts_list if f.family == family]
    assert eligible, f"no usable {family} episode"
    return st.sampled_from(eligible).flatmap(
        lambda f: st.sampled_from(applicable(registry, f)).flatmap(lambda m: mutated_answer(f, m)).map(
            lambda a: (f, a)))
