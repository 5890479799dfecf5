"""pytest plugin: the exploit and denial rates of the reward sweep, in the terminal summary.

Registered from ``tests/conftest.py`` (``pytest_plugins``). A test records a sweep report
(the dict of :func:`mobility_rewards.probes.sweep`) through the ``reward_rates`` fixture; at the end
of the run the totals, per scenario, are printed even without ``-s``::

    def test_sweep(reward_rates):
        reward_rates("reward exploits", sweep(facts, per_episode=24))
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

_REPORTS = pytest.StashKey[dict[str, dict[str, Any]]]()


@pytest.fixture(scope="session")
def reward_rates(request: pytest.FixtureRequest) -> Callable[[str, dict[str, Any]], None]:
    """``reward_rates(name, report)`` keeps a sweep report for the terminal summary."""
    reports = request.config.stash.setdefault(_REPORTS, {})

    def record(name: str, report: dict[str, Any]) -> None:
        reports[name] = report
    return record


def _line(label: str, s: dict[str, Any]) -> str:
    return (f"{label:<36} exploits {s['leaked']:>4}/{s['wrong']:<5} ({s['exploit_rate']:6.1%})   "
            f"denials {s['denied']:>4}/{s['correct']:<5} ({s['denial_rate']:6.1%})")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    reports = config.stash.get(_REPORTS, {})
    if not reports:
        return
    terminalreporter.section("reward exploit / denial rates")
    for name, report in reports.items():
        terminalreporter.write_line(f"{name}: {report['episodes']} episodes x {report['per_episode']} "
                                    f"answers (seed {report['seed']})")
        for scenario, summary in report["by_scenario"].items():
            terminalreporter.write_line("  " + _line(scenario, summary))
        terminalreporter.write_line("  " + _line("all", report["totals"]))
        leaking = [k for k, t in report["by_kind"]["wrong"].items() if t["failed"]]
        denying = [k for k, t in report["by_kind"]["correct"].items() if t["failed"]]
        if leaking:
            terminalreporter.write_line("  leaking kinds: " + ", ".join(leaking))
        if denying:
            terminalreporter.write_line("  denied kinds: " + ", ".join(denying))
