"""Evidence at build time: the views the verifier reads are stored by the build beside each recorded response and
read instead of decoding it (mobility_env.mobilitybench.evidence). Every stored view equals the view of the decoded
response, the verifier decodes no response, and a directory of another evidence schema is reported and served by
computing, with the same verdicts."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pydantic_core
import pytest

import mobility_env  # noqa: F401  (registers the envs)
from mobility_env.errors import ConfigError, CorruptDataError
from mobility_env.layout import FormatVersionWarning
from mobility_env.mobilitybench import evidence
from mobility_env.mobilitybench.store import EpisodeStore, resolve_data
from mobility_env.mobilitybench.trajectory import Trajectory
from mobility_env.runfiles import json_text
from mobility_env.trajectory import _UNDECODED, LazyJSON, as_record
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


def test_the_verifier_decodes_no_response_and_scores_as_the_decoded_trajectory(monkeypatch):
    env = gym.make("MobilityBench-v0", data=BUNDLED, info_trajectory="copy").unwrapped
    store = resolve_data(BUNDLED)
    decoded_while_scoring: list[Any] = []
    real_decode = LazyJSON.decode
    scorer_finish = env.scorer.finish

    def counting_finish(state: Any, trajectory: Any) -> Any:
        def decode(lazy: LazyJSON) -> Any:
            if lazy._value is _UNDECODED:
                decoded_while_scoring.append(lazy.where)
            return real_decode(lazy)
        monkeypatch.setattr(LazyJSON, "decode", decode)
        try:
            return scorer_finish(state, trajectory)
        finally:
            monkeypatch.setattr(LazyJSON, "decode", real_decode)

    monkeypatch.setattr(env.scorer, "finish", counting_finish)
    for episode_id in list(env.store.ids)[:60]:
        info = _play(env, store, episode_id)
        assert any(c.name != "finish" for c in store.get(episode_id).gold_calls)
        # the same trajectory with every response decoded (as a results file holds it) scores the same
        decoded = Trajectory.model_validate(json.loads(json.dumps(info["trajectory"])))
        metrics, verdict = score_episode(env.state.episode, decoded)
        assert metrics == info["metrics"] and verdict.to_dict() == info["verdict"]
    # responses are decoded only for the info's trajectory, after scoring (the shaped steps read served arguments)
    assert not [w for w in decoded_while_scoring if w and w[2] == "response"], decoded_while_scoring[:3]


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


@pytest.mark.parametrize("record", ['{"places": 5}', '{"route_options": [[1]]}', '{"weather_facts": {"a": 1}}', "[1]",
                                    '{"places": [[1, 2]]}', "not json"])
def test_a_damaged_stored_record_is_a_typed_error(record):
    lazy = LazyJSON('{"name": "a", "location": "116.1,39.2"}', ("sandbox.arrow", 7, "response"),
                    evidence=lambda: record)
    views = ("places", "route_options", "weather_facts")
    with pytest.raises(CorruptDataError, match="evidence") as caught:
        for name in views:
            getattr(evidence, name)(lazy)
    assert caught.value.row == 7 or "row 7" in str(caught.value)


def test_a_null_response_is_seen_without_decoding():
    lazy = LazyJSON(" null ")
    assert lazy.is_null() and lazy._value is _UNDECODED
    assert not LazyJSON('{"a": 1}').is_null()


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


def test_the_terminal_trajectory_is_handed_out_by_reference():
    copying = gym.make("MobilityBench-v0", data=BUNDLED, info_trajectory="copy").unwrapped
    info = _play(copying, resolve_data(BUNDLED), copying.store.ids[0])
    assert type(info["trajectory"]) is dict and json.dumps(info)  # "copy": plain data, json-writable
    with pytest.raises(ConfigError, match="info_trajectory must be one of"):
        gym.make("MobilityBench-v0", data=BUNDLED, info_trajectory="lazy")
    copied = info["trajectory"]
    env = gym.make("MobilityBench-v0", data=BUNDLED).unwrapped  # the default: by reference
    assert env.info_trajectory == "reference"
    store = resolve_data(BUNDLED)
    first, second = env.store.ids[:2]
    info = _play(env, store, first)
    trajectory = info["trajectory"]
    assert trajectory is env.state.trajectory and isinstance(trajectory, Trajectory)
    record = as_record(trajectory)
    assert record == copied and record["calls"] and record["finish"]  # the same record the default copies
    # serializers see the whole record or refuse it loudly; none writes a placeholder
    assert json.loads(pydantic_core.to_json({"t": trajectory})) == json.loads(json.dumps({"t": record}, default=str))
    with pytest.raises(TypeError):
        json.dumps(info)
    assert json.loads(json_text(info))["trajectory"] == record  # the project's JSON writer makes it data, not a repr
    # the env does not change a handed-out record: the next episode gets its own
    _play(env, store, second)
    assert as_record(trajectory) == record and env.state.trajectory is not trajectory
    assert as_record({"a": 1}) == {"a": 1} and as_record(None) is None  # MobilePA's dict, nothing: as they are


def test_offline_scoring_reads_the_stored_evidence_of_the_responses_a_run_was_served():
    """eval's path: a trajectory read back from JSON gets the stored responses that served it (their evidence read,
    not computed again) and scores exactly as the env's finish did; an edited response keeps its own."""
    env = gym.make("MobilityBench-v0", data=BUNDLED).unwrapped
    store = resolve_data(BUNDLED)
    sandbox = store.sandbox
    given_total = 0
    for n, episode_id in enumerate(list(store.ids)[:80]):
        episode = store.get(episode_id)
        answer = reference_finish(episode) if n % 2 else {"answer": "大约 999 公里，开车要 7 小时，今天晴。"}
        info = _play(env, store, episode_id, answer)
        parsed = Trajectory.model_validate(json.loads(json.dumps(as_record(info["trajectory"]))))
        servable = sum(c.entry is not None and c.__dict__["response"] is not None for c in parsed.calls)
        given = sandbox.with_stored_responses(parsed.calls)
        assert given == servable and given_total + given > 0
        given_total += given
        for call in parsed.calls:
            if call.entry is not None and call.__dict__["response"] is not None:
                held = evidence.served(call)
                assert type(held) is LazyJSON and held.views() is not None
        metrics, verdict = score_episode(episode, parsed)
        assert metrics == info["metrics"] and verdict.to_dict() == info["verdict"], episode_id
        assert sandbox.with_stored_responses(parsed.calls) == 0  # given once; nothing left to give
    assert given_total > 100
    # an edited response (or one of other data) is not the stored one: it keeps its own and is read from it
    episode_id = next(i for i in store.ids if any(c.name == "weather_query" for c in store.get(i).gold_calls))
    info = _play(env, store, episode_id)
    record = json.loads(json.dumps(as_record(info["trajectory"])))
    edited = next(c for c in record["calls"] if c["response"] is not None)
    edited["response"] = {"status": "1", "edited": True}
    parsed = Trajectory.model_validate(record)
    sandbox.with_stored_responses(parsed.calls)
    call = next(c for c in parsed.calls if c.step == edited["step"])
    assert evidence.served(call) == {"status": "1", "edited": True}
