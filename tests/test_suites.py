"""Suites as the unit (mobility_env/suites.py): one registry entry per suite, no env-id branch elsewhere, and a third
suite added by one registry entry (tests/toy_suite.py) runs through the same runner as the two real ones."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from mobility_env.errors import ConfigError
from mobility_env.suites import SUITES, Suite, register_suite, suite_named, suite_of, unregister_suite

REPO = Path(__file__).resolve().parents[1]
ENV_IDS = ("MobilityBench-v0", "MobilePA-v0")
REGISTRATION = "mobility_env/__init__.py"  # where the entries are registered (next to their Gymnasium ids)
SUITE_WORDS = frozenset(ENV_IDS) | {"mobilepa", "mobility", "MOBILEPA", "MOBILITYBENCH"}


def _names_a_suite(node: ast.AST) -> bool:
    """A suite's id or name as a literal, or the constants that hold them (also inside a tuple or list)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_suite(e) for e in node.elts)
    return isinstance(node, ast.Constant) and node.value in SUITE_WORDS or \
        isinstance(node, ast.Name) and node.id in SUITE_WORDS


def test_no_env_id_branches_outside_the_registry():
    """Code asks the registry what differs (a suite's unit, id key, options, parts), never which suite it drives: no
    comparison with a suite's id or name anywhere in the packages or the examples (a dict keyed by suite, a default or
    a suite's own module naming itself is no branch)."""
    found = []
    for folder in ("agents", "mobility_env", "rewards", "examples"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path.relative_to(REPO).as_posix() == REGISTRATION:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Compare) and any(_names_a_suite(n) for n in (node.left, *node.comparators)):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "\n".join(found)


def test_both_suites_are_registered_with_their_parts():
    assert set(ENV_IDS) <= set(SUITES)
    for env_id in ENV_IDS:
        suite = suite_of(env_id)
        assert suite_named(suite.name) is suite
        runtime, scoring = suite.part("runtime"), suite.part("scoring")
        for function in ("data_path", "open_store", "open_run", "make_env", "fixed_tools"):
            assert callable(getattr(runtime, function)), (env_id, function)
        assert scoring.repeat_columns and callable(scoring.scorecard)
    with pytest.raises(ConfigError, match="registered: MobilityBench-v0, MobilePA-v0"):
        suite_of("Nope-v0")


@pytest.fixture
def toy():
    from mobility_agents.suites import BASELINES

    suite = register_suite(Suite(env_id="ToySuite-v0", name="toy", id_key="toy_id", unit="sums", max_steps=3,
                                 entry_point="toy_suite:ToyEnv", runtime="toy_suite", scoring="toy_suite:SCORING",
                                 default_options={"max_steps": 3}))
    BASELINES[suite.env_id] = {"rule": "toy_suite:ToyAgent"}
    yield suite
    BASELINES.pop(suite.env_id, None)
    unregister_suite(suite.env_id)


def test_a_third_suite_is_one_registry_entry(toy, tmp_path):
    """The runner, run.json, the agents' baselines, the scorecard and the repeats read the toy suite from its entry."""
    from mobility_agents.runner import RunConfig, run_local
    from mobility_agents.suites import baseline
    from mobility_agents.targets import default_env_options, make_env, open_store
    from mobility_rewards.repeats import repeat_spread

    assert default_env_options("ToySuite-v0") == {"max_steps": 3}
    assert type(make_env(open_store("ToySuite-v0", None), {})).__name__ == "ToyEnv"
    records = run_local(baseline("ToySuite-v0", "rule"),
                        RunConfig(out_dir=tmp_path / "run", env_id="ToySuite-v0", samples_per_episode=2,
                                  env_kwargs=default_env_options("ToySuite-v0"), progress=False))
    assert len(records) == 6 and all(r["metrics"]["success"] == 1.0 for r in records)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["env_id"] == "ToySuite-v0" and run["identity"]["toy_version"] == 1
    assert toy.part("scoring").scorecard(records) == "toy: 6/6 right"
    assert repeat_spread(records, toy.part("scoring").repeat_rows)["rows"]["overall"]["success"]["mean"] == 1.0


def test_an_option_belongs_to_the_suites_that_take_it():
    import argparse

    from mobility_agents.commands import env_options

    args = argparse.Namespace(env="MobilePA-v0", max_steps=None, obs_format="compact", maps_data=None)
    with pytest.raises(ConfigError, match="--obs-format is an option of MobilityBench-v0"):
        env_options(args)
    args = argparse.Namespace(env="MobilityBench-v0", max_steps=5, obs_format="json", maps_data=None)
    assert env_options(args) == {"max_steps": 5, "obs_format": "json"}


class _CountingScorer:
    """A scorer of one's own, the same for every suite: 1 per call, 5 for finishing; records what it was given."""

    def __init__(self):
        self.started, self.calls = [], []

    def start(self, item, sandbox=None):
        self.started.append((item, sandbox))
        return {"calls": 0}

    def step(self, state, call, *, arguments_valid=None):
        state["calls"] += 1
        self.calls.append(call)
        return {"counted": 1.0}

    def finish(self, state, trajectory):
        from mobility_env.scoring import EpisodeScore

        class Verdict:
            passed = True

            def summary(self):
                return "counted"

            def to_dict(self):
                return {"passed": True}
        return EpisodeScore({"finished": 5.0}, {"calls": float(state["calls"])}, Verdict())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_suite_takes_a_scorer_of_ones_own(env_id):
    """One scorer protocol: both envs take ``scorer=``, call ``step`` once per call record and ``finish`` once."""
    import gymnasium as gym

    scorer = _CountingScorer()
    env = gym.make(env_id, scorer=scorer)
    env.reset(seed=0)
    rewards = [env.step("not json")[1], env.step({"name": "no_such_tool", "arguments": {}})[1]]
    _, reward, terminated, _, info = env.step({"name": "finish", "arguments": {"answer": "done"}})
    assert rewards == [1.0, 1.0] and reward == 5.0 and terminated
    assert info["metrics"] == {"calls": 2.0} and len(scorer.calls) == 2 and len(scorer.started) == 1
    # one call-record shape: whatever the suite, a scorer reads the same fields
    from mobility_env.trajectory import ErrorKind, ToolCallRecord
    assert all(isinstance(call, ToolCallRecord) for call in scorer.calls)
    assert [(call.step, call.succeeded, call.error_kind) for call in scorer.calls] == [
        (1, False, ErrorKind.INVALID_JSON), (2, False, ErrorKind.UNKNOWN_TOOL)]
    assert scorer.calls[1].name == "no_such_tool" and json.loads(json.dumps(scorer.calls[1].to_dict()))["step"] == 2
    with pytest.raises(ConfigError, match="reward_weights configure the default scorer"):
        gym.make(env_id, scorer=scorer, reward_weights=suite_of(env_id).part("scoring").weights()())
    with pytest.raises(ConfigError, match="lacks step, finish"):
        gym.make(env_id, scorer=type("Half", (), {"start": lambda self, item, sandbox=None: None})())
    env.close()
