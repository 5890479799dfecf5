"""The scoring part of each suite (:attr:`mobility_env.suites.Suite.scoring` names these objects): how its results
are tabled, which scores its repeats spread, its reward weights, and what ``eval`` and ``report`` do with a run.

Every function is imported when first called, so naming a suite's scoring imports nothing heavy.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class SuiteScoring:
    """One suite's scoring: ``scorecard(records) -> str`` (the table ``run`` prints), ``repeat_rows(records)``
    (the rows :func:`mobility_rewards.repeats.repeat_spread` spreads) and ``repeat_columns`` (the scores it
    prints), ``weights()`` (the reward-weights class), ``evaluate(args, run_dir)`` and ``report(run_dir, run)``
    (``mobility-env eval`` / ``report``), ``format_versions()`` (what a run's identity records beside the shared
    versions), ``table(records)`` (the scorecard as :class:`mobility_rewards.runs.ScoreTable` rows, for
    ``mobility-env compare``), ``card(records)`` (the scorecard as data, which ``run`` writes to ``scorecard.json``)."""

    scorecard: Callable[[list[Mapping[str, Any]]], str]
    repeat_rows: Callable[[list[Mapping[str, Any]]], dict[str, dict[str, float]]]
    repeat_columns: tuple[str, ...]
    weights: Callable[[], type]
    evaluate: Callable[[argparse.Namespace, Path], int]
    report: Callable[[Path, dict[str, Any]], int]
    format_versions: Callable[[], dict[str, Any]]  # the suite's own versions a run's identity records
    table: Callable[[list[Mapping[str, Any]]], Any]  # records -> mobility_rewards.runs.ScoreTable (compare)
    card: Callable[[list[Mapping[str, Any]]], dict[str, Any]]  # records -> the scorecard as data (scorecard.json)


def _mobility_scorecard(records: list[Mapping[str, Any]]) -> str:
    from .mobilitybench.scorecard import format_scorecard

    return format_scorecard(records)


def _phone_scorecard(records: list[Mapping[str, Any]]) -> str:
    from .mobilepa.scorecard import format_phone_scorecard

    return format_phone_scorecard(records)


def _mobility_table(records: list[Mapping[str, Any]]) -> Any:
    from .mobilitybench.scorecard import score_table

    return score_table(records)


def _phone_table(records: list[Mapping[str, Any]]) -> Any:
    from .mobilepa.scorecard import phone_score_table

    return phone_score_table(records)


def _mobility_card(records: list[Mapping[str, Any]]) -> dict[str, Any]:
    from .mobilitybench.scorecard import build_scorecard

    return build_scorecard(records)


def _phone_card(records: list[Mapping[str, Any]]) -> dict[str, Any]:
    from .mobilepa.scorecard import phone_scorecard

    return phone_scorecard(records)


def _mobility_rows(records: list[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    from .repeats import mobility_rows

    return mobility_rows(records)


def _phone_rows(records: list[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    from .repeats import phone_rows

    return phone_rows(records)


def _mobility_weights() -> type:
    from .mobilitybench.shaping import RewardWeights

    return RewardWeights


def _phone_weights() -> type:
    from .mobilepa.verify import PhoneRewardWeights

    return PhoneRewardWeights


def _mobility_eval(args: argparse.Namespace, run_dir: Path) -> int:
    from .commands import mobility_eval

    return mobility_eval(args, run_dir)


def _phone_eval(args: argparse.Namespace, run_dir: Path) -> int:
    from .commands import phone_eval

    return phone_eval(args, run_dir)


def _mobility_report(run_dir: Path, run: dict[str, Any]) -> int:
    from .commands import mobility_report

    return mobility_report(run_dir, run)


def _phone_report(run_dir: Path, run: dict[str, Any]) -> int:
    from .commands import phone_report

    return phone_report(run_dir, run)


def _phone_versions() -> dict[str, Any]:
    from .mobilepa.verify import phone_format_versions

    return phone_format_versions()


MOBILITYBENCH = SuiteScoring(scorecard=_mobility_scorecard, repeat_rows=_mobility_rows, repeat_columns=("DR", "FPR"),
                             weights=_mobility_weights, evaluate=_mobility_eval, report=_mobility_report,
                             format_versions=dict,  # its versions are the shared ones (format_versions)
                             table=_mobility_table, card=_mobility_card)
MOBILEPA = SuiteScoring(scorecard=_phone_scorecard, repeat_rows=_phone_rows,
                        repeat_columns=("success", "DR", "progress"), weights=_phone_weights, evaluate=_phone_eval,
                        report=_phone_report, format_versions=_phone_versions, table=_phone_table,
                        card=_phone_card)
