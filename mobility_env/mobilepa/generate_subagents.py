"""Task families of the sub-agent dimension: requests only a downstream agent can carry out.

A train ticket, a hotel, cinema seats, a meal delivered, a ride booked for later, an operation inside an
app no tool covers: the phone has no tool that does it, so the assistant must hand the task to the right
sub-agent (:data:`~mobility_env.mobilepa.domains.subagents.SUB_AGENTS`) with a complete payload. The
sub-agent dimension measures the delegation, not what the sub-agent then does (the paper's bucket 3), so
every task here is a ``behaviour`` task without a gold delta (a payload's free wording is the gate's to
judge, not a row diff's): its gate (``HandoffGate``) names the agent and, for each field the request
decides (the required ones and the optional ones it states), every accepted spelling (``上海`` /
``上海市`` / ``Shanghai``; a date in the payload's ``YYYY-MM-DD`` form); the generator makes every other
offered state-changing tool ``forbidden`` (a distractor sub-agent, ``book_ride`` beside the ride agent).

Each task offers 1–2 distractor agents beside the gold one (``Draft.offered``). Families by category
(same ``(rng, world) -> Draft`` contract as :mod:`.generate_maps`):

* grounding: a train or flight ticket, a hotel stay (check-out computed from the nights), cinema tickets, a
  meal delivered, a ride booked for a later time, an app-only operation for the GUI agent; the first five
  sometimes leave a required detail out (a *missing-detail* variant: the oracle asks, the user's fact gives
  it, the task must ask first);
* conditional: "no plans that evening → the 19:00 showing, else the 21:30 one" (the calendar decides);
* state tracking: a hotel for the business trip in the calendar (city and dates read from the event), a
  ticket to the city of an event;
* intent correction: a ticket or hotel the earlier turn proposed, with the date, the destination or the
  nights changed;
* error recovery: the grounding families with planted obstacles (the entry tool failing transiently, the
  assistant's accessibility permission withdrawn for the GUI agent).
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any, Callable, Sequence

from .domains.subagents import SUB_AGENTS
from .generate_oracle import PERMISSION, RUNTIME, Draft, OracleRun, fact, missing
from .generate_phrases import say, say_day
from .generate_world import World, clear_slot
from .tasks import FactSlot

Family = Callable[[random.Random, World], Draft]

ASK_RATE = 0.3
CITIES = (("北京", "Beijing"), ("上海", "Shanghai"), ("广州", "Guangzhou"), ("深圳", "Shenzhen"), ("杭州", "Hangzhou"),
          ("成都", "Chengdu"), ("武汉", "Wuhan"), ("西安", "Xi'an"), ("南京", "Nanjing"), ("重庆", "Chongqing"))
MOVIES = (("流浪地球2", "The Wandering Earth 2"), ("热辣滚烫", "YOLO"), ("哪吒之魔童闹海", "Ne Zha 2"),
          ("满江红", "Full River Red"), ("封神第一部", "Creation of the Gods I"), ("飞驰人生2", "Pegasus 2"))
DISHES = (("宫保鸡丁", "Kung Pao chicken"), ("牛肉面", "beef noodles"), ("黄焖鸡米饭", "braised chicken rice"),
          ("麻辣烫", "malatang"), ("披萨", "pizza"), ("寿司", "sushi"))
PLACES = (("国贸大厦", "China World Tower"), ("首都机场T3航站楼", "Capital Airport Terminal 3"),
          ("虹桥火车站", "Hongqiao Railway Station"), ("市人民医院", "City People's Hospital"),
          ("西湖文化广场", "West Lake Culture Square"), ("软件园二期", "Software Park Phase II"))
#: App-only operations for the GUI agent: app id, (Chinese, English) request, the phrases its instruction must hold.
GUI_TASKS = (("Taobao", ("在淘宝上把购物车里的猫粮下单", "Order the cat food in my Taobao cart"), ("猫粮", "cat food")),
             ("Alipay", ("用支付宝交一下这个月的电费", "Pay this month's electricity bill with Alipay"),
              ("电费", "electricity")),
             ("WeChat", ("在微信里把“家人群”设成消息免打扰", "Mute the \"Family\" group chat in WeChat"),
              ("家人群", "Family")),
             ("Douyin", ("在抖音上把“健身小王”取消关注", "Unfollow \"Fitness Wang\" on Douyin"), ("健身小王", "Fitness Wang")),
             ("Bilibili", ("把B站的稍后再看列表清空", "Clear my Bilibili watch-later list"),
              ("稍后再看", "watch later", "watch-later")))
APP_NAMES = {"Taobao": "淘宝", "Alipay": "支付宝", "WeChat": "微信", "Douyin": "抖音", "Bilibili": "哔哩哔哩"}
COUNT_ZH = {1: "一", 2: "两", 3: "三", 4: "四"}
COUNT_EN = {1: "one", 2: "two", 3: "three", 4: "four"}


def _spellings(pair: tuple[str, str]) -> list[str]:
    zh, en = pair
    extra = [zh + "市"] if pair in CITIES else []
    return list(dict.fromkeys([zh, *extra, en, en.replace("'", "")]))


def _word(pair: tuple[str, str], lang: str) -> str:
    return pair[0] if lang == "zh" else pair[1]


def _delegated(rng: random.Random, draft: Draft, agent: str, payload: dict[str, list[str]]) -> Draft:
    """``draft`` as a sub-agent task: the gate on ``agent`` and ``payload``, 1–2 distractor agents offered."""
    others = [a for a in SUB_AGENTS if a != agent]
    draft.dimension = "subagent"
    draft.offered = (agent, *rng.sample(others, rng.randint(1, 2)))
    draft.gate = {"agent": agent, "payload": payload}
    return draft


def _handoff(run: OracleRun, agent: str, payload: dict[str, Any]) -> str:
    return str(run.act(agent, payload).payload["handoff_id"])


def _asking(lang: str, question: tuple[str, str], reply: str, field: str, slot: FactSlot, value: str,
            words: Sequence[str] = ()) -> dict[str, Any]:
    """The Draft arguments of a missing-detail variant: the user's fact (``slot``, ``value``, the ``reply`` saying
    it, other ``words`` for it), the obstacle, must-ask."""
    return {"user_facts": [fact(slot, value, reply, words)], "must_ask": True,
            "obstacles": [missing(f"no {field}: the user's reply gives it")],
            "plan_question": question[0 if lang == "zh" else 1]}


def _draft(rng: random.Random, family: str, query: str, agent: str, payload: dict[str, Any],
           gate: dict[str, list[str]], answer: str, asking: dict[str, Any] | None = None,
           history: list[dict[str, str]] | None = None) -> Draft:
    question = (asking or {}).pop("plan_question", None)

    def plan(run: OracleRun) -> str:
        if question is not None:
            run.ask(question)
        handoff = _handoff(run, agent, payload)
        return f"{answer} ({handoff})"
    draft = Draft(family, "behaviour", query, plan, [(agent, payload)], obstacle_kinds=(RUNTIME, PERMISSION),
                  history=history or [], **(asking or {}))
    return _delegated(rng, draft, agent, gate)


# ------------------------------------------------------------------------------------------------- grounding
def ticket(rng: random.Random, world: World, day: dt.date | None = None, place: tuple[str, str] | None = None,
           history: list[dict[str, str]] | None = None, query: str | None = None,
           origin: tuple[str, str] | None = None, kind: str | None = None, count: int | None = None) -> Draft:
    """A ticket from one city to another (arguments given by the families that build on it: the day, the
    destination, the origin, the kind, the count; a given ``query`` has no missing-detail variant)."""
    lang = world.lang
    first, second = rng.sample(CITIES, 2)
    destination = place or second
    origin = origin or (first if first != destination else second)
    day = day or world.today + dt.timedelta(days=rng.randint(1, 10))
    kind = kind or rng.choice(("train", "train", "flight"))
    count = count or rng.choice((1, 1, 2, 3))
    what = {"train": ("高铁票", "train ticket"), "flight": ("机票", "flight")}[kind]
    n_zh = f"{COUNT_ZH[count]}张" if count > 1 else "一张"
    n_en = f"{COUNT_EN[count]} {what[1]}s" if count > 1 else f"a {what[1]}"
    payload = {"kind": kind, "origin": _word(origin, lang), "destination": _word(destination, lang),
               "date": day.isoformat(), **({"passengers": count} if count > 1 else {})}
    gate = {"kind": [kind], "origin": _spellings(origin), "destination": _spellings(destination),
            "date": [day.isoformat()], **({"passengers": [str(count)]} if count > 1 else {})}
    when = say_day(rng, day, world.today, lang)
    ask = query is None and rng.random() < ASK_RATE
    asking = _asking(lang, ("哪天出发？", "Which day?"), say(rng, lang, [f"{when}吧"], [f"{when.capitalize()}."]),
                     "travel date", "value", day.isoformat(), [when]) if ask else None
    if query is None:
        date_zh, date_en = ("", "") if ask else (when, f" {when}")
        query = say(rng, lang, [f"帮我订{n_zh}{date_zh}从{origin[0]}到{destination[0]}的{what[0]}"],
                    [f"Book me {n_en} from {origin[1]} to {destination[1]}{date_en}."])
    answer = say(rng, lang, [f"已交给票务助手订{day.isoformat()}{origin[0]}到{destination[0]}的{what[0]}"],
                 [f"Handed to the ticketing agent: {what[1]} {origin[1]} → {destination[1]} on {day.isoformat()}"])
    return _draft(rng, "ticket", query, "route_to_ticket_agent", payload, gate, answer, asking, history)


def hotel(rng: random.Random, world: World, nights_said: int | None = None,
          history: list[dict[str, str]] | None = None, query: str | None = None,
          stay: tuple[tuple[str, str], dt.date, int] | None = None) -> Draft:
    lang = world.lang
    city, check_in, nights = stay or (rng.choice(CITIES), world.today + dt.timedelta(days=rng.randint(1, 14)),
                                      rng.randint(1, 4))
    check_out = check_in + dt.timedelta(days=nights)
    payload = {"city": _word(city, lang), "check_in": check_in.isoformat(), "check_out": check_out.isoformat()}
    gate = {"city": _spellings(city), "check_in": [check_in.isoformat()], "check_out": [check_out.isoformat()]}
    when = say_day(rng, check_in, world.today, lang)
    ask = query is None and rng.random() < ASK_RATE
    reply = say(rng, lang, [f"{when}入住"], [f"Checking in {when}."])
    asking = _asking(lang, ("哪天入住？", "When do you check in?"), reply, "check-in date", "value",
                     check_in.isoformat(), [when]) if ask else None
    if query is None:
        stay_zh = f"住{COUNT_ZH.get(nights, str(nights))}晚"
        stay_en = f"{COUNT_EN.get(nights, str(nights))} night{'s' if nights > 1 else ''}"
        query = say(rng, lang, [f"帮我在{city[0]}订个酒店，{'' if ask else when}入住，{stay_zh}"],
                    [f"Book me a hotel in {city[1]}{'' if ask else ' from ' + when.removeprefix('on ')}, {stay_en}."])
    answer = say(rng, lang, [f"已交给酒店助手：{city[0]}，{check_in.isoformat()}入住，{check_out.isoformat()}退房"],
                 [f"Handed to the hotel agent: {city[1]}, {check_in.isoformat()} to {check_out.isoformat()}"])
    return _draft(rng, "hotel", query, "route_to_hotel_agent", payload, gate, answer, asking, history)


def movie(rng: random.Random, world: World, showtime: str | None = None, day: dt.date | None = None,
          query: str | None = None, seats: int | None = None) -> Draft:
    lang = world.lang
    title = rng.choice(MOVIES)
    day = day or world.today + dt.timedelta(days=rng.randint(0, 5))
    seats = seats or rng.choice((1, 2, 2, 3, 4))
    showtime = showtime or rng.choice(("14:30", "19:00", "19:30", "21:10"))
    payload = {"title": _word(title, lang), "date": day.isoformat(), "showtime": showtime, "seats": seats}
    gate = {"title": _spellings(title) + [f"《{title[0]}》"], "date": [day.isoformat()], "showtime": [showtime],
            "seats": [str(seats)]}
    when = say_day(rng, day, world.today, lang)
    ask = query is None and rng.random() < ASK_RATE
    asking = _asking(lang, ("哪天看？", "Which day?"), say(rng, lang, [f"{when}"], [f"{when.capitalize()}."]),
                     "date", "value", day.isoformat(), [when]) if ask else None
    if query is None:
        query = say(rng, lang, [f"帮我订{COUNT_ZH[seats]}张{'' if ask else when}{showtime}的《{title[0]}》"],
                    [f"Get me {COUNT_EN[seats]} ticket{'s' if seats > 1 else ''} for {title[1]} at {showtime}"
                     f"{'' if ask else ' ' + when}."])
    answer = say(rng, lang, [f"已交给电影票助手：《{title[0]}》{day.isoformat()} {showtime}，{seats}张"],
                 [f"Handed to the movie agent: {title[1]}, {day.isoformat()} {showtime}, {seats} seat(s)"])
    return _draft(rng, "movie", query, "route_to_movie_agent", payload, gate, answer, asking)


def food(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    dish, place = rng.choice(DISHES), rng.choice(PLACES)
    count = rng.choice((1, 2))
    items = f"{COUNT_ZH[count]}份{dish[0]}" if lang == "zh" else f"{count} x {dish[1]}"
    payload = {"items": items, "address": _word(place, lang)}
    gate = {"items": [dish[0], dish[1]], "address": _spellings(place)}
    ask = rng.random() < ASK_RATE
    reply = say(rng, lang, [f"送到{place[0]}"], [f"To {place[1]}."])
    asking = _asking(lang, ("送到哪里？", "Where should it go?"), reply, "delivery address", "place",
                     _word(place, lang), _spellings(place)) if ask else None
    query = say(rng, lang, [f"帮我点{items}外卖" + ("" if ask else f"，送到{place[0]}")],
                [f"Order {items} for delivery" + ("" if ask else f" to {place[1]}") + "."])
    answer = say(rng, lang, [f"已交给外卖助手：{items}，送到{place[0]}"], [f"Handed to the food agent: {items} to {place[1]}"])
    return _draft(rng, "food", query, "route_to_food_agent", payload, gate, answer, asking)


def ride_later(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    pickup, destination = rng.sample(PLACES, 2)
    day = world.today + dt.timedelta(days=1)
    clock = rng.choice(("06:30", "07:00", "07:40", "08:15", "09:00"))
    moment = f"{day.isoformat()} {clock}"
    payload = {"pickup": _word(pickup, lang), "destination": _word(destination, lang), "time": moment}
    gate = {"pickup": _spellings(pickup), "destination": _spellings(destination), "time": [moment]}
    ask = rng.random() < ASK_RATE
    asking = _asking(lang, ("从哪里上车？", "Where should it pick you up?"),
                     say(rng, lang, [f"从{pickup[0]}"], [f"From {pickup[1]}."]), "pickup", "place",
                     _word(pickup, lang), _spellings(pickup)) if ask else None
    query = say(rng, lang, [f"帮我约一辆明天{clock}的车" + ("" if ask else f"，从{pickup[0]}") + f"到{destination[0]}"],
                [f"Book a ride for tomorrow at {clock}" + ("" if ask else f" from {pickup[1]}")
                 + f" to {destination[1]}."])
    answer = say(rng, lang, [f"已交给打车助手：明天{clock}从{pickup[0]}到{destination[0]}"],
                 [f"Handed to the ride agent: tomorrow {clock}, {pickup[1]} → {destination[1]}"])
    return _draft(rng, "ride_later", query, "route_to_ride_agent", payload, gate, answer, asking)


def gui(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    installed = {a["app"] for a in world.apps if a["installed"]}
    app, words, phrases = rng.choice([t for t in GUI_TASKS if t[0] in installed])
    world.permissions.append({"app": "assistant", "permission": "accessibility", "granted": 1})
    instruction = _word(words, lang)
    payload = {"app": app, "instruction": instruction}
    gate = {"app": [app], "instruction": list(phrases)}  # (the GUI agent takes the app's id, as list_apps shows it)
    query = say(rng, lang, [f"帮我{instruction}"], [f"{instruction}, please."])
    answer = say(rng, lang, [f"已交给界面操作助手在{APP_NAMES[app]}里完成"], [f"Handed to the GUI agent to do in {app}"])
    return _draft(rng, "gui", query, "route_to_gui_agent", payload, gate, answer)


# ------------------------------------------------------------------------------------------------- conditional
def movie_by_calendar(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    day = world.today + dt.timedelta(days=rng.randint(1, 5))
    busy = rng.random() < 0.5
    clear_slot(world, dt.datetime.combine(day, dt.time(18, 0)), dt.datetime.combine(day, dt.time(23, 59)))
    if busy:
        world.add_event(say(rng, lang, ["朋友聚餐"], ["Dinner with friends"]),
                        dt.datetime.combine(day, dt.time(18, 30)), 120, "")
    showtime = "21:30" if busy else "19:00"
    when = say_day(rng, day, world.today, lang)
    draft = movie(rng, world, showtime=showtime, day=day, query="", seats=2)
    title = draft.targets[0][1]["title"]
    draft.query = say(rng, lang, [f"看看我{when}晚上有没有安排：没有的话订两张19:00那场《{title}》，有的话订21:30的"],
                      [f"Check whether I have plans in the evening {when}: if not, get two seats for the 19:00 "
                       f"showing of {title}, otherwise the 21:30 one."])
    original = draft.plan

    def plan(run: OracleRun) -> str:
        run.read("list_events", {"date": day.isoformat()})
        return original(run)
    draft.plan, draft.family, draft.reads = plan, "movie_by_calendar", ("list_events",)
    return draft


# ------------------------------------------------------------------------------------------------- state tracking
def _trip_event(rng: random.Random, world: World, days: int) -> tuple[tuple[str, str], dt.date, dict[str, Any]]:
    city = rng.choice(CITIES)
    start = world.today + dt.timedelta(days=rng.randint(2, 8))
    title = say(rng, world.lang, [f"出差（{city[0]}）"], [f"Business trip ({city[1]})"])
    event = world.add_event(title, dt.datetime.combine(start, dt.time(9, 0)), days * 24 * 60 + 9 * 60,
                            _word(city, world.lang))
    return city, start, event


def hotel_for_trip(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    nights = rng.randint(1, 3)
    city, start, event = _trip_event(rng, world, nights)
    when = say_day(rng, start, world.today, lang)
    query = say(rng, lang, [f"我{when}要出差，日程在日历里，帮我按出差的城市和日期订个酒店"],
                [f"I'm travelling for work {when}; it's in my calendar. Book a hotel for that city and those dates."])
    draft = hotel(rng, world, query=query, stay=(city, start, nights))
    original = draft.plan

    def plan(run: OracleRun) -> str:
        run.read("list_events", {"date": start.isoformat()})
        return original(run)
    draft.plan, draft.family, draft.reads = plan, "hotel_for_trip", ("list_events",)
    return draft


def ticket_to_event(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    city, start, event = _trip_event(rng, world, 0)
    when = say_day(rng, start, world.today, lang)
    draft = ticket(rng, world, day=start, place=city, query="", count=1, kind="train")
    origin = draft.targets[0][1]["origin"]
    draft.query = say(rng, lang, [f"我{when}要去外地出差，日历里有，帮我订当天从{origin}出发去那儿的高铁票"],
                      [f"I have a trip {when} in my calendar; book me a train ticket that day from {origin} to where "
                       "it is."])
    original = draft.plan

    def plan(run: OracleRun) -> str:
        run.read("list_events", {"date": start.isoformat()})
        return original(run)
    draft.plan, draft.family, draft.reads = plan, "ticket_to_event", ("list_events",)
    return draft


# ------------------------------------------------------------------------------------------------- intent correction
def _turns(user: str, assistant: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]


def ticket_corrected(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    first_day = world.today + dt.timedelta(days=rng.randint(1, 6))
    day = first_day + dt.timedelta(days=rng.choice((1, 2)))
    origin, first_place = rng.sample(CITIES, 2)
    said_day = say_day(rng, first_day, world.today, lang)
    history = _turns(say(rng, lang, [f"订一张{said_day}从{origin[0]}到{first_place[0]}的高铁票"],
                         [f"Book a train ticket from {origin[1]} to {first_place[1]} "
                          f"{say_day(rng, first_day, world.today, lang)}."]),
                     say(rng, lang, [f"{first_day.isoformat()}从{origin[0]}到{first_place[0]}的高铁票，确认吗？"],
                         [f"A train ticket {origin[1]} → {first_place[1]} on {first_day.isoformat()}: confirm?"]))
    query = say(rng, lang, [f"日期改成{say_day(rng, day, world.today, lang)}，其他不变"],
                [f"Change the date to {say_day(rng, day, world.today, lang).removeprefix('on ')}; the rest stays."])
    draft = ticket(rng, world, day=day, place=first_place, history=history, query=query, origin=origin, kind="train",
                   count=1)
    draft.family = "ticket_corrected"
    return draft


def hotel_corrected(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    city = rng.choice(CITIES)
    check_in = world.today + dt.timedelta(days=rng.randint(1, 10))
    nights = rng.randint(1, 3)
    when = say_day(rng, check_in, world.today, lang)
    history = _turns(say(rng, lang, [f"帮我在{city[0]}订个酒店，{when}入住，住{COUNT_ZH[nights]}晚"],
                         [f"Book a hotel in {city[1]} from {when.removeprefix('on ')}, {COUNT_EN[nights]} "
                          f"night{'s' if nights > 1 else ''}."]),
                     say(rng, lang, [f"{city[0]}，{check_in.isoformat()}入住，住{nights}晚，确认吗？"],
                         [f"{city[1]}, checking in {check_in.isoformat()} for {nights} night(s): confirm?"]))
    query = say(rng, lang, ["多住一晚，其他不变"], ["Make it one more night; the rest stays."])
    draft = hotel(rng, world, history=history, query=query, stay=(city, check_in, nights + 1))
    draft.family = "hotel_corrected"
    return draft


#: The families of each behaviour category (the generator draws a sub-agent task's family from its category's).
FAMILIES: dict[str, tuple[Family, ...]] = {
    "grounding": (ticket, hotel, movie, food, ride_later, gui),
    "conditional": (movie_by_calendar,),
    "state_tracking": (hotel_for_trip, ticket_to_event),
    "intent_correction": (ticket_corrected, hotel_corrected),
    "error_recovery": (ticket, hotel, food, ride_later, gui)
}
