"""The Ray backend with a real local Ray cluster (num_cpus=2): equality, killed workers, resume, export."""

from __future__ import annotations

import json
import sys

import pyarrow.parquet as pq
import pytest

from mobility_agents.base import Agent
from mobility_agents.export import TRAJECTORY_SCHEMA, export_run
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.ray_runner import run_ray
from mobility_agents.baselines.mobilitybench.rule import RuleAgent
from mobility_agents.runner import RunConfig, read_results, run_local

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
