"""Evidence at build time: the views the verifier reads are stored by the build beside each recorded response and
read instead of decoding it (mobility_env.mobilitybench.evidence); the terminal info's trajectory is made when first
read (mobility_env.trajectory.LazyDict). Every stored view equals the view of the decoded response, a finish decodes
no response, and a directory of another evidence schema is reported and served by computing, with the same
verdicts."""

from __future__ import annotations

import copy
import json
import pickle
import shutil
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import mobility_env  # noqa: F401  (registers the envs)
from mobility_env.layout import FormatVersionWarning
from mobility_env.mobilitybench import evidence
from mobility_env.mobilitybench.store import EpisodeStore, resolve_data
from mobility_env.mobilitybench.trajectory import Trajectory
from mobility_env.trajectory import _UNDECODED, LazyDict, LazyJSON
from mobility_rewards import reference_finish, score_episode

from conftest import BUNDLED


def _shape(value: Any) -> Any:
    """The value with the type of every part (a stored view must be the same objects, not just equal ones)."""
    if isinstance(value, (list, tuple, frozenset, set)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return type(value).__name__, [_shape(v) for v in items]
    if hasattr(value, "__dataclass_fields__"):
        return type(value).__name__, [_shape(getattr(value, f)) for f in value.__dataclass_fields__]
    return type(value).__name__, value


def _stored_views_match(store: EpisodeStore) -> int:
    assert store.sandbox.index.evidence_ok
    checked = 0
    for episode_id in store.ids:
        for recorded in store.get(episode_id).recorded:
            lazy = recorded.__dict__["response"]
            assert type(lazy) is LazyJSON and lazy.evidence is not None
            decoded = json.loads(lazy.text)  # a fresh copy: nothing cached from the stored path
            for name in evidence.VIEWS:
                view = getattr(evidence, name)
                stored, computed = view(lazy), view(decoded)
                assert _shape(stored) == _shape(computed), (episode_id, name, stored, computed)
                checked += 1
            assert lazy._value is _UNDECODED  # reading the stored views decoded nothing
    return checked


def test_every_stored_view_of_the_bundled_set_is_the_view_of_its_response():
    assert _stored_views_match(resolve_data(BUNDLED)) > 10_000


def test_every_stored_view_of_the_real_sample_is_the_view_of_its_response(built_dir):
    assert _stored_views_match(resolve_data(built_dir)) > 1_000


def _play(env: Any, store: EpisodeStore, episode_id: str, answer: dict[str, Any] | None = None) -> dict[str, Any]:
    episode = store.get(episode_id)
    env.reset(options={"episode_id": episode_id})
    for call in episode.gold_calls:
        env.step({"name": call.name, "arguments": dict(call.arguments)})
    return env.step({"name": "finish", "arguments": answer or reference_finish(episode)})[4]


def test_a_finish_decodes_no_response_and_scores_as_the_decoded_trajectory():
    env = gym.make("MobilityBench-v0", data=BUNDLED).unwrapped
    store = resolve_data(BUNDLED)
    for episode_id in list(env.store.ids)[:60]:
        info = _play(env, store, episode_id)
        state = env.state
        raw = [call.__dict__["response"] for call in state.trajectory.calls]
        assert raw and all(type(r) is not LazyJSON or r._value is _UNDECODED for r in raw), episode_id
        # the same trajectory with every response decoded (as a results file holds it) scores the same
        decoded = Trajectory.model_validate(json.loads(json.dumps(info["trajectory"])))
        metrics, verdict = score_episode(state.episode, decoded)
        assert metrics == info["metrics"] and verdict.to_dict() == info["verdict"]


def test_a_directory_of_another_evidence_schema_is_reported_and_computed(monkeypatch, tmp_path):
    env = gym.make("MobilityBench-v0", data=BUNDLED).unwrapped
    ids = list(env.store.ids)[:40]
    stored = [_play(env, resolve_data(BUNDLED), i) for i in ids]
    directory = tmp_path / "old"  # another directory: opened stores are kept per directory
    shutil.copytree(BUNDLED, directory)
    monkeypatch.setattr(evidence, "EVIDENCE_SCHEMA", "0+reader0")  # as if written by another version
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        other = gym.make("MobilityBench-v0", data=directory).unwrapped
        assert not other.store.sandbox.index.evidence_ok  # (the index opens when first needed)
    messages = [str(w.message) for w in caught if issubclass(w.category, FormatVersionWarning)]
    assert any("stored evidence views" in m and "'0+reader0'" in m and "mobility-env index" in m for m in messages)
    computed = [_play(other, resolve_data(directory), i) for i in ids]
    assert [(s["metrics"], s["verdict"]) for s in stored] == [(c["metrics"], c["verdict"]) for c in computed]


def test_a_null_response_is_seen_without_decoding():
    lazy = LazyJSON(" null ")
    assert lazy.is_null() and lazy._value is _UNDECODED
    assert not LazyJSON('{"a": 1}').is_null()


# ---------------------------------------------------------------- the terminal info's trajectory


def test_the_terminal_trajectory_is_made_when_first_read():
    env = gym.make("MobilityBench-v0", data=BUNDLED).unwrapped
    store = resolve_data(BUNDLED)
    episode_id = env.store.ids[0]
    info = _play(env, store, episode_id)
    trajectory = info["trajectory"]
    assert type(trajectory) is LazyDict and isinstance(trajectory, dict)
    assert trajectory._make is not None  # not made yet
    expected = env.state.trajectory.model_dump()
    assert trajectory == expected and trajectory._make is None
    assert json.loads(json.dumps(info["trajectory"], ensure_ascii=False)) == json.loads(json.dumps(expected))


@pytest.mark.parametrize("read", [
    lambda d: json.loads(json.dumps(d)), lambda d: json.loads(json.dumps({"t": d}, indent=1, sort_keys=True))["t"],
    lambda d: pickle.loads(pickle.dumps(d)), copy.deepcopy, copy.copy, dict, lambda d: {**d}, lambda d: d.copy(),
    lambda d: dict(d.items()), lambda d: (lambda **k: k)(**d), lambda d: {k: d[k] for k in d},
    lambda d: {k: d.get(k) for k in list(d.keys())}, lambda d: eval(repr(d)),
])
def test_a_lazy_dict_reads_as_the_dict_it_makes(read):
    made: list[int] = []
    lazy = LazyDict(lambda: made.append(1) or {"a": 1, "b": [1, {"c": None}]})
    assert made == []
    out = read(lazy)
    assert out == {"a": 1, "b": [1, {"c": None}]} and type(out) is dict and made == [1]
    assert len(lazy) == 2 and "a" in lazy and lazy == out and made == [1]  # made once


def test_an_empty_lazy_dict_and_writes():
    empty = LazyDict(dict)
    assert json.dumps(empty) == "{}" and len(empty) == 0 and not empty
    lazy = LazyDict(lambda: {"a": 1})
    lazy["b"] = 2
    assert lazy == {"a": 1, "b": 2} and lazy.pop("a") == 1 and dict(lazy) == {"b": 2}


def test_the_runner_writes_the_full_trajectory(tmp_path: Path):
    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent

    env = gym.make("MobilityBench-v0", data=BUNDLED)
    episode_id = env.unwrapped.store.ids[1]
    record = OracleAgent().run_episode(env, episode_id)
    written = record["trajectory"]["record"]
    assert type(written) is dict and written["calls"] and "response" in written["calls"][0]
    assert written == env.unwrapped.state.trajectory.model_dump(mode="json")


def test_every_view_has_its_codec():
    # a view added without one would fail the build (KeyError) or never be stored
    assert set(evidence.VIEWS) == set(evidence._CODECS) and len(evidence.VIEWS) >= 11
    assert set(evidence.EVIDENCE_VIEWS.values()) <= {getattr(evidence, name) for name in evidence.VIEWS}
