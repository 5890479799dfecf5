"""The old import paths of the modules that moved into the suite folders still import, warn, and hand out the new
modules' own objects (mobility_env.moved)."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import warnings

import pytest

import mobility_agents
import mobility_env
import mobility_rewards
from mobility_env.moved import moved_to

OLD_PATHS = sorted((f"{package.__name__}.{old}", moved_to(package.__name__, new))
                   for package in (mobility_env, mobility_rewards, mobility_agents)
                   for old, new in package.MOVED.items())


@pytest.mark.parametrize("old, new", OLD_PATHS)
def test_an_old_path_imports_the_new_modules_objects(old, new):
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught)
    target = importlib.import_module(new)
    public = [name for name in vars(target) if not name.startswith("_")]
    assert public and all(getattr(module, name) is getattr(target, name) for name in public)


def test_every_move_lands_on_a_module_and_no_old_path_is_still_a_file():
    for old, new in OLD_PATHS:
        assert importlib.util.find_spec(new) is not None, new
        spec = importlib.util.find_spec(old)
        assert spec is not None and spec.origin is None, f"{old} is a file again: delete it or its MOVED entry"


@pytest.mark.parametrize("statement", [
    "from mobility_rewards.mobilepa import PhoneScorer; from mobility_rewards.mobilepa.verify import PhoneScorer as P; "
    "assert PhoneScorer is P",
    "from mobility_agents.llm import LLMClient; from mobility_agents.llm.client import LLMClient as C; "
    "assert LLMClient is C",
    "from mobility_env.env import MobilityEnv; import mobility_env; assert MobilityEnv is mobility_env.MobilityEnv",
])
def test_modules_that_became_packages_and_a_fresh_interpreter(statement):
    # a fresh interpreter: nothing imported before, the warning is an error unless the old path is the point
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", statement],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "DeprecationWarning" in done.stderr  # it warns ...
    done = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", statement],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # ... and works
