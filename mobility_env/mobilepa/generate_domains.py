"""Task families of the five later domains: messaging & social, shopping & payments, health & fitness, smart home,
files & photos.

Same ``(rng, world) -> Draft`` contract as :mod:`.generate_grounding`; each family seeds the rows it needs
(:mod:`.generate_domain_world`: chats, a shop and a wallet, a week of health data and medication reminders, a home's
devices and scenes, a gallery) and the permission its tools need, granted. The domains' real state dependencies
are the obstacles: :func:`blocker` plants airplane mode for a call that needs the network (a chat message, a group,
a checkout, a cancellation, a shared photo), Wi-Fi and Bluetooth off for a smart-home command (the phone cannot reach
the hub), location services off for an outdoor workout; the generator's planters also withdraw ``chat``/``contacts``,
``payments``/``pay``, ``health``/``read``/``write``, ``home``/``control`` or ``gallery``/``photos``, or plant a
transient fault. A missing default payment method makes a checkout ask the user which to pay with.
:class:`DomainOracleRun` is the oracle for these tasks: it also clears a hub it cannot reach (Wi-Fi on).

Families by category (:data:`FAMILIES`; the domain of each in :data:`FAMILY_DOMAINS`):

* grounding: a WeChat message to a contact (the text left out, sometimes: ask), products into the cart, a
  medication reminder (the time left out, sometimes), a workout started, a light / air conditioner / door lock set,
  the photos of a place and day marked as favourites;
* conditional: a group's unread messages decide mute or post, stock decides a product or its alternative, the step
  goal decides an outdoor or an indoor workout, the lock decides lock or lights off, Recently deleted decides
  restore or favourite;
* state tracking: a group chat of two contacts and a first message in it (ids from the search and the creation), a
  product bought (no default payment method: ask which), a paid order cancelled (its product's id from the shop), a
  dose logged, a scene run, an album of a place's photos, a photo sent to a contact;
* intent correction: another chat text, "don't order, just put N in the cart" (``checkout_cart`` forbidden),
  another reminder time, another temperature, another recipient;
* error recovery: the grounding and state-tracking families above with a planted obstacle, a chat message resent
  after airplane mode stopped it, a light switched on after the hub could not be reached.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any, Callable

from ..trajectory import ErrorKind
from .catalogue import Feedback
from .domains.health_fitness import OUTDOOR
from .generate_domain_world import (ALBUMS, CHAT_GROUPS, MEDICATIONS, PLACES, add_photos, seed_chats,
                                    seed_gallery, seed_health, seed_home, seed_shop)
from .generate_oracle import PERMISSION, RUNTIME, STATE, Draft, GenerationError, OracleRun, fact, missing
from .generate_phrases import quote, say, say_clock, say_past_day
from .generate_tracking import OUTGOING, addressee, contact_of
from .generate_world import World
from .tasks import Reading

ASK_RATE = 0.25
ALL_KINDS = (RUNTIME, PERMISSION, STATE)
#: Tools that need the network (:func:`~.domains.system_settings.online`): airplane mode blocks them.
NETWORK_TOOLS = ("send_chat_message", "create_group_chat", "add_chat_member", "publish_post", "like_post",
                 "checkout_cart", "cancel_order", "request_refund", "share_photo", "share_file")
#: Smart-home commands: the phone must reach the hub (Wi-Fi or Bluetooth on).
HOME_COMMANDS = ("set_device_power", "set_light_brightness", "set_thermostat", "set_lock", "set_room_lights",
                 "run_home_scene")
WORKOUT_WORDS = {"run": ("跑步", "run"), "walk": ("健走", "walk"), "cycle": ("骑行", "bike ride"),
                 "hike": ("徒步", "hike"), "yoga": ("瑜伽", "yoga session"), "strength": ("力量训练", "strength workout"),
                 "indoor_cycle": ("室内单车", "indoor cycling session"), "swim": ("游泳", "swim")}
INDOOR = ("yoga", "strength", "indoor_cycle")


class DomainOracleRun(OracleRun):
    """The oracle of the later domains' tasks: :class:`~.generate_oracle.OracleRun`, and a smart-home command that
    cannot reach the hub (Wi-Fi and Bluetooth off) is retried after switching Wi-Fi on (what the feedback names)."""

    def _recover(self, name: str, feedback: Feedback) -> Feedback | None:
        payload = feedback.payload
        if feedback.error_type is ErrorKind.STATE_CONFLICT and name in HOME_COMMANDS and \
                (payload.get("setting"), payload.get("value")) == ("wifi", "off"):
            self.act("set_wifi", {"on": True})
            return None
        return super()._recover(name, feedback)


def blocker(name: str, args: dict[str, Any], world: World) -> Callable[[], dict[str, Any]] | None:
    """A change of ``S0`` that makes the later domains' call ``name(args)`` fail on a state dependency, or None.
    The records name no tool: the first call of the plan that depends on it meets it."""
    settings = world.settings

    def planted(changes: dict[str, str], note: str) -> Callable[[], dict[str, Any]]:
        def apply() -> dict[str, Any]:
            settings.update(changes)
            return {"kind": STATE, "error_type": "state_conflict", "note": note}
        return apply
    if name in NETWORK_TOOLS and settings.get("airplane_mode") != "on":
        return planted({"airplane_mode": "on"}, f"airplane mode is on: {name} (and any call needing the network) "
                                                f"fails until it is turned off")
    if name in HOME_COMMANDS and "on" in (settings.get("wifi"), settings.get("bluetooth")):
        return planted({"wifi": "off", "bluetooth": "off"}, f"Wi-Fi and Bluetooth are off: {name} cannot reach the "
                                                            f"home hub until Wi-Fi is turned on")
    if name == "start_workout" and args.get("kind") in OUTDOOR and settings.get("location") == "on":
        return planted({"location": "off"}, f"location services are off: an outdoor {args['kind']} fails until "
                                            f"they are turned on")
    return None


def _turns(user: str, assistant: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]


def _one(run: OracleRun, rows: list[dict[str, Any]], what: str) -> dict[str, Any]:
    if len(rows) != 1:
        raise GenerationError(f"{run.task.task_id}: {what} is not one record: {rows}")
    return rows[0]


# ------------------------------------------------------------------------------------------ messaging & social
def _direct_chat(run: OracleRun, contact: dict[str, Any], key: str) -> str:
    """The chat id of the direct chat with ``contact`` (named by ``key``: a name, or a relation the contacts
    resolve to a name first)."""
    name = run.find_contact(key, relation=key)["name"] if key == contact["relation"] else contact["name"]
    chats = run.read("list_chats")["chats"]
    return _one(run, [c for c in chats if c["kind"] == "direct" and c["title"] == name], f"the chat with {name}")[
        "chat_id"]


def _chat_reads(contact: dict[str, Any], key: str) -> tuple[str, ...]:
    return ("list_chats", "search_contacts") if key == contact["relation"] else ("list_chats",)


def chat_message(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    chats, _ = seed_chats(rng, world, [contact])
    text = rng.choice(OUTGOING[lang])
    q = quote(text, lang)
    target = ("send_chat_message", {"chat_id": chats[contact["contact_id"]]["chat_id"], "text": text})
    answer = say(rng, lang, [f"已在微信上给{contact['name']}发送：{text}"], [f"Sent to {contact['name']} on WeChat: {text}"])

    def plan(run: OracleRun, ask: bool = False) -> str:
        chat_id = _direct_chat(run, contact, key)
        if ask:
            run.ask(say(rng, lang, ["要发什么内容？"], ["What should the message say?"]))
        run.act("send_chat_message", {"chat_id": chat_id, "text": text})
        return answer

    if rng.random() < ASK_RATE:
        query = say(rng, lang, [f"在微信上给{who}发个消息", f"帮我微信联系一下{who}"],
                    [f"Send {who} a WeChat message.", f"Message {who} on WeChat for me."])
        reply = say(rng, lang, [f"就说{q}", f"{q}"], [f"Say {q}", f"{q}"])
        return Draft("chat_message", "behaviour", query, lambda run: plan(run, True), [target],
                     reads=_chat_reads(contact, key), obstacle_kinds=(RUNTIME, STATE),
                     user_facts=[fact("text", text, reply)],
                     must_ask=True, obstacles=[missing("no message text: the user's reply gives it")])
    query = say(rng, lang, [f"在微信上跟{who}说{q}", f"微信发给{who}：{q}", f"用微信告诉{who}{q}"],
                [f"Send {who} a WeChat message: {q}", f"Message {who} on WeChat saying {q}",
                 f"Tell {who} {q} on WeChat."])
    return Draft("chat_message", "state_change", query, plan, [target], reads=_chat_reads(contact, key),
                 obstacle_kinds=(RUNTIME, STATE))


def mute_or_post(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    group = seed_chats(rng, world, [], groups=1)[1][0]
    unread = rng.random() < 0.5
    if unread:
        member = next(m["contact_id"] for m in world.extra["chat_members"] if m["chat_id"] == group["chat_id"])
        world.extra["chat_messages"].append({
            "chat_message_id": f"chat-msg-{len(world.extra['chat_messages']) + 1}", "chat_id": group["chat_id"],
            "sender": member, "text": rng.choice(OUTGOING[lang]), "sent_at": world.settings["clock"], "read": 0})
    text = rng.choice(OUTGOING[lang])
    g, q = quote(group["title"], lang), quote(text, lang)
    query = say(rng, lang, [f"{g}群里要是有未读消息，就把它设成免打扰；没有的话在群里发一句{q}",
                            f"看下{g}这个群：有没读的消息就静音，没有就在群里说{q}"],
                [f"If the {g} group has unread messages, mute it; if not, post {q} there.",
                 f"Check the {g} group chat: mute it if there's anything unread, otherwise say {q} in it."])
    muted = ("set_chat_muted", {"chat_id": group["chat_id"], "muted": True})
    post = ("send_chat_message", {"chat_id": group["chat_id"], "text": text})

    def plan(run: OracleRun) -> str:
        row = _one(run, [c for c in run.read("list_chats")["chats"] if c["title"] == group["title"]], "the group")
        if row["unread"] > 0:
            run.act("set_chat_muted", {"chat_id": row["chat_id"], "muted": True})
            return say(rng, lang, ["群里有未读消息，已设为免打扰。"], ["The group had unread messages, so I muted it."])
        run.act("send_chat_message", {"chat_id": row["chat_id"], "text": text})
        return say(rng, lang, [f"群里没有未读消息，已发送：{text}"], [f"Nothing unread there; I posted: {text}"])
    return Draft("mute_or_post", "tool_call", query, plan, [muted if unread else post], reads=("list_chats",),
                 obstacle_kinds=(RUNTIME, STATE))


def group_chat(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    first, who1, key1 = addressee(rng, world, 0.0)
    second, who2, key2 = addressee(rng, world, 0.0)
    while second is first:
        second, who2, key2 = addressee(rng, world, 0.0)
    _, groups = seed_chats(rng, world, [], groups=1)
    title = rng.choice([t for t in CHAT_GROUPS[lang] if t != groups[0]["title"]])
    text = rng.choice(OUTGOING[lang])
    t, q = quote(title, lang), quote(text, lang)
    query = say(rng, lang, [f"建个微信群叫{t}，把{who1}和{who2}拉进来，然后在群里说{q}",
                            f"拉{who1}、{who2}建一个群，群名{t}，建好后发一句{q}"],
                [f"Start a WeChat group called {t} with {who1} and {who2}, then say {q} in it.",
                 f"Create a group chat {t} with {who1} and {who2} and post {q} there."])

    def plan(run: OracleRun) -> str:
        members = [contact_of(run, first, key1), contact_of(run, second, key2)]
        chat_id = run.act("create_group_chat", {"title": title, "members": members}).payload["chat_id"]
        run.act("send_chat_message", {"chat_id": chat_id, "text": text})
        return say(rng, lang, [f"已建群“{title}”（{first['name']}、{second['name']}），并发送：{text}"],
                   [f"Created \"{title}\" with {first['name']} and {second['name']} and posted: {text}"])
    members = [first["contact_id"], second["contact_id"]]
    return Draft("group_chat", "state_change", query, plan,
                 [("create_group_chat", {"title": title, "members": members}),
                  ("send_chat_message", {"chat_id": "", "text": text})], reads=("search_contacts",),
                 obstacle_kinds=ALL_KINDS)


def changed_chat_text(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    chats, _ = seed_chats(rng, world, [contact])
    was, text = rng.sample(OUTGOING[lang], 2)
    history = _turns(say(rng, lang, [f"微信跟{who}说{quote(was, lang)}"], [f"WeChat {who}: {quote(was, lang)}"]),
                     say(rng, lang, [f"要在微信上把{quote(was, lang)}发给{contact['name']}吗？"],
                         [f"Send {quote(was, lang)} to {contact['name']} on WeChat?"]))
    query = say(rng, lang, [f"改一下，换成{quote(text, lang)}", f"别发那句了，发{quote(text, lang)}"],
                [f"Change it to {quote(text, lang)}.", f"Not that, send {quote(text, lang)} instead."])

    def plan(run: OracleRun) -> str:
        run.act("send_chat_message", {"chat_id": _direct_chat(run, contact, key), "text": text})
        return say(rng, lang, [f"已在微信上发送：{text}"], [f"Sent on WeChat: {text}"])
    return Draft("changed_chat_text", "state_change", query, plan,
                 [("send_chat_message", {"chat_id": chats[contact["contact_id"]]["chat_id"], "text": text})],
                 reads=_chat_reads(contact, key), history=history, obstacle_kinds=(RUNTIME, STATE))


def resend_chat(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    chats, _ = seed_chats(rng, world, [contact])
    text = rng.choice(OUTGOING[lang])
    world.settings["airplane_mode"] = "on"
    history = _turns(say(rng, lang, [f"微信跟{who}说{quote(text, lang)}"], [f"WeChat {who}: {quote(text, lang)}"]),
                     say(rng, lang, ["没发出去：手机开着飞行模式，没有网络。"],
                         ["It didn't go through: airplane mode is on, so there is no network."]))
    query = say(rng, lang, ["那你处理一下，再发一次", "帮我解决一下，重新发"], ["Fix that and send it again.", "Sort it out and resend."])

    def plan(run: OracleRun) -> str:
        run.act("send_chat_message", {"chat_id": _direct_chat(run, contact, key), "text": text})
        return say(rng, lang, ["已关闭飞行模式并重新发送。"], ["Turned airplane mode off and sent the message."])
    return Draft("resend_chat", "tool_call", query, plan,
                 [("send_chat_message", {"chat_id": chats[contact["contact_id"]]["chat_id"], "text": text})],
                 reads=_chat_reads(contact, key), history=history,
                 obstacles=[{"kind": STATE, "note": "airplane mode is on (the earlier chat message failed)"}])


# ---------------------------------------------------------------------------------------- shopping & payments
def _product_id(run: OracleRun, word: str, name: str) -> dict[str, Any]:
    found = run.read("search_products", {"query": word})["products"]
    return _one(run, [p for p in found if p["name"] == name], f"the product {name!r}")


def add_to_cart(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    word, product = rng.choice(seed_shop(rng, world))
    n, name = rng.randint(1, 3), product["name"]
    query = say(rng, lang, [f"{name}加{n}件到购物车", f"购物车里加上{name}，要{n}件", f"帮我把{n}件{name}放进购物车"],
                [f"Add {n} x {name} to my cart.", f"Put {n} of the {name} in my shopping cart.",
                 f"I need {n} {name}, add them to the cart."])

    def plan(run: OracleRun) -> str:
        run.act("add_to_cart", {"product_id": _product_id(run, word, name)["product_id"], "quantity": n})
        return say(rng, lang, [f"已把{n}件{name}加入购物车。"], [f"Added {n} x {name} to your cart."])
    return Draft("add_to_cart", "state_change", query, plan,
                 [("add_to_cart", {"product_id": product["product_id"], "quantity": n})], reads=("search_products",))


def stock_or_alternative(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    (word, first), (other, second) = rng.sample(seed_shop(rng, world), 2)
    in_stock, n = rng.random() < 0.5, rng.randint(1, 2)
    first["stock"] = rng.randint(5, 40) if in_stock else 0
    query = say(rng, lang, [f"{first['name']}有货的话加{n}件到购物车；没货就换成{second['name']}，也是{n}件",
                            f"看看{first['name']}还有没有货：有就放{n}件进购物车，没有的话放{n}件{second['name']}"],
                [f"If the {first['name']} is in stock, add {n} to my cart; if it's sold out, add {n} {second['name']} "
                 f"instead.", f"Check whether {first['name']} is in stock: if so put {n} in the cart, otherwise "
                 f"{n} {second['name']}."])

    def plan(run: OracleRun) -> str:
        found = _product_id(run, word, first["name"])
        if found["stock"] >= n:
            run.act("add_to_cart", {"product_id": found["product_id"], "quantity": n})
            return say(rng, lang, [f"{first['name']}有货，已加{n}件到购物车。"], [f"{first['name']} is in stock; added {n}."])
        run.act("add_to_cart", {"product_id": _product_id(run, other, second["name"])["product_id"], "quantity": n})
        return say(rng, lang, [f"{first['name']}没货了，已加{n}件{second['name']}。"],
                   [f"{first['name']} is sold out, so I added {n} {second['name']}."])
    chosen = first if in_stock else second
    return Draft("stock_or_alternative", "tool_call", query, plan,
                 [("add_to_cart", {"product_id": chosen["product_id"], "quantity": n})], reads=("search_products",))


def checkout(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    ask = rng.random() < 0.3
    word, product = rng.choice(seed_shop(rng, world, default=not ask, wallet_default=rng.random() < 0.4))
    n, name = rng.randint(1, 2), product["name"]
    method = rng.choice(world.extra["payment_methods"])
    query = say(rng, lang, [f"帮我买{n}件{name}，直接下单", f"{name}来{n}件，加进购物车就结账", f"下单{n}件{name}"],
                [f"Buy {n} x {name} for me and check out.", f"Order {n} {name}: add them to the cart and pay.",
                 f"Get me {n} of the {name}, check out right away."])

    def plan(run: OracleRun) -> str:
        if not ask:
            run.act("add_to_cart", {"product_id": _product_id(run, word, name)["product_id"], "quantity": n})
            order = run.act("checkout_cart", {}).payload
            return say(rng, lang, [f"已下单{n}件{name}，订单号{order['order_id']}。"],
                       [f"Ordered {n} x {name}: order {order['order_id']}."])
        methods = run.read("list_payment_methods")["methods"]  # no default: ask before anything changes
        run.ask(say(rng, lang, ["没有默认的付款方式，用哪个付？" + "、".join(m["label"] for m in methods)],
                    ["There's no default payment method. Which should I use: "
                     + " or ".join(m["label"] for m in methods) + "?"]))
        chosen = _one(run, [m for m in methods if m["label"] == method["label"]], "the payment method")
        run.act("add_to_cart", {"product_id": _product_id(run, word, name)["product_id"], "quantity": n})
        run.act("checkout_cart", {"method_id": chosen["method_id"]})
        return say(rng, lang, [f"已用{method['label']}下单{n}件{name}。"],
                   [f"Ordered {n} x {name}, paid by {method['label']}."])
    targets = [("add_to_cart", {"product_id": product["product_id"], "quantity": n}), ("checkout_cart", {})]
    if ask:
        reply = say(rng, lang, [f"用{method['label']}付吧", f"{method['label']}"],
                    [f"Use the {method['label']}.", f"{method['label']}, please."])
        return Draft("checkout", "behaviour", query, plan, targets, reads=("search_products", "list_payment_methods"),
                     obstacle_kinds=ALL_KINDS, must_ask=True,
                     user_facts=[fact("choice", method["label"], reply, others=[
                         Reading(value=m["label"]) for m in world.extra["payment_methods"] if m is not method])],
                     obstacles=[missing("no default payment method: the user's reply names one")])
    return Draft("checkout", "state_change", query, plan, targets, reads=("search_products",), obstacle_kinds=ALL_KINDS)


def cancel_order(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    products = seed_shop(rng, world)
    word, product = rng.choice(products)
    orders = world.extra.setdefault("orders", [])
    for _, other in [p for p in products if p[1] is not product][:rng.randint(0, 1)] + [(word, product)]:
        items = [{"price": other["price"], "product_id": other["product_id"], "quantity": 1}]
        orders.append({"order_id": f"order-{len(orders) + 1}", "items": json.dumps(items, sort_keys=True),
                       "total": other["price"], "method_id": "pm-2", "status": "paid",
                       "placed_at": (world.now - dt.timedelta(hours=rng.randint(1, 20))).strftime("%Y-%m-%d %H:%M")})
    name = product["name"]
    query = say(rng, lang, [f"把买{name}的那个订单取消掉", f"{name}不要了，帮我取消订单"],
                [f"Cancel my order of the {name}.", f"I don't want the {name} any more, cancel that order."])

    def plan(run: OracleRun) -> str:
        product_id = _product_id(run, word, name)["product_id"]
        paid = run.read("list_orders", {"status": "paid"})["orders"]
        order = _one(run, [o for o in paid if any(i["product_id"] == product_id for i in o["items"])], "the order")
        run.act("cancel_order", {"order_id": order["order_id"]})
        return say(rng, lang, [f"已取消{name}的订单，钱会退回原付款方式。"],
                   [f"Cancelled the {name} order; the money goes back to how you paid."])
    return Draft("cancel_order", "state_change", query, plan, [("cancel_order", {"order_id": orders[-1]["order_id"]})],
                 reads=("search_products", "list_orders"), obstacle_kinds=(RUNTIME, STATE))


def changed_quantity(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    word, product = rng.choice(seed_shop(rng, world))
    was, n = rng.sample((1, 2, 3, 4), 2)
    name = product["name"]
    history = _turns(say(rng, lang, [f"帮我买{was}件{name}"], [f"Buy {was} x {name} for me."]),
                     say(rng, lang, [f"要下单{was}件{name}吗？"], [f"Place an order for {was} x {name}?"]))
    query = say(rng, lang, [f"先别下单，放{n}件到购物车就行", f"等等，不结账了，加{n}件到购物车吧"],
                [f"Don't order yet, just put {n} in the cart.", f"Wait, no checkout: add {n} to my cart instead."])

    def plan(run: OracleRun) -> str:
        run.act("add_to_cart", {"product_id": _product_id(run, word, name)["product_id"], "quantity": n})
        return say(rng, lang, [f"没有下单，已把{n}件{name}加入购物车。"], [f"No order placed; {n} x {name} are in your cart."])
    return Draft("changed_quantity", "behaviour", query, plan,
                 [("add_to_cart", {"product_id": product["product_id"], "quantity": n})], reads=("search_products",),
                 history=history, forbidden=["checkout_cart"])


# ------------------------------------------------------------------------------------------- health & fitness
def _new_medication(rng: random.Random, world: World) -> tuple[str, str]:
    taken = {m["name"] for m in world.extra["medications"]}
    return rng.choice([m for m in MEDICATIONS[world.lang] if m[0] not in taken])


def medication_reminder(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    seed_health(rng, world)
    name, dose = _new_medication(rng, world)
    time = f"{rng.choice((7, 8, 9, 12, 13, 19, 20, 21, 22)):02d}:{rng.choice((0, 15, 30)):02d}"
    when = say_clock(rng, time, lang)
    target = ("add_medication_reminder", {"name": name, "dose": dose, "time": time})

    def plan(run: OracleRun, ask: bool = False) -> str:
        if ask:
            run.ask(say(rng, lang, ["每天几点提醒你？"], ["What time each day?"]))
        run.act(*target)
        return say(rng, lang, [f"已添加提醒：每天{time}吃{name}（{dose}）。"],
                   [f"Reminder added: {name} ({dose}) daily at {time}."])

    if rng.random() < ASK_RATE:
        query = say(rng, lang, [f"帮我设个吃药提醒：{name}，一次{dose}"], [f"Set a medication reminder: {name}, {dose}."])
        reply = say(rng, lang, [f"每天{when}", f"{when}吧"], [f"Every day at {when}.", f"{when}."])
        return Draft("medication_reminder", "behaviour", query, lambda run: plan(run, True), [target],
                     obstacle_kinds=(RUNTIME, PERMISSION), user_facts=[fact("time", time, reply)], must_ask=True,
                     obstacles=[missing("no reminder time: the user's reply gives it")])
    query = say(rng, lang, [f"每天{when}提醒我吃{name}，一次{dose}", f"帮我加个吃药提醒：{name}，{dose}，每天{when}"],
                [f"Remind me to take {name} ({dose}) every day at {when}.",
                 f"Add a medication reminder: {name}, {dose}, daily at {when}."])
    return Draft("medication_reminder", "state_change", query, plan, [target], obstacle_kinds=(RUNTIME, PERMISSION))


def start_workout(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    seed_health(rng, world)
    kind = rng.choice(list(WORKOUT_WORDS))
    if kind in OUTDOOR:
        world.settings["location"] = "on"
    zh, en = WORKOUT_WORDS[kind]
    query = say(rng, lang, [f"开始记录一次{zh}", f"我要去{zh}了，帮我开始记录"],
                [f"Start recording a {en}.", f"Track my {en}, starting now."])
    target = ("start_workout", {"kind": kind})

    def plan(run: OracleRun) -> str:
        run.act(*target)
        return say(rng, lang, [f"已开始记录{zh}。"], [f"Your {en} is being recorded."])
    return Draft("start_workout", "tool_call", query, plan, [target], obstacle_kinds=ALL_KINDS)


def workout_by_steps(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    goal, met = rng.choice((6000, 8000, 10000)), rng.random() < 0.5
    seed_health(rng, world, goal + rng.randint(100, 3000) if met else goal - rng.randint(500, 4000), goal)
    world.settings["location"] = "on"
    outdoor, indoor = rng.choice(("run", "walk")), rng.choice(INDOOR)
    (o_zh, o_en), (i_zh, i_en) = WORKOUT_WORDS[outdoor], WORKOUT_WORDS[indoor]
    query = say(rng, lang, [f"看看我今天步数达标没：没达标就开始记录一次{o_zh}，达标了就开始一次{i_zh}",
                            f"今天的步数目标完成了吗？没完成的话帮我开始{o_zh}，完成了就开始{i_zh}"],
                [f"Check whether I've hit today's step goal: if not, start a {o_en}; if I have, start a {i_en}.",
                 f"Have I reached my step goal today? If not, start recording a {o_en}, otherwise a {i_en}."])

    def plan(run: OracleRun) -> str:
        done = run.read("get_activity_summary")["goal_met"]
        run.act("start_workout", {"kind": indoor if done else outdoor})
        return say(rng, lang, [f"今天步数{'已' if done else '还没'}达标，已开始记录{i_zh if done else o_zh}。"],
                   [f"You {'have' if done else 'have not'} met the goal; your {i_en if done else o_en} is recording."])
    return Draft("workout_by_steps", "tool_call", query, plan,
                 [("start_workout", {"kind": indoor if met else outdoor})],
                 reads=("get_activity_summary",), obstacle_kinds=ALL_KINDS)


def log_dose(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    medication = rng.choice(seed_health(rng, world))
    name = medication["name"]
    query = say(rng, lang, [f"我刚吃了{name}，帮我记一下", f"{name}今天已经吃过了，打个卡"],
                [f"I just took my {name}, log it.", f"Mark today's {name} as taken."])

    def plan(run: OracleRun) -> str:
        row = _one(run, [m for m in run.read("list_medications")["medications"] if m["name"] == name], name)
        run.act("log_medication_taken", {"medication_id": row["medication_id"]})
        return say(rng, lang, [f"已记录今天的{name}已服用。"], [f"Logged today's {name} as taken."])
    return Draft("log_dose", "state_change", query, plan,
                 [("log_medication_taken", {"medication_id": medication["medication_id"]})],
                 reads=("list_medications",), obstacle_kinds=(RUNTIME, PERMISSION))


def changed_medication_time(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    seed_health(rng, world)
    name, dose = _new_medication(rng, world)
    was, time = rng.sample(("07:30", "08:00", "09:00", "12:30", "19:00", "20:00", "21:30"), 2)
    history = _turns(say(rng, lang, [f"每天{say_clock(rng, was, lang)}提醒我吃{name}，一次{dose}"],
                         [f"Remind me to take {name} ({dose}) daily at {say_clock(rng, was, lang)}."]),
                     say(rng, lang, [f"要添加每天{was}吃{name}的提醒吗？"], [f"Add a daily {was} reminder for {name}?"]))
    said = say_clock(rng, time, lang)
    query = say(rng, lang, [f"时间改成{said}", f"不对，{said}才对"], [f"Make it {said} instead.", f"No, {said}."])

    def plan(run: OracleRun) -> str:
        run.act("add_medication_reminder", {"name": name, "dose": dose, "time": time})
        return say(rng, lang, [f"已添加每天{time}吃{name}的提醒。"], [f"Added a daily {time} reminder for {name}."])
    return Draft("changed_medication_time", "state_change", query, plan,
                 [("add_medication_reminder", {"name": name, "dose": dose, "time": time})], history=history,
                 obstacle_kinds=(RUNTIME, PERMISSION))


# ------------------------------------------------------------------------------------------------ smart home
def _device(run: OracleRun, name: str, room: str | None = None) -> dict[str, Any]:
    devices = run.read("list_home_devices", {"room": room} if room else {})["devices"]
    return _one(run, [d for d in devices if d["name"] == name], f"the device {name!r}")


def _kind(devices: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in devices if d["kind"] == kind]


def home_device(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    devices = seed_home(rng, world)
    variant = rng.choice(("light", "thermostat", "lock"))
    device = rng.choice(_kind(devices, variant))
    room, name = device["room"], device["name"]
    if variant == "light":
        level = rng.choice([v for v in range(10, 101, 10) if v != device["level"]])
        target: tuple[str, dict[str, Any]] = ("set_light_brightness",
                                              {"device_id": device["device_id"], "level": level})
        query = say(rng, lang, [f"把{room}的灯调到{level}%", f"{room}灯亮度调成{level}%"],
                    [f"Set the {room} light to {level}%.", f"Put the {room} light at {level} percent brightness."])
        answer = say(rng, lang, [f"{name}已调到{level}%。"], [f"The {name} is at {level}% now."])
    elif variant == "thermostat":
        celsius = rng.choice([v for v in range(18, 29) if v != device["level"]])
        target = ("set_thermostat", {"device_id": device["device_id"], "celsius": celsius})
        query = say(rng, lang, [f"把{room}空调调到{celsius}度", f"{room}的空调设成{celsius}℃"],
                    [f"Set the {room} AC to {celsius} degrees.", f"Put the {room} air conditioner at {celsius}°C."])
        answer = say(rng, lang, [f"{name}已设为{celsius}℃。"], [f"The {name} is set to {celsius}°C."])
    else:
        lock = not device["locked"]
        target = ("set_lock", {"device_id": device["device_id"], "locked": lock})
        query = say(rng, lang, ["把大门锁上", "帮我锁一下门"] if lock else ["把大门的锁打开", "帮我开一下门锁"],
                    ["Lock the front door.", "Can you lock the door?"] if lock else
                    ["Unlock the front door.", "Open the door lock for me."])
        answer = say(rng, lang, [f"大门已{'锁上' if lock else '解锁'}。"],
                     [f"The front door is {'locked' if lock else 'unlocked'}."])
        room = ""

    def plan(run: OracleRun) -> str:
        run.act(target[0], {**target[1], "device_id": _device(run, name, room or None)["device_id"]})
        return answer
    return Draft("home_device", "tool_call", query, plan, [target], reads=("list_home_devices",),
                 obstacle_kinds=ALL_KINDS)


def lock_or_lights(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    devices = seed_home(rng, world)
    lock, light = _kind(devices, "lock")[0], _kind(devices, "light")[0]
    locked = rng.random() < 0.5
    lock["locked"], light["power"] = int(locked), "on"
    room = light["room"]
    query = say(rng, lang, [f"大门要是没锁就锁上；已经锁了的话把{room}的灯关掉", f"看看门锁了没有：没锁就锁上，锁了就关{room}灯"],
                [f"If the front door is unlocked, lock it; if it's already locked, switch off the {room} light.",
                 f"Check the front door: lock it if it's open, otherwise turn the {room} light off."])

    def plan(run: OracleRun) -> str:
        found = {d["name"]: d for d in run.read("list_home_devices")["devices"]}
        if not found[lock["name"]]["locked"]:
            run.act("set_lock", {"device_id": found[lock["name"]]["device_id"], "locked": True})
            return say(rng, lang, ["大门没锁，已锁上。"], ["The door was unlocked; it is locked now."])
        run.act("set_device_power", {"device_id": found[light["name"]]["device_id"], "on": False})
        return say(rng, lang, [f"大门已经锁好了，已关掉{light['name']}。"],
                   [f"The door was locked; I switched off the {light['name']}."])
    target = (("set_device_power", {"device_id": light["device_id"], "on": False}) if locked
              else ("set_lock", {"device_id": lock["device_id"], "locked": True}))
    return Draft("lock_or_lights", "tool_call", query, plan, [target], reads=("list_home_devices",),
                 obstacle_kinds=ALL_KINDS)


def run_scene(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    devices = seed_home(rng, world)
    scenes = world.extra["home_scenes"]
    scene = rng.choice(scenes)
    if scene is scenes[0]:
        _kind(devices, "light")[0]["power"] = "off"  # coming home: the light the scene switches on is off
    else:
        _kind(devices, "lock")[0]["locked"] = 0  # going to bed or out: the door is still unlocked
    q = quote(scene["name"], lang)
    query = say(rng, lang, [f"帮我启动{q}场景", f"执行一下{q}模式"], [f"Run my {q} scene.", f"Start the {q} scene, please."])

    def plan(run: OracleRun) -> str:
        found = [s for s in run.read("list_home_scenes")["scenes"] if s["name"] == scene["name"]]
        run.act("run_home_scene", {"scene_id": _one(run, found, "the scene")["scene_id"]})
        return say(rng, lang, [f"已执行{q}场景。"], [f"The {q} scene has run."])
    return Draft("run_scene", "state_change", query, plan, [("run_home_scene", {"scene_id": scene["scene_id"]})],
                 reads=("list_home_scenes",), obstacle_kinds=ALL_KINDS)


def changed_thermostat(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    device = rng.choice(_kind(seed_home(rng, world), "thermostat"))
    was, celsius = rng.sample([v for v in range(18, 29) if v != device["level"]], 2)
    room = device["room"]
    history = _turns(say(rng, lang, [f"把{room}空调调到{was}度"], [f"Set the {room} AC to {was} degrees."]),
                     say(rng, lang, [f"要把{device['name']}设为{was}℃吗？"], [f"Set the {device['name']} to {was}°C?"]))
    query = say(rng, lang, [f"还是{celsius}度吧", f"不对，调到{celsius}度"],
                [f"Make it {celsius} instead.", f"No, {celsius} degrees."])

    def plan(run: OracleRun) -> str:
        run.act("set_thermostat", {"device_id": _device(run, device["name"], room)["device_id"], "celsius": celsius})
        return say(rng, lang, [f"{device['name']}已设为{celsius}℃。"], [f"The {device['name']} is set to {celsius}°C."])
    return Draft("changed_thermostat", "tool_call", query, plan,
                 [("set_thermostat", {"device_id": device["device_id"], "celsius": celsius})],
                 reads=("list_home_devices",), history=history, obstacle_kinds=ALL_KINDS)


def retry_home(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    light = rng.choice(_kind(seed_home(rng, world), "light"))
    light["power"] = "off"
    world.settings.update(wifi="off", bluetooth="off")
    room = light["room"]
    history = _turns(say(rng, lang, [f"把{room}的灯打开"], [f"Turn on the {room} light."]),
                     say(rng, lang, ["连不上家里的网关：手机的Wi-Fi和蓝牙都关着。"],
                         ["I can't reach your home hub: Wi-Fi and Bluetooth are both off on the phone."]))
    query = say(rng, lang, ["那你处理一下，再开灯", "帮我解决一下，再试一次", f"弄好以后把{room}灯打开"],
                ["Fix that and try again.", "Sort it out and turn it on.", f"Fix it, then switch the {room} light on."])

    def plan(run: OracleRun) -> str:
        run.act("set_device_power", {"device_id": _device(run, light["name"], room)["device_id"], "on": True})
        return say(rng, lang, [f"已打开Wi-Fi，{light['name']}已打开。"], [f"Turned Wi-Fi on; the {light['name']} is on."])
    return Draft("retry_home", "tool_call", query, plan,
                 [("set_device_power", {"device_id": light["device_id"], "on": True})],
                 reads=("list_home_devices",), history=history, obstacle_kinds=(RUNTIME, PERMISSION),
                 obstacles=[{"kind": STATE, "note": "Wi-Fi and Bluetooth are off (the earlier command could not "
                                                    "reach the hub)"}])


# --------------------------------------------------------------------------------------------- files & photos
def _day_photos(rng: random.Random, world: World, count: int, **fields: Any) \
        -> tuple[str, dt.date, str, list[dict[str, Any]]]:
    """Photos of one place and past day (the only ones there that day): the place, the day, how the user says it,
    the photos."""
    place = rng.choice(PLACES[world.lang])
    day = world.today - dt.timedelta(days=rng.randint(1, 4))
    return place, day, say_past_day(rng, day, world.today, world.lang), add_photos(rng, world, place, day, count,
                                                                                   **fields)


def _search(run: OracleRun, place: str, day: dt.date | None = None, trash: bool = False) -> list[dict[str, Any]]:
    args: dict[str, Any] = {"place": place}
    if day is not None:
        args["date"] = day.isoformat()
    if trash:
        args["trash"] = True
    return run.read("search_photos", args)["photos"]


def favorite_photos(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    seed_gallery(rng, world)
    place, day, when, photos = _day_photos(rng, world, rng.randint(1, 2))
    query = say(rng, lang, [f"把{when}在{place}拍的照片设为收藏", f"{when}在{place}拍的那些照片帮我收藏一下"],
                [f"Favourite the photos I took at {place} {when}.",
                 f"Star the pictures from {place} that I took {when}."])

    def plan(run: OracleRun) -> str:
        found = _search(run, place, day)
        for photo in found:
            run.act("set_photo_favorite", {"photo_id": photo["photo_id"], "favorite": True})
        return say(rng, lang, [f"已收藏{len(found)}张照片。"], [f"Marked {len(found)} photo(s) as favourites."])
    return Draft("favorite_photos", "state_change", query, plan,
                 [("set_photo_favorite", {"photo_id": p["photo_id"], "favorite": True}) for p in photos],
                 reads=("search_photos",), obstacle_kinds=(RUNTIME, PERMISSION))


def restore_or_favorite(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    seed_gallery(rng, world)
    trashed = rng.random() < 0.5
    place, day, when, (photo,) = _day_photos(rng, world, 1, trashed=int(trashed))
    query = say(rng, lang, [f"{when}在{place}拍的那张照片，如果在“最近删除”里就恢复它，不在的话就设为收藏"],
                [f"The photo I took at {place} {when}: if it's in Recently deleted, restore it; otherwise make it a "
                 f"favourite."])

    def plan(run: OracleRun) -> str:
        deleted = _search(run, place, day, trash=True)
        if deleted:
            run.act("restore_photo", {"photo_id": _one(run, deleted, "the photo")["photo_id"]})
            return say(rng, lang, ["照片在最近删除里，已恢复。"], ["It was in Recently deleted; I restored it."])
        run.act("set_photo_favorite", {"photo_id": _one(run, _search(run, place, day), "the photo")["photo_id"],
                                       "favorite": True})
        return say(rng, lang, ["照片在相册里，已设为收藏。"], ["The photo is in the gallery; I marked it as a favourite."])
    target = (("restore_photo", {"photo_id": photo["photo_id"]}) if trashed
              else ("set_photo_favorite", {"photo_id": photo["photo_id"], "favorite": True}))
    return Draft("restore_or_favorite", "tool_call", query, plan, [target], reads=("search_photos",),
                 obstacle_kinds=(RUNTIME, PERMISSION))


def album_of_place(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    photos = seed_gallery(rng, world)
    place = rng.choice([p for p in PLACES[lang] if p not in {x["place"] for x in photos}])
    for back in rng.sample(range(1, 10), rng.randint(1, 2)):
        add_photos(rng, world, place, world.today - dt.timedelta(days=back), rng.randint(1, 2))
    name = rng.choice([a for a in ALBUMS[lang] if a not in {x["name"] for x in world.extra["albums"]}])
    q = quote(name, lang)
    query = say(rng, lang, [f"新建一个相册叫{q}，把在{place}拍的照片都放进去", f"建个{q}相册，{place}的照片都加进去"],
                [f"Make a new album called {q} with all my photos from {place}.",
                 f"Create an album {q} and put every {place} photo in it."])

    def plan(run: OracleRun) -> str:
        album = run.act("create_album", {"name": name}).payload["album_id"]
        found = _search(run, place)
        for photo in found:
            run.act("add_photo_to_album", {"album_id": album, "photo_id": photo["photo_id"]})
        return say(rng, lang, [f"已新建相册“{name}”，放入{len(found)}张照片。"],
                   [f"Created \"{name}\" with {len(found)} photo(s)."])
    return Draft("album_of_place", "state_change", query, plan,
                 [("create_album", {"name": name}), ("add_photo_to_album", {})], reads=("search_photos",),
                 obstacle_kinds=(RUNTIME, PERMISSION))


def share_photo(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    seed_gallery(rng, world)
    place, day, when, (photo,) = _day_photos(rng, world, 1)
    query = say(rng, lang, [f"把{when}在{place}拍的照片发给{who}", f"{when}在{place}拍的那张照片，帮我发给{who}"],
                [f"Send {who} the photo I took at {place} {when}.", f"Share my {place} photo from {when} with {who}."
                 if not when.startswith("on ") else f"Share the photo I took at {place} {when} with {who}."])

    def plan(run: OracleRun) -> str:
        found = _one(run, _search(run, place, day), "the photo")
        run.act("share_photo", {"photo_id": found["photo_id"], "contact_id": contact_of(run, contact, key)})
        return say(rng, lang, [f"已把照片发给{contact['name']}。"], [f"Sent the photo to {contact['name']}."])
    return Draft("share_photo", "state_change", query, plan,
                 [("share_photo", {"photo_id": photo["photo_id"], "contact_id": contact["contact_id"]})],
                 reads=("search_photos", "search_contacts"), obstacle_kinds=ALL_KINDS)


def changed_recipient(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    first, first_who, _ = addressee(rng, world, 0.0)
    contact, who, key = addressee(rng, world)
    while contact is first:
        contact, who, key = addressee(rng, world, 0.0)
    seed_gallery(rng, world)
    place, day, when, (photo,) = _day_photos(rng, world, 1)
    history = _turns(say(rng, lang, [f"把{when}在{place}拍的照片发给{first_who}"],
                         [f"Send {first_who} the photo I took at {place} {when}."]),
                     say(rng, lang, [f"要把这张照片发给{first['name']}吗？"], [f"Send this photo to {first['name']}?"]))
    query = say(rng, lang, [f"不是{first_who}，发给{who}", f"发错人了，换成{who}"],
                [f"Not {first_who}, send it to {who}.", f"Wrong person, send it to {who} instead."])

    def plan(run: OracleRun) -> str:
        found = _one(run, _search(run, place, day), "the photo")
        run.act("share_photo", {"photo_id": found["photo_id"], "contact_id": contact_of(run, contact, key)})
        return say(rng, lang, [f"已把照片发给{contact['name']}。"], [f"Sent the photo to {contact['name']}."])
    return Draft("changed_recipient", "tool_call", query, plan,
                 [("share_photo", {"photo_id": photo["photo_id"], "contact_id": contact["contact_id"]})],
                 reads=("search_photos", "search_contacts"), history=history, obstacle_kinds=ALL_KINDS)


Family = Callable[[random.Random, World], Draft]
FAMILIES: dict[str, tuple[Family, ...]] = {
    "grounding": (chat_message, add_to_cart, medication_reminder, start_workout, home_device, favorite_photos),
    "conditional": (mute_or_post, stock_or_alternative, workout_by_steps, lock_or_lights, restore_or_favorite),
    "state_tracking": (group_chat, checkout, cancel_order, log_dose, run_scene, album_of_place, share_photo),
    "intent_correction": (changed_chat_text, changed_quantity, changed_medication_time, changed_thermostat,
                          changed_recipient),
    "error_recovery": (chat_message, checkout, medication_reminder, start_workout, home_device, share_photo,
                       resend_chat, retry_home),
}
#: The functional domain each family's outcome is in.
FAMILY_DOMAINS = {
    "messaging_social": ("chat_message", "mute_or_post", "group_chat", "changed_chat_text", "resend_chat"),
    "shopping_payments": ("add_to_cart", "stock_or_alternative", "checkout", "cancel_order", "changed_quantity"),
    "health_fitness": ("medication_reminder", "start_workout", "workout_by_steps", "log_dose",
                       "changed_medication_time"),
    "smart_home": ("home_device", "lock_or_lights", "run_scene", "changed_thermostat", "retry_home"),
    "files_photos": ("favorite_photos", "restore_or_favorite", "album_of_place", "share_photo", "changed_recipient"),
}
