"""Messaging and social: chat apps (direct and group chats, their messages, muting, members) and a social feed
(posts by the user and their contacts, likes). Apart from SMS (``calls_communication``): a chat lives in an
app (``WeChat``, ``WhatsApp``...) and goes over the internet.

State dependencies: sending, creating a group, adding a member, posting and liking need the network
(:func:`~.system_settings.online`); a direct chat with a contact whose number is blocked
(``blocked_numbers``) refuses messages; group members must be saved contacts. Adding people to a group
reads the contacts (``chat: contacts``).
"""

from __future__ import annotations

from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import choice, flag, integer, names, passage, text
from ..state import PhoneState
from .system_settings import offline_failure, online

CHAT_CONTACTS = ("chat", "contacts")
VISIBILITIES = ("public", "friends", "private")
#: At most this many members join a group at its creation (add_chat_member adds more).
MAX_GROUP_START = 20


def _chat(state: PhoneState, chat_id: str) -> dict[str, Any] | None:
    return state.one("SELECT chat_id, app, title, kind, muted FROM chats WHERE chat_id = ?", (chat_id,))


def _no_chat(chat_id: str) -> Feedback:
    return failure(ErrorKind.NOT_FOUND, f"no chat {chat_id!r}; list_chats shows them")


def _no_contact(contact_id: str) -> Feedback:
    return failure(ErrorKind.NOT_FOUND, f"no contact {contact_id!r}; search_contacts finds them")


@tool("list_chats", "messaging_social", "List the chats of the chat apps (direct and group) with their unread "
      "count, most recent first.", flag("unread_only", "true to list only chats with unread messages", required=False))
def list_chats(state: PhoneState, args: dict[str, Any]) -> Feedback:
    having = " HAVING unread > 0" if args.get("unread_only") else ""
    return success(chats=state.query(
        "SELECT c.chat_id, c.app, c.title, c.kind, c.muted, COALESCE(SUM(m.sender != 'me' AND m.read = 0), 0) AS "
        "unread, MAX(m.sent_at) AS last_at FROM chats c LEFT JOIN chat_messages m ON m.chat_id = c.chat_id GROUP BY "
        f"c.chat_id{having} ORDER BY last_at IS NULL, last_at DESC, c.chat_id LIMIT 30"))


@tool("read_chat", "messaging_social", "Open a chat: its last 30 messages, oldest first (incoming ones become read).",
      text("chat_id", "the chat (list_chats)"), writes=("chat_messages",))
def read_chat(state: PhoneState, args: dict[str, Any]) -> Feedback:
    chat = _chat(state, args["chat_id"])
    if chat is None:
        return _no_chat(args["chat_id"])
    messages = state.query(
        "SELECT * FROM (SELECT m.chat_message_id, m.sender, k.name AS sender_name, m.text, m.sent_at FROM "
        "chat_messages m LEFT JOIN contacts k ON k.contact_id = m.sender WHERE m.chat_id = ? ORDER BY m.sent_at "
        "DESC, m.chat_message_id DESC LIMIT 30) ORDER BY sent_at, chat_message_id", (args["chat_id"],))
    state.execute("UPDATE chat_messages SET read = 1 WHERE chat_id = ? AND sender != 'me' AND read = 0",
                  (args["chat_id"],))
    return success(chat_id=chat["chat_id"], title=chat["title"], kind=chat["kind"], messages=messages)


@tool("send_chat_message", "messaging_social", "Send a message in a chat-app chat (needs the network).",
      text("chat_id", "the chat (list_chats)"), passage("text", "the message", max_length=1000),
      writes=("chat_messages", "counters"))
def send_chat_message(state: PhoneState, args: dict[str, Any]) -> Feedback:
    chat = _chat(state, args["chat_id"])
    if chat is None:
        return _no_chat(args["chat_id"])
    if chat["kind"] == "direct":
        blocked = state.one("SELECT b.phone FROM chat_members m JOIN contacts k ON k.contact_id = m.contact_id JOIN "
                            "blocked_numbers b ON b.phone = k.phone WHERE m.chat_id = ?", (args["chat_id"],))
        if blocked is not None:
            return failure(ErrorKind.STATE_CONFLICT, f"{blocked['phone']} is blocked: unblock_number before "
                           "writing to them", phone=blocked["phone"])
    if not online(state):
        return offline_failure("sending a chat message")
    message_id = state.next_id("chat-msg")
    state.execute("INSERT INTO chat_messages (chat_message_id, chat_id, sender, text, sent_at, read) VALUES "
                  "(?, ?, 'me', ?, ?, 1)", (message_id, args["chat_id"], args["text"], state.setting("clock", "")))
    return success(chat_message_id=message_id, chat_id=args["chat_id"])


def _missing_contacts(state: PhoneState, contact_ids: list[str]) -> list[str]:
    marks = ", ".join("?" * len(contact_ids))
    known = {row["contact_id"] for row in state.query(f"SELECT contact_id FROM contacts WHERE contact_id IN "
                                                      f"({marks})", contact_ids)}
    return [c for c in contact_ids if c not in known]


@tool("create_group_chat", "messaging_social", "Start a group chat with saved contacts (needs the network).",
      text("title", "the group's name"),
      names("members", "the contact_ids to add (search_contacts)", 2, MAX_GROUP_START),
      choice("app", "the chat app (WeChat unless said)", ("WeChat", "WhatsApp", "Telegram"), required=False),
      permission=CHAT_CONTACTS, writes=("chats", "chat_members", "counters"))
def create_group_chat(state: PhoneState, args: dict[str, Any]) -> Feedback:
    missing = _missing_contacts(state, args["members"])
    if missing:
        return failure(ErrorKind.NOT_FOUND, f"no contact(s) {', '.join(map(repr, missing))}; search_contacts "
                       "finds them", missing=missing)
    if not online(state):
        return offline_failure("creating a group chat")
    chat_id = state.next_id("chat")
    state.execute("INSERT INTO chats (chat_id, app, title, kind, muted) VALUES (?, ?, ?, 'group', 0)",
                  (chat_id, args.get("app") or "WeChat", args["title"].strip()))
    for contact_id in args["members"]:
        state.execute("INSERT INTO chat_members (chat_id, contact_id) VALUES (?, ?)", (chat_id, contact_id))
    return success(chat_id=chat_id, title=args["title"].strip(), members=list(args["members"]))


@tool("add_chat_member", "messaging_social", "Add a saved contact to a group chat (needs the network).",
      text("chat_id", "the group chat (list_chats)"), text("contact_id", "the contact (search_contacts)"),
      permission=CHAT_CONTACTS, writes=("chat_members",))
def add_chat_member(state: PhoneState, args: dict[str, Any]) -> Feedback:
    chat = _chat(state, args["chat_id"])
    if chat is None:
        return _no_chat(args["chat_id"])
    if chat["kind"] != "group":
        return failure(ErrorKind.STATE_CONFLICT, f"{chat['title']} is a direct chat: create_group_chat starts a "
                       "group")
    if state.one("SELECT 1 AS present FROM contacts WHERE contact_id = ?", (args["contact_id"],)) is None:
        return _no_contact(args["contact_id"])
    if state.one("SELECT 1 AS present FROM chat_members WHERE chat_id = ? AND contact_id = ?",
                 (args["chat_id"], args["contact_id"])) is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['contact_id']} is already in {chat['title']}")
    if not online(state):
        return offline_failure("adding a group member")
    state.execute("INSERT INTO chat_members (chat_id, contact_id) VALUES (?, ?)", (args["chat_id"], args["contact_id"]))
    return success(chat_id=args["chat_id"], contact_id=args["contact_id"], added=True)


@tool("set_chat_muted", "messaging_social", "Mute or unmute a chat's notifications.",
      text("chat_id", "the chat (list_chats)"), flag("muted", "true to mute, false to unmute"), writes=("chats",))
def set_chat_muted(state: PhoneState, args: dict[str, Any]) -> Feedback:
    chat = _chat(state, args["chat_id"])
    if chat is None:
        return _no_chat(args["chat_id"])
    if bool(chat["muted"]) == args["muted"]:
        state_now = "muted" if chat["muted"] else "unmuted"
        return failure(ErrorKind.STATE_CONFLICT, f"{chat['title']} is already {state_now}")
    state.execute("UPDATE chats SET muted = ? WHERE chat_id = ?", (int(args["muted"]), args["chat_id"]))
    return success(chat_id=args["chat_id"], muted=args["muted"])


@tool("list_social_feed", "messaging_social", "The social feed: recent posts by the user and their contacts, newest "
      "first.", integer("limit", "how many posts", 1, 50, required=False))
def list_social_feed(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(posts=state.query(
        "SELECT p.post_id, p.author, k.name AS author_name, p.text, p.visibility, p.posted_at, p.liked FROM "
        "social_posts p LEFT JOIN contacts k ON k.contact_id = p.author ORDER BY p.posted_at DESC, p.post_id DESC "
        "LIMIT ?", (args.get("limit") or 20,)))


@tool("publish_post", "messaging_social", "Publish a post on the user's social feed (needs the network).",
      passage("text", "what to post", max_length=1000),
      choice("visibility", "who sees it (friends unless said)", VISIBILITIES, required=False),
      writes=("social_posts", "counters"))
def publish_post(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if not online(state):
        return offline_failure("publishing a post")
    post_id = state.next_id("post")
    visibility = args.get("visibility") or "friends"
    state.execute("INSERT INTO social_posts (post_id, author, text, visibility, posted_at, liked) VALUES "
                  "(?, 'me', ?, ?, ?, 0)", (post_id, args["text"], visibility, state.setting("clock", "")))
    return success(post_id=post_id, visibility=visibility)


@tool("like_post", "messaging_social", "Like a contact's post in the social feed (needs the network).",
      text("post_id", "the post (list_social_feed)"), writes=("social_posts",))
def like_post(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT author, liked FROM social_posts WHERE post_id = ?", (args["post_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no post {args['post_id']!r}; list_social_feed shows them")
    if row["author"] == "me":
        return failure(ErrorKind.STATE_CONFLICT, "that is the user's own post")
    if row["liked"]:
        return failure(ErrorKind.STATE_CONFLICT, f"post {args['post_id']} is already liked")
    if not online(state):
        return offline_failure("liking a post")
    state.execute("UPDATE social_posts SET liked = 1 WHERE post_id = ?", (args["post_id"],))
    return success(post_id=args["post_id"], liked=True)
