"""The agent interface: an agent plays one episode of a ``MobilityEnv`` and returns a record.

Every agent subclasses :class:`Agent` and implements ``play(session)``. The session wraps the
env: ``session.call(name, arguments)`` steps it with a tool call and returns the observation
text; ``session.finish(answer, ...)`` ends the episode. Everything is recorded on the way
(actions, observations, rewards, errors, token usage per role), so an agent never has to
build its own transcript. An exception inside ``play`` (a model server that keeps failing,
a context overflow, an agent bug) becomes a recorded failure of that episode, never a crashed
run: ``run_episode`` abandons the episode (scored with DR = 0) and returns the record. The one
exception is :class:`FatalAgentError` (e.g. ``mobility_agents.llm.client.EndpointDown``: the model
endpoint is gone, so every further episode would fail too): ``run_episode`` abandons the
episode and lets it through, and the runner stops the run, keeping what it wrote.

Before the first episode a runner calls ``agent.preflight()``: a no-op here, one cheap
request to the model server for the LLM agents (a typed error if it cannot serve the run).
An agent with ``episode_timeout_s`` set gets ``session.deadline`` (a ``time.monotonic()``
instant) and ends the episode as a recorded ``deadline`` failure once it passes.
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.errors import MobilityEnvError
from mobility_env.trajectory import ErrorKind, as_record


class AgentFailure(Exception):
    """An agent could not go on with this episode (e.g. the model server kept failing).

    Recorded as the episode's ``failure`` ``{"type": kind, "message": ...}``, not raised out
    of ``run_episode``. ``transcript`` holds messages to add to the episode's trajectory
    (e.g. an over-long reply, cut to size) so the record shows what went wrong.
    """

    def __init__(self, kind: str, message: str, *, transcript: list[dict[str, Any]] | None = None):
        self.kind = kind
        self.transcript = list(transcript or [])
        super().__init__(message)

    def __reduce__(self):  # picklable for Ray, whose tasks carry exceptions between processes
        return (_rebuild_failure, (type(self), self.kind, str(self), self.transcript))


def _rebuild_failure(cls: type, kind: str, message: str, transcript: list[dict[str, Any]]) -> "AgentFailure":
    return cls(kind, message, transcript=transcript)


class FatalAgentError(MobilityEnvError):
    """No further episode of this run can succeed (e.g. the model endpoint is down).

    Raised from ``play`` (or ``preflight``); ``run_episode`` abandons the env episode and
    lets it through instead of recording a failure, so the runner can stop the run, keep
    the results already written and exit non-zero with this message.
    """


@dataclass
class ModelCallStats:
    """What talking to the model cost one episode (``result["model_calls"]``).

    ``requests``: HTTP requests sent (retries and the cut-off retry included);
    ``retries``: requests that repeated a failed one (transport failure, 5xx, 429);
    ``timeouts``: requests abandoned at their wall-clock deadline;
    ``busy``: of those, the ones where the server still answered ``GET /models``: busy (generating), not down;
    ``cutoffs``: replies that stopped at ``max_tokens`` (``finish_reason == "length"``);
    ``wall_s``: seconds spent in model requests and retry backoff;
    ``tools_offered``: replies to requests that offered tools (native ``tools=`` or the JSON
    protocol); ``tool_calls``: tool calls in those replies. A native-mode run whose episodes
    all have ``tools_offered > 0`` and ``tool_calls == 0`` is talking to a server that drops
    the tools (the runner warns).
    """

    requests: int = 0
    retries: int = 0
    timeouts: int = 0
    busy: int = 0
    cutoffs: int = 0
    wall_s: float = 0.0
    tools_offered: int = 0
    tool_calls: int = 0

    def to_record(self) -> dict[str, Any]:
        return {"requests": self.requests, "retries": self.retries, "timeouts": self.timeouts, "busy": self.busy,
                "cutoffs": self.cutoffs, "wall_s": round(self.wall_s, 4), "tools_offered": self.tools_offered,
                "tool_calls": self.tool_calls}


@dataclass
class StepRecord:
    action: Any
    observation: str
    reward: float
    error: dict[str, str] | None = None
    match: str | None = None


@dataclass
class EpisodeSession:
    """One episode in progress; see module docstring."""

    env: MobilityEnv
    observation: str
    info: dict[str, Any]
    steps: list[StepRecord] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    done: bool = False
    terminated: bool = False
    truncated: bool = False
    final_info: dict[str, Any] | None = None
    deadline: float | None = None  # time.monotonic() instant the episode must end by, if any
    model_calls: ModelCallStats = field(default_factory=ModelCallStats)

    @property
    def query(self) -> str:
        return self.info["query"]

    @property
    def context(self) -> dict[str, Any]:
        return self.info["context"]

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.info["tools"]

    def step(self, action: Any) -> str:
        """Send one raw action (JSON text, dict or OpenAI tool call); return the observation. A step whose info
        has ``tools`` (the env's action space changed) updates :attr:`tools` for the requests that follow."""
        if self.done:
            raise AgentFailure(ErrorKind.EPISODE_OVER, "the episode has already ended")
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps.append(StepRecord(action=action if isinstance(action, (str, dict)) else str(action), observation=obs,
                                     reward=float(reward), error=info.get("error"), match=info.get("match")))
        if "tools" in info:  # the action space changed (MobilePA: a skill was loaded): the next request shows it
            self.info = {**self.info, "tools": info["tools"]}
        if terminated or truncated:
            self.done, self.terminated, self.truncated, self.final_info = True, terminated, truncated, info
        return obs

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        return self.step({"name": name, "arguments": arguments})

    def finish(self, answer: str, *, intent: str | None = None, slots: dict[str, Any] | None = None,
               plan: list[str] | None = None, route_index: int | None = None) -> str:
        args: dict[str, Any] = {"answer": answer}
        accepted = self.finish_fields()
        for key, value in (("intent", intent), ("slots", slots), ("plan", plan), ("route_index", route_index)):
            if value is not None and (accepted is None or key in accepted):
                args[key] = value
        return self.call("finish", args)

    def finish_fields(self) -> frozenset[str] | None:
        """The arguments this env's ``finish`` takes (from its schema in ``tools``); None if it does not say.

        ``MobilityBench-v0``'s finish takes the answer and the declared intent, slots, plan and route;
        ``MobilePA-v0``'s only the answer, so the fields an agent declares for the former are left out."""
        for spec in self.info.get("tools") or []:
            function = spec.get("function") if isinstance(spec, dict) else None
            if isinstance(function, dict) and function.get("name") == "finish":
                properties = (function.get("parameters") or {}).get("properties")
                return frozenset(properties) if isinstance(properties, dict) else None
        return None

    @property
    def suite(self) -> str:
        """``info["suite"]`` of the env (``"mobilepa"`` for ``MobilePA-v0``); ``"mobility"`` when absent."""
        return str(self.info.get("suite") or "mobility")

    def add_usage(self, role: str, input_tokens: int, output_tokens: int) -> None:
        entry = self.usage.setdefault(role, {"input_tokens": 0, "output_tokens": 0, "calls": 0})
        entry["input_tokens"] += int(input_tokens or 0)
        entry["output_tokens"] += int(output_tokens or 0)
        entry["calls"] += 1

    @property
    def input_tokens(self) -> int:
        return sum(u["input_tokens"] for u in self.usage.values())

    @property
    def output_tokens(self) -> int:
        return sum(u["output_tokens"] for u in self.usage.values())


class Agent:
    """Base class. Subclasses set ``name`` and implement ``play(session)``.

    ``episode_timeout_s`` (None: no limit) bounds the wall-clock time of one episode; agents
    that wait on something slow (a model server) set it and honour ``session.deadline``.
    """

    name = "agent"
    model: str | None = None
    episode_timeout_s: float | None = None

    def play(self, session: EpisodeSession) -> None:
        raise NotImplementedError

    def preflight(self) -> dict[str, Any] | None:
        """Check, before any episode, that the agent can run at all; None when nothing to check.

        The runner always calls it. Raises a :class:`FatalAgentError` when the run cannot
        succeed (LLM agents: unreachable endpoint, rejected key, not an OpenAI server).
        """
        return None

    def run_episode(self, env: MobilityEnv, episode_id: str, *, seed: int | None = None,
                    sample_index: int = 0) -> dict[str, Any]:
        """Play one episode; return ``{"result": ..., "trajectory": ...}`` records.

        ``result`` is the results.jsonl line (episode_id, sample_index, task_scenario,
        intent_family, metrics, verdict, input_tokens, output_tokens, total_reward, steps,
        failure, model_calls..., and the task's ``labels`` when the env gives them: MobilePA's
        category, bucket, obstacles and language, the category doubling as ``task_scenario``);
        ``verdict`` is the env's terminal ``info["verdict"]`` (every check behind DR and FPR,
        ``mobility_rewards.verdict.Verdict.to_dict()``);
        ``model_calls`` is :class:`ModelCallStats` (all zero for agents without a model);
        ``trajectory`` the full transcript for trajectories.jsonl.

        Raises :class:`FatalAgentError` from ``play`` (after abandoning the env episode);
        every other exception becomes ``result["failure"]``.
        """
        started = time.perf_counter()
        obs, info = env.reset(seed=seed, options={"episode_id": episode_id})
        session = EpisodeSession(env=env, observation=obs, info=info)
        if self.episode_timeout_s is not None:
            session.deadline = time.monotonic() + self.episode_timeout_s
        failure = None
        try:
            self.play(session)
        except FatalAgentError as exc:  # the run cannot go on: leave the env clean, let it through
            if not session.done:
                env.abandon(reason=type(exc).__name__)
            raise
        except AgentFailure as exc:
            failure = {"type": exc.kind, "message": str(exc)}
            session.messages.extend(exc.transcript)
        except Exception as exc:  # an agent bug is this episode's failure, not the run's
            failure = {"type": type(exc).__name__, "message": str(exc)[:500],
                       "traceback": traceback.format_exc(limit=5)[-2000:]}
        if not session.done:
            session.final_info = env.abandon(reason=(failure or {}).get("type", "agent_stopped"))
            session.done, session.truncated = True, True
        final = session.final_info or {}
        labels: dict[str, Any] = final["labels"] if isinstance(final.get("labels"), dict) else {}
        rewards = [s.reward for s in session.steps]
        result = {
            "episode_id": episode_id, "sample_index": sample_index, "agent": self.name, "model": self.model,
            "task_scenario": final.get("task_scenario", labels.get("category")),
            "intent_family": final.get("intent_family"), **labels,
            "metrics": final.get("metrics") or {}, "verdict": final.get("verdict"),
            "input_tokens": session.input_tokens,
            "output_tokens": session.output_tokens, "usage_by_role": session.usage,
            "total_reward": float(sum(rewards)), "steps": len(session.steps),
            "terminated": session.terminated, "truncated": session.truncated, "failure": failure,
            "model_calls": session.model_calls.to_record(),
            "seed": seed, "elapsed_s": round(time.perf_counter() - started, 4),
        }
        trajectory = {
            "episode_id": episode_id, "sample_index": sample_index, "query": info["query"], "context": info["context"],
            "tools": info.get("tools"), "messages": session.messages,
            "steps": [{"action": s.action, "observation": s.observation, "reward": s.reward, "error": s.error,
                       "match": s.match} for s in session.steps],
            "record": as_record(final.get("trajectory")),
        }
        return {"result": result, "trajectory": json.loads(json.dumps(trajectory, ensure_ascii=False, default=str))}
