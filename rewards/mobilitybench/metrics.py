"""``compute_metrics(episode, trajectory)``: the per-episode scores, in one pure call.

The ten keys of :data:`METRIC_KEYS` (the paper's, plus PF), then the stricter project
variants of :data:`EXTRA_METRIC_KEYS`:

============  ============================================================  ===============
key           what it measures                                              module
============  ============================================================  ===============
``ID``        intent label names the gold scenario (similarity >= 0.7)      :mod:`.intent`
``IE``        extracted slots equal the gold constraint set                 :mod:`.slots`
``DEC_P``     ``matched / |gold steps|`` over step sequences (multiset)     :mod:`.plan`
``DEC_R``     ``matched / |predicted steps|`` over step sequences           :mod:`.plan`
``TS_P``      ``|T_gold ∩ T_pred| / |T_gold|`` over tool-name sets          :mod:`.tooluse`
``TS_R``      ``|T_gold ∩ T_pred| / |T_pred|`` over tool-name sets          :mod:`.tooluse`
``SC``        mean schema-valid call indicator                              :mod:`.tooluse`
``PF``        share of gold task arguments matched                          :mod:`.tooluse`
``DR``        a complete answer (and an existing route) was delivered       :mod:`.verify`
``FPR``       the answer satisfies every constraint, on replayed evidence   :mod:`.verify`
``CALL_NR``   extra: ``1 − redundant calls / all calls`` (call level)       :mod:`.tooluse`
============  ============================================================  ===============

Every value is a float in [0, 1]. Nothing is loaded at import; the intent vectorizer is
fitted at first use. ``IT``/``OT`` (token counts) are not scores; the scorecard reads them
from ``trajectory.input_tokens``/``output_tokens`` (see :func:`token_usage`).

Example::

    >>> from mobility_rewards import compute_metrics
    >>> from mobility_rewards.mobilitybench.reference import gold_trajectory
    >>> compute_metrics(episode, gold_trajectory(episode))["FPR"]   # doctest: +SKIP
    1.0
"""

from __future__ import annotations

from mobility_env.mobilitybench.episode import Episode
from mobility_env.mobilitybench.trajectory import Trajectory

from .intent import intent_score
from .plan import call_step, declared_plan_steps, decomposition_scores, gold_call_steps, gold_plan_steps
from .slots import intent_extraction_score
from .tooluse import (CallFacts, call_non_redundancy, facts_of, parameter_fidelity, schema_compliance,
                      tool_selection_precision, tool_selection_recall)
from ..verdict import Verdict
from .verify import verify_answer

METRIC_KEYS: tuple[str, ...] = ("ID", "IE", "DEC_P", "DEC_R", "TS_P", "TS_R", "SC", "PF", "DR", "FPR")
EXTRA_METRIC_KEYS: tuple[str, ...] = ("CALL_NR",)


def decomposition(episode: Episode, trajectory: Trajectory,
                  facts: list[CallFacts] | None = None) -> tuple[float, float]:
    """(DEC_P, DEC_R): declared plan vs the full gold decomposition, else executed calls vs gold calls."""
    finish = trajectory.finish
    declared = declared_plan_steps(finish.plan if finish is not None else None)
    if declared is not None:
        return decomposition_scores(gold_plan_steps(episode), declared)
    facts = facts if facts is not None else [facts_of(call) for call in trajectory.calls]
    executed = [step for call, fact in zip(trajectory.calls, facts)
                if fact.selected and (step := call_step(call.name, call.arguments)) is not None]
    return decomposition_scores(gold_call_steps(episode.gold_calls), executed)


def compute_metrics(episode: Episode, trajectory: Trajectory) -> dict[str, float]:
    """The metrics of one episode: :data:`METRIC_KEYS` then :data:`EXTRA_METRIC_KEYS` (see the module
    table; edge cases in each module)."""
    return score_episode(episode, trajectory)[0]


def score_episode(episode: Episode, trajectory: Trajectory,
                  facts: list[CallFacts] | None = None) -> tuple[dict[str, float], Verdict]:
    """``(metrics, verdict)``: the metrics of :func:`compute_metrics` and the verdict behind DR/FPR.

    ``facts``: :func:`~mobility_rewards.mobilitybench.tooluse.facts_of` of each of ``trajectory.calls``, when the
    caller has them already (the env's scorer computed them at each step); read here otherwise.
    """
    finish = trajectory.finish
    calls = trajectory.calls
    if facts is None or len(facts) != len(calls):
        facts = [facts_of(call) for call in calls]
    verdict = verify_answer(episode, trajectory)
    dec_p, dec_r = decomposition(episode, trajectory, facts)
    metrics = {
        "ID": intent_score(finish.intent if finish else None, episode.task_scenario),
        "IE": intent_extraction_score(finish.slots if finish else None, episode.gold_slots, episode.user_location),
        "DEC_P": dec_p,
        "DEC_R": dec_r,
        "TS_P": tool_selection_precision(episode, calls, facts),
        "TS_R": tool_selection_recall(episode, calls, facts),
        "SC": schema_compliance(episode, calls, facts),
        "PF": parameter_fidelity(episode, calls),
        "DR": 1.0 if verdict.delivered else 0.0,
        "FPR": 1.0 if verdict.delivered and verdict.passed else 0.0,
        "CALL_NR": call_non_redundancy(episode, calls, facts),
    }
    return {key: float(metrics[key]) for key in METRIC_KEYS + EXTRA_METRIC_KEYS}, verdict


def token_usage(trajectory: Trajectory) -> dict[str, int]:
    """``{"IT": input tokens, "OT": output tokens}`` as recorded by the runner."""
    return {"IT": int(trajectory.input_tokens or 0), "OT": int(trajectory.output_tokens or 0)}
