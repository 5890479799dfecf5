"""Held-out phrasing (:mod:`.heldout_phrasing`) of the later domains' and the maps & travel tasks: smart home,
health, shopping, WeChat chats, photos, navigation, rides, departure reminders, saved places."""

from __future__ import annotations

import datetime as dt
import json
import random

from ..canonical import canonical_coordinate
from .generate_oracle import Draft
from .generate_world import World, atlas
from .heldout_words import (LABELS, MODES, RIDES, WORKOUTS, Said, contact_word, day_forms, noise, pick, row,
                            say_clock, say_level, spread, unique, verbatim)


def _shop(rng: random.Random, draft: Draft, world: World) -> Said | None:
    """Buying a product outright, or cancelling the order of one."""
    lang, tools = world.lang, [t for t, _ in draft.targets]
    if tools == ["add_to_cart", "checkout_cart"]:
        product = row(world, "products", "product_id", draft.targets[0][1]["product_id"])
        if product is None:
            return None
        count = draft.targets[0][1]["quantity"]
        return pick(rng, lang, [f"{product['name']}买{count}件，加购物车然后直接付钱"],
                    [f"buy {count} x {product['name']}: cart it and pay straight away"]), []
    if tools == ["cancel_order"]:
        order = row(world, "orders", "order_id", draft.targets[0][1]["order_id"])
        items = json.loads(order["items"]) if order else []
        product = row(world, "products", "product_id", items[0]["product_id"]) if len(items) == 1 else None
        if product is None or sum(product["product_id"] in o["items"] for o in world.extra.get("orders", [])) != 1:
            return None
        return pick(rng, lang, [f"之前买的{product['name']}那单不想要了，撤掉"],
                    [f"changed my mind about the {product['name']} order, cancel it"]), []
    return None


def say_domain_task(rng: random.Random, draft: Draft, world: World) -> Said | None:
    lang = world.lang
    if draft.family in ("checkout", "cancel_order"):
        return _shop(rng, draft, world)
    if len(draft.targets) != 1:
        return None
    tool, args = draft.targets[0]
    avoid = {str(v) for v in args.values()}
    if tool in ("set_light_brightness", "set_device_power", "set_thermostat"):
        device = row(world, "home_devices", "device_id", args["device_id"])
        if device is None or not unique(world, "home_devices", "name", device["name"]):
            return None
        name = device["name"]
        if tool == "set_light_brightness":
            lv = say_level(rng, args["level"], lang)
            return noise(rng, lang, avoid) + pick(rng, lang, [f"{name}的亮度不舒服，调成{lv}"],
                                                  [f"the {name} feels wrong, set its brightness to {lv}"]), []
        if tool == "set_thermostat":
            return noise(rng, lang, avoid) + pick(rng, lang, [f"{name}温度给我设{args['celsius']}度"],
                                                  [f"{name} thermostat: {args['celsius']} °C"]), []
        on = args["on"]
        return pick(rng, lang, [f"{name}{'开开' if on else '断电'}"], [f"{name} {'on' if on else 'off'} pls"]), []
    if tool == "start_workout":
        zh, en = WORKOUTS[args["kind"]]
        return pick(rng, lang, [f"我现在要{zh}了，帮我开始记运动"], [f"about to {en}, start tracking it"]), []
    if tool == "add_medication_reminder":
        name, dose = verbatim(args["name"], lang), verbatim(args["dose"], lang)
        first = pick(rng, lang, [f"医生让我每天吃{name}，每次{dose}"], [f"doc says {name} daily, {dose} each time"])
        when = say_clock(rng, args["time"], lang)
        rest = pick(rng, lang, [f"{when}提醒我吧"], [f"ping me at {when}"])
        return spread(rng, lang, first, rest)
    if tool == "add_to_cart":
        product = row(world, "products", "product_id", args["product_id"])
        if product is None:
            return None
        count = args["quantity"]
        return noise(rng, lang, avoid) + pick(rng, lang, [f"家里{product['name']}快没了，先往购物车丢{count}件"],
                                              [f"running low on {product['name']}, throw {count} in the cart"]), []
    if tool == "send_chat_message":
        chat = row(world, "chats", "chat_id", args["chat_id"])
        if chat is None or not unique(world, "chats", "title", chat["title"]):
            return None
        text = verbatim(args["text"], lang)
        return spread(rng, lang, pick(rng, lang, [f"微信上跟{chat['title']}说点事"], [f"need to WeChat {chat['title']}"]),
                      pick(rng, lang, [f"就一句：{text}"], [f"just this: {text}"]))
    if tool == "log_medication_taken":
        med = row(world, "medications", "medication_id", args["medication_id"])
        if med is None or not unique(world, "medications", "name", med["name"]):
            return None
        return pick(rng, lang, [f"{med['name']}刚吃完，记一笔"], [f"just took my {med['name']}, log it"]), []
    if tool == "run_home_scene":
        scene = row(world, "home_scenes", "scene_id", args["scene_id"])
        if scene is None:
            return None
        said = verbatim(scene["name"], lang)
        return pick(rng, lang, [f"来个{said}场景"], [f"trigger the {said} scene"]), []
    return None


def say_photo_task(rng: random.Random, draft: Draft, world: World) -> Said | None:
    """Starring the photos of one place and day, or sending the one photo of a place and day to a contact: said
    only when those are exactly the photos of that place and day."""
    lang, tools = world.lang, {t for t, _ in draft.targets}
    ids = [a.get("photo_id") for _, a in draft.targets]
    rows = [row(world, "photos", "photo_id", i) for i in ids]
    first = rows[0] if rows else None
    if tools not in ({"set_photo_favorite"}, {"share_photo"}) or first is None or any(r is None for r in rows):
        return None
    place, day = first["place"], first["taken_at"][:10]
    same = {r["photo_id"] for r in world.extra["photos"] if r["place"] == place and r["taken_at"][:10] == day
            and not r["trashed"]}
    if same != set(ids) or (tools == {"share_photo"} and len(ids) != 1):
        return None
    when = rng.choice(day_forms(dt.date.fromisoformat(day), world.today, lang))
    if tools == {"set_photo_favorite"}:
        if not all(a.get("favorite") is True for _, a in draft.targets):
            return None
        return pick(rng, lang, [f"{when}去{place}拍的照片拍得真不错，都加个收藏"],
                    [f"loved the pics from {place} ({when}), favourite all of them"]), []
    who = contact_word(rng, world, draft.targets[0][1]["contact_id"])
    if who is None:
        return None
    return spread(rng, lang, pick(rng, lang, [f"{when}我在{place}拍了张照片"], [f"took a photo at {place}, {when}"]),
                  pick(rng, lang, [f"传给{who}看看"], [f"send it over to {who}"]))


# ----------------------------------------------------------------------------- maps & travel
def place_name(destination: str) -> str | None:
    names = {t.place.name for t in atlas().trips if canonical_coordinate(t.place.location) == destination}
    return names.pop() if len(names) == 1 else None


def say_maps_task(rng: random.Random, draft: Draft, world: World) -> Said | None:
    lang = world.lang
    navs = [a for t, a in draft.targets if t == "start_navigation"]
    rides = [a for t, a in draft.targets if t == "book_ride"]
    if len(navs) == 1 and set(navs[0]) == {"destination", "mode"} and navs[0]["mode"] in MODES \
            and all(t in ("start_navigation", "stop_navigation") for t, _ in draft.targets):
        zh, en = MODES[navs[0]["mode"]]
        if draft.family == "navigate_saved":
            saved = world.extra.get("saved_places", [])
            labels = [r["label"] for r in saved if r["location"] == navs[0]["destination"]]
            if len(labels) != 1 or labels[0] not in LABELS:
                return None
            where = LABELS[labels[0]]
            go = "回家" if labels[0] == "home" else f"去{where[0]}"
            return pick(rng, lang, [f"{zh}{go}，带个路"], [f"I'll {en} to {where[1]}, guide me"]), []
        name = place_name(navs[0]["destination"])
        if name is None:
            return None
        if draft.family == "changed_mode":
            return (pick(rng, lang, [f"改主意了，{zh}过去"], [f"changed my mind, I'll {en} there"]),
                    [{"role": "user", "content": pick(rng, lang, [f"带我去{name}"], [f"take me to {name}"])},
                     draft.history[-1]] if draft.history else [])
        return spread(rng, lang, pick(rng, lang, [f"待会儿要去{name}"], [f"heading to {name} later"]),
                      pick(rng, lang, [f"现在就出发，{zh}，开导航"], [f"leaving now, I'll {en}, start the directions"]))
    tools = [t for t, _ in draft.targets]
    if tools == ["start_navigation", "share_eta"] and set(navs[0]) == {"destination", "mode"} \
            and navs[0]["mode"] in MODES:
        name, who = place_name(navs[0]["destination"]), contact_word(rng, world, draft.targets[1][1]["contact_id"])
        if name is None or who is None:
            return None
        zh, en = MODES[navs[0]["mode"]]
        return pick(rng, lang, [f"我{zh}去{name}，路线开起来，顺手把我几点到告诉{who}"],
                    [f"I'll {en} to {name}: get the route going and tell {who} when I'll arrive"]), []
    if tools == ["set_departure_reminder"] and set(draft.targets[0][1]) == {"destination", "arrive_by", "mode"}:
        args = draft.targets[0][1]
        name, at = place_name(args["destination"]), dt.datetime.strptime(args["arrive_by"], "%Y-%m-%d %H:%M")
        if name is None or args["mode"] not in MODES:
            return None
        zh, en = MODES[args["mode"]]
        day, when = rng.choice(day_forms(at.date(), world.today, lang)), say_clock(rng, args["arrive_by"][11:], lang)
        return spread(rng, lang, pick(rng, lang, [f"{day}{when}之前我得赶到{name}"],
                                      [f"gotta be at {name} by {when}, {day}"]),
                      pick(rng, lang, [f"打算{zh}，到点喊我出门"], [f"I'll {en}; nudge me when it's time to head out"]))
    if tools == ["save_place"]:
        args = draft.targets[0][1]
        name = place_name(args["location"])
        if name is None or args["label"] not in LABELS:
            return None
        zh, en = LABELS[args["label"]]
        if args.get("replace"):
            return pick(rng, lang, [f"我{zh}换地方了，新的是{name}，更新一下"],
                        [f"my {en} moved, it's {name} now, update it"]), []
        return pick(rng, lang, [f"{name}记成我的{zh}地址"], [f"remember {name} as my {en} address"]), []
    if len(rides) == 1 and len(draft.targets) == 1 and rides[0].get("ride_type") in RIDES \
            and set(rides[0]) == {"destination", "ride_type"}:
        name = place_name(rides[0]["destination"])
        if name is None:
            return None
        zh, en = RIDES[rides[0]["ride_type"]]
        return pick(rng, lang, [f"懒得挤地铁，约个{zh}到{name}"],
                    [f"can't be bothered with the subway, get me {en} to {name}"]), []
    return None
