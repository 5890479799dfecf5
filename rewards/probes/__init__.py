"""Answer probes: correct paraphrases and wrong variants of an episode's finish answer.

Written to judge the FPR verifier from the outside, the way a hostile RL policy would probe
it (STYLE habit 11): for every episode the facts of the replayed evidence are read once
(:func:`~.facts.build_facts`), and named *mutations* turn them into answers:

* **correct** mutations restate the chosen option's facts (units, Chinese numerals, English,
  clause order, coarser rounding within 5 %, a true leg before the total, colloquial
  traffic states, graded weather words, clock times with their period...) and must pass;
* **wrong** mutations hedge, contradict, negate, stuff, shift, echo, or recommend what the
  user excluded, and must fail.

Every generator checks its own output against the evidence, so a failing test blames the
verifier, not the generator: a "wrong" value is at least 6 % and two stated precisions off
after rounding (``1h`` may be 53 minutes rounded, so it is never the wrong value for 53);
a wrong clock time is 6-40 % of the trip (at least 3 minutes) off and never on a round
5-minute mark; a wrong temperature is 3-15 °C from every true one (percentages mean nothing
near 0 °C); a "wrong" name is contained in no evidence name; a foreign place lies over 2 km
from every evidence place and the query point; a correct statement is within 5 % or the
usual rounding (one-decimal km, whole minutes); a name or address the query already
contains is not offered alone as a correct answer (it would be an echo).

Modules:

* :mod:`.draw`: the random choices (:class:`Draw`; :class:`HypothesisDraw` for properties, :class:`RandomDraw`
  for seeded sweeps);
* :mod:`.forms`: the text forms the generators share (numerals, quantities as :class:`Stated`, clock times,
  temperatures, weather conditions and traffic states in words, fillers, the kernel's vocabulary files);
* :mod:`.facts`: the facts of an episode (:class:`EpisodeFacts`, :func:`facts_of`, :func:`build_facts`);
* :mod:`.registry`: the mutations (:func:`mutation`, :data:`CORRECT`, :data:`WRONG`, :data:`KIND_ORDER`), scoring one
  answer (:func:`score`, :func:`explain`) and the hypothesis strategies (:func:`answers`, :func:`family_answers`);
* the families' mutations: :mod:`.route`, :mod:`.places` (poi, nearby, geolocation), :mod:`.weather`,
  :mod:`.traffic`, and :mod:`.surface` for those of every family (generic text, echoes, markdown, invisible
  characters, look-alike letters, Traditional script, closing remarks...);
* :mod:`.sweep`: the usable episodes (:func:`usable_facts`, :func:`load_usable`) and the seeded sweep
  (:func:`sweep`, :func:`markdown_table`);
* :mod:`.mobilepa`: MobilePA's answer generators (honest paraphrases, attacks) and their sweep; not imported here.

Kinds (``CORRECT``/``WRONG``, each applying to some families: route, poi, nearby,
geolocation, weather, traffic):

* correct: plain, english, mixed_units, chinese_numerals, coarse_rounding, leg_before_total,
  constraint_acknowledged, poi_name_only, poi_address_only, nearby_several, nearby_with_remarks,
  geo_spaced_address, geo_two_components, weather_all_days, traffic_colloquial,
  traffic_with_description;
* wrong: generic, query_echo, keyword_alone, false_no_result; value_off, hedge_two_values,
  hedge_range, contradiction, route_stuffing, other_option_facts, wrong_mode,
  twelve_hour_shift, clock_off, leave_at_deadline, recommend_excluded_line,
  choose_excluded_option, opposite_strategy, skip_waypoint; superstring_name,
  name_other_province_address, foreign_place, other_branch, place_hedge,
  mixed_foreign_place, place_stuffing; bare_city, one_character, wrong_component,
  wrong_street_number; wrong_condition, negated_condition, condition_hedge,
  condition_contradiction, condition_stuffing, temperature_off, temperature_hedge,
  temperature_stuffing, other_day; wrong_state, negated_state, state_hedge,
  state_contradiction, state_stuffing.

Open-world forms (built from the kernel's data files and the served responses, not from the verifier's tables):
correct traditional_script (any correct kind in Traditional: mainland, Taiwan with its phrases, Hong Kong),
mode_synonym, other_units (miles, 里), step_by_step (the served steps, numbered), main_roads, destination_restated,
traffic_colloquial_light; wrong traditional_wrong, wrong_mode_vocabulary (打车, 坐高铁, 坐飞机, 骑电动车 …),
other_unit_hedge, unitless_alternative (32分钟或48), wrong_step, foreign_road, wrong_destination,
phenomenon_hedge (any Amap phenomenon of another family), traffic_colloquial_wrong, strategy_property (收费较多 on a
fewer-tolls route), forecast_one_day_only and forecast_day_wrong (a question about several days), no_lights (沿途没有
红绿灯 on a route with lights).

Generators draw their random choices through :class:`Draw`, so the same code runs as a
hypothesis strategy (:func:`answers`, :class:`HypothesisDraw`) and in the seeded sweep
(:func:`sweep`, :class:`RandomDraw`) that ``tests/test_reward_exploits.py`` and
``benchmarks/reward_exploits.py`` share. hypothesis is a dev dependency: it is imported only when a strategy is
built or a :class:`HypothesisDraw` made. The package knows no data path: the callers name the episode files.
"""

from __future__ import annotations

from . import places, route, surface, traffic, weather  # noqa: F401  (each registers its kinds on import)
from .draw import Draw, HypothesisDraw, RandomDraw
from .facts import FAMILIES, FAMILY_OF, EpisodeFacts, Leg, build_facts, facts_of, street_and_number
from .forms import (Stated, acceptable_distance, acceptable_duration, cn_decimal, cn_int,
                    distance_forms, duration_forms, is_wrong_value, kernel_vocabulary, query_clock, trailing,
                    wrong_conditions)
from .places import geo_components
from .registry import (CORRECT, KIND_ORDER, WRONG, Answer, Mutation, Outcome, answers, applicable, explain,
                       family_answers, mutation, order_kinds, score)
from .route import rides, route_answer
from .surface import BLANK_FILLERS, ZERO_WIDTH, lookalike, opencc_converter, sprinkled, traditional
from .sweep import FactsPool, load_usable, markdown_table, sweep, usable_facts
from .traffic import COLLOQUIAL_TRAFFIC
from .weather import PHENOMENA_ADJACENT

order_kinds()  # every family module has registered its kinds: put them in the order the sweeps draw them

__all__ = ["Answer", "BLANK_FILLERS", "COLLOQUIAL_TRAFFIC", "CORRECT", "Draw", "EpisodeFacts", "FAMILIES", "FAMILY_OF",
           "FactsPool", "HypothesisDraw", "KIND_ORDER", "Leg", "Mutation", "Outcome", "PHENOMENA_ADJACENT",
           "RandomDraw", "Stated", "WRONG", "ZERO_WIDTH", "acceptable_distance", "acceptable_duration", "answers",
           "applicable", "build_facts", "cn_decimal", "cn_int", "distance_forms", "duration_forms", "explain",
           "facts_of", "family_answers", "geo_components", "is_wrong_value", "kernel_vocabulary", "load_usable",
           "lookalike", "markdown_table", "mutation", "opencc_converter", "query_clock", "rides", "route_answer",
           "score", "sprinkled", "street_and_number", "sweep", "traditional", "trailing", "usable_facts",
           "wrong_conditions"]
