"""Docstring examples are run, so they stay true to the code."""

import doctest

import mobility_env.env


def test_env_docstring_example_runs():
    result = doctest.testmod(mobility_env.env, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8
    assert result.failed == 0
