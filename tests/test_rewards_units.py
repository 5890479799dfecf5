"""Parsers of stated quantities: hand-checked values and property round trips."""

from hypothesis import given, strategies as st

from mobility_rewards.probes import cn_int
from mobility_rewards.mobilitybench.reference import format_clock, format_distance, format_duration
from mobility_env.reading.clock import clock_claims
from mobility_env.reading.normalized import normalize_answer
from mobility_rewards.units import (Quantity, arabize, chinese_numeral_value, parse_distances, parse_durations,
                                    parse_temperatures, within_tolerance)


def test_chinese_numerals():
    assert chinese_numeral_value("三十七") == 37
    assert chinese_numeral_value("一百零五") == 105
    assert chinese_numeral_value("两") == 2
    assert chinese_numeral_value("十") == 10
    assert chinese_numeral_value("abc") is None
    assert arabize("三十七分钟") == "37分钟"
    assert arabize("一点五千米") != ""  # never raises on odd input


@given(n=st.integers(1, 99_999_999), liang=st.booleans())
def test_chinese_numerals_round_trip(n, liang):
    assert chinese_numeral_value(cn_int(n, liang)) == n


@given(metres=st.integers(1, 999_999), unit=st.sampled_from(["米", "公里"]))
def test_chinese_distances_round_trip(metres, unit):
    """一万五千米 was read as 一万五 千米 (10,005 km): found on unseen synthetic episodes by the exploit sweep."""
    value = metres if unit == "米" else metres * 1000
    assert [q.value for q in parse_distances(f"全程{cn_int(metres)}{unit}")] == [float(value)]


@given(lead=st.integers(1, 9), unit=st.sampled_from([("百", 100), ("千", 1000), ("万", 10000)]), last=st.integers(1, 9))
def test_spoken_shortening_of_the_last_digit(lead, unit, last):
    """一万五 is 15,000 and 三千五 3,500 as said aloud; 一万零五 stays 10,005."""
    name, size = unit
    assert chinese_numeral_value(f"{cn_int(lead)}{name}{cn_int(last)}") == lead * size + last * size // 10
    assert chinese_numeral_value(f"{cn_int(lead)}{name}零{cn_int(last)}") == lead * size + last


def test_distances_in_both_scripts():
    assert [q.value for q in parse_distances("全程150.1公里，另一条2,289 m")] == [150100.0, 2289.0]
    assert [q.value for q in parse_distances("2.3km or 1.5千米")] == [2300.0, 1500.0]
    assert [q.value for q in parse_distances("一百五十公里")] == [150000.0]
    assert parse_distances("38 min") == ()


def test_durations_sum_adjacent_parts_and_skip_clock_times():
    assert [q.value for q in parse_durations("预计耗时1小时49分钟")] == [6540.0]
    assert [q.value for q in parse_durations("1h49min")] == [6540.0]
    assert [q.value for q in parse_durations("2 hours 5 minutes")] == [7500.0]
    assert [q.value for q in parse_durations("一个半小时")] == [5400.0]
    assert [q.value for q in parse_durations("半小时")] == [1800.0]
    assert [q.value for q in parse_durations("三十七分钟，另一条42分钟")] == [2220.0, 2520.0]
    assert [q.value for q in parse_durations("需要1小时9分钟，10点06分出发")] == [4140.0]


def _clock_minutes(text):
    """Times of day as MobilityBench reads them: the kernel's clock reader over the normalized answer."""
    return [c.minutes for c in clock_claims(normalize_answer(text))]


def test_clock_times():
    assert _clock_minutes("建议11:23出发，12点前到达") == [683, 720]
    assert _clock_minutes("下午3点") == [900]
    assert _clock_minutes("9点半出发") == [570]
    assert _clock_minutes("明天上午九点") == [540]
    assert _clock_minutes("11点15到") == [675]


def test_times_of_day_and_dates_are_no_quantities():
    assert parse_durations("10点23分出发，2025-11-23") == () and parse_distances("10:30") == ()


def test_a_range_up_from_a_round_number_is_met_inside_it():
    stated = parse_durations("30多分钟")[0]
    assert within_tolerance(stated, 34 * 60) and within_tolerance(stated, 39 * 60)
    assert not within_tolerance(stated, 28 * 60) and not within_tolerance(stated, 45 * 60)


def test_a_speed_is_no_distance_and_days_no_duration():
    assert parse_distances("时速57 km/h") == () and parse_durations("未来3天") == ()


def test_temperatures():
    assert parse_temperatures("气温-9~-2℃") == (-9.0, -2.0)
    assert parse_temperatures("零下4度，最高零下2度") == (-4.0, -2.0)
    assert parse_temperatures("-4°C") == (-4.0,)
    assert parse_temperatures("5到12度") == (5.0, 12.0)


def test_tolerance_is_five_percent_with_rounding_leniency():
    assert within_tolerance(parse_distances("150公里")[0], 150123)
    assert not within_tolerance(parse_distances("180公里")[0], 150123)  # +20 %
    assert within_tolerance(parse_distances("2公里")[0], 2289)  # 2.289 km rounded to km
    assert not within_tolerance(parse_distances("2.7公里")[0], 2289)
    assert not within_tolerance(Quantity(3000, 1000, 0, 0), 2289)  # rounds to 2, not 3
    assert within_tolerance(Quantity(0, 1, 0, 0), 0) and not within_tolerance(Quantity(5, 1, 0, 0), 0)


@given(st.integers(min_value=1, max_value=3_000_000))
def test_formatted_distance_round_trips_within_tolerance(metres):
    stated = parse_distances("全程" + format_distance(metres))
    assert len(stated) == 1 and within_tolerance(stated[0], metres)


@given(st.integers(min_value=60, max_value=200_000))
def test_formatted_duration_round_trips_within_tolerance(seconds):
    stated = parse_durations("预计用时" + format_duration(seconds))
    assert len(stated) == 1 and within_tolerance(stated[0], seconds)


@given(st.integers(min_value=0, max_value=1439))
def test_formatted_clock_round_trips(minutes):
    assert _clock_minutes("建议" + format_clock(minutes) + "出发") == [minutes]


@given(st.text(max_size=60))
def test_parsers_never_raise(text):
    parse_distances(text), parse_durations(text), clock_claims(normalize_answer(text)), parse_temperatures(text)
