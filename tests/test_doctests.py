"""Docstring examples are run, so they stay true to the code."""

import doctest

import mobility_env.mobilitybench.env


def test_env_docstring_example_runs():
    result = doctest.testmod(mobility_env.mobilitybench.env, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8
    assert result.failed == 0


def test_spaces_docstring_examples_run():
    import mobility_env.spaces
    import mobility_env.mobilitybench.tool_samples

    for module in (mobility_env.spaces, mobility_env.mobilitybench.tool_samples):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted >= 3 and result.failed == 0, module.__name__
