"""Ray backend of the runner: rollout workers as Ray actors.

Each actor holds its own env (a built directory is opened memory-mapped, so workers share the
page cache instead of copying the sandbox) and plays ``concurrency`` episodes at once on
threads (Ray threaded actors), so an LLM-bound policy is limited by the model server, not by
the env. The driver hands out work, writes each (episode_id, sample_index) exactly once, and
when an actor dies mid-episode (killed process, crashed node) it starts a replacement and
re-runs the unfinished episodes: nothing is lost and nothing is duplicated. Results are the
same as the local backend's for deterministic agents, because per-episode seeds do not depend
on which worker ran the episode.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import Any, Callable

from mobility_env.errors import ConfigError

from .runner import RESULTS_FILE, RunConfig, RunWriter, _progress, pending_work, prepare_run, read_results, select_episodes

MAX_REPLACEMENTS = 16


class RolloutWorker:
    """The body of a Ray actor: one env and one agent per thread."""

    def __init__(self, agent_factory: Callable[[], Any], data: str | None, env_kwargs: dict[str, Any]):
        from mobility_env.store import resolve_data

        self.agent_factory = agent_factory
        self.env_kwargs = {k: v for k, v in env_kwargs.items() if k != "lookup_config"}
        self.store = resolve_data(data, env_kwargs.get("lookup_config"))
        self.local = threading.local()

    def pid(self) -> int:
        return os.getpid()

    def play(self, episode_id: str, sample_index: int, seed: int) -> dict[str, Any]:
        from mobility_env.env import MobilityEnv

        if not hasattr(self.local, "env"):
            self.local.env = MobilityEnv(store=self.store, **self.env_kwargs)
            self.local.agent = self.agent_factory()
        return self.local.agent.run_episode(self.local.env, episode_id, seed=seed, sample_index=sample_index)


def _ensure_ray(address: str | None, workers: int):
    import ray

    if not ray.is_initialized():
        if address:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        else:
            ray.init(num_cpus=max(1, min(workers, os.cpu_count() or 1)), include_dashboard=False,
                     ignore_reinit_error=True, log_to_driver=False)
    return ray


def run_ray(agent_factory: Callable[[], Any], config: RunConfig, *, address: str | None = None,
            concurrency: int = 1, on_submit: Callable[[Any, tuple[str, int, int]], None] | None = None) -> list[dict[str, Any]]:
    """Run ``config`` on Ray actors; see module docstring. ``on_submit`` is a test hook."""
    from mobility_env.store import resolve_data

    if config.workers < 1:
        raise ConfigError("--workers must be at least 1")
    ray = _ensure_ray(address, config.workers)
    from ray.exceptions import RayActorError, RayTaskError

    store = resolve_data(config.data, config.env_kwargs.get("lookup_config"))
    ids = select_episodes(store.ids, store.task_scenario, config)
    done = prepare_run(config)
    queue = deque(pending_work(ids, config, done))
    actor_class = ray.remote(num_cpus=0.5 if concurrency == 1 else 0.25, max_concurrency=max(1, concurrency))(RolloutWorker)

    def new_actor():
        return actor_class.remote(agent_factory, config.data, config.env_kwargs)

    actors = [new_actor() for _ in range(min(config.workers, max(1, len(queue))))]
    in_flight: dict[Any, tuple[Any, tuple[str, int, int]]] = {}
    written: set[tuple[str, int]] = set()
    writer = RunWriter(config.out_dir)
    bar = _progress(len(queue), config.progress, "episodes (ray)")
    replacements = 0

    def submit(actor) -> None:
        if queue:
            item = queue.popleft()
            ref = actor.play.remote(*item)
            in_flight[ref] = (actor, item)
            if on_submit is not None:
                on_submit(actor, item)

    try:
        for actor in actors:
            for _ in range(max(1, concurrency)):
                submit(actor)
        while in_flight:
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            ref = ready[0]
            actor, item = in_flight.pop(ref)
            try:
                record = ray.get(ref)
            except RayActorError:
                # The actor died: requeue its unfinished work and replace it once.
                replacements += 1
                if replacements > MAX_REPLACEMENTS:
                    raise ConfigError(f"{replacements} Ray workers died; giving up (see the Ray logs)")
                lost = [item] + [it for r, (a, it) in list(in_flight.items()) if a == actor]
                for r in [r for r, (a, _) in in_flight.items() if a == actor]:
                    in_flight.pop(r)
                queue.extendleft(reversed(lost))
                replacement = new_actor()
                for _ in range(max(1, concurrency)):
                    submit(replacement)
                continue
            except RayTaskError as exc:  # an error outside the agent's own guard: record it
                record = _failure_record(item, exc, store.task_scenario(item[0]))
            key = (record["result"]["episode_id"], int(record["result"]["sample_index"]))
            if key not in written:
                writer.write(record)
                written.add(key)
                if bar:
                    bar.update()
            submit(actor)
    finally:
        writer.close()
        if bar:
            bar.close()
    return read_results(config.out_dir / RESULTS_FILE)


def _failure_record(item: tuple[str, int, int], exc: Exception, scenario: str) -> dict[str, Any]:
    from mobility_env.episode import FAMILY_OF

    episode_id, sample_index, seed = item
    failure = {"type": "worker_error", "message": str(exc)[:500]}
    return {"result": {"episode_id": episode_id, "sample_index": sample_index, "metrics": {}, "verdict": None,
                       "failure": failure,
                       "seed": seed, "input_tokens": 0, "output_tokens": 0, "task_scenario": scenario,
                       "intent_family": FAMILY_OF.get(scenario), "total_reward": 0.0, "steps": 0},
            "trajectory": {"episode_id": episode_id, "sample_index": sample_index, "steps": [], "failure": failure}}
