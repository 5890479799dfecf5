"""Traffic answers: a road's state restated (the service's word, colloquial words, its description, another state
denied from afar), and broken (another state, a negation, a hedge, a contradiction, every state at once).
"""

from __future__ import annotations

from .draw import Draw
from .facts import EpisodeFacts
from .forms import FAR_DENIALS, TRAFFIC_WORDS, join_clauses, pick_lang, traffic_text
from .registry import mutation


# -- the state restated ------------------------------------------------------------------------------------------------


def _traffic_sentence(f: EpisodeFacts, d: Draw, lang: str, state_text: str, description: bool = False) -> str:
    assert f.traffic is not None
    road = f.keyword or ""
    if lang == "en":
        clauses = [d.choice((f"on {road}, {state_text}", f"{road}: {state_text}", f"right now {state_text}"))]
    else:
        clauses = [d.choice((f"{road}目前{state_text}", f"目前路况{state_text}", f"{road}现在{state_text}"))]
    if description and f.traffic.description:
        clauses.append(f.traffic.description.rstrip("。"))
    return join_clauses(d, d.shuffled(clauses), lang)


def traffic_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str) -> str:
    assert f.traffic is not None
    state = f.traffic.state
    text = state if (lang == "zh" and style == "plain") else traffic_text(d, state, lang)
    return _traffic_sentence(f, d, lang, text)


@mutation("traffic_colloquial", correct=True, families=("traffic",))
def _traffic_colloquial(f: EpisodeFacts, d: Draw):
    """一点都不堵 / 有点堵 / 走走停停 / no congestion / slow / heavy traffic for the road's state."""
    assert f.traffic is not None
    lang = pick_lang(d)
    return _traffic_sentence(f, d, lang, traffic_text(d, f.traffic.state, lang))


_STATE_NOUNS = {"畅通": ("畅通", "free-flowing traffic"), "缓行": ("缓行", "slow traffic"), "拥堵": ("拥堵", "congestion"),
                "严重拥堵": ("严重拥堵", "gridlock")}


@mutation("traffic_far_denial", correct=True, families=("traffic",), applies=lambda f: bool(_wrong_states(f)))
def _traffic_far_denial(f: EpisodeFacts, d: Draw):
    """The road's state, then another state denied from a distance (不太可能出现拥堵, congestion is unlikely)."""
    assert f.traffic is not None
    lang = pick_lang(d)
    other = _STATE_NOUNS[d.choice(_wrong_states(f))][lang == "en"]
    denial = d.choice(FAR_DENIALS[lang]).format(other)
    return _traffic_sentence(f, d, lang, traffic_text(d, f.traffic.state, lang)) + \
        (f" {denial[0].upper()}{denial[1:]}." if lang == "en" else f"{denial}。")


@mutation("traffic_with_description", correct=True, families=("traffic",),
          applies=lambda f: bool(f.traffic and f.traffic.description))
def _traffic_with_description(f: EpisodeFacts, d: Draw):
    """The state and the service's own description of the road."""
    assert f.traffic is not None
    return _traffic_sentence(f, d, "zh", traffic_text(d, f.traffic.state, "zh"), description=True)


# -- wrong states ------------------------------------------------------------------------------------------------------


_NEGATED_TRAFFIC = {"畅通": (("不畅通", "不太通畅"), ("traffic is not clear", "it is not flowing")),
                    "缓行": (("没有缓行", "一点也不慢"), ("traffic is not slow",)),
                    "拥堵": (("一点都不堵", "没有堵车", "不拥堵"), ("it is not congested", "there is no congestion")),
                    "严重拥堵": (("不堵",), ("it is not congested",))}
_ADJACENT_STATES = {"拥堵": {"严重拥堵"}, "严重拥堵": {"拥堵"}}


def _wrong_states(f: EpisodeFacts) -> list[str]:
    assert f.traffic is not None
    mentioned = set(f.traffic.states_mentioned) | {f.traffic.state}
    banned = mentioned | {a for s in mentioned for a in _ADJACENT_STATES.get(s, ())}
    return [s for s in TRAFFIC_WORDS if s not in banned]


@mutation("wrong_state", correct=False, families=("traffic",), applies=lambda f: bool(_wrong_states(f)))
def _wrong_state(f: EpisodeFacts, d: Draw):
    lang = pick_lang(d)
    return _traffic_sentence(f, d, lang, traffic_text(d, d.choice(_wrong_states(f)), lang, plain=True))


@mutation("far_denied_state", correct=False, families=("traffic",))
def _far_denied_state(f: EpisodeFacts, d: Draw):
    """The road's true state denied from a distance (路况不太可能畅通 on a clear road), nothing else claimed."""
    assert f.traffic is not None
    lang = pick_lang(d)
    state = _STATE_NOUNS[f.traffic.state][lang == "en"]
    return _traffic_sentence(f, d, lang, d.choice(FAR_DENIALS[lang]).format(state))


def _negatable(f: EpisodeFacts) -> bool:
    assert f.traffic is not None
    state = f.traffic.state
    return f.traffic.states_mentioned == frozenset({state}) or state in ("缓行", "拥堵", "严重拥堵")


@mutation("negated_state", correct=False, families=("traffic",), applies=_negatable)
def _negated_state(f: EpisodeFacts, d: Draw):
    """``目前路况不畅通`` on a smooth road, ``一点都不堵`` on a congested one."""
    assert f.traffic is not None
    return _state_in_words(f, d, _NEGATED_TRAFFIC, f.traffic.state)


def _state_in_words(f: EpisodeFacts, d: Draw, table: dict[str, tuple[tuple[str, ...], tuple[str, ...]]],
                    state: str) -> str:
    """A traffic answer stating ``state`` in one of ``table``'s phrases (zh or en)."""
    lang = pick_lang(d)
    zh, en = table[state]
    return _traffic_sentence(f, d, lang, d.choice(en if lang == "en" else zh))


@mutation("state_hedge", correct=False, families=("traffic",), applies=lambda f: bool(_wrong_states(f)))
def _state_hedge(f: EpisodeFacts, d: Draw):
    assert f.traffic is not None
    lang = pick_lang(d)
    pair = d.shuffled([traffic_text(d, f.traffic.state, lang),
                       traffic_text(d, d.choice(_wrong_states(f)), lang, plain=True)])
    hedge = f"{pair[0]} or {pair[1]}" if lang == "en" else f"{pair[0]}或者{pair[1]}"
    return _traffic_sentence(f, d, lang, hedge)


@mutation("state_contradiction", correct=False, families=("traffic",),
          applies=lambda f: bool(_wrong_states(f)))
def _state_contradiction(f: EpisodeFacts, d: Draw):
    assert f.traffic is not None
    lang = pick_lang(d)
    right = _traffic_sentence(f, d, lang, traffic_text(d, f.traffic.state, lang))
    wrong = traffic_text(d, d.choice(_wrong_states(f)), lang, plain=True)
    return right + (f" Actually, {wrong}." if lang == "en" else f"……其实是{wrong}。")


@mutation("state_stuffing", correct=False, families=("traffic",))
def _state_stuffing(f: EpisodeFacts, d: Draw):
    """Every traffic state at once."""
    return d.choice(("路况：畅通、缓行、拥堵、严重拥堵。", "目前可能畅通，可能缓行，也可能拥堵或严重拥堵。",
                     "Traffic is clear, slow, congested and severely congested."))


# -- everyday words ----------------------------------------------------------------------------------------------------


COLLOQUIAL_TRAFFIC = {"畅通": (("路上车不多，很顺", "车很少，开得很快", "挺顺的", "一路绿灯，没什么车"),
                             ("traffic is light", "the road is wide open", "hardly any traffic")),
                      "缓行": (("车有点多，有点慢", "开不快，有点慢"), ("a bit slow", "it's crawling")),
                      "拥堵": (("很堵，塞车", "堵车，排长队"), ("the roads are packed", "it's jammed")),
                      "严重拥堵": (("堵得动不了", "基本寸步难行"), ("a complete standstill", "gridlocked"))}


@mutation("traffic_colloquial_light", correct=True, families=("traffic",),
          applies=lambda f: f.traffic is not None and f.traffic.state in COLLOQUIAL_TRAFFIC
          and not f.traffic.states_mentioned - {f.traffic.state})
def _traffic_colloquial_light(f: EpisodeFacts, d: Draw):
    """The state in everyday words (路上车不多，很顺; traffic is light)."""
    assert f.traffic is not None
    return _state_in_words(f, d, COLLOQUIAL_TRAFFIC, f.traffic.state)


@mutation("traffic_colloquial_wrong", correct=False, families=("traffic",), applies=lambda f: bool(_wrong_states(f)))
def _traffic_colloquial_wrong(f: EpisodeFacts, d: Draw):
    """A wrong state in everyday words (很堵，塞车 on a free-flowing road; traffic is light on a jammed one)."""
    return _state_in_words(f, d, COLLOQUIAL_TRAFFIC, d.choice(_wrong_states(f)))
