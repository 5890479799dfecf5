"""Place claims in information answers (mobility_rewards.mobilitybench.place_names): list items, house numbers, admin
words.

Found by the large exploit sweep (benchmarks/reward_exploits.py): a foreign place with an odd name listed beside a
returned one passed (again with seed 11: a name joined by •, a remark after a dash, 营业 inside 建行营业部);
您在红旗街道… was denied (旗 read as a banner); 玉兰大街3号 passed because 3 appeared in 第三医院.
"""

from hypothesis import given, settings, strategies as st

from mobility_rewards.mobilitybench.place_names import (_admin_tokens, _consistent, _wrong_numbers, foreign_places,
                                                        listed_items)

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


# Generated foreign names, shaped like real ones: one or two parts (CJK fragments of real names, some starting
# with a character that also starts list intros, 和平, 在水一方, or holding a remark word, 营业, 推荐; or
# capitalized Latin words), joined by a dot, a space or nothing, with a place ending or none.
FRAGMENTS = ["华莱士", "江南区", "和平", "在水一方", "有家", "万达", "理想国", "春熙", "东方明珠", "建行", "新华", "人民", "星光", "锦江之星",
             "naive理想国coffee", "便民", "推荐菜", "营业", "大参林", "同仁堂", "海底捞"]
INSIDE_ONLY = ("推荐菜", "营业")  # a remark word leading an item reads as a remark (推荐菜 X很好: try X)
LATIN = ["Alt", "Blue", "Coffee", "Bar", "Tims", "MUJI", "Cafe", "Station", "Mall", "Oriental", "Andy's"]
JOINERS = ["·", "•", "‧", "・", "∙", "⋅", " ", ""]
ENDINGS_OF_NAMES = ["", "店", "咖啡", "中心", "营业部", "营业厅", "俱乐部", "广场", "酒吧", "饭店", "(万达店)", "（东门店）"]
REMARK_WORDS = ["很不错", "评分很高", "也可以", "挺方便", "环境好", " is nice", " is open late", " - nice", "——推荐",
                " ~ 推荐", "，评分很高", ""]


@st.composite
def foreign_names(draw):
    first = draw(st.sampled_from([f for f in FRAGMENTS + LATIN if f not in INSIDE_ONLY]))
    second = draw(st.one_of(st.just(""), st.sampled_from(FRAGMENTS + LATIN)))
    joiner = draw(st.sampled_from(JOINERS)) if second else ""
    name = first + joiner + second + draw(st.sampled_from(ENDINGS_OF_NAMES))
    if len(name.replace(" ", "")) < 3:
        name += "饭店"  # two characters read as prose before a remark (味道很好)
    return name


@settings(max_examples=500, deadline=None, derandomize=True)
@given(intro=st.sampled_from(INTROS), odd=foreign_names(), right=st.sampled_from(KNOWN[:2]), first=st.booleans(),
       remark=st.sampled_from(REMARK_WORDS), ending=st.sampled_from(ENDINGS))
def test_generated_foreign_names_with_remarks_are_foreign(intro, odd, right, first, remark, ending):
    """Found by the sweep: naive理想国coffee•bar很不错 (a bullet, not ·), Alt Coffee - nice (a dash before the
    remark) and 建行营业部 (营业, a remark word, inside the name) all passed as prose."""
    lead, sep = intro
    items = [odd + remark, right] if first else [right, odd + remark]
    answer = lead + sep.join(items) + ending
    assert foreign_places(answer, KNOWN), (answer, listed_items(answer))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(intro=st.sampled_from(INTROS), names=st.permutations(KNOWN[:2]),
       remark=st.sampled_from(["这家店很好", "性价比很高", "服务员很热情", "停车位很多", "都很近", "也不错", "环境不错",
                               "距离都不远"]))
def test_a_remark_item_that_points_or_judges_is_not_a_place(intro, names, remark):
    """A remark of its own in the list (附近有：A、B，性价比很高) names no place."""
    lead, sep = intro
    answer = lead + sep.join(names) + ("，" if not lead.startswith("Nearby") else ", ") + remark + "。"
    assert foreign_places(answer, KNOWN) == [], (answer, listed_items(answer))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(intro=st.sampled_from(INTROS), names=st.permutations(KNOWN[:2]), remark=st.sampled_from(REMARK_WORDS[:-1]),
       bracket=st.sampled_from(["", "（营业到22点）", "(营业部)", "（推荐）"]), ending=st.sampled_from(ENDINGS))
def test_returned_names_with_generated_remarks_are_not_foreign(intro, names, remark, bracket, ending):
    lead, sep = intro
    answer = lead + sep.join([names[0] + bracket + remark, names[1]]) + ending
    assert foreign_places(answer, KNOWN) == [], (answer, listed_items(answer))


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


@settings(max_examples=60, deadline=None, derandomize=True)
@given(intro=st.sampled_from(INTROS), closing=st.sampled_from(["祝您一路顺风！", "祝您一路平安！", "一路畅通！", "祝一路好走。"]),
       road=st.sampled_from(["建设一路", "解放一路", "中山一路"]))
def test_a_journey_wish_is_no_road_but_a_numbered_road_is(intro, closing, road):
    """祝您一路顺风 (a good-journey wish) read as a road named 祝您一路: every POI and nearby answer ending with it
    was denied (found by appending common closings to the reference answers). 建设一路 is still a road."""
    lead, sep = intro
    answer = lead + sep.join(KNOWN[:2]) + "。" + closing
    assert foreign_places(answer, KNOWN) == [], answer
    assert foreign_places(f"{answer}也可以去{road}看看。", KNOWN), road
