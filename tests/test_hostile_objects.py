"""In-process policies hand ``step`` Python objects: whatever an object's own code does (dunders and ``__getattr__``
that raise, numbers too large for a float, subclasses of JSON types that misbehave), the action is refused as an
observation with an error, never an exception out of ``step`` — in every registered suite."""

from __future__ import annotations

from fractions import Fraction

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mobility_env  # noqa: F401  (registers the suites)
from mobility_env.suites import env_ids


class Boom(Exception):
    pass


def _raiser(*args, **kwargs):
    raise Boom("hostile")


_DUNDERS = ("__getattr__", "__getattribute__", "__iter__", "__len__", "__int__", "__index__", "__float__",
            "__repr__", "__str__", "__eq__", "__hash__", "__bool__", "keys", "items", "__getitem__", "model_dump")
_BASES = (object, int, float, str, dict, list, tuple)


_BIG = (Fraction(10 ** 400, 3), Fraction(-(10 ** 400), 7), Fraction(1, 10 ** 400))

# a recipe, built inside the test: hypothesis itself must not touch an object whose __getattribute__ raises
_BROKEN = st.frozensets(st.sampled_from(_DUNDERS), min_size=1, max_size=4)
recipes = st.one_of(st.tuples(st.just("number"), st.integers(0, len(_BIG) - 1)),
                    st.tuples(st.sampled_from(_BASES), _BROKEN))


def hostile(recipe):
    """An instance of a class built from a JSON type (or object) with some of its methods replaced by ones that
    raise, or a number no float holds."""
    base, detail = recipe
    if base == "number":
        return _BIG[detail]
    cls = type("Hostile", (base,), {name: _raiser for name in sorted(detail)})
    value = {"name": "query_poi"} if base is dict else [1] if base in (list, tuple) else "x" if base is str else 3
    try:
        return cls(value) if base is not object else cls()
    except Boom:
        return cls.__new__(cls)


def _actions(obj):
    """The object as the whole action, as the arguments and as one argument's value."""
    return [obj, {"name": "finish", "arguments": obj}, {"name": "query_poi", "arguments": {"keywords": obj}},
            {"name": "finish", "arguments": {"answer": obj}}]


@pytest.fixture(scope="module", params=list(env_ids()))
def env(request):
    made = gym.make(request.param)
    made.reset(seed=0)
    yield made
    made.close()


@settings(max_examples=150, deadline=None)
@given(recipe=recipes)
def test_no_object_escapes_step(env, recipe):
    for action in _actions(hostile(recipe)):
        try:
            obs, reward, terminated, truncated, info = env.step(action)
        except gym.error.ResetNeeded:
            raise
        if terminated or truncated:
            env.reset(seed=0)
            continue
        assert isinstance(obs, str) and isinstance(reward, float)


def test_a_fraction_no_float_holds_is_refused_with_a_reason():
    made = gym.make("MobilityBench-v0")
    made.reset(seed=0)
    obs, _, terminated, _, info = made.step({"name": "query_poi",
                                            "arguments": {"keywords": "x", "city": Fraction(10 ** 400, 3)}})
    assert not terminated and info["error"]["type"] in ("invalid_action", "schema_error"), info
    assert "Fraction" in info["error"]["message"], info["error"]


_OPTION_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 30, 10 ** 30), st.floats(allow_nan=True),
                           st.text(max_size=8), st.lists(st.integers(), max_size=2),
                           st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
_OPTIONS = st.one_of(st.none(), st.lists(st.integers(), max_size=2), st.text(max_size=4),
                     st.dictionaries(st.sampled_from(["episode_id", "task_id", "episode_index", "task_index", "x"]),
                                     _OPTION_VALUES, max_size=3))


@settings(max_examples=300, deadline=None)
@given(options=_OPTIONS)
def test_every_bad_reset_option_is_a_config_error(env, options):
    """Whatever ``reset``'s options hold, the env resets or raises a ConfigError naming the option (over HTTP a
    validation error): never OverflowError, TypeError or AttributeError (``episode_index`` 1e999 was a 500)."""
    from mobility_env.errors import ConfigError

    try:
        obs, info = env.reset(seed=0, options=options)
    except ConfigError as exc:
        assert str(exc)
    else:
        assert isinstance(obs, str) and info
