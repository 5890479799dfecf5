"""The rows a task of the five later domains adds to its phone: chats, a shop, health data, a smart home, a gallery.

Each ``seed_*`` function draws from the caller's generator and writes into ``world.extra`` (tables the first
catalogue did not have) and ``world.permissions`` (the permission its tools need, granted, so that the generator
can plant a withdrawn one), and returns what the family addresses. Only families of :mod:`.generate_domains` call
them, after :func:`~.generate_world.build_world`: the phones of every other task are drawn as before.
Ids follow the sandbox's own pattern (``chat-3``, ``medication-2``); ``PhoneState.next_id`` issues new ones past them.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any

from .generate_world import MESSAGES, World

CHAT_GROUPS = {"zh": ("家庭群", "项目组", "周末羽毛球", "大学同学", "小区业主群"),
               "en": ("Family", "Project team", "Weekend badminton", "College friends", "Neighbours")}
#: (what the user calls it, the shop's name, category, price in yuan)
PRODUCTS = {"zh": (("抽纸", "抽纸（24包）", "日用品", 39.9), ("洗衣液", "洗衣液 2kg", "日用品", 45.5),
                   ("矿泉水", "矿泉水 550ml×24瓶", "食品", 28.0), ("鼠标", "无线鼠标", "数码", 79.0),
                   ("充电宝", "充电宝 10000mAh", "数码", 99.0), ("咖啡豆", "咖啡豆 500g", "食品", 68.0),
                   ("运动袜", "运动袜（5双装）", "服饰", 35.0), ("保温杯", "保温杯 500ml", "日用品", 89.0),
                   ("牙膏", "牙膏（3支装）", "日用品", 25.9), ("数据线", "USB-C 数据线", "数码", 19.9)),
            "en": (("tissues", "Tissues (24 packs)", "household", 39.9),
                   ("detergent", "Laundry detergent 2 kg", "household", 45.5),
                   ("water", "Bottled water 24 x 550 ml", "food", 28.0),
                   ("mouse", "Wireless mouse", "electronics", 79.0),
                   ("power bank", "Power bank 10000 mAh", "electronics", 99.0),
                   ("coffee", "Coffee beans 500 g", "food", 68.0),
                   ("socks", "Sports socks (5 pairs)", "clothing", 35.0),
                   ("bottle", "Insulated bottle 500 ml", "household", 89.0),
                   ("toothpaste", "Toothpaste (3 tubes)", "household", 25.9),
                   ("cable", "USB-C cable", "electronics", 19.9))}
CARD = {"zh": "招商银行信用卡（尾号{}）", "en": "Visa card ending {}"}
WALLET = {"zh": "零钱", "en": "Wallet balance"}
MEDICATIONS = {"zh": (("维生素D", "1粒"), ("降压药", "1片"), ("鱼油", "2粒"), ("钙片", "1片"), ("益生菌", "1袋")),
               "en": (("Vitamin D", "1 capsule"), ("Blood pressure pill", "1 tablet"), ("Fish oil", "2 capsules"),
                      ("Calcium", "1 tablet"), ("Probiotic", "1 sachet"))}
ROOMS = {"zh": ("客厅", "卧室", "厨房", "书房"), "en": ("living room", "bedroom", "kitchen", "study")}
PLACES = {"zh": ("西湖", "外滩", "公司", "故宫", "海边", "动物园", "咖啡馆", "植物园"),
          "en": ("West Lake", "The Bund", "Office", "Palace Museum", "Beach", "Zoo", "Cafe", "Botanical Garden")}
ALBUMS = {"zh": ("旅行", "家人", "美食", "宠物", "毕业季"), "en": ("Travel", "Family", "Food", "Pets", "Graduation")}


def _ago(world: World, minutes: int) -> str:
    return (world.now - dt.timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M")


def _grant(world: World, app: str, permission: str) -> None:
    if not any(p["app"] == app and p["permission"] == permission for p in world.permissions):
        world.permissions.append({"app": app, "permission": permission, "granted": 1})


def seed_chats(rng: random.Random, world: World, people: list[dict[str, Any]], groups: int = 1) \
        -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Direct WeChat chats with ``people`` and 1–2 other contacts, ``groups`` group chats of three contacts, a few
    messages each (all read), the ``chat``/``contacts`` permission: the direct chats by contact_id, the groups."""
    chats: list[dict[str, Any]] = []
    members: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    others = [c for c in world.contacts if c not in people]
    direct = people + rng.sample(others, min(len(others), rng.randint(1, 2)))
    by_contact: dict[str, dict[str, Any]] = {}
    rng.shuffle(direct)
    for contact in direct:
        row = {"chat_id": f"chat-{len(chats) + 1}", "app": "WeChat", "title": contact["name"], "kind": "direct",
               "muted": 0}
        chats.append(row)
        members.append({"chat_id": row["chat_id"], "contact_id": contact["contact_id"]})
        by_contact[contact["contact_id"]] = row
    made = []
    for title in rng.sample(CHAT_GROUPS[world.lang], groups):
        row = {"chat_id": f"chat-{len(chats) + 1}", "app": "WeChat", "title": title, "kind": "group", "muted": 0}
        chats.append(row)
        made.append(row)
        for contact in rng.sample(world.contacts, 3):
            members.append({"chat_id": row["chat_id"], "contact_id": contact["contact_id"]})
    for chat in chats:
        inside = [m["contact_id"] for m in members if m["chat_id"] == chat["chat_id"]]
        for minutes in sorted((rng.randint(30, 60 * 48) for _ in range(rng.randint(1, 3))), reverse=True):
            messages.append({"chat_message_id": f"chat-msg-{len(messages) + 1}", "chat_id": chat["chat_id"],
                             "sender": rng.choice(inside + ["me"]), "text": rng.choice(MESSAGES[world.lang]),
                             "sent_at": _ago(world, minutes), "read": 1})
    world.extra.update(chats=chats, chat_members=members, chat_messages=messages)
    _grant(world, "chat", "contacts")
    return by_contact, made


def seed_shop(rng: random.Random, world: World, default: bool = True, wallet_default: bool = False) \
        -> list[tuple[str, dict[str, Any]]]:
    """6–8 products in stock (ids ``p-101``...), a card and a wallet (one of them the default unless not
    ``default``), 0–2 earlier delivered orders, the ``payments``/``pay`` permission: the products (the word the
    user says for each, and its row)."""
    products, words = [], []
    for index, (word, name, category, price) in enumerate(rng.sample(PRODUCTS[world.lang], rng.randint(6, 8))):
        products.append({"product_id": f"p-{101 + index}", "name": name, "category": category, "price": price,
                         "stock": rng.randint(5, 60)})
        words.append(word)
    card = CARD[world.lang].format(rng.randint(1000, 9999))
    world.extra["payment_methods"] = [
        {"method_id": "pm-1", "kind": "card", "label": card, "balance": None,
         "is_default": int(default and not wallet_default)},
        {"method_id": "pm-2", "kind": "wallet", "label": WALLET[world.lang], "balance": float(rng.randint(300, 900)),
         "is_default": int(default and wallet_default)}]
    orders: list[dict[str, Any]] = []
    for product in rng.sample(products, rng.randint(0, 2)):
        items = [{"price": product["price"], "product_id": product["product_id"], "quantity": 1}]
        orders.append({"order_id": f"order-{len(orders) + 1}", "items": json.dumps(items, sort_keys=True),
                       "total": product["price"], "method_id": "pm-1", "status": "delivered",
                       "placed_at": _ago(world, rng.randint(3, 20) * 24 * 60)})
    world.extra["products"] = products
    if orders:
        world.extra["orders"] = orders
    _grant(world, "payments", "pay")
    return list(zip(words, products))


def seed_health(rng: random.Random, world: World, steps_today: int | None = None, goal: int | None = None) \
        -> list[dict[str, Any]]:
    """A week of recorded steps, sleep and resting heart rate (today's steps ``steps_today`` if given), a step
    goal (``goal`` if given), 1–3 medication reminders, the ``health`` read and write permissions: the reminders."""
    rows = []
    for back in range(7):
        day = (world.today - dt.timedelta(days=back)).isoformat()
        steps = steps_today if back == 0 and steps_today is not None else rng.randint(2000, 14000)
        rows += [{"day": day, "metric": "steps", "value": float(steps)},
                 {"day": day, "metric": "sleep_min", "value": float(rng.randint(300, 520))},
                 {"day": day, "metric": "resting_hr", "value": float(rng.randint(55, 78))}]
    world.extra["health_metrics"] = rows
    world.settings["step_goal"] = str(goal or rng.choice((6000, 8000, 10000)))
    medications: list[dict[str, Any]] = []
    for name, dose in rng.sample(MEDICATIONS[world.lang], rng.randint(1, 3)):
        medications.append({"medication_id": f"medication-{len(medications) + 1}", "name": name, "dose": dose,
                            "time": f"{rng.choice((7, 8, 12, 20, 21)):02d}:{rng.choice((0, 30)):02d}", "active": 1})
    world.extra["medications"] = medications
    _grant(world, "health", "read")
    _grant(world, "health", "write")
    return medications


def seed_home(rng: random.Random, world: World) -> list[dict[str, Any]]:
    """A light in each room, an air conditioner (thermostat) in the living room and the bedroom, a plug, the
    front door's lock, three scenes, the ``home``/``control`` permission: the devices."""
    zh = world.lang == "zh"
    rooms = ROOMS[world.lang]
    devices: list[dict[str, Any]] = []

    def add(name: str, room: str, kind: str, power: str, level: int, locked: int = 0) -> None:
        devices.append({"device_id": f"dev-{len(devices) + 1}", "name": name, "room": room, "kind": kind,
                        "power": power, "level": level, "locked": locked, "reachable": 1})
    for room in rooms:
        add(f"{room}灯" if zh else f"{room.capitalize()} light", room, "light", rng.choice(("on", "off")),
            rng.randrange(20, 101, 10))
    for room in rooms[:2]:
        add(f"{room}空调" if zh else f"{room.capitalize()} AC", room, "thermostat", rng.choice(("on", "off")),
            rng.randint(22, 27))
    add("卧室插座" if zh else "Bedroom plug", rooms[1], "plug", rng.choice(("on", "off")), 0)
    add("大门门锁" if zh else "Front door lock", rooms[0], "lock", "", 0, rng.randint(0, 1))
    lights = [d["device_id"] for d in devices if d["kind"] == "light"]
    ac = [d["device_id"] for d in devices if d["kind"] == "thermostat"]
    lock = devices[-1]["device_id"]
    home = [{"device_id": lights[0], "power": "on", "level": 80}, {"device_id": ac[0], "power": "on", "level": 26}]
    scenes = [("回家" if zh else "Home", home),
              ("睡眠" if zh else "Sleep", [{"device_id": d, "power": "off"} for d in lights]
               + [{"device_id": lock, "locked": 1}]),
              ("离家" if zh else "Away", [{"device_id": d, "power": "off"} for d in lights + ac]
               + [{"device_id": lock, "locked": 1}])]
    world.extra["home_devices"] = devices
    world.extra["home_scenes"] = [{"scene_id": f"scene-{i + 1}", "name": name,
                                   "actions": json.dumps(actions, ensure_ascii=False, sort_keys=True)}
                                  for i, (name, actions) in enumerate(scenes)]
    world.settings["wifi"] = "on"  # at home: the phone reaches the hub (a planted obstacle may switch it off)
    _grant(world, "home", "control")
    return devices


def seed_gallery(rng: random.Random, world: World) -> list[dict[str, Any]]:
    """8–12 photos at a few places over the last three weeks (one in Recently deleted sometimes), 1–2 albums, the
    ``gallery``/``photos`` permission: the photos."""
    photos: list[dict[str, Any]] = []
    places = rng.sample(PLACES[world.lang], 4)
    for _ in range(rng.randint(8, 12)):
        taken = world.now - dt.timedelta(days=rng.randint(1, 21), minutes=rng.randint(0, 600))
        photos.append({"photo_id": f"photo-{101 + len(photos)}", "taken_at": taken.strftime("%Y-%m-%d %H:%M"),
                       "place": rng.choice(places), "size_mb": rng.randint(2, 9), "favorite": int(rng.random() < 0.2),
                       "trashed": 0})
    if rng.random() < 0.4:
        rng.choice(photos)["trashed"] = 1
    names = rng.sample(ALBUMS[world.lang], rng.randint(1, 2))
    albums = [{"album_id": f"album-{i + 1}", "name": name} for i, name in enumerate(names)]
    world.extra.update(photos=photos, albums=albums,
                       album_photos=[{"album_id": albums[0]["album_id"], "photo_id": p["photo_id"]}
                                     for p in rng.sample(photos, 2)])
    _grant(world, "gallery", "photos")
    return photos


def add_photos(rng: random.Random, world: World, place: str, day: dt.date, count: int, **fields: Any) \
        -> list[dict[str, Any]]:
    """``count`` photos taken at ``place`` on ``day`` (the only ones there that day: others move a day back)."""
    photos = world.extra["photos"]
    for photo in photos:
        if photo["place"] == place and photo["taken_at"][:10] == day.isoformat():
            photo["taken_at"] = (dt.datetime.strptime(photo["taken_at"], "%Y-%m-%d %H:%M")
                                 - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
    added = []
    for _ in range(count):
        at = dt.datetime.combine(day, dt.time(rng.randint(9, 18), rng.randrange(60)))
        row = {"photo_id": f"photo-{101 + len(photos)}", "taken_at": at.strftime("%Y-%m-%d %H:%M"), "place": place,
               "size_mb": rng.randint(2, 9), "favorite": 0, "trashed": 0, **fields}
        photos.append(row)
        added.append(row)
    return added
