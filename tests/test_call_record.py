"""The one typed call record: built once, arguments copied, responses decoded lazily, one error vocabulary."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_env import MobilityEnv
from mobility_env.actions import ERROR_TYPES
from mobility_env.mobilitybench.episode import RecordedCall, new_recorded_call
from mobility_env.errors import CorruptDataError
from mobility_env.trajectory import ErrorKind, LazyJSON, MatchKind, error_kind
from mobility_env.mobilitybench.trajectory import CallRecord, Trajectory, new_call_record


def _containers(inner):
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)


json_values = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8),
                           _containers, max_leaves=12)


@settings(deadline=None, derandomize=True, max_examples=60)
@given(response=json_values, arguments=st.dictionaries(st.text(max_size=5), json_values, max_size=3),
       step=st.integers(0, 20), lazy=st.booleans())
def test_fast_record_equals_validated_record(response, arguments, step, lazy):
    text = json.dumps(response, ensure_ascii=False)
    fast = new_call_record(step=step, name="query_poi", arguments=arguments, match=MatchKind.EXACT, entry=3,
                           response=LazyJSON(text) if lazy else response,
                           entry_arguments=LazyJSON(json.dumps(arguments)) if lazy else arguments)
    checked = CallRecord(step=step, name="query_poi", arguments=arguments, match="exact", entry=3, response=response,
                         entry_arguments=arguments)
    assert fast.model_dump(mode="json") == checked.model_dump(mode="json")
    assert fast.response == response and fast.entry_arguments == arguments
    assert fast == checked  # decoded on read above, so the stored values now compare equal
    again = CallRecord.model_validate(json.loads(json.dumps(fast.model_dump(mode="json"))))
    assert again == checked


def test_fast_constructor_fills_fresh_defaults_and_refuses_unknown_fields():
    first, second = new_call_record(step=1), new_call_record(step=2)
    assert first.schema_errors == [] and first.schema_errors is not second.schema_errors
    assert first.model_dump() == CallRecord(step=1).model_dump()
    with pytest.raises(TypeError, match="no field"):
        new_call_record(step=1, respons={})
    recorded = new_recorded_call(name="query_poi", arguments={"keywords": "x"}, response=LazyJSON('{"a": 1}'))
    assert recorded == RecordedCall(name="query_poi", arguments={"keywords": "x"}, response={"a": 1})


def test_lazy_json_reports_the_cell_it_came_from():
    broken = new_call_record(step=1, response=LazyJSON('{"cut', ("sandbox.arrow", 17, "response")))
    with pytest.raises(CorruptDataError) as caught:
        broken.response
    assert caught.value.row == 17 and caught.value.column == "response" and "sandbox.arrow" in str(caught.value)


def test_lazy_json_reads_its_source_once_and_only_when_needed():
    reads = []

    def source() -> str:
        reads.append(1)
        return '[1, 2]'

    value = LazyJSON(source)
    assert reads == []
    assert value.decode() == [1, 2] and value.decode() == [1, 2] and len(reads) == 1


def test_error_vocabulary_is_one_enum():
    assert ERROR_TYPES == tuple(kind.value for kind in ErrorKind)
    assert ErrorKind("schema_error") is ErrorKind.SCHEMA_ERROR and ErrorKind.SCHEMA_ERROR == "schema_error"
    assert json.dumps({"type": ErrorKind.NO_CACHED_RESULT}) == '{"type": "no_cached_result"}'
    assert error_kind({"type": "invalid_json", "message": ""}) is ErrorKind.INVALID_JSON
    assert error_kind({"type": "something new"}) is None and error_kind(None) is None
    assert {k for k in ErrorKind if k.is_envelope} == {ErrorKind.INVALID_JSON, ErrorKind.INVALID_ACTION}


@pytest.fixture(scope="module")
def env():
    return MobilityEnv()


def _gold_action(env, index):
    env.reset(options={"episode_index": index})
    episode = env.unwrapped.state.episode
    call = episode.gold_calls[0]
    return episode.episode_id, {"name": call.name, "arguments": json.loads(json.dumps(call.arguments))}


def test_a_compact_step_decodes_nothing_until_the_scorer_reads_it(env):
    episode_id, action = _gold_action(env, 3)
    env.reset(options={"episode_id": episode_id})
    obs, _, _, _, info = env.step(action)
    record = env.state.trajectory.calls[-1]
    assert info["match"] == "exact" and isinstance(record.match, MatchKind)
    # the shaping scorer did not need the response: it is still the stored text
    assert type(record.__dict__["response"]) is LazyJSON
    assert record.canonical_key is not None and "canonical_key" not in record.model_dump()
    assert record.response == env.sandbox.response(record.entry)  # decoded on first read, equal to the stored one
    assert type(record.__dict__["response"]) is not LazyJSON


def test_changing_the_callers_arguments_after_step_changes_nothing(env):
    episode_id, action = _gold_action(env, 5)
    env.reset(options={"episode_id": episode_id})
    env.step(action)
    record = env.state.trajectory.calls[-1]
    before = record.model_dump(mode="json")
    action["arguments"].clear()
    action["arguments"]["poison"] = True
    assert record.model_dump(mode="json") == before
    assert record.arguments is not action["arguments"]


def test_error_records_carry_the_enum(env):
    env.reset(options={"episode_index": 0})
    _, _, _, _, info = env.step('{"name": "query_poi", "arguments": {}}')
    assert info["error"]["type"] is ErrorKind.SCHEMA_ERROR
    assert env.state.trajectory.calls[-1].error_kind is ErrorKind.SCHEMA_ERROR
    _, _, _, _, info = env.step("not json")
    assert info["error"]["type"] == "invalid_json" and env.state.trajectory.calls[-1].error_kind.is_envelope
    dumped = json.dumps(env.state.trajectory.model_dump(), ensure_ascii=False)
    assert Trajectory.model_validate(json.loads(dumped)).calls[-1].error_kind is ErrorKind.INVALID_JSON


_nasty_text = st.text(alphabet=st.sampled_from(["a", "中", "\ud800", "\udc00", "😀", "\\", "u", "{", "["]), max_size=12)


def _nested(inner):
    return st.lists(inner, max_size=3) | st.dictionaries(_nasty_text, inner, max_size=3)


@settings(deadline=None, derandomize=True, max_examples=400)
@given(value=st.recursive(st.none() | st.integers(-10**5, 10**5) | _nasty_text, _nested, max_leaves=10),
       max_string=st.integers(1, 30), max_depth=st.integers(2, 5), ensure_ascii=st.booleans())
def test_the_no_walk_shortcut_for_text_actions_is_sound(value, max_string, max_depth, ensure_ascii):
    """When parse_action skips the cap walk for a text action, the walk would have found nothing."""
    from mobility_env.actions import ActionLimits, _BoundedCopy, _text_within

    limits = ActionLimits(max_string_chars=max_string, max_depth=max_depth)
    try:
        text = json.dumps({"name": "query_poi", "arguments": {"keywords": value}}, ensure_ascii=ensure_ascii)
    except UnicodeEncodeError:
        return
    if _text_within(text, limits, 1):
        _BoundedCopy(limits, 10**9, copying=False).copy(limits.loads(text), 1)  # must not raise


def test_episodes_and_trajectories_of_a_built_directory_pickle(env):
    """Their undecoded cells pickle as the stored text (they read a memory-mapped file through a closure,
    which does not pickle): an episode or trajectory can be sent to another process (multiprocessing, Ray)."""
    import pickle

    episode_id, action = _gold_action(env, 3)
    env.reset(options={"episode_id": episode_id})
    env.step(action)
    episode, trajectory = env.state.episode, env.state.trajectory
    assert type(trajectory.calls[-1].__dict__["response"]) is LazyJSON
    assert any(type(r.__dict__["response"]) is LazyJSON for r in episode.recorded)
    for value in (episode, trajectory):
        copy = pickle.loads(pickle.dumps(value))
        assert copy == value and copy.model_dump() == value.model_dump()
    lazy = LazyJSON(lambda: '{"a": [1, 2]}', ("sandbox.arrow", 7, "response"))
    copy = pickle.loads(pickle.dumps(lazy))
    assert copy.decode() == {"a": [1, 2]} and copy.where == ("sandbox.arrow", 7, "response")
