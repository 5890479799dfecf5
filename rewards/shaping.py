"""Per-step shaped rewards for RL, built from the same definitions as the metrics.

``RewardShaper(weights).step(episode, calls_before, call)`` returns named components for one
tool call; ``terminal(metrics)`` the components paid at ``finish``. The episode return is the
sum of every component.

Step components:

* ``tool_coverage = w · (Φ_T(after) − Φ_T(before))`` where ``Φ_T`` is the fraction of the gold
  tools (TS_P's T_gold) selected by the calls so far (:mod:`rewards.tooluse`);
* ``decomposition = w · (Φ_D(after) − Φ_D(before))`` where ``Φ_D`` is the fraction of the gold
  call steps (:func:`rewards.plan.gold_call_steps`) performed by selected calls;
* ``schema_violation`` (w per call failing SC), ``redundant_call`` (w per call TS_R counts as
  redundant), ``error`` (w per call that came back with an error other than a schema error:
  invalid JSON, unknown tool, replay miss — except a miss on a gold call the snapshot never
  recorded, which no agent can avoid).

Terminal components: ``DR``, ``FPR`` (and ``ID``, ``IE``, ``PF``, weight 0 by default: logged,
not paid) — each ``weight × metric``.

Coverage terms are potential-based (Ng et al., 1999, with γ = 1): they telescope to
``w · Φ(final)``, so they change no optimal policy, and repeating a call earns nothing. With
the sign constraints :class:`RewardWeights` enforces (bonuses ≥ 0, penalties ≤ 0), the
return of any trajectory is at most ``w_tools + w_dec + w_DR + w_FPR (+ w_ID + w_IE + w_PF)``,
which the gold trajectory (each gold call once, then a correct finish) collects exactly
(``tests/test_rewards_shaping.py`` checks it on the real sample).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping

from mobility_env.episode import Episode
from mobility_env.errors import ConfigError
from mobility_env.trajectory import CallRecord

from .plan import call_steps, gold_call_steps
from .tooluse import CallFacts, argument_matches, call_tool, facts_of, gold_tools, is_redundant, task_arguments

_PENALTIES = ("schema_violation", "redundant_call", "error")


@dataclass(frozen=True)
class RewardWeights:
    """Weights of every shaped-reward term (one place for the hyperparameters).

    Penalties must be <= 0 and bonuses >= 0 (checked), which keeps the gold trajectory optimal.
    """

    schema_violation: float = -0.1  # per call that fails schema validation
    redundant_call: float = -0.05  # per exact repeat or call to a tool the gold does not use
    error: float = -0.05  # per call returning an error (invalid JSON, unknown tool, avoidable miss)
    tool_coverage: float = 0.3  # total, paid as gold tools get selected
    decomposition: float = 0.2  # total, paid as gold call steps get performed
    DR: float = 0.5  # terminal: answer delivered
    FPR: float = 1.0  # terminal: answer verified against the evidence
    ID: float = 0.0  # terminal diagnostics (weight 0 = logged only)
    IE: float = 0.0
    PF: float = 0.0

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                raise ConfigError(f"reward weight {item.name!r} must be a number, got {value!r}")
            if item.name in _PENALTIES and value > 0:
                raise ConfigError(f"reward weight {item.name!r} is a penalty and must be <= 0, got {value!r}")
            if item.name not in _PENALTIES and value < 0:
                raise ConfigError(f"reward weight {item.name!r} is a bonus and must be >= 0, got {value!r}")

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> RewardWeights:
        """Weights from a dict (e.g. a config file); unknown keys are an error, not ignored."""
        known = {item.name for item in fields(cls)}
        unknown = sorted(set(mapping) - known)
        if unknown:
            raise ConfigError(f"unknown reward weight(s) {', '.join(map(repr, unknown))}; "
                              f"known weights: {', '.join(sorted(known))}")
        return cls(**{key: float(value) if not isinstance(value, bool) else value for key, value in mapping.items()})

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @property
    def max_return(self) -> float:
        """The largest return any trajectory can collect (the gold trajectory's)."""
        return self.tool_coverage + self.decomposition + self.DR + self.FPR + self.ID + self.IE + self.PF


def _unrecorded_gold_call(episode: Episode, call: CallRecord) -> bool:
    """Is ``call`` a gold call whose response the snapshot never recorded? (its miss is not the agent's fault)."""
    tool = call_tool(call)
    if tool is None or not isinstance(call.arguments, dict):
        return False
    for index, gold in enumerate(episode.gold_calls):
        if gold.name != tool or episode.gold_response(index) is not None:
            continue
        names = task_arguments(tool, gold.arguments)
        if all(argument_matches(tool, n, call.arguments.get(n), gold.arguments.get(n)) for n in names):
            return True
    return False


class RewardShaper:
    """Named per-step and terminal reward components (see the module docstring).

    Example::

        shaper = RewardShaper(RewardWeights())
        for i, call in enumerate(trajectory.calls):
            reward = sum(shaper.step(episode, trajectory.calls[:i], call).values())
        reward = sum(shaper.terminal(compute_metrics(episode, trajectory)).values())
    """

    def __init__(self, weights: RewardWeights | None = None):
        self.weights = weights or RewardWeights()

    def tool_potential(self, episode: Episode, calls: list[CallRecord]) -> float:
        gold = gold_tools(episode)
        if not gold:
            return 0.0
        selected = {facts_of(call).selected for call in calls}
        return len(gold & selected) / len(gold)

    def step_potential(self, episode: Episode, calls: list[CallRecord]) -> float:
        gold = gold_call_steps(episode.gold_calls)
        if not gold:
            return 0.0
        done: set[str] = set()
        for call in calls:
            if facts_of(call).selected:
                done |= call_steps(call.name, call.arguments)
        return len(gold & done) / len(gold)

    def step(self, episode: Episode, calls_before: list[CallRecord], call: CallRecord) -> dict[str, float]:
        """Components for ``call``, given the calls made before it in this episode."""
        state = self.start(episode)
        for before in calls_before:
            state.observe(before)
        return state.step(call)

    def start(self, episode: Episode) -> "ShapingState":
        """The per-episode running state: ``state.step(call)`` equals ``step(episode, calls so far, call)``
        in O(1) per call (the env keeps one per episode)."""
        return ShapingState(self, episode)

    def terminal(self, metrics: Mapping[str, float]) -> dict[str, float]:
        """Components paid at ``finish`` from the episode's metrics."""
        w = self.weights
        return {name: getattr(w, name) * float(metrics.get(name, 0.0)) for name in ("DR", "FPR", "ID", "IE", "PF")}


class ShapingState:
    """What the step components depend on, accumulated call by call (see :meth:`RewardShaper.start`).

    The potentials are the same set ratios as :meth:`RewardShaper.tool_potential` and
    :meth:`RewardShaper.step_potential`, kept as the sets of selected tools, performed steps
    and exact-repeat keys seen so far.
    """

    def __init__(self, shaper: RewardShaper, episode: Episode):
        self.shaper = shaper
        self.episode = episode
        self.gold_tools = gold_tools(episode)
        self.gold_steps = gold_call_steps(episode.gold_calls)
        self.selected: set[str | None] = set()
        self.done: set[str] = set()
        self.earlier: set[str] = set()

    def _potentials(self) -> tuple[float, float]:
        tools = len(self.gold_tools & self.selected) / len(self.gold_tools) if self.gold_tools else 0.0
        steps = len(self.gold_steps & self.done) / len(self.gold_steps) if self.gold_steps else 0.0
        return tools, steps

    def observe(self, call: CallRecord, facts: CallFacts | None = None) -> None:
        """Add ``call`` to the calls made so far."""
        facts = facts or facts_of(call)
        self.selected.add(facts.selected)
        if facts.selected:
            self.done |= call_steps(call.name, call.arguments)
        self.earlier.add(facts.key)

    def step(self, call: CallRecord, *, arguments_valid: bool | None = None) -> dict[str, float]:
        """Components for ``call`` after the calls observed so far; then observes it.

        ``arguments_valid``: the caller's ``validate_call`` verdict, if it has one (see ``facts_of``).
        """
        w = self.shaper.weights
        facts = facts_of(call, arguments_valid=arguments_valid)
        error_type = (call.error or {}).get("type")
        avoidable_error = error_type is not None and error_type != "schema_error" and not (
            error_type == "no_cached_result" and _unrecorded_gold_call(self.episode, call))
        redundant = is_redundant(facts, self.earlier, self.gold_tools)
        tools_before, steps_before = self._potentials()
        self.observe(call, facts)
        tools_after, steps_after = self._potentials()
        return {
            "tool_coverage": w.tool_coverage * (tools_after - tools_before),
            "decomposition": w.decomposition * (steps_after - steps_before),
            "schema_violation": w.schema_violation * (not facts.schema_ok),
            "redundant_call": w.redundant_call * redundant,
            "error": w.error * avoidable_error,
        }
