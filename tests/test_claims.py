"""Claim extraction (mobility_rewards.mobilitybench.claims): every claim, in both scripts, with negation and periods."""

import pytest
from hypothesis import given, settings, strategies as st

from mobility_rewards.mobilitybench.claims import (clock_claims, hedged_quantities, highway_claims, money_claims,
                                                   normalize_answer, skips_waypoint, stated_modes, traffic_claims,
                                                   weather_claims, weather_compatible, weather_labels_of)
from mobility_rewards.units import parse_distances, parse_durations

_CN = "零一二三四五六七八九"


def _cn_int(n: int) -> str:
    """A Chinese numeral for 0 < n < 100 (十二, 三十七, 十)."""
    tens, ones = divmod(n, 10)
    return (("" if tens == 1 else _CN[tens]) + "十" if tens else "") + (_CN[ones] if ones or not tens else "")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(whole=st.integers(1, 99), tenth=st.integers(0, 9), unit=st.sampled_from(["公里", "千米", "km"]))
def test_chinese_decimal_distances(whole, tenth, unit):
    text = f"全程{_cn_int(whole)}点{_CN[tenth]}{unit}"
    assert [q.value for q in parse_distances(normalize_answer(text))] == [round((whole + tenth / 10) * 1000, 6)]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(hours=st.integers(1, 9), minutes=st.integers(1, 59), sep=st.sampled_from(["", " "]))
def test_hour_minute_shorthand(hours, minutes, sep):
    text = normalize_answer(f"about {hours}h{sep}{minutes}m")
    assert [q.value for q in parse_durations(text)] == [hours * 3600 + minutes * 60]
    assert parse_distances(text) == ()


def test_clock_periods_and_roles():
    early = clock_claims("建议凌晨5点30分出发")[0]
    assert (early.minutes, early.definite, early.role) == (330, True, "departure")
    late = clock_claims("下午5点半到达")[0]
    assert (late.minutes, late.definite, late.role) == (1050, True, "arrival")
    assert [(c.minutes, c.definite) for c in clock_claims("5点30分出发")] == [(330, False)]
    assert [(c.minutes, c.definite) for c in clock_claims("17:30 leave, 05:30")] == [(1050, True), (330, True)]
    assert [(c.minutes, c.definite) for c in clock_claims("leave at 5:30 PM")] == [(1050, True)]
    roles = [c.role for c in clock_claims("出发时间11:30，到达12:00")]
    assert roles == ["departure", "arrival"]
    assert clock_claims("一点都不堵") == ()


def test_hedges():
    assert hedged_quantities("12.3公里或20公里")[0][0] == "distance"
    assert hedged_quantities("12到15公里") and hedged_quantities("12-15 km") and hedged_quantities("35 or 50 minutes")
    assert hedged_quantities("2小时或120分钟") == ()  # one value, two spellings
    assert hedged_quantities("全程12公里，需要20分钟") == ()
    assert hedged_quantities("11:30-12:00出发") == ()


def test_weather_labels_negation_and_grading():
    claims = weather_claims("今天不是晴天，是暴雨")
    assert [(c.label, c.negated) for c in claims] == [("晴", True), ("暴雨", False)]
    assert [c.label for c in weather_claims("light rain, 记得带雨伞")] == ["小雨"]
    assert [(c.label, c.negated) for c in weather_claims("非常晴朗")] == [("晴", False)]
    assert [(c.label, c.negated) for c in weather_claims("no rain today, sunny")] == [("雨", True), ("晴", False)]
    assert weather_labels_of("小雨转多云") == {"小雨", "多云"}
    assert weather_compatible("雨", frozenset({"小雨"})) and weather_compatible("阵雨", frozenset({"阵雨"}))
    assert not weather_compatible("暴雨", frozenset({"小雨"})) and not weather_compatible("晴", frozenset({"多云"}))
    assert [c.label for c in weather_claims("showers, hazy, light snow, overcast")] == ["阵雨", "霾", "小雪", "阴"]


@pytest.mark.parametrize("text, label, negated", [
    ("多云，不太可能出现小雨", "小雨", True), ("完全没有出现雾的可能", "雾", True), ("不会有任何雪", "雪", True),
    ("下雨的可能性不大", "雨", True), ("no chance at all of rain", "雨", True), ("nothing like a rainstorm", "暴雨", True),
    ("rain is unlikely", "雨", True), ("unlikely to see any snow", "雪", True),
    ("snow showers are not expected", "阵雪", True),
    ("明天有小雨", "小雨", False), ("不但有雨", "雨", False), ("没想到下雨了", "雨", False), ("rain is likely", "雨", False),
    ("下雨的可能性很大", "雨", False), ("不仅有小雨", "小雨", False),
])
def test_denials_at_a_distance(text, label, negated):
    """Found with a generator of honest weather answers: 多云，不太可能出现小雨 was read as claiming 小雨."""
    claims = [c for c in weather_claims(text) if c.label == label]
    assert claims and all(c.negated == negated for c in claims), (text, weather_claims(text))


def test_traffic_phrases():
    def states(text):
        return [sorted(c.states) for c in traffic_claims(text)]
    assert states("目前路况不畅通") == [[2, 3, 4]]
    assert states("一点都不堵") == [[1]] and states("no congestion") == [[1]]
    assert states("有点堵") == [[2]] and states("走走停停") == [[2, 3]]
    assert states("heavy traffic") == [[3, 4]] and states("there is no heavy traffic") == [[1, 2]]
    assert traffic_claims("局部路段拥堵")[0].local


def test_highway_waypoint_and_money():
    assert highway_claims("建议走高速") == ("take",) and highway_claims("全程不走高速") == ("avoid",)
    assert highway_claims("avoid highways") == ("avoid",) and highway_claims("take the expressway") == ("take",)
    assert skips_waypoint("不用经过且末，直接去乌鲁木齐") and not skips_waypoint("先到且末，再直接去乌鲁木齐")
    assert [m.value for m in money_claims("过路费35元，全程免费")] == [35.0, 0.0]


def test_hostile_answers_end_as_failed_checks_not_errors():
    """A lone surrogate, a 5,000-digit number, a 1 MB answer, 1,000 open brackets: scored, never raised,
    never passed."""
    from pathlib import Path

    from mobility_env.mobilitybench.loaders import load_episodes
    from mobility_rewards import gold_trajectory, score_episode

    data = Path(__file__).resolve().parents[1] / "datasets" / "default"
    episodes = {e.task_scenario: e for e in load_episodes(data)}
    answers = ["全程\ud800公里\udfff", "全程" + "9" * 5000 + "公里", ("全程12.3公里，" * 80000)[:1_000_000], "[" * 1000]
    for episode in episodes.values():
        gold = gold_trajectory(episode)
        for answer in answers:
            trajectory = gold.model_copy(update={"finish": gold.finish.model_copy(update={"answer": answer})})
            metrics, verdict = score_episode(episode, trajectory)
            assert metrics["FPR"] == 0.0, (episode.task_scenario, answer[:40], verdict.to_dict())


@pytest.mark.parametrize("text, modes", [
    ("建议坐地铁，开车不太方便。", {"transit"}), ("坐地铁比开车快", {"transit"}), ("不推荐坐公交地铁，建议开车", {"driving"}),
    ("Take the subway; driving is not recommended.", {"transit"}), ("The subway is faster than driving.", {"transit"}),
    ("rather than driving, take the bus", {"transit"}), ("坐公交地铁不太方便", set()), ("建议坐公交或地铁", {"transit"}),
    ("建议开车前往", {"driving"}), ("坐公交，开车也行", {"driving", "transit"}), ("开车比坐地铁快", {"driving"}),
    ("坐地铁，全程12公里。Please drive safely.", {"transit"}), ("请注意行车安全", set()), ("建议开车，注意安全", {"driving"}),
])
def test_a_mode_turned_down_is_not_recommended(text, modes):
    """Found with a generator of honest route answers that turn another mode down (比开车快, 不推荐坐公交地铁):
    they were read as recommending it (18 % of them denied)."""
    assert stated_modes(text) == modes


@pytest.mark.parametrize("text, plain", [
    ("全程**150.1公里**，预计用时**3小时****12分钟**。", "全程150.1公里，预计用时3小时12分钟。"),
    ("气温-**4℃**", "气温-4℃"), ("### 查询结果\n> 多云", "查询结果\n多云"), ("[天安门](https://a.b/c)在东城区", "天安门在东城区"),
    ("*多云*，`15℃`", "多云，15℃"), ("5*3=15", "5*3=15"), ("2*3*4", "2*3*4"), ("a * b", "a * b"),
    ("no markdown", "no markdown"),
])
def test_the_answer_is_read_without_its_markdown(text, plain):
    """A chat model's formatting is no claim: 3小时12分钟 in bold pieces was read as 3 hours (found by formatting
    reference answers as a model does); a bare * between digits stays."""
    from mobility_env.reading.text import plain_answer

    assert plain_answer(text) == plain


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("*_~`#>[]()\n 天安门5a-℃")) | st.characters(), max_size=300))
def test_reading_without_markdown_only_removes(text):
    """Any text (lone surrogates, runs of brackets or stars) is read: never longer, unchanged without markdown."""
    from mobility_env.reading.text import plain_answer

    plain = plain_answer(text)
    assert isinstance(plain, str) and len(plain) <= len(text)
    if not any(ch in text for ch in "*_~`#>[-+") and text.isascii():  # markdown marks, list bullets (- , + )
        assert plain == text


@pytest.mark.parametrize("text, plain", [
    ("大约25分钟或35\u200b分钟", "大约25分钟或35分钟"), ("3\u2060 5公里", "3 5公里"), ("走\u3164高速", "走高速"),
    ("drive or wаlk", "drive or walk"), ("avοιds highways", "avoids highways"), ("坐2०6路", "坐206路"),
    ("𝟏27.5 km", "127.5 km"), ("Москва", "Москва"), ("\U000e0041\U000e0042tag", "tag"), ("a\u202eb", "ab"),
])
def test_the_answer_is_read_as_the_user_sees_it(text, plain):
    """Characters nobody sees hid a wrong amount from the parser (25分钟或35\u200b分钟 was read as 25 minutes alone),
    look-alike letters a wrong travel mode (wаlk with a Cyrillic а); a word of another script stays."""
    from mobility_env.reading.text import plain_answer

    assert plain_answer(text) == plain


INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u202a\u202e\u2066\u034f\ufe0f\U000e0020\u3164\u2800"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("*_~`#>[]()\n 天安门5a-℃")) | st.characters(), max_size=200),
       st.lists(st.tuples(st.integers(0, 200), st.sampled_from(INVISIBLE)), max_size=6))
def test_invisible_characters_change_nothing(text, inserted):
    """Put invisible characters anywhere in any text: it is read as without them."""
    from mobility_env.reading.text import plain_answer

    spiked = text
    for at, char in inserted:
        spiked = spiked[:at] + char + spiked[at:]
    assert plain_answer(spiked) == plain_answer(text)


@pytest.mark.parametrize("text, durations, distances", [
    ("25 minutes or thirty-five minutes", [1500, 2100], []), ("about half an hour", [1800], []),
    ("an hour and a half", [5400], []), ("two and a half hours", [9000], []), ("It takes an hour", [3600], []),
    ("two hours and forty-one minutes", [9660], []), ("one hour, twelve minutes", [4320], []),
    ("one hundred and twenty kilometres", [], [120000]), ("two thousand five hundred meters", [], [2500]),
    ("the first one is fine", [], []), ("a few minutes", [], []), ("Take bus one", [], []),
])
def test_amounts_spelled_in_english_are_read(text, durations, distances):
    """A wrong amount spelled in words hid from the parser (25 minutes or thirty-five minutes passed as 25
    minutes); a number word counts only before a unit (one of the routes is no amount)."""
    from mobility_rewards.units import parse_distances, parse_durations

    normalized = normalize_answer(text)
    assert [round(q.value) for q in parse_durations(normalized)] == durations
    assert [round(q.value) for q in parse_distances(normalized)] == distances


@pytest.mark.parametrize("text, hedged", [
    ("25 and/or 35 minutes", True), ("between 25 and 35 minutes", True), ("between 12.5 and 15 km", True),
    ("2小时或120分钟", False), ("11:30-12:00", False), ("take bus 25 and 35 minutes later", False),
])
def test_english_alternatives_and_ranges_are_hedges(text, hedged):
    """`between 25 and 35 minutes` and `25 and/or 35 minutes` passed as the one value with a unit (found by probing
    the hedge check with the ways English writes a range)."""
    assert bool(hedged_quantities(text)) == hedged
