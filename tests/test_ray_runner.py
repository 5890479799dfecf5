"""The Ray backend with a real local Ray cluster (num_cpus=2): equality, killed workers, resume, export, chunks."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mobility_agents.base import Agent
from mobility_agents.export import TRAJECTORY_SCHEMA, export_run
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.ray_runner import run_ray
from mobility_agents.baselines.mobilitybench.rule import RuleAgent
from mobility_agents.llm.client import EndpointDown
from mobility_agents.runner import RunConfig, RunStopped, Terminated, read_results, run_local
from mobility_env.runfiles import read_run_info

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    yield
    ray.shutdown()


def _config(tmp_path, name, data, **kwargs):
    return RunConfig(out_dir=tmp_path / name, data=str(data), progress=False, **kwargs)


def _by_key(records):
    return {(r["episode_id"], r["sample_index"]): r for r in records}


def test_ray_equals_local_for_deterministic_agent(tmp_path, built_dir):
    local = run_local(RuleAgent, _config(tmp_path, "local", built_dir, limit=24))
    remote = run_ray(RuleAgent, _config(tmp_path, "ray", built_dir, limit=24, workers=2))
    threaded = run_ray(RuleAgent, _config(tmp_path, "ray-threads", built_dir, limit=24, workers=2), concurrency=3)
    assert len(local) == len(remote) == len(threaded) == 24
    local_by = _by_key(local)
    for other in (_by_key(remote), _by_key(threaded)):
        assert local_by.keys() == other.keys()
        for key in local_by:
            assert local_by[key]["metrics"] == other[key]["metrics"]
            assert local_by[key]["total_reward"] == other[key]["total_reward"]


def test_killed_worker_loses_and_duplicates_nothing(tmp_path, built_dir):
    submitted = []

    def kill_on_fourth(actor, item):
        submitted.append(item)
        if len(submitted) == 4:
            ray.kill(actor, no_restart=True)

    records = run_ray(OracleAgent, _config(tmp_path, "killed", built_dir, limit=12, workers=2),
                      on_submit=kill_on_fourth)
    keys = [(r["episode_id"], r["sample_index"]) for r in records]
    assert len(keys) == len(set(keys)) == 12
    assert len(submitted) > 12  # the killed worker's episodes were re-run
    assert all(not r["failure"] for r in records)


class CrashingAgent(Agent):
    name = "crashing"

    def play(self, session):
        raise RuntimeError("policy bug")


def test_agent_exception_is_a_recorded_failure(tmp_path, built_dir):
    # Workers cannot import this test module: ship its classes by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    records = run_ray(CrashingAgent, _config(tmp_path, "crash", built_dir, limit=3, workers=1))
    assert len(records) == 3
    assert all(r["failure"]["type"] == "RuntimeError" and r["metrics"]["DR"] == 0.0 for r in records)


def test_resume_across_backends(tmp_path, built_dir):
    first = run_local(OracleAgent, _config(tmp_path, "resume", built_dir, limit=5))
    assert len(first) == 5
    with pytest.raises(Exception, match="--resume"):
        run_ray(OracleAgent, _config(tmp_path, "resume", built_dir, limit=10, workers=2))
    # Simulate a crash that cut the last line in half.
    results = tmp_path / "resume" / "results.jsonl"
    results.write_bytes(results.read_bytes() + b'{"episode_id": "cut')
    second = run_ray(OracleAgent, _config(tmp_path, "resume", built_dir, limit=10, workers=2, resume=True))
    keys = [(r["episode_id"], r["sample_index"]) for r in read_results(results)]
    assert len(second) == len(keys) == len(set(keys)) == 10
    assert [json.loads(line)["episode_id"] for line in results.read_text(encoding="utf-8").splitlines()][:5] == \
        [r["episode_id"] for r in first]


def test_group_samples_export_with_advantages(tmp_path, built_dir):
    config = _config(tmp_path, "groups", built_dir, limit=4, samples_per_episode=3, workers=2)
    records = run_ray(RuleAgent, config)
    assert len(records) == 12
    out = export_run(config.out_dir, tmp_path / "rl.parquet")
    table = pq.read_table(out)
    assert table.schema.equals(TRAJECTORY_SCHEMA)
    rows = table.to_pylist()
    groups = {}
    for row in rows:
        groups.setdefault(row["episode_id"], []).append(row)
        assert [m["role"] for m in row["prompt"]] == ["system", "user"] and row["messages"][2]["role"] == "assistant"
        assert abs(sum(row["step_rewards"]) - row["total_reward"]) < 1e-9
    assert len(groups) == 4 and all(len(g) == 3 for g in groups.values())
    for group in groups.values():
        assert abs(sum(r["advantage"] for r in group)) < 1e-6


def test_mobilepa_runs_on_ray_like_locally(tmp_path):
    from mobility_agents.baselines.mobilepa.scripted import PhoneOracleAgent

    local = run_local(PhoneOracleAgent, RunConfig(out_dir=tmp_path / "local", env_id="MobilePA-v0", limit=8,
                                                  progress=False))
    remote = run_ray(PhoneOracleAgent, RunConfig(out_dir=tmp_path / "ray", env_id="MobilePA-v0", limit=8, workers=2,
                                                 progress=False))
    assert len(local) == len(remote) == 8
    local_by, remote_by = _by_key(local), _by_key(remote)
    assert local_by.keys() == remote_by.keys()
    for key, record in local_by.items():
        assert record["metrics"]["success"] == 1.0
        assert record["metrics"] == remote_by[key]["metrics"] and record["verdict"] == remote_by[key]["verdict"]
        assert record["total_reward"] == remote_by[key]["total_reward"]
        assert record["bucket"] == remote_by[key]["bucket"] and record["task_scenario"] == record["category"]


def _session(out_dir):
    return read_run_info(out_dir)["sessions"][-1]


def test_short_episodes_go_several_per_hand_out_long_ones_alone(tmp_path, built_dir):
    from loopback_cluster import slow_agent
    import mobility_agents.ray_runner as ray_runner

    fast = run_ray(RuleAgent, _config(tmp_path, "fast", built_dir, limit=24, samples_per_episode=4, workers=2))
    assert len(fast) == 96
    summary = _session(tmp_path / "fast")["ray"]
    # ~3.5 ms an episode: a hand-out of one is only each worker's first two (nothing measured yet)
    assert 1 < summary["largest_hand_out"] <= ray_runner.MAX_CHUNK and summary["hand_outs"] <= 96 // 2
    pause = 2 * ray_runner.CHUNK_TARGET_S  # an episode longer than a chunk's target goes alone
    slow = run_ray(slow_agent(tmp_path / "barrier", workers=1, pause_s=pause),
                   _config(tmp_path, "slow", built_dir, limit=6, workers=2))
    assert len(slow) == 6
    summary = _session(tmp_path / "slow")["ray"]
    assert summary["largest_hand_out"] == 1 and summary["hand_outs"] == 6


def test_worker_killed_holding_a_chunk_runs_the_whole_chunk_again(tmp_path, built_dir, monkeypatch):
    import mobility_agents.ray_runner as ray_runner

    # after each worker's first two episodes, hand-outs are as large as an even share of what is left allows
    monkeypatch.setattr(ray_runner, "CHUNK_TARGET_S", 60.0)
    handed: Counter[str] = Counter()
    killed: list[str] = []

    def kill_mid_chunk(actor, item):  # on_submit runs for each episode of a hand-out, once it is submitted
        key = actor._actor_id.hex()
        handed[key] += 1
        if handed[key] == 8 and not killed:
            killed.append(key)
            ray.kill(actor, no_restart=True)

    local = run_local(RuleAgent, _config(tmp_path, "local", built_dir, limit=24, samples_per_episode=4))
    remote = run_ray(RuleAgent, _config(tmp_path, "killed", built_dir, limit=24, samples_per_episode=4, workers=2),
                     on_submit=kill_mid_chunk)
    lines = (tmp_path / "killed" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    keys = [(json.loads(line)["episode_id"], json.loads(line)["sample_index"]) for line in lines]
    assert killed and len(keys) == len(set(keys)) == 96  # every episode exactly once
    local_by, remote_by = _by_key(local), _by_key(remote)
    assert local_by.keys() == remote_by.keys()
    assert all(local_by[k]["metrics"] == remote_by[k]["metrics"] for k in local_by)
    failures = _session(tmp_path / "killed")["worker_failures"]
    rerun = failures[0]["episodes_rerun"]
    # the hand-out that crossed 8 held more than the 2 episodes of the first ones: all of it ran again
    assert len(failures) == 1 and len(rerun) > 2 and len({tuple(k) for k in rerun}) == len(rerun)
    assert sum(handed.values()) >= 96 + len(rerun)


class DownOnThirdEpisode(RuleAgent):
    """The rule agent whose endpoint is down from the third episode of each instance on; notes every episode
    it starts in ``log`` (one line each), so a test sees what a worker went on to play."""

    log = ""

    def __init__(self):
        super().__init__()
        self.started = 0

    def run_episode(self, env, episode_id, *, seed=None, sample_index=0):
        self.started += 1
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {episode_id} {sample_index}\n")
        if self.started >= 3:
            raise EndpointDown("http://127.0.0.1:9/v1: cannot connect (connection refused)")
        return super().run_episode(env, episode_id, seed=seed, sample_index=sample_index)


def test_fatal_error_mid_chunk_ends_the_chunk_there(tmp_path, built_dir, monkeypatch):
    import mobility_agents.ray_runner as ray_runner

    monkeypatch.setattr(ray_runner, "CHUNK_TARGET_S", 60.0)  # the third episode of a worker is in a large chunk
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    DownOnThirdEpisode.log = str(tmp_path / "started.log")
    Path(DownOnThirdEpisode.log).touch()
    out = tmp_path / "down"
    with pytest.raises(RunStopped, match="EndpointDown"):
        run_ray(DownOnThirdEpisode, _config(tmp_path, "down", built_dir, limit=24, samples_per_episode=4, workers=2))
    started = Counter(line.split()[0] for line in Path(DownOnThirdEpisode.log).read_text().splitlines())
    # each worker: two episodes written; the third raised and ended its chunk (of dozens) there; a chunk already
    # queued behind it may start one more, which raises too
    assert 3 in started.values() or 4 in started.values()
    assert all(2 <= count <= 4 for count in started.values())
    assert _session(out)["ray"]["largest_hand_out"] >= 10
    kept = read_results(out / "results.jsonl")
    assert len(kept) == 2 * len(started) and all(not r["failure"] for r in kept)


def test_sigterm_while_the_driver_waits_on_ray_stops_as_sigterm(tmp_path, built_dir, monkeypatch):
    """Ray's ray.wait/ray.get turn what a signal handler raises into a bare KeyboardInterrupt (exit 130, "interrupted");
    the driver, waiting there for chunks most of a run, must still stop as SIGTERM (Terminated: exit 143)."""
    from loopback_cluster import slow_agent
    import mobility_agents.ray_runner as ray_runner

    monkeypatch.setattr(ray_runner, "WAIT_S", 10.0)  # the signal lands inside ray.wait, not between two of them
    timers: list[threading.Timer] = []

    def terminate_soon(actor, item):  # 1 s after the first hand-out: both workers 2 s into a 3 s episode
        if not timers:
            timers.append(threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM)))
            timers[0].start()

    try:  # 4 episodes of 3 s on 2 workers: the run lasts well beyond the signal
        with pytest.raises(KeyboardInterrupt) as caught:  # caught as a bare one too, to fail as a test, not a ^C
            run_ray(slow_agent(tmp_path / "barrier", workers=1, pause_s=3.0),
                    _config(tmp_path, "term", built_dir, limit=4, workers=2), on_submit=terminate_soon)
    finally:
        for timer in timers:
            timer.cancel()
    assert isinstance(caught.value, Terminated) and caught.value.signum == signal.SIGTERM, repr(caught.value)
    assert read_results(tmp_path / "term" / "results.jsonl") == []
