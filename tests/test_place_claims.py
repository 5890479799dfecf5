"""Place claims in information answers (mobility_rewards.verify): list items, house numbers, admin words.

Found by the large exploit sweep (benchmarks/reward_exploits.py): a foreign place with an odd name listed beside a
returned one passed; 您在红旗街道… was denied (旗 read as a banner); 玉兰大街3号 passed because 3 appeared in 第三医院.
"""

from hypothesis import given, settings, strategies as st

from mobility_rewards.verify import _admin_tokens, _consistent, _wrong_numbers, foreign_places, listed_items

KNOWN = ["麦当劳(玉兰北路店)", "肯德基(联合大道店)", "玉兰北路12号", "联合大道231号"]
ODD_NAMES = ["Alt Coffee", "干洗水洗零活修鞋擦鞋", "恒大·滨江左岸", "湖南东信集团湘潭九华智能纺纱", "Blue Bottle",
             "美日新擦鞋行", "G85银昆高速"]
INTROS = [("附近有：", "、"), ("附近有：", "，"), ("周边有", "、"), ("附近有", "；"), ("Nearby: ", "; "), ("Nearby: ", ", "),
          ("根据查询结果，周边可以去", "、")]
REMARKS_ZH = ["（约350米）", "，距离约350米", "(步行5分钟)", ""]
REMARKS_EN = [" (350 m away)", ", about 350 m", ""]
ENDINGS = ["。", "等。", "，都不太远。", "，环境都不错。", ", all within walking distance."]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(intro=st.sampled_from(INTROS), odd=st.sampled_from(ODD_NAMES), right=st.sampled_from(KNOWN[:2]),
       first=st.booleans(), ending=st.sampled_from(ENDINGS),
       remark=st.sampled_from(["", "很不错", "评分很高", "也可以", " is nice"]))
def test_a_listed_place_not_returned_is_foreign(intro, odd, right, first, ending, remark):
    lead, sep = intro
    items = [odd + remark, right] if first else [right, odd + remark]
    answer = lead + sep.join(items) + ending
    assert any(f.startswith(odd) for f in foreign_places(answer, KNOWN)), answer


@settings(max_examples=300, deadline=None, derandomize=True)
@given(intro=st.sampled_from(INTROS), names=st.permutations(KNOWN[:2]), remark=st.integers(0, 3),
       ending=st.sampled_from(ENDINGS), full_width=st.booleans())
def test_returned_places_with_remarks_are_not_foreign(intro, names, remark, ending, full_width):
    lead, sep = intro
    english = lead.startswith("Nearby")
    remarks = REMARKS_EN if english else REMARKS_ZH
    items = [(n.replace("(", "（").replace(")", "）") if full_width else n) + remarks[remark % len(remarks)]
             for n in names]
    answer = lead + sep.join(items) + ending
    assert foreign_places(answer, KNOWN) == [], (answer, listed_items(answer))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(number=st.integers(1, 400), lead=st.sampled_from(["您在", "您当前位于", "地址是", "在", "You are at "]),
       prefix=st.sampled_from(["", "湖南省长沙市滨河区金桥街道"]))
def test_house_numbers_must_be_the_roads_own(number, lead, prefix):
    evidence = "湖南省长沙市滨河区金桥街道玉兰大街166号 长沙市第三人民医院 育才东路139号"
    answer = f"{lead}{prefix}玉兰大街{number}号"
    wrong = _wrong_numbers(answer, evidence)
    assert (wrong == []) == (number == 166), (answer, wrong)


def test_house_number_of_another_road_is_wrong():
    assert _wrong_numbers("您在玉兰大街139号", "玉兰大街166号 育才东路139号") == ["玉兰大街139号"]
    assert _wrong_numbers("您在育才东路139号附近", "玉兰大街166号 育才东路139号") == []


@settings(max_examples=100, deadline=None, derandomize=True)
@given(name=st.sampled_from(["红旗", "五星红旗", "镶黄旗", "正蓝旗"]),
       after=st.sampled_from(["街道", "区", "镇", "路", "大街"]), lead=st.sampled_from(["您在", "你在", "位于", ""]))
def test_banner_only_when_nothing_follows(name, after, lead):
    tokens = _admin_tokens(f"{lead}{name}{after}团结街384号")
    assert all(not t.endswith("旗") for t in tokens), tokens
    assert all(_consistent(t, [f"{name}{after}"]) for t in tokens if t.endswith(("街道", "区", "镇"))), tokens


def test_a_real_banner_is_still_an_admin_word():
    assert _admin_tokens("您在内蒙古自治区锡林郭勒盟正蓝旗。") == ["您在内蒙古自治区", "锡林郭勒盟正蓝旗"]
