"""The live state of a MobilePA episode: ``S_t = ⟨D_t, O_t⟩`` in an in-memory SQLite database.

``D_t`` is the phone's app state, one table per kind of record (:data:`TABLES`); ``O_t`` is the
append-only audit log of every executed action (``audit_log``: SQLite triggers refuse an
``UPDATE`` or ``DELETE`` on it). A task's initial state ``S_0`` is a :class:`StateTemplate`,
built once from rows; each episode gets its own :class:`PhoneState`: a connection holding ``S_0``
(a copy made with SQLite's backup API) on which the episode runs as one transaction, rolled back
when it ends (:meth:`PhoneState.close`), so episodes never share a live connection or see each
other's writes, and a finished episode's connection serves the next one as it is.

:meth:`PhoneState.delta` is ``D_t − D_0`` as a row diff by primary key: the rows added,
removed and changed in each table, in a canonical, JSON-safe form the state-change verifier
compares with a task's annotated delta (bucket 2). The audit log is not part of the delta.

Example::

    template = StateTemplate({"settings": [{"key": "wifi", "value": "off"}]})
    state = template.restore()
    state.execute("UPDATE settings SET value = ? WHERE key = ?", ("on", "wifi"))
    state.delta()   # {"settings": {"changed": [{"key": "wifi", "before": {...}, "after": {...}}]}}
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..errors import ConfigError


@dataclass(frozen=True)
class Table:
    """One table of the phone state: its columns (SQLite type affinity) and primary key."""

    name: str
    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    def ddl(self) -> str:
        cols = ", ".join(f"{name} {kind}" for name, kind in self.columns)
        return f"CREATE TABLE {self.name} ({cols}, PRIMARY KEY ({', '.join(self.key)}))"


#: The phone's state, declared once. Values that are not plain text or numbers are JSON text.
TABLES: dict[str, Table] = {t.name: t for t in (
    Table("settings", (("key", "TEXT"), ("value", "TEXT")), ("key",)),
    Table("apps", (("app", "TEXT"), ("installed", "INTEGER"), ("running", "INTEGER")), ("app",)),
    Table("permissions", (("app", "TEXT"), ("permission", "TEXT"), ("granted", "INTEGER")), ("app", "permission")),
    Table("alarms", (("alarm_id", "TEXT"), ("time", "TEXT"), ("label", "TEXT"), ("repeat", "TEXT"),
                     ("enabled", "INTEGER")), ("alarm_id",)),
    Table("events", (("event_id", "TEXT"), ("title", "TEXT"), ("start", "TEXT"), ("end", "TEXT"),
                     ("location", "TEXT")), ("event_id",)),
    Table("contacts", (("contact_id", "TEXT"), ("name", "TEXT"), ("phone", "TEXT"), ("relation", "TEXT")),
          ("contact_id",)),
    Table("messages", (("message_id", "TEXT"), ("contact_id", "TEXT"), ("direction", "TEXT"), ("text", "TEXT"),
                       ("sent_at", "TEXT")), ("message_id",)),
    Table("calls", (("call_id", "TEXT"), ("contact_id", "TEXT"), ("direction", "TEXT"), ("at", "TEXT")),
          ("call_id",)),
    Table("blocked_numbers", (("phone", "TEXT"), ("blocked_at", "TEXT")), ("phone",)),
    Table("voicemails", (("voicemail_id", "TEXT"), ("phone", "TEXT"), ("at", "TEXT"), ("duration_s", "INTEGER"),
                         ("transcript", "TEXT"), ("heard", "INTEGER")), ("voicemail_id",)),
    # audio & entertainment: kind is song | podcast | video | radio; collection is the album, the podcast
    # show, the video channel or the radio station's frequency ('FM 97.4')
    Table("media", (("media_id", "TEXT"), ("kind", "TEXT"), ("title", "TEXT"), ("artist", "TEXT"),
                    ("collection", "TEXT"), ("duration_s", "INTEGER"), ("liked", "INTEGER"), ("downloaded", "INTEGER")),
          ("media_id",)),
    Table("playlists", (("playlist_id", "TEXT"), ("name", "TEXT")), ("playlist_id",)),
    Table("playlist_items", (("playlist_id", "TEXT"), ("media_id", "TEXT"), ("position", "INTEGER")),
          ("playlist_id", "media_id")),
    Table("media_queue", (("position", "INTEGER"), ("media_id", "TEXT")), ("position",)),
    Table("podcast_subscriptions", (("show", "TEXT"), ("subscribed_at", "TEXT")), ("show",)),
    Table("app_volumes", (("app", "TEXT"), ("level", "INTEGER")), ("app",)),
    # apps & storage: what the store offers, and each installed app's version and footprint (MB)
    Table("app_store", (("app", "TEXT"), ("latest_version", "TEXT"), ("size_mb", "INTEGER"), ("category", "TEXT")),
          ("app",)),
    Table("app_storage", (("app", "TEXT"), ("version", "TEXT"), ("app_mb", "INTEGER"), ("data_mb", "INTEGER"),
                          ("cache_mb", "INTEGER")), ("app",)),
    Table("files", (("file_id", "TEXT"), ("folder", "TEXT"), ("name", "TEXT"), ("size_mb", "INTEGER"),
                    ("trashed", "INTEGER")), ("file_id",)),
    Table("downloads", (("download_id", "TEXT"), ("name", "TEXT"), ("size_mb", "INTEGER"), ("progress", "INTEGER"),
                        ("status", "TEXT")), ("download_id",)),
    # system settings: networks and devices the phone knows
    Table("wifi_networks", (("ssid", "TEXT"), ("secured", "INTEGER"), ("saved", "INTEGER"), ("signal", "INTEGER"),
                            ("connected", "INTEGER")), ("ssid",)),
    Table("bluetooth_devices", (("device_id", "TEXT"), ("name", "TEXT"), ("kind", "TEXT"), ("paired", "INTEGER"),
                                ("connected", "INTEGER")), ("device_id",)),
    Table("vpn_profiles", (("profile_id", "TEXT"), ("name", "TEXT"), ("server", "TEXT"), ("connected", "INTEGER")),
          ("profile_id",)),
    # time management
    Table("timers", (("timer_id", "TEXT"), ("label", "TEXT"), ("duration_s", "INTEGER"), ("state", "TEXT")),
          ("timer_id",)),
    Table("reminders", (("reminder_id", "TEXT"), ("text", "TEXT"), ("due", "TEXT"), ("done", "INTEGER")),
          ("reminder_id",)),
    Table("world_clocks", (("city", "TEXT"), ("time_zone", "TEXT")), ("city",)),
    # AI assistant: GUI sub-agent handoffs, long-term memory, notes, an offline phrase table, notifications
    Table("handoffs", (("handoff_id", "TEXT"), ("app", "TEXT"), ("instruction", "TEXT"), ("status", "TEXT"),
                       ("created_at", "TEXT")), ("handoff_id",)),
    Table("memories", (("memory_id", "TEXT"), ("content", "TEXT"), ("category", "TEXT"), ("created_at", "TEXT")),
          ("memory_id",)),
    Table("notes", (("note_id", "TEXT"), ("title", "TEXT"), ("body", "TEXT"), ("folder", "TEXT"),
                    ("pinned", "INTEGER")), ("note_id",)),
    Table("translations", (("source", "TEXT"), ("target_language", "TEXT"), ("translation", "TEXT")),
          ("source", "target_language")),
    Table("notifications", (("notification_id", "TEXT"), ("app", "TEXT"), ("title", "TEXT"), ("text", "TEXT"),
                            ("read", "INTEGER")), ("notification_id",)),
    # runtime obstacles planted in S0: the next `remaining` calls of `tool` fail with `error_type`
    Table("faults", (("tool", "TEXT"), ("error_type", "TEXT"), ("remaining", "INTEGER"), ("message", "TEXT")),
          ("tool",)),
    Table("counters", (("name", "TEXT"), ("value", "INTEGER")), ("name",)),
)}
POOL_SIZE = 8  # finished episodes' connections a template keeps for reuse
#: The table and column of the ids ``PhoneState.next_id`` issues, by prefix (so a new id never collides).
ID_COLUMNS: dict[str, tuple[str, str]] = {
    "alarm": ("alarms", "alarm_id"), "event": ("events", "event_id"), "message": ("messages", "message_id"),
    "call": ("calls", "call_id"), "contact": ("contacts", "contact_id"), "file": ("files", "file_id"),
    "playlist": ("playlists", "playlist_id"), "timer": ("timers", "timer_id"),
    "reminder": ("reminders", "reminder_id"), "handoff": ("handoffs", "handoff_id"),
    "memory": ("memories", "memory_id"), "note": ("notes", "note_id")}
#: Tables of the phone that tasks are judged on; ``faults`` and ``counters`` are the sandbox's own.
STATE_TABLES: tuple[str, ...] = tuple(name for name in TABLES if name not in ("faults", "counters"))

_AUDIT_DDL = (
    "CREATE TABLE audit_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER, tool TEXT, arguments TEXT, "
    "status TEXT, error_type TEXT)",
    "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is "
    "append-only'); END",
    "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is "
    "append-only'); END",
)


def _connect() -> sqlite3.Connection:
    # isolation_level=None: statements autocommit unless the caller opens a savepoint (tool calls do)
    return sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)


def _dirty_triggers(table: str) -> list[str]:
    """Triggers that note which tables a statement changed, so :meth:`PhoneState.delta` diffs only those
    (whatever tool code wrote them: a table a tool did not declare still shows up)."""
    return [f"CREATE TRIGGER {table}_{event.lower()}_dirty AFTER {event} ON {table} BEGIN "
            f"INSERT INTO dirty (name) SELECT '{table}' WHERE NOT EXISTS (SELECT 1 FROM dirty WHERE name = "
            f"'{table}'); END" for event in ("INSERT", "UPDATE", "DELETE")]  # (an outer upsert overrides OR IGNORE)


Snapshot = dict[str, dict[tuple, dict[str, Any]]]
_SCHEMA: sqlite3.Connection | None = None
_SCHEMA_LOCK = threading.Lock()


def _empty_schema() -> sqlite3.Connection:
    """An empty database with every declared table, the audit log and the change-tracking triggers,
    built once per process; templates start as a backup copy of it (DDL costs ~7 ms, a copy ~0.5 ms)."""
    global _SCHEMA
    with _SCHEMA_LOCK:
        if _SCHEMA is None:
            conn = _connect()
            for declared in TABLES.values():
                conn.execute(declared.ddl())
            for statement in _AUDIT_DDL:
                conn.execute(statement)
            conn.execute("CREATE TABLE dirty (name TEXT PRIMARY KEY)")
            for name in STATE_TABLES:
                for statement in _dirty_triggers(name):
                    conn.execute(statement)
            _SCHEMA = conn
        return _SCHEMA


class StateTemplate:
    """A task's initial state ``S_0``, built once; :meth:`restore` gives each episode its own copy.

    ``rows`` maps table names of :data:`TABLES` to lists of row dicts; a missing column is NULL,
    an unknown table or column raises :class:`~mobility_env.errors.ConfigError`.
    """

    def __init__(self, rows: Mapping[str, Iterable[Mapping[str, Any]]] | None = None):
        self._conn = _connect()
        _empty_schema().backup(self._conn)  # the declared schema, built once per process
        for name, items in (rows or {}).items():
            table = TABLES.get(name)
            if table is None:
                raise ConfigError(f"unknown state table {name!r}; tables: {', '.join(TABLES)}")
            for row in items:
                unknown = set(row) - set(table.column_names)
                if unknown:
                    raise ConfigError(f"table {name!r} has no column(s) {sorted(unknown)}")
                cols = list(row)
                self._conn.execute(f"INSERT INTO {name} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                                   [_cell(row[c]) for c in cols])
        self._conn.execute("DELETE FROM dirty")  # S_0 itself is clean
        self.snapshot: Snapshot = snapshot(self._conn)
        self._pool: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()

    def restore(self) -> "PhoneState":
        """A fresh episode state. An episode runs inside one transaction on a connection holding ``S_0``;
        :meth:`PhoneState.close` rolls it back and hands the connection back, so the next episode starts
        from ``S_0`` again without copying the data or re-reading the schema. The first episodes (and
        any beyond :data:`POOL_SIZE` open at once) get a new connection, a backup copy of the template."""
        with self._pool_lock:
            conn = self._pool.pop() if self._pool else None
        if conn is None:
            conn = _connect()
            self._conn.backup(conn)
        conn.execute("BEGIN")
        return PhoneState(conn, self)

    def _give_back(self, conn: sqlite3.Connection) -> None:
        try:
            conn.execute("ROLLBACK")  # back to S_0: the episode's writes and its audit log are undone
        except sqlite3.Error:  # no open transaction: the connection cannot be trusted to hold S_0
            conn.close()
            return
        with self._pool_lock:
            if len(self._pool) < POOL_SIZE:
                self._pool.append(conn)
                return
        conn.close()

    def rows(self, table: str) -> list[dict[str, Any]]:
        return list(self.snapshot[table].values())


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float)):
        return int(value) if isinstance(value, bool) else value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def snapshot(conn: sqlite3.Connection, tables: Sequence[str] = STATE_TABLES) -> Snapshot:
    """Every row of ``tables``, keyed by primary key (a tuple), as column dicts."""
    out: Snapshot = {}
    for name in tables:
        table = TABLES[name]
        cursor = conn.execute(f"SELECT {', '.join(table.column_names)} FROM {name}")
        cols = table.column_names
        index = [cols.index(k) for k in table.key]
        out[name] = {tuple(row[i] for i in index): dict(zip(cols, row)) for row in cursor}
    return out


def diff(before: Snapshot, after: Snapshot) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``after − before`` per table: ``added``/``removed`` rows and ``changed`` {key, before, after},
    each list sorted by key; tables without a change are left out."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in after:
        old, new = before.get(name, {}), after[name]
        added = [new[k] for k in sorted(new.keys() - old.keys(), key=repr)]
        removed = [old[k] for k in sorted(old.keys() - new.keys(), key=repr)]
        changed = [{"key": dict(zip(TABLES[name].key, k)), "before": old[k], "after": new[k]}
                   for k in sorted(new.keys() & old.keys(), key=repr) if old[k] != new[k]]
        entry = {kind: rows for kind, rows in (("added", added), ("removed", removed), ("changed", changed)) if rows}
        if entry:
            out[name] = entry
    return out


class PhoneState:
    """One episode's ``⟨D_t, O_t⟩`` (see the module docstring). Tool code reads and writes it through
    :meth:`query` and :meth:`execute`; the audit log only through :meth:`log`."""

    def __init__(self, conn: sqlite3.Connection, template: StateTemplate):
        self.conn = conn
        self.template = template

    def query(self, sql: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, parameters)
        names = [d[0] for d in cursor.description or ()]
        return [dict(zip(names, row)) for row in cursor]

    def one(self, sql: str, parameters: Sequence[Any] = ()) -> dict[str, Any] | None:
        rows = self.query(sql, parameters)
        return rows[0] if rows else None

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run a write; returns the number of rows it changed."""
        return self.conn.execute(sql, parameters).rowcount

    def setting(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return default if row is None else row[0]

    def next_id(self, prefix: str) -> str:
        """A deterministic new id (``alarm-3``): a per-prefix counter kept in the state itself, moved past
        any id an ``S_0`` already holds (a task need not seed the counter)."""
        owner = ID_COLUMNS.get(prefix)
        while True:
            self.conn.execute("INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET "
                              "value = value + 1", (prefix,))
            value = self.conn.execute("SELECT value FROM counters WHERE name = ?", (prefix,)).fetchone()[0]
            candidate = f"{prefix}-{value}"
            if owner is None or self.conn.execute(f"SELECT 1 FROM {owner[0]} WHERE {owner[1]} = ?",
                                                  (candidate,)).fetchone() is None:
                return candidate

    def log(self, step: int, tool: str, arguments: Any, status: str, error_type: str | None) -> None:
        self.conn.execute("INSERT INTO audit_log (step, tool, arguments, status, error_type) VALUES (?, ?, ?, ?, ?)",
                          (step, tool, json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str),
                           status, error_type))

    def audit(self) -> list[dict[str, Any]]:
        """``O_t``: every logged action, in order."""
        return self.query("SELECT seq, step, tool, arguments, status, error_type FROM audit_log ORDER BY seq")

    def delta(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """``D_t − D_0`` (see :func:`diff`), reading only the tables some statement changed."""
        changed = [row[0] for row in self.conn.execute("SELECT name FROM dirty ORDER BY name")]
        tables = [name for name in STATE_TABLES if name in changed]
        before = {name: self.template.snapshot[name] for name in tables}
        return diff(before, snapshot(self.conn, tables))

    def close(self) -> None:
        """End the episode: its transaction is rolled back and the connection goes back to the template for the
        next :meth:`~StateTemplate.restore`; this state can no longer be used (read the delta and audit first)."""
        conn, self.conn = self.conn, None  # type: ignore[assignment]
        if conn is not None:
            self.template._give_back(conn)
