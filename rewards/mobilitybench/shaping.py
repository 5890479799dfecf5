"""Per-step shaped rewards for RL that pay only for real progress.

``RewardShaper(weights).step(episode, calls_before, call)`` returns named components for one
tool call; ``terminal(metrics)`` the components paid at ``finish``. The episode return is the
sum of every component.

**Progress.** The *targets* are the gold calls the snapshot recorded a servable response for
(a gold call with no recorded response, e.g. Traffic Info's ``query_poi``, or with recorded
arguments the schema rejects, replays as a miss for every agent and is no target). A call
**makes progress** on target ``i`` when all hold:

1. it selects a tool (:mod:`mobility_rewards.mobilitybench.tooluse`) and replayed successfully
   (``CallRecord.succeeded``: no error, match not ``miss``);
2. the recorded call that served it is target ``i``: ``entry_gold_index == i`` and
   ``entry_episode_id`` is this episode (or not recorded); a record without a gold index
   counts as target ``i`` only when the identity (:func:`mobility_rewards.mobilitybench.tooluse.call_identity`) of
   the served arguments equals target ``i``'s — so a recorded alternative, another episode's
   entry (global fallback) or a near miss serves no target;
3. it has target ``i``'s tool, and for route tools the served route has target ``i``'s
   travel mode (tool), canonical strategy set (:func:`mobility_rewards.mobilitybench.slots.canonical_strategy_set`;
   bus codes as text, default ``"0"``) and waypoint count — the served arguments are the
   recorded ``entry_arguments`` when the record has them, else the call's;
4. target ``i`` was not reached by an earlier call.

Step components:

* ``tool_coverage = w · (Φ_T(after) − Φ_T(before))``, ``Φ_T`` = the fraction of the targets'
  tools that some progress call used;
* ``decomposition = w · (Φ_D(after) − Φ_D(before))``, ``Φ_D`` = the fraction of the targets
  reached (each target is one gold atomic step, :func:`mobility_rewards.mobilitybench.plan.call_step`);
* ``schema_violation`` (w per call failing SC), ``redundant_call`` (w per call that
  :func:`mobility_rewards.mobilitybench.tooluse.is_redundant` counts: a repeated identity or a tool the gold does not
  use), ``error`` (w per call that came back with an error other than a schema error:
  invalid JSON, unknown tool, replay miss — except a miss of a call whose identity is a gold
  call the sandbox cannot serve, which no agent can avoid).

Only progress moves a potential, so a call that missed, errored, was served a wrong
record, or repeats a reached target earns no positive term, and an error observation's
components sum to <= 0.

Terminal components: ``DR``, ``FPR`` (and ``ID``, ``IE``, ``PF``, weight 0 by default: logged,
not paid) — each ``weight × metric``.

Coverage terms are potential-based (Ng et al., 1999, with γ = 1): they telescope to
``w · Φ(final)`` and never decrease. With the sign constraints :class:`RewardWeights`
enforces (bonuses ≥ 0, penalties ≤ 0), the return of any trajectory is at most
``w_tools + w_dec + w_DR + w_FPR (+ w_ID + w_IE + w_PF)`` = :attr:`RewardWeights.max_return`,
which the gold trajectory (each gold call once, then a correct finish) collects exactly on
every episode with at least one target whose reference answer verifies (DR = FPR = 1; the
audit's blocking episodes are the exceptions). ``tests/test_rewards_shaping.py`` and
``tests/test_shaping_progress.py`` check both on the real sample and the bundled synthetic
set, the latter against random mutations of the gold calls played through the env.

**Versions.** :data:`REWARD_VERSION` numbers what a trajectory is paid and scored: the step
components above, the terminal components, and the metric values they pay
(:func:`mobility_rewards.mobilitybench.metrics.compute_metrics`). The verdict behind DR and FPR has its own
number (:data:`mobility_rewards.verdict.VERDICT_VERSION`), the observation text the agent read
another (:data:`mobility_env.mobilitybench.observation.OBSERVATION_VERSION`); :func:`format_versions` returns
the three, as ``run.json`` records them. The weights are not part of a version: they are
settings, recorded with the env options.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping

from mobility_env.mobilitybench import observation
from mobility_env.mobilitybench.episode import Episode
from mobility_env.errors import ConfigError
from mobility_env.tools import TOOLS, canonical_tool_name, validate_call
from mobility_env.trajectory import ErrorKind
from mobility_env.mobilitybench.trajectory import CallRecord

from .slots import canonical_strategy_set
from .tooluse import CallFacts, call_identity, facts_of, gold_tools, is_redundant
from ..verdict import VERDICT_VERSION

#: The version of the reward and the metrics (see the module docstring). Bump it BY HAND when a
#: trajectory can be paid or scored differently: a step or terminal component added, removed or
#: computed otherwise, the progress rules, or a metric's definition. Weights are settings, not
#: versions. History: 1 — the terms and metrics of MobilityBench-v0 described here.
REWARD_VERSION = 1
#: The names under which runs record the versions (``run.json``, its ``identity``, ``scorecard.json``).
FORMAT_VERSION_KEYS = ("observation_version", "reward_version", "verdict_version")

_PENALTIES = ("schema_violation", "redundant_call", "error")


def format_versions() -> dict[str, int]:
    """The observation, reward and verdict versions of this code, keyed by :data:`FORMAT_VERSION_KEYS`."""
    return {"observation_version": observation.OBSERVATION_VERSION, "reward_version": REWARD_VERSION,
            "verdict_version": VERDICT_VERSION}


@dataclass(frozen=True)
class RewardWeights:
    """Weights of every shaped-reward term (one place for the hyperparameters).

    Penalties must be <= 0 and bonuses >= 0 (checked), which keeps the gold trajectory optimal.
    """

    schema_violation: float = -0.1  # per call that fails schema validation
    redundant_call: float = -0.05  # per repeated call identity or call to a tool the gold does not use
    error: float = -0.05  # per call returning an error (invalid JSON, unknown tool, avoidable miss)
    tool_coverage: float = 0.3  # total, paid as progress calls use the gold tools
    decomposition: float = 0.2  # total, paid as progress calls reach the gold call steps
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


def route_signature(tool: str, arguments: Any) -> tuple[Any, ...] | None:
    """What a route call must share with the gold route call: (strategy, waypoint count); None
    for other tools. Driving strategies as canonical sets, bus codes as text (default "0")."""
    if TOOLS[tool].kind != "route":
        return None
    args = arguments if isinstance(arguments, dict) else {}
    strategy = args.get("strategy")
    if tool == "bus_route":
        options: Any = str(strategy).strip() if strategy not in (None, "") else "0"
    else:
        options = canonical_strategy_set(strategy)
    waypoints = args.get("waypoints")
    return options, len(waypoints) if isinstance(waypoints, list) else 0


@dataclass(frozen=True)
class Target:
    """A gold call the agent can reach: recorded in the snapshot, so it replays."""

    index: int
    tool: str
    identity: str
    signature: tuple[Any, ...] | None


def progress_targets(episode: Episode) -> tuple[list[Target], frozenset[str]]:
    """(targets, identities of the gold calls the sandbox cannot serve: never recorded, or
    recorded with schema-invalid arguments)."""
    targets, unrecorded = [], set()
    for index, gold in enumerate(episode.gold_calls):
        tool = canonical_tool_name(gold.name)
        if tool is None or tool == "finish" or validate_call(tool, gold.arguments):
            continue
        identity = call_identity(tool, gold.arguments, valid=True)
        recorded = episode.gold_response(index)
        if recorded is None or validate_call(tool, recorded.arguments):  # the sandbox cannot serve it
            unrecorded.add(identity)
        else:
            targets.append(Target(index, tool, identity, route_signature(tool, gold.arguments)))
    return targets, frozenset(unrecorded)


_TARGETS: dict[int, tuple[Episode, tuple[list[Target], frozenset[str]]]] = {}
_TARGETS_KEPT = 256
_TARGETS_LOCK = threading.Lock()


def _episode_targets(episode: Episode) -> tuple[list[Target], frozenset[str]]:
    """:func:`progress_targets`, remembered for the last episodes seen (a revisit's reset skips it). The cache
    holds the episode itself, so its ``id`` cannot be reused while the entry lives; the targets are read-only."""
    cached = _TARGETS.get(id(episode))
    if cached is not None and cached[0] is episode:
        return cached[1]
    targets = progress_targets(episode)
    with _TARGETS_LOCK:  # the threads of one Ray actor share it
        if len(_TARGETS) >= _TARGETS_KEPT:
            _TARGETS.pop(next(iter(_TARGETS)))
        _TARGETS[id(episode)] = (episode, targets)
    return targets


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

    def step(self, episode: Episode, calls_before: list[CallRecord], call: CallRecord) -> dict[str, float]:
        """Components for ``call``, given the calls made before it in this episode."""
        state = self.start(episode)
        for before in calls_before:
            state.observe(before)
        return state.step(call)

    def start(self, episode: Episode) -> "ShapingState":
        """The per-episode running state: ``state.step(call)`` equals ``step(episode, calls so far, call)``
        without replaying the earlier calls (the env keeps one per episode)."""
        return ShapingState(self, episode)

    def terminal(self, metrics: Mapping[str, float]) -> dict[str, float]:
        """Components paid at ``finish`` from the episode's metrics."""
        w = self.weights
        return {name: getattr(w, name) * float(metrics.get(name, 0.0)) for name in ("DR", "FPR", "ID", "IE", "PF")}


class ShapingState:
    """What the step components depend on, accumulated call by call (see :meth:`RewardShaper.start`):
    the targets reached, their tools, and the call identities seen so far."""

    def __init__(self, shaper: RewardShaper, episode: Episode):
        self.shaper = shaper
        self.episode = episode
        self.gold_tools = gold_tools(episode)
        self.targets, self.unrecorded = _episode_targets(episode)
        self.target_tools = frozenset(t.tool for t in self.targets)
        self.reached: set[int] = set()
        self.reached_tools: set[str] = set()
        self.earlier: set[str] = set()
        # (record, its facts) for each call stepped, so the finish reuses them (see facts_for)
        self.stepped: list[tuple[CallRecord, CallFacts]] = []

    def facts_for(self, calls: list[CallRecord]) -> list[CallFacts] | None:
        """The facts computed at the steps for exactly these ``calls`` (the same records, in order), else None."""
        stepped = self.stepped
        if len(stepped) != len(calls) or any(record is not call for (record, _), call in zip(stepped, calls)):
            return None
        return [facts for _, facts in stepped]

    def potentials(self) -> tuple[float, float]:
        """(Φ_T, Φ_D) after the calls observed so far."""
        tools = len(self.reached_tools) / len(self.target_tools) if self.target_tools else 0.0
        steps = len(self.reached) / len(self.targets) if self.targets else 0.0
        return tools, steps

    def reached_target(self, call: CallRecord, facts: CallFacts) -> Target | None:
        """The target ``call`` makes progress on (rules 1-4 of the module docstring), or None."""
        if not facts.selected or not call.succeeded:
            return None
        if call.entry_episode_id is not None and call.entry_episode_id != self.episode.episode_id:
            return None
        served = call.entry_arguments if isinstance(call.entry_arguments, dict) else call.arguments
        served_identity = None
        for target in self.targets:
            if target.index in self.reached or target.tool != facts.tool:
                continue
            if call.entry_gold_index is not None:
                if call.entry_gold_index != target.index:
                    continue
            else:
                served_identity = served_identity or call_identity(facts.tool, served)
                if served_identity != target.identity:
                    continue
            if route_signature(facts.tool, served) == target.signature:
                return target
        return None

    def observe(self, call: CallRecord, facts: CallFacts | None = None) -> None:
        """Add ``call`` to the calls made so far."""
        facts = facts or facts_of(call)
        target = self.reached_target(call, facts)
        if target is not None:
            self.reached.add(target.index)
            self.reached_tools.add(target.tool)
        self.earlier.add(facts.key)

    def step(self, call: CallRecord, *, arguments_valid: bool | None = None) -> dict[str, float]:
        """Components for ``call`` after the calls observed so far; then observes it.

        ``arguments_valid``: the caller's ``validate_call`` verdict, if it has one (see ``facts_of``).
        """
        w = self.shaper.weights
        facts = facts_of(call, arguments_valid=arguments_valid)
        error_type = None if call.error is None else call.error.get("type")
        unavoidable_miss = (error_type == ErrorKind.NO_CACHED_RESULT and facts.selected is not None
                            and facts.key in self.unrecorded)
        avoidable_error = error_type is not None and error_type != ErrorKind.SCHEMA_ERROR and not unavoidable_miss
        redundant = is_redundant(facts, self.earlier, self.gold_tools)
        tools_before, steps_before = self.potentials()
        self.observe(call, facts)
        self.stepped.append((call, facts))
        tools_after, steps_after = self.potentials()
        return {
            "tool_coverage": w.tool_coverage * (tools_after - tools_before),
            "decomposition": w.decomposition * (steps_after - steps_before),
            "schema_violation": w.schema_violation * (not facts.schema_ok),
            "redundant_call": w.redundant_call * redundant,
            "error": w.error * avoidable_error,
        }
