"""Run an agent over many episodes and write ``results.jsonl`` / ``trajectories.jsonl``.

Guarantees:

* **incremental**: one JSON line per finished (episode, sample), flushed as it finishes;
* **resumable**: ``resume=True`` skips every (episode_id, sample_index) already in
  ``results.jsonl``; a line cut by a crash is dropped and that episode re-run; nothing is
  overwritten, and without ``resume`` an existing non-empty run directory is refused;
  ``retry_failed=True`` also re-runs episodes whose latest result is a recorded failure (a
  model server that was down), appending the new line: readers keep the last line per key;
* **isolated failures**: an agent error is that episode's recorded failure, not the run's;
* **deterministic seeds**: the seed of (episode_id, sample_index) depends only on the run
  seed, never on order or backend.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from mobility_env.errors import ConfigError
from mobility_env.runfiles import RESULTS_FILE, RUN_FILE, TRAJECTORIES_FILE, read_results, record_key

__all__ = ["RESULTS_FILE", "TRAJECTORIES_FILE", "RunConfig", "episode_seed", "read_results", "run_local"]


AgentFactory = Callable[[], Any]


def episode_seed(run_seed: int, episode_id: str, sample_index: int) -> int:
    digest = hashlib.sha256(f"{run_seed}:{episode_id}:{sample_index}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass
class RunConfig:
    """What to run; see ``mobility-env run --help`` for the meaning of each field."""

    out_dir: Path
    data: str | None = None
    episode_ids: list[str] | None = None
    scenarios: list[str] | None = None
    limit: int | None = None
    samples_per_episode: int = 1
    seed: int = 0
    resume: bool = False
    retry_failed: bool = False
    workers: int = 1
    progress: bool = True
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)


def select_episodes(all_ids: list[str], scenario_of: Callable[[str], str], config: RunConfig) -> list[str]:
    ids = list(config.episode_ids) if config.episode_ids else list(all_ids)
    unknown = sorted(set(ids) - set(all_ids))
    if unknown:
        raise ConfigError(f"unknown episode id(s): {', '.join(unknown[:5])}")
    if config.scenarios:
        wanted = {s.lower() for s in config.scenarios}
        ids = [e for e in ids if scenario_of(e).lower() in wanted]
        if not ids:
            raise ConfigError(f"no episode has scenario {', '.join(config.scenarios)}")
    if config.limit is not None:
        ids = ids[: config.limit]
    return ids


class RunWriter:
    """Appends result and trajectory lines, thread-safe, flushed per line."""

    def __init__(self, out_dir: Path):
        self._lock = threading.Lock()
        self._results = (out_dir / RESULTS_FILE).open("a", encoding="utf-8")
        self._trajectories = (out_dir / TRAJECTORIES_FILE).open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        with self._lock:
            # Trajectory first: a result line only exists once its trajectory is on disk.
            self._trajectories.write(json.dumps(record["trajectory"], ensure_ascii=False) + "\n")
            self._trajectories.flush()
            self._results.write(json.dumps(record["result"], ensure_ascii=False) + "\n")
            self._results.flush()

    def close(self) -> None:
        self._results.close()
        self._trajectories.close()


def prepare_run(config: RunConfig) -> set[tuple[str, int]]:
    """Create the run directory; return the (episode, sample) pairs already done."""
    out = config.out_dir
    results = out / RESULTS_FILE
    if results.exists() and results.stat().st_size > 0 and not config.resume:
        raise ConfigError(f"{out} already holds results; pass --resume to continue it or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    # trajectories.jsonl may hold a line whose result was never written: keep it, the
    # readers pair them by (episode_id, sample_index) and the newest wins.
    done = {record_key(r) for r in read_results(results, repair=True)
            if not (config.retry_failed and r.get("failure"))}
    run_meta = {"data": config.data, "seed": config.seed, "samples_per_episode": config.samples_per_episode,
                **config.meta, "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    (out / RUN_FILE).write_text(json.dumps(run_meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return done


def pending_work(ids: Iterable[str], config: RunConfig, done: set[tuple[str, int]]) -> list[tuple[str, int, int]]:
    return [(eid, k, episode_seed(config.seed, eid, k)) for eid in ids for k in range(config.samples_per_episode)
            if (eid, k) not in done]


def _progress(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="ep", file=sys.stderr, dynamic_ncols=True)


def run_local(agent_factory: AgentFactory, config: RunConfig) -> list[dict[str, Any]]:
    """Run in this process (``workers`` threads, one env and one agent each)."""
    from mobility_env.env import MobilityEnv
    from mobility_env.store import resolve_data

    store = resolve_data(config.data, config.env_kwargs.get("lookup_config"))
    env_kwargs = {k: v for k, v in config.env_kwargs.items() if k != "lookup_config"}
    ids = select_episodes(store.ids, store.task_scenario, config)
    done = prepare_run(config)
    work = pending_work(ids, config, done)
    writer = RunWriter(config.out_dir)
    bar = _progress(len(work), config.progress, "episodes")
    local = threading.local()

    def play(item: tuple[str, int, int]) -> dict[str, Any]:
        if not hasattr(local, "env"):
            local.env = MobilityEnv(store=store, **env_kwargs)
            local.agent = agent_factory()
        episode_id, sample_index, seed = item
        return local.agent.run_episode(local.env, episode_id, seed=seed, sample_index=sample_index)

    try:
        if config.workers <= 1:
            for item in work:
                writer.write(play(item))
                if bar:
                    bar.update()
        else:
            with ThreadPoolExecutor(max_workers=config.workers) as pool:
                for future in as_completed([pool.submit(play, item) for item in work]):
                    writer.write(future.result())
                    if bar:
                        bar.update()
    finally:
        writer.close()
        if bar:
            bar.close()
    return read_results(config.out_dir / RESULTS_FILE)


def default_out_dir(agent: str, data: str | None) -> Path:
    name = Path(data).stem if data else "default"
    return Path("runs") / f"{agent}-{name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
