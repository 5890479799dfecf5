"""MobilePA answers that cannot be gamed (reward hardening): generated hedges fail, honest answers pass.

The generators are :mod:`mobility_rewards.probes.mobilepa`'s (its docstring names each attack and paraphrase):
every attack must FAIL, every honest paraphrase must PASS, on the bundled set and on fresh tasks of an unseen seed.
:func:`test_sweep_rates` prints the exploit and denial rates per task family and per generator
(``tests/plugin_reward_rates.py``) and asserts no exploit and no denial; the tests by hand pin the reading of
amounts, mentions and hedges. For more tasks, or for the verifier of the last commit::

    python tests/test_mobilepa_answers.py --fresh 5000 [--legacy]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mobility_env.mobilepa.answers import stated_quantities
from mobility_env.mobilepa.env import BUNDLED_TASKS
from mobility_env.mobilepa.tasks import load_tasks
from mobility_rewards.mobilepa.verify import verify_phone_task
from mobility_rewards.probes import HypothesisDraw
from mobility_rewards.probes.mobilepa import (ATTACKS, DENIED_BY_DESIGN, FRESH_SEED, PARAPHRASES, Facts, Verify, fresh,
                                              other_words, report, sweep)
from mobility_rewards.probes.mobilepa import bundled as bundled_in

REPO = Path(__file__).resolve().parents[1]
FAST = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                phases=(Phase.explicit, Phase.generate), suppress_health_check=[HealthCheck.too_slow])


def bundled() -> tuple[Facts, ...]:
    """The answer tasks of the bundled set."""
    return bundled_in(BUNDLED_TASKS)


# ------------------------------------------------------------------------------------------- properties
def _applicable(kinds: dict[str, tuple[Callable[[Facts], bool], Any]], kind: str) -> list[Facts]:
    return [f for f in bundled() + fresh() if kinds[kind][0](f)]


@pytest.mark.parametrize("kind", sorted(ATTACKS))
@FAST
@given(data=st.data())
def test_every_attack_fails(kind, data):
    pool = _applicable(ATTACKS, kind)
    assert len(pool) >= 5, kind
    f = data.draw(st.sampled_from(pool), label="task")
    answer = ATTACKS[kind][1](f, HypothesisDraw(data.draw))
    assert not f.passes(answer), (f.task.task_id, f.family, answer)


@pytest.mark.parametrize("kind", sorted(set(PARAPHRASES) - DENIED_BY_DESIGN))
@FAST
@given(data=st.data())
def test_every_honest_paraphrase_passes(kind, data):
    pool = _applicable(PARAPHRASES, kind)
    assert len(pool) >= 5, kind
    f = data.draw(st.sampled_from(pool), label="task")
    answer = PARAPHRASES[kind][1](f, HypothesisDraw(data.draw))
    verdict = verify_phone_task(f.task, dataclasses.replace(f.oracle, answer=answer))
    assert verdict.passed, (f.task.task_id, f.family, answer, verdict.summary())


def test_sweep_rates(reward_rates):
    """No exploit and no denial on the bundled set and on fresh tasks of an unseen seed, every generator tried."""
    for name, facts in (("bundled", bundled()), (f"fresh seed {FRESH_SEED}", fresh())):
        report = sweep(facts)
        reward_rates(f"MobilePA answers, {name}", report)
        kinds = report["by_kind"]
        assert {k for side in kinds.values() for k, t in side.items() if t["n"]} == set(ATTACKS) | set(PARAPHRASES)
        assert report["totals"]["leaked"] == 0, (name, report["examples"])
        assert all(t["failed"] == 0 for k, t in kinds["correct"].items() if k not in DENIED_BY_DESIGN), \
            (name, report["examples"])


# ------------------------------------------------------------------------------------------- reading, by hand
@pytest.mark.parametrize("text, expected", [
    ("全程约23.9公里，大约需要25分钟。", [("distance", 23900), ("duration", 25)]),
    ("the drive takes about 1 h 2 min", [("duration", 62)]),
    ("1小时零5分", [("duration", 65)]), ("一个半小时", [("duration", 90)]), ("half an hour", [("duration", 30)]),
    ("an hour and 5 minutes", [("duration", 65)]), ("二十五分钟", [("duration", 25)]),
    ("25–30 min", [("duration", 25), ("duration", 30)]), ("25或30分钟", [("duration", 25), ("duration", 30)]),
    ("it takes 25 min, or 30", [("duration", 25), ("duration", 30)]),
    ("10, 15, 20 min", [("duration", 10), ("duration", 15), ("duration", 20)]),
    ("路线1：25分钟", [("duration", 25)]), ("route 2: 31 min", [("duration", 31)]),
    ("25分钟，7个红绿灯", [("duration", 25)]), ("预计8点30分到达，08:45出发", []),
    ("气温16℃，湿度88%", [("temperature", 16), ("percent", 88)]), ("零下3度", [("temperature", -3)]),
    ("-3~5℃", [("temperature", -3), ("temperature", 5)]), ("1公里200米", [("distance", 1200)]),
    ("二十三点九公里", [("distance", 23900)]), ("5 m, not 5 min", [("distance", 5), ("duration", 5)]),
    ("125 min", [("duration", 125)]), ("32.2 km", [("distance", 32200)]), ("百分之四十", [("percent", 40)]),
])
def test_stated_quantities_by_hand(text, expected):
    assert [(q.kind, q.value) for q in stated_quantities(text)] == expected


@pytest.mark.parametrize("answer, mention, named", [
    ("125 min", "25 min", False), ("32.2 km", "2.2 km", False), ("-3℃", "3℃", False), ("气温3℃", "3°C", True),
    ("115226526990", "15226526990", False), ("rainbow", "rain", False), ("showers", "shower", True),
    ("no rain", "rain", False), ("it won't rain", "rain", False), ("whether it will rain", "rain", False),
    ("cloudy, rain", "rain", True), ("cloudy, if not rain", "rain", True), ("明天不下雨", "雨", False),
    ("明天会不会下雨", "雨", False), ("非常晴朗", "晴", True), ("没有雾", "雾", False), ("不拥堵", "拥堵", False),
])
def test_mentions_by_hand(answer, mention, named):
    from mobility_env.mobilepa.answers import mentions

    assert mentions(answer, mention) is named


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789.,:-–~ 分钟小时公里米度℃%半个点零一二十百或到 minhkmfcorto")) | st.characters(),
               max_size=200))
def test_any_answer_is_read_without_an_exception(text):
    """Bad agent input is data: any text is read (amounts, mentions) and judged, never an exception."""
    for q in stated_quantities(text):
        assert q.kind in ("duration", "distance", "temperature", "percent", "speed", "number") and q.tolerance > 0
    f = bundled()[0]
    f.passes(text)
    f.passes(text * 50)


_JAMMED, _SUNNY = ("拥堵", "严重拥堵"), ("晴",)
HAND_HEDGES = {  # added to the oracle's answer: each must fail (but for tasks whose gold it is: word, golds)
    "route_facts": [(h, ()) for h in (" or maybe 45", " ± 5", " (give or take 5)", " 或者大约45", " maybe 45 to 50",
                                      " 或3小時", " 99 kms", " 45", " 路线2：45", " (alt: 45)", " route B 45 min",
                                      " 45 min if traffic", " 也可能四十五", " 半小时或一个半小时", " 0.5 h")]
    + [(" 40多分钟", ("40s",))],  # ("40-odd minutes": no hedge where the gold is 40–49 min, as on the 1,705 tasks)
    "weather_now": [(" maybe foggy", ("雾",)), (" or 30C", ()), (" high 30", ()), (" 30 deg", ()),
                    (" (feels like 30)", ()), (" 16 or 30", ()), (" could be sunny", _SUNNY), (" 也可能晴", _SUNNY),
                    (" 或许是晴天", _SUNNY), (" sunny?", _SUNNY), (' "sunny"', _SUNNY)],
    "traffic_now": [(" or jammed", _JAMMED), (" slowing down", ("缓行",)), (" but may get congested", _JAMMED),
                    (" 可能会堵车", _JAMMED), (" 有点拥挤", _JAMMED)],
    "rain_alarm": [(h, ()) for h in (" 也可能下雨", " maybe rain", " rain is possible")]
    + [(" 不过也可能转晴", _SUNNY), (" or sunny", _SUNNY)],
}
HAND_HONEST = {  # whole answers, {0}: the gold spelled as the oracle does; each must pass
    "weather_now": ["Right now it's {0}; bring an umbrella if you go out.", "{0}，不算冷。"],
    "rain_alarm": ["{0}. It won't rain, no change needed.", "{0}; rain is not expected, alarm unchanged.",
                   "{0}，不会下雨，闹钟不变。", "你问会不会下雨：{0}。"],
}


def _hand_pool(family: str) -> list[Facts]:
    pool = [f for f in bundled() if f.family == family and (family != "route_facts" or len(f.groups) == 2)
            and (family != "rain_alarm" or "雨" not in (f.word or ""))]
    assert pool, family
    return pool


@pytest.mark.parametrize("family, hedge, golds", [(family, *h) for family, pairs in HAND_HEDGES.items() for h in pairs])
def test_hand_written_hedges_fail(family, hedge, golds):
    for f in _hand_pool(family):
        minutes = [q.value for _, q in f.groups if getattr(q, "kind", None) == "duration"]
        if golds == ("40s",) and any(40 <= m < 50 for m in minutes):
            continue  # the hedge states the gold
        if f.word not in golds:
            assert not f.passes(f.task.oracle_answer + hedge), (f.task.task_id, hedge)


@pytest.mark.parametrize("family, answer", [(family, a) for family, answers in HAND_HONEST.items() for a in answers])
def test_hand_written_honest_answers_pass(family, answer):
    for f in _hand_pool(family):
        gold = " ".join(group[0] for group, _ in f.groups)
        assert f.passes(answer.format(gold)), (f.task.task_id, answer.format(gold))


def test_amounts_agree_at_the_precision_stated():
    golds = {"23942米": ["23.9 km", "24 km", "23,942 m", "23.94 km"], "25分钟": ["25 minutes", "0.4166 h"],
             "16℃": ["61°F", "16.4 °C", "15.6 °C"], "62分钟": ["1 hour 2 minutes", "1小时2分", "1 h 1.6 min"]}
    # 1 h 1.2 min is 61.2 ± 0.05 min (found with seed 777: it was read at ± 0.5 and agreed with 62 min)
    wrong = {"23942米": ["23.8 km", "23 km", "23943 m"], "25分钟": ["26 min", "0.4 h", "half an hour"],
             "16℃": ["17℃", "63°F", "15.4 °C"], "62分钟": ["1 h", "1 hour", "1 hour and 1.2 min", "1小时1.4分钟"]}
    for gold_text, agreeing in golds.items():
        gold = stated_quantities(gold_text)[0]
        assert all(stated_quantities(t)[0].agrees(gold) for t in agreeing), gold_text
        assert not any(stated_quantities(t)[0].agrees(gold) for t in wrong[gold_text]), gold_text


def test_a_task_file_without_answer_excludes_loads_and_is_written_alike(tmp_path):
    from mobility_env.mobilepa.tasks import write_tasks

    line = next(line for line in (Path(BUNDLED_TASKS) / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
                if '"answer_mentions":[[' in line and "answer_excludes" not in line)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "tasks.jsonl").write_text(line + "\n", encoding="utf-8")
    task = load_tasks(tmp_path / "old")[0]
    assert task.gold_behaviour.answer_excludes == []
    write_tasks(tmp_path / "again", [task])
    assert (tmp_path / "again" / "tasks.jsonl").read_text(encoding="utf-8") == line + "\n"


def test_the_bundled_vocabulary_tasks_exclude_the_other_choices():
    vocab = [f for f in bundled() if f.vocabulary is not None]
    assert len(vocab) >= 10
    for f in vocab:
        excluded = set(f.task.gold_behaviour.answer_excludes)
        assert excluded and excluded <= set(other_words(f)), f.task.task_id
        assert not excluded & {s for group, _ in f.groups for s in group}, f.task.task_id


# ------------------------------------------------------------------------------------------- the report's numbers
def legacy_verifier() -> Verify:
    """``verify_phone_task`` of the last commit (``git show HEAD:rewards/mobilepa/verify.py``; before the suite
    folders ``rewards/mobilepa.py``), for the 'before' rates."""
    for file, name in (("rewards/mobilepa/verify.py", "mobility_rewards.mobilepa.legacy_verify"),
                       ("rewards/mobilepa.py", "mobility_rewards.legacy_mobilepa")):
        shown = subprocess.run(["git", "show", f"HEAD:{file}"], cwd=REPO, capture_output=True, text=True)
        if shown.returncode == 0:
            break
    path = Path(tempfile.mkdtemp()) / "legacy_verify.py"
    path.write_text(shown.stdout, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module.verify_phone_task


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="MobilePA answer exploit and denial rates, as JSON")
    parser.add_argument("--fresh", type=int, default=5000, help="fresh tasks to generate (seed --seed)")
    parser.add_argument("--seed", type=int, default=FRESH_SEED)
    parser.add_argument("--per-kind", type=int, default=3)
    parser.add_argument("--legacy", action="store_true", help="score with the verifier of the last commit")
    args = parser.parse_args(argv)
    verify = legacy_verifier() if args.legacy else verify_phone_task
    sets = {"bundled": bundled(), f"fresh:{args.fresh}@{args.seed}": fresh(args.fresh, args.seed)}
    json.dump(report(sets, args.per_kind, verify=verify), sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main()
