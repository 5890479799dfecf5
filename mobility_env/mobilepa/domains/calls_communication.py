"""Calls and communication: contacts (search, create, update, delete), messages, calls and the call log,
blocked numbers and voicemail.

Permissions where a phone asks for them: sending and reading messages (``messages: sms``), calling
(``phone: call``), changing contacts (``contacts: write``), the call log (``phone: call_log``) and
voicemail (``phone: voicemail``). Numbers the tools take are normalized to their digits (and a leading
``+``) before they are stored or compared.
"""

from __future__ import annotations

from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import choice, phone, text
from ..state import PhoneState

CONTACTS_WRITE = ("contacts", "write")


def normalize_phone(number: str) -> str:
    return ("+" if number.strip().startswith("+") else "") + "".join(c for c in number if c.isdigit())


def _contact(state: PhoneState, contact_id: str) -> dict[str, Any] | None:
    return state.one("SELECT contact_id, name, phone FROM contacts WHERE contact_id = ?", (contact_id,))


def _unreachable(state: PhoneState, contact_id: str, what: str) -> Feedback | None:
    """Why a contact cannot be messaged or called now (unknown contact, airplane mode), or None."""
    if _contact(state, contact_id) is None:
        return failure(ErrorKind.NOT_FOUND, f"no contact {contact_id!r}; search_contacts finds them")
    if state.setting("airplane_mode") == "on":
        return failure(ErrorKind.STATE_CONFLICT, f"airplane mode is on: {what}", setting="airplane_mode", value="on")
    return None


@tool("search_contacts", "calls_communication", "Find contacts whose name or relation contains the query.",
      text("query", "a name or a relation such as 妈妈"))
def search_contacts(state: PhoneState, args: dict[str, Any]) -> Feedback:
    pattern = f"%{args['query'].strip()}%"
    return success(contacts=state.query("SELECT contact_id, name, phone, relation FROM contacts WHERE name LIKE ? "
                                        "OR relation LIKE ? ORDER BY contact_id", (pattern, pattern)))


@tool("send_message", "calls_communication", "Send a text message to a contact.", text("contact_id", "the contact"),
      text("text", "the message"), permission=("messages", "sms"), writes=("messages", "counters"))
def send_message(state: PhoneState, args: dict[str, Any]) -> Feedback:
    refused = _unreachable(state, args["contact_id"], "messages cannot be sent")
    if refused is not None:
        return refused
    message_id = state.next_id("message")
    state.execute("INSERT INTO messages (message_id, contact_id, direction, text, sent_at) VALUES (?, ?, 'out', ?, ?)",
                  (message_id, args["contact_id"], args["text"], state.setting("clock", "")))
    return success(message_id=message_id)


@tool("call_contact", "calls_communication", "Phone a contact.", text("contact_id", "the contact"),
      permission=("phone", "call"), writes=("calls", "counters"))
def call_contact(state: PhoneState, args: dict[str, Any]) -> Feedback:
    refused = _unreachable(state, args["contact_id"], "calls cannot be made")
    if refused is not None:
        return refused
    call_id = state.next_id("call")
    state.execute("INSERT INTO calls (call_id, contact_id, direction, at) VALUES (?, ?, 'out', ?)",
                  (call_id, args["contact_id"], state.setting("clock", "")))
    return success(call_id=call_id)


@tool("list_messages", "calls_communication", "The messages exchanged with a contact, oldest first.",
      text("contact_id", "the contact"), permission=("messages", "sms"))
def list_messages(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if _contact(state, args["contact_id"]) is None:
        return failure(ErrorKind.NOT_FOUND, f"no contact {args['contact_id']!r}; search_contacts finds them")
    return success(messages=state.query("SELECT message_id, direction, text, sent_at FROM messages WHERE contact_id "
                                        "= ? ORDER BY message_id", (args["contact_id"],)))


def _no_contact(contact_id: str) -> Feedback:
    return failure(ErrorKind.NOT_FOUND, f"no contact {contact_id!r}; search_contacts finds them")


def _phone_owner(state: PhoneState, number: str, other_than: str = "") -> dict[str, Any] | None:
    return state.one("SELECT contact_id, name FROM contacts WHERE phone = ? AND contact_id != ?", (number, other_than))


@tool("create_contact", "calls_communication", "Save a new contact.", text("name", "the contact's name"),
      phone("phone", "the phone number"), text("relation", "how the user knows them, e.g. 同事", required=False),
      permission=CONTACTS_WRITE, writes=("contacts", "counters"))
def create_contact(state: PhoneState, args: dict[str, Any]) -> Feedback:
    number = normalize_phone(args["phone"])
    owner = _phone_owner(state, number)
    if owner is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{number} is already saved as {owner['name']} "
                       f"({owner['contact_id']}); update_contact changes it", contact_id=owner["contact_id"])
    contact_id = state.next_id("contact")
    state.execute("INSERT INTO contacts (contact_id, name, phone, relation) VALUES (?, ?, ?, ?)",
                  (contact_id, args["name"].strip(), number, args.get("relation") or ""))
    return success(contact_id=contact_id, name=args["name"].strip(), phone=number)


@tool("update_contact", "calls_communication", "Change a contact's name, number or relation (give at least one).",
      text("contact_id", "the contact (search_contacts)"), text("name", "the new name", required=False),
      phone("phone", "the new number", required=False), text("relation", "the new relation", required=False),
      permission=CONTACTS_WRITE, writes=("contacts",))
def update_contact(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT name, phone, relation FROM contacts WHERE contact_id = ?", (args["contact_id"],))
    if row is None:
        return _no_contact(args["contact_id"])
    changes = {k: args[k].strip() for k in ("name", "relation") if args.get(k) is not None}
    if args.get("phone") is not None:
        changes["phone"] = normalize_phone(args["phone"])
    if not changes:
        return failure(ErrorKind.MISSING_PARAMETER, "say what to change: name, phone or relation",
                       fields=["name", "phone", "relation"])
    if all(row[k] == v for k, v in changes.items()):
        return failure(ErrorKind.STATE_CONFLICT, f"contact {args['contact_id']} already has these values")
    owner = _phone_owner(state, changes["phone"], args["contact_id"]) if "phone" in changes else None
    if owner is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{changes['phone']} belongs to {owner['name']} "
                       f"({owner['contact_id']})", contact_id=owner["contact_id"])
    state.execute(f"UPDATE contacts SET {', '.join(f'{k} = ?' for k in changes)} WHERE contact_id = ?",
                  (*changes.values(), args["contact_id"]))
    return success(contact_id=args["contact_id"], **changes)


@tool("delete_contact", "calls_communication", "Delete a contact (its messages and calls stay in the history).",
      text("contact_id", "the contact (search_contacts)"), permission=CONTACTS_WRITE, writes=("contacts",))
def delete_contact(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM contacts WHERE contact_id = ?", (args["contact_id"],)) == 0:
        return _no_contact(args["contact_id"])
    return success(contact_id=args["contact_id"], deleted=True)


@tool("get_call_log", "calls_communication", "Recent calls, newest first, optionally only incoming, outgoing or "
      "missed.", choice("direction", "which calls", ("in", "out", "missed"), required=False),
      permission=("phone", "call_log"))
def get_call_log(state: PhoneState, args: dict[str, Any]) -> Feedback:
    sql, params = "SELECT c.call_id, c.contact_id, k.name, c.direction, c.at FROM calls c LEFT JOIN contacts k ON " \
        "k.contact_id = c.contact_id", []
    if args.get("direction"):
        sql, params = sql + " WHERE c.direction = ?", [args["direction"]]
    return success(calls=state.query(sql + " ORDER BY c.at DESC, c.call_id DESC LIMIT 30", params))


@tool("delete_call_log_entry", "calls_communication", "Delete one call from the call log.",
      text("call_id", "the call (get_call_log)"), permission=("phone", "call_log"), writes=("calls",))
def delete_call_log_entry(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM calls WHERE call_id = ?", (args["call_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no call {args['call_id']!r}; get_call_log shows them")
    return success(call_id=args["call_id"], deleted=True)


@tool("block_number", "calls_communication", "Block calls and messages from a phone number.",
      phone("phone", "the number to block"), writes=("blocked_numbers",))
def block_number(state: PhoneState, args: dict[str, Any]) -> Feedback:
    number = normalize_phone(args["phone"])
    if state.one("SELECT 1 AS present FROM blocked_numbers WHERE phone = ?", (number,)) is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{number} is already blocked")
    state.execute("INSERT INTO blocked_numbers (phone, blocked_at) VALUES (?, ?)",
                  (number, state.setting("clock", "")))
    return success(phone=number, blocked=True)


@tool("unblock_number", "calls_communication", "Unblock a blocked phone number.",
      phone("phone", "the number to unblock"), writes=("blocked_numbers",))
def unblock_number(state: PhoneState, args: dict[str, Any]) -> Feedback:
    number = normalize_phone(args["phone"])
    if state.execute("DELETE FROM blocked_numbers WHERE phone = ?", (number,)) == 0:
        return failure(ErrorKind.STATE_CONFLICT, f"{number} is not blocked (list_blocked_numbers shows what is)")
    return success(phone=number, blocked=False)


@tool("list_blocked_numbers", "calls_communication", "List the blocked phone numbers (with the contact, if saved).")
def list_blocked_numbers(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(blocked=state.query("SELECT b.phone, k.name, b.blocked_at FROM blocked_numbers b LEFT JOIN "
                                       "contacts k ON k.phone = b.phone ORDER BY b.phone"))


@tool("list_voicemails", "calls_communication", "List voicemails, newest first.", permission=("phone", "voicemail"))
def list_voicemails(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(voicemails=state.query("SELECT v.voicemail_id, v.phone, k.name, v.at, v.duration_s, v.heard FROM "
                                          "voicemails v LEFT JOIN contacts k ON k.phone = v.phone ORDER BY v.at DESC"))


@tool("play_voicemail", "calls_communication", "Play a voicemail: returns its transcript and marks it heard.",
      text("voicemail_id", "the voicemail (list_voicemails)"), permission=("phone", "voicemail"),
      writes=("voicemails",))
def play_voicemail(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT phone, transcript, heard FROM voicemails WHERE voicemail_id = ?", (args["voicemail_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no voicemail {args['voicemail_id']!r}; list_voicemails shows them")
    if not row["heard"]:
        state.execute("UPDATE voicemails SET heard = 1 WHERE voicemail_id = ?", (args["voicemail_id"],))
    return success(voicemail_id=args["voicemail_id"], phone=row["phone"], transcript=row["transcript"])


@tool("delete_voicemail", "calls_communication", "Delete a voicemail.",
      text("voicemail_id", "the voicemail (list_voicemails)"), permission=("phone", "voicemail"),
      writes=("voicemails",))
def delete_voicemail(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM voicemails WHERE voicemail_id = ?", (args["voicemail_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no voicemail {args['voicemail_id']!r}; list_voicemails shows them")
    return success(voicemail_id=args["voicemail_id"], deleted=True)
