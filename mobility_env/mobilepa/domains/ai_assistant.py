"""AI assistant: GUI sub-agent routing, long-term memory, notes, offline translation, notifications, and the
assistant's own settings.

Nothing here calls a network or a model:

* :func:`route_to_gui_agent` records a handoff (``handoffs``, status ``queued``) for the GUI agent
  that operates an app's screens; the sub-agent itself is outside the sandbox (its runs come with
  the sub-agent dimension). It needs the assistant's ``accessibility`` permission and an
  installed app;
* long-term memory (the ``memories`` table and its tools) lives in :mod:`.memory`; here is its switch
  (``set_memory_enabled``: saving needs the ``assistant_memory`` setting on, the default);
* :func:`translate_text` looks the phrase up in the ``translations`` table (an offline phrase
  book planted in ``S0``); a phrase it lacks is ``not_found``.
"""

from __future__ import annotations

from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, cancel_record, failure, success, tool
from ..params import choice, flag, passage, text
from ..state import PhoneState
from .system_settings import LANGUAGES, blocked_by, choice_tool, switch_tool

DOMAIN = "ai_assistant"
HANDOFF_STATES = ("queued", "cancelled", "done", "failed")
VOICES = ("warm", "bright", "calm", "energetic")
TARGET_LANGUAGES = tuple(sorted({tag.split("-")[0] for tag in LANGUAGES}))


@tool("route_to_gui_agent", DOMAIN, "Hand a task to the GUI agent that operates an app's screens, for what no tool "
      "covers (e.g. ordering in a shopping app).", text("app", "the installed app to operate"),
      passage("instruction", "what the GUI agent should do there, self-contained", max_length=500),
      permission=("assistant", "accessibility"), writes=("handoffs", "counters"))
def route_to_gui_agent(state: PhoneState, args: dict[str, Any]) -> Feedback:
    app = state.one("SELECT installed FROM apps WHERE app = ?", (args["app"],))
    if app is None or not app["installed"]:
        return failure(ErrorKind.NOT_FOUND, f"{args['app']!r} is not installed; list_apps shows what is")
    handoff_id = state.next_id("handoff")
    state.execute("INSERT INTO handoffs (handoff_id, app, instruction, status, created_at) VALUES (?, ?, ?, "
                  "'queued', ?)", (handoff_id, args["app"], args["instruction"].strip(), state.setting("clock", "")))
    return success(handoff_id=handoff_id, app=args["app"], status="queued")


@tool("list_handoffs", DOMAIN, "List the tasks handed to the GUI agent, optionally by status.",
      choice("status", "only this status", HANDOFF_STATES, required=False))
def list_handoffs(state: PhoneState, args: dict[str, Any]) -> Feedback:
    where = " WHERE status = ?" if args.get("status") else ""
    return success(handoffs=state.query(f"SELECT handoff_id, app, instruction, status FROM handoffs{where} ORDER BY "
                                        "handoff_id", [args["status"]] if where else []))


@tool("cancel_handoff", DOMAIN, "Cancel a queued GUI-agent task.", text("handoff_id", "the handoff (list_handoffs)"),
      writes=("handoffs",))
def cancel_handoff(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return cancel_record(state, "handoffs", "handoff_id", args["handoff_id"], what="handoff", pending="queued",
                         listing="list_handoffs")


switch_tool("set_memory_enabled", DOMAIN, "assistant_memory", "the assistant's memory", default="on",
            description="Let the assistant remember new things about the user, or stop it.")
switch_tool("set_voice_wake_up", DOMAIN, "voice_wake_up", "voice wake-up", permission=("assistant", "microphone"),
            description="Turn waking the assistant by voice on or off (needs the microphone permission).")
switch_tool("set_proactive_suggestions", DOMAIN, "proactive_suggestions", "proactive suggestions",
            blocked_by("assistant_memory", "off", "proactive suggestions draw on the assistant's memory, which is "
                       "off: turn it on first (set_memory_enabled)", default="on"),
            description="Turn the assistant's proactive suggestions (based on habits and memory) on or off.")


def _note(state: PhoneState, note_id: str) -> dict[str, Any] | None:
    return state.one("SELECT title, body, pinned FROM notes WHERE note_id = ?", (note_id,))


def _no_note(note_id: str) -> Feedback:
    return failure(ErrorKind.NOT_FOUND, f"no note {note_id!r}; list_notes and search_notes find them")


@tool("create_note", DOMAIN, "Write a new note.", text("title", "the title"), passage("body", "the text"),
      text("folder", "a folder, e.g. 工作", required=False), writes=("notes", "counters"))
def create_note(state: PhoneState, args: dict[str, Any]) -> Feedback:
    title = args["title"].strip()
    clash = state.one("SELECT note_id FROM notes WHERE title = ?", (title,))
    if clash is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"a note titled {title!r} exists ({clash['note_id']}); "
                       "append_to_note adds to it", note_id=clash["note_id"])
    note_id = state.next_id("note")
    state.execute("INSERT INTO notes (note_id, title, body, folder, pinned) VALUES (?, ?, ?, ?, 0)",
                  (note_id, title, args["body"], (args.get("folder") or "").strip()))
    return success(note_id=note_id, title=title)


@tool("list_notes", DOMAIN, "List notes (pinned first), optionally of one folder.",
      text("folder", "only this folder", required=False))
def list_notes(state: PhoneState, args: dict[str, Any]) -> Feedback:
    where = " WHERE folder = ?" if args.get("folder") else ""
    return success(notes=state.query(f"SELECT note_id, title, folder, pinned FROM notes{where} ORDER BY pinned DESC, "
                                     "note_id LIMIT 50", [args["folder"].strip()] if where else []))


@tool("search_notes", DOMAIN, "Find notes whose title or text contains the query.", text("query", "text to find"))
def search_notes(state: PhoneState, args: dict[str, Any]) -> Feedback:
    pattern = f"%{args['query'].strip()}%"
    rows = state.query("SELECT note_id, title, body FROM notes WHERE title LIKE ? OR body LIKE ? ORDER BY note_id "
                       "LIMIT 20", (pattern, pattern))
    return success(notes=[{"note_id": r["note_id"], "title": r["title"], "snippet": r["body"][:80]} for r in rows])


@tool("append_to_note", DOMAIN, "Add text at the end of a note (on a new line).",
      text("note_id", "the note (list_notes)"), passage("text", "the text to add"), writes=("notes",))
def append_to_note(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _note(state, args["note_id"])
    if row is None:
        return _no_note(args["note_id"])
    body = f"{row['body']}\n{args['text']}" if row["body"] else args["text"]
    state.execute("UPDATE notes SET body = ? WHERE note_id = ?", (body, args["note_id"]))
    return success(note_id=args["note_id"], length=len(body))


@tool("pin_note", DOMAIN, "Pin a note to the top of the list, or unpin it.", text("note_id", "the note (list_notes)"),
      flag("pinned", "true to pin"), writes=("notes",))
def pin_note(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _note(state, args["note_id"])
    if row is None:
        return _no_note(args["note_id"])
    if bool(row["pinned"]) == args["pinned"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['title']} is already {'' if args['pinned'] else 'un'}pinned")
    state.execute("UPDATE notes SET pinned = ? WHERE note_id = ?", (int(args["pinned"]), args["note_id"]))
    return success(note_id=args["note_id"], pinned=args["pinned"])


@tool("delete_note", DOMAIN, "Delete a note.", text("note_id", "the note (list_notes)"), writes=("notes",))
def delete_note(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM notes WHERE note_id = ?", (args["note_id"],)) == 0:
        return _no_note(args["note_id"])
    return success(note_id=args["note_id"], deleted=True)


@tool("translate_text", DOMAIN, "Translate a phrase with the offline phrase book.", text("text", "the phrase"),
      choice("target_language", "the language to translate into", TARGET_LANGUAGES))
def translate_text(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT translation FROM translations WHERE source = ? AND target_language = ?",
                    (args["text"].strip(), args["target_language"]))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"the offline phrase book has no {args['target_language']} translation "
                       "of this text; route_to_gui_agent with a translator app can do it")
    return success(text=args["text"].strip(), target_language=args["target_language"],
                   translation=row["translation"])


choice_tool("set_assistant_voice", DOMAIN, "Choose the assistant's speaking voice.", "assistant_voice",
            "assistant's voice", choice("voice", "the voice", VOICES), default="warm")


@tool("summarize_notifications", DOMAIN, "The unread notifications, grouped by app, optionally of one app; they "
      "are marked read.", text("app", "only this app", required=False), writes=("notifications",))
def summarize_notifications(state: PhoneState, args: dict[str, Any]) -> Feedback:
    where, params = ("read = 0 AND app = ?", [args["app"]]) if args.get("app") else ("read = 0", [])
    rows = state.query(f"SELECT notification_id, app, title, text FROM notifications WHERE {where} ORDER BY "
                       "app, notification_id", params)
    by_app: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_app.setdefault(row.pop("app"), []).append(row)
    state.execute(f"UPDATE notifications SET read = 1 WHERE {where}", params)
    return success(unread=len(rows), by_app=by_app)


@tool("dismiss_notification", DOMAIN, "Dismiss (remove) one notification.",
      text("notification_id", "the notification (summarize_notifications)"), writes=("notifications",))
def dismiss_notification(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM notifications WHERE notification_id = ?", (args["notification_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no notification {args['notification_id']!r}; summarize_notifications "
                       "shows the unread ones")
    return success(notification_id=args["notification_id"], dismissed=True)
