"""The live state of a MobilePA episode: ``S_t = ⟨D_t, O_t⟩`` in an in-memory SQLite database.

``D_t`` is the phone's app state, one table per kind of record (:data:`TABLES`); ``O_t`` is the
append-only audit log of every executed action (``audit_log``: SQLite triggers refuse an
``UPDATE`` or ``DELETE`` on it). A task's initial state ``S_0`` is a :class:`StateTemplate`,
checked once from rows; each episode gets its own :class:`PhoneState`: a warm connection from a
per-process pool, into which ``S_0`` is inserted inside one transaction that is rolled back when
the episode ends (:meth:`PhoneState.close`), so episodes never share a live connection or see
each other's writes, and a finished episode's connection serves the next one, of any task.

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
import re
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

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

    @property
    def key_index(self) -> tuple[int, ...]:
        return tuple(self.column_names.index(k) for k in self.key)

    @property
    def select_all(self) -> str:
        return f"SELECT {', '.join(self.column_names)} FROM {self.name}"

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
    # key: what a profile's record is about ('place.home'), for task generation (agents do not see it)
    Table("memories", (("memory_id", "TEXT"), ("content", "TEXT"), ("category", "TEXT"), ("created_at", "TEXT"),
                       ("key", "TEXT"), ("updated_at", "TEXT")), ("memory_id",)),
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
    # maps & travel: coordinates are canonical 'lng,lat' text (6 decimals), times 'YYYY-MM-DD HH:MM'; options is
    # the route's canonical preference (driving strategies joined by '+', a transit strategy code, or '')
    Table("navigation", (("nav_id", "TEXT"), ("origin", "TEXT"), ("destination", "TEXT"), ("waypoints", "TEXT"),
                         ("mode", "TEXT"), ("options", "TEXT"), ("distance_m", "INTEGER"), ("duration_s", "INTEGER"),
                         ("eta", "TEXT"), ("status", "TEXT")), ("nav_id",)),
    Table("saved_places", (("label", "TEXT"), ("location", "TEXT")), ("label",)),
    Table("departure_reminders", (("departure_id", "TEXT"), ("destination", "TEXT"), ("mode", "TEXT"),
                                  ("options", "TEXT"), ("arrive_by", "TEXT"), ("depart_at", "TEXT")),
          ("departure_id",)),
    Table("ride_orders", (("order_id", "TEXT"), ("pickup", "TEXT"), ("destination", "TEXT"), ("ride_type", "TEXT"),
                          ("fare_estimate", "REAL"), ("status", "TEXT"), ("requested_at", "TEXT")), ("order_id",)),
    # skills: the skills a task offers (load_skill's catalogue) and the language their how-to is shown in;
    # delegations: handoffs to downstream sub-agents (agent = the entry tool, payload = its fields as canonical JSON)
    Table("skills", (("skill_id", "TEXT"), ("language", "TEXT")), ("skill_id",)),
    Table("delegations", (("handoff_id", "TEXT"), ("agent", "TEXT"), ("payload", "TEXT"), ("status", "TEXT"),
                          ("created_at", "TEXT")), ("handoff_id",)),
    # messaging & social (chat apps, apart from SMS): kind is direct | group; sender is 'me' or a contact_id
    Table("chats", (("chat_id", "TEXT"), ("app", "TEXT"), ("title", "TEXT"), ("kind", "TEXT"), ("muted", "INTEGER")),
          ("chat_id",)),
    Table("chat_members", (("chat_id", "TEXT"), ("contact_id", "TEXT")), ("chat_id", "contact_id")),
    Table("chat_messages", (("chat_message_id", "TEXT"), ("chat_id", "TEXT"), ("sender", "TEXT"), ("text", "TEXT"),
                            ("sent_at", "TEXT"), ("read", "INTEGER")), ("chat_message_id",)),
    Table("social_posts", (("post_id", "TEXT"), ("author", "TEXT"), ("text", "TEXT"), ("visibility", "TEXT"),
                           ("posted_at", "TEXT"), ("liked", "INTEGER")), ("post_id",)),
    # shopping & payments: money in yuan (2 decimals); a wallet's balance limits what it pays (NULL: a card);
    # an order's items are canonical JSON [{product_id, quantity, price}]
    Table("products", (("product_id", "TEXT"), ("name", "TEXT"), ("category", "TEXT"), ("price", "REAL"),
                       ("stock", "INTEGER")), ("product_id",)),
    Table("cart_items", (("product_id", "TEXT"), ("quantity", "INTEGER")), ("product_id",)),
    Table("payment_methods", (("method_id", "TEXT"), ("kind", "TEXT"), ("label", "TEXT"), ("balance", "REAL"),
                              ("is_default", "INTEGER")), ("method_id",)),
    Table("orders", (("order_id", "TEXT"), ("items", "TEXT"), ("total", "REAL"), ("method_id", "TEXT"),
                     ("status", "TEXT"), ("placed_at", "TEXT")), ("order_id",)),
    Table("refunds", (("refund_id", "TEXT"), ("order_id", "TEXT"), ("amount", "REAL"), ("reason", "TEXT"),
                      ("status", "TEXT"), ("requested_at", "TEXT")), ("refund_id",)),
    # health & fitness: daily metrics (steps, distance_m, active_kcal, sleep_min, resting_hr, weight_kg) as the
    # watch and phone recorded them; workouts (status active | finished); medication reminders and doses taken
    Table("health_metrics", (("day", "TEXT"), ("metric", "TEXT"), ("value", "REAL")), ("day", "metric")),
    Table("workouts", (("workout_id", "TEXT"), ("kind", "TEXT"), ("started_at", "TEXT"), ("ended_at", "TEXT"),
                       ("status", "TEXT")), ("workout_id",)),
    Table("medications", (("medication_id", "TEXT"), ("name", "TEXT"), ("dose", "TEXT"), ("time", "TEXT"),
                          ("active", "INTEGER")), ("medication_id",)),
    Table("medication_log", (("medication_id", "TEXT"), ("day", "TEXT"), ("taken_at", "TEXT")),
          ("medication_id", "day")),
    Table("health_records", (("record_id", "TEXT"), ("kind", "TEXT"), ("name", "TEXT"), ("detail", "TEXT"),
                             ("recorded_on", "TEXT")), ("record_id",)),
    # smart home: kind is light | plug | thermostat | lock; power 'on'/'off' ('' for a lock); level is a light's
    # brightness (%) or a thermostat's target (°C); locked only for a lock; reachable 0: the device is offline.
    # A scene's actions are canonical JSON [{device_id, power?, level?, locked?}]
    Table("home_devices", (("device_id", "TEXT"), ("name", "TEXT"), ("room", "TEXT"), ("kind", "TEXT"),
                           ("power", "TEXT"), ("level", "INTEGER"), ("locked", "INTEGER"), ("reachable", "INTEGER")),
          ("device_id",)),
    Table("home_scenes", (("scene_id", "TEXT"), ("name", "TEXT"), ("actions", "TEXT")), ("scene_id",)),
    # files & photos (the gallery; files themselves are apps & storage's ``files``): a trashed photo is in
    # Recently deleted; shares are photos or files sent to a contact (kind photo | file)
    Table("photos", (("photo_id", "TEXT"), ("taken_at", "TEXT"), ("place", "TEXT"), ("size_mb", "INTEGER"),
                     ("favorite", "INTEGER"), ("trashed", "INTEGER")), ("photo_id",)),
    Table("albums", (("album_id", "TEXT"), ("name", "TEXT")), ("album_id",)),
    Table("album_photos", (("album_id", "TEXT"), ("photo_id", "TEXT")), ("album_id", "photo_id")),
    Table("shares", (("share_id", "TEXT"), ("kind", "TEXT"), ("item_id", "TEXT"), ("contact_id", "TEXT"),
                     ("shared_at", "TEXT")), ("share_id",)),
)}
POOL_SIZE = 16  # warm connections kept for the next episodes (of any task), per process
#: The table and column of the ids ``PhoneState.next_id`` issues, by prefix (so a new id never collides).
ID_COLUMNS: dict[str, tuple[str, str]] = {
    "alarm": ("alarms", "alarm_id"), "event": ("events", "event_id"), "message": ("messages", "message_id"),
    "call": ("calls", "call_id"), "contact": ("contacts", "contact_id"), "file": ("files", "file_id"),
    "playlist": ("playlists", "playlist_id"), "timer": ("timers", "timer_id"),
    "reminder": ("reminders", "reminder_id"), "handoff": ("handoffs", "handoff_id"),
    "memory": ("memories", "memory_id"), "note": ("notes", "note_id"), "nav": ("navigation", "nav_id"),
    "departure": ("departure_reminders", "departure_id"), "ride": ("ride_orders", "order_id"),
    "chat": ("chats", "chat_id"), "chat-msg": ("chat_messages", "chat_message_id"), "post": ("social_posts", "post_id"),
    "order": ("orders", "order_id"), "refund": ("refunds", "refund_id"), "workout": ("workouts", "workout_id"),
    "medication": ("medications", "medication_id"), "album": ("albums", "album_id"), "share": ("shares", "share_id")}
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


Snapshot = dict[str, dict[tuple, dict[str, Any]]]


class TableChanges(NamedTuple):
    """One table's ``D_t − D_0`` as column tuples (see :meth:`PhoneState.table_changes`)."""

    added: tuple[tuple, ...]
    removed: tuple[tuple, ...]
    changed: tuple[tuple[tuple, tuple, tuple], ...]  # (key, row before, row after)


_WRITE_TARGET = re.compile(r"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)"
                           r"\s+(\w+)", re.IGNORECASE)
_NOT_A_WRITE = re.compile(r"\s*(?:SELECT|SAVEPOINT|RELEASE|ROLLBACK|BEGIN|COMMIT)\b", re.IGNORECASE)
_SCHEMA: sqlite3.Connection | None = None
_SCHEMA_LOCK = threading.Lock()


def _empty_schema() -> sqlite3.Connection:
    """An empty database with every declared table and the audit log, built once per process; pooled
    connections start as a backup copy of it (the DDL costs ~7 ms, a copy ~0.5 ms)."""
    global _SCHEMA
    with _SCHEMA_LOCK:
        if _SCHEMA is None:
            conn = _connect()
            for declared in TABLES.values():
                conn.execute(declared.ddl())
            for statement in _AUDIT_DDL:
                conn.execute(statement)
            _SCHEMA = conn
        return _SCHEMA


_POOL: list[sqlite3.Connection] = []
_POOL_LOCK = threading.Lock()


def _warm_connection() -> sqlite3.Connection:
    """A connection holding the empty schema, its schema already read: a finished episode's, or a new copy of
    :func:`_empty_schema` (reading the schema of ~60 tables and their triggers costs ~0.8 ms once per connection)."""
    with _POOL_LOCK:
        conn = _POOL.pop() if _POOL else None
    if conn is None:
        conn = _connect()
        _empty_schema().backup(conn)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # read the schema now, not at the first call
    return conn


def _give_back(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("ROLLBACK")  # back to the empty schema: S_0, the episode's writes and its audit log undone
    except sqlite3.Error:  # no open transaction: the connection cannot be trusted to be empty
        conn.close()
        return
    with _POOL_LOCK:
        if len(_POOL) < POOL_SIZE:
            _POOL.append(conn)
            return
    conn.close()


class StateTemplate:
    """A task's initial state ``S_0``, checked once; :meth:`restore` gives each episode its own copy.

    ``rows`` maps table names of :data:`TABLES` to lists of row dicts; a missing column is NULL,
    an unknown table or column raises :class:`~mobility_env.errors.ConfigError`.

    Every episode, whatever its task, runs on a warm connection from one per-process pool holding
    the empty schema: ``restore`` opens a transaction and inserts ``S_0`` (one ``executemany`` per
    table), and :meth:`PhoneState.close` rolls the transaction back, which empties the connection
    for the next episode. Nothing is copied and no schema is re-read per episode or per task.
    """

    def __init__(self, rows: Mapping[str, Iterable[Mapping[str, Any]]] | None = None):
        inserts: list[tuple[str, list[list[Any]]]] = []
        for name, items in (rows or {}).items():
            table = TABLES.get(name)
            if table is None:
                raise ConfigError(f"unknown state table {name!r}; tables: {', '.join(TABLES)}")
            by_columns: dict[tuple[str, ...], list[list[Any]]] = {}
            for row in items:
                unknown = set(row) - set(table.column_names)
                if unknown:
                    raise ConfigError(f"table {name!r} has no column(s) {sorted(unknown)}")
                cols = tuple(row)
                by_columns.setdefault(cols, []).append([_cell(row[c]) for c in cols])
            for cols, values in by_columns.items():
                inserts.append((f"INSERT INTO {name} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                                values))
        self._inserts = inserts
        filled = tuple(dict.fromkeys(sql.split()[2] for sql, _ in inserts))
        conn = _warm_connection()
        try:
            conn.execute("BEGIN")
            self._load(conn)  # a duplicate key or a bad value is refused here, once, not at a reset
            read = snapshot(conn, [t for t in STATE_TABLES if t in filled])
        except sqlite3.Error as exc:
            _give_back(conn)
            raise ConfigError(f"S_0 is not a valid phone state: {exc}") from exc
        _give_back(conn)
        self.snapshot: Snapshot = {name: read.get(name, {}) for name in STATE_TABLES}
        self._raw: dict[str, dict[tuple, tuple]] = {}
        self._listed: dict[str, list[tuple]] = {}

    def raw(self, table: str) -> dict[tuple, tuple]:
        """``S_0``'s rows of one table as column tuples (:func:`raw_rows`' form), built on first use."""
        rows = self._raw.get(table)
        if rows is None:
            cols = TABLES[table].column_names
            rows = self._raw[table] = {key: tuple(row[c] for c in cols) for key, row in self.snapshot[table].items()}
        return rows

    def raw_list(self, table: str) -> list[tuple]:
        """``S_0``'s rows of one table as column tuples, in :meth:`raw`'s order (the order a full read of the table
        returns them in), built on first use."""
        rows = self._listed.get(table)
        if rows is None:
            rows = self._listed[table] = list(self.raw(table).values())
        return rows

    def _load(self, conn: sqlite3.Connection) -> None:
        for sql, values in self._inserts:
            conn.executemany(sql, values)

    def restore(self) -> "PhoneState":
        """A fresh episode state: ``S_0`` inserted, in a transaction, into a warm pooled connection."""
        conn = _warm_connection()
        try:
            conn.execute("BEGIN")
            self._load(conn)
        except BaseException:
            _give_back(conn)
            raise
        return PhoneState(conn, self)


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float)):
        return int(value) if isinstance(value, bool) else value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


_READERS: dict[str, tuple[str, tuple[int, ...]]] = {}


def _reader(name: str) -> tuple[str, tuple[int, ...]]:
    """A table's ``SELECT`` of every column and its key's column indexes, built once per table."""
    reader = _READERS.get(name)
    if reader is None:
        table = TABLES[name]
        reader = _READERS[name] = (table.select_all, table.key_index)
    return reader


def raw_rows(conn: sqlite3.Connection, name: str) -> dict[tuple, tuple]:
    """Every row of one table as a tuple of its columns (declaration order), keyed by primary key (a tuple)."""
    sql, index = _reader(name)
    return _keyed(conn.execute(sql), index)


def _keyed(rows: Iterable[tuple], index: tuple[int, ...]) -> dict[tuple, tuple]:
    if len(index) == 1:  # most tables: a one-column key, read without a generator per row
        (i,) = index
        return {(row[i],): row for row in rows}
    return {tuple(row[i] for i in index): row for row in rows}


def _key(row: tuple, index: tuple[int, ...]) -> tuple:
    return tuple(row[i] for i in index)


def snapshot(conn: sqlite3.Connection, tables: Sequence[str] = STATE_TABLES) -> Snapshot:
    """Every row of ``tables``, keyed by primary key (a tuple), as column dicts."""
    out: Snapshot = {}
    for name in tables:
        cols = TABLES[name].column_names
        out[name] = {key: dict(zip(cols, row)) for key, row in raw_rows(conn, name).items()}
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
        self.dirty: set[str] = set()  # tables a write may have changed (see execute)
        self.touched: set[str] = set()  # the same, since the last take_touched() (incremental scorers)
        self.maps_data: Any = None  # the recorded set the maps & travel tools replay (None: the bundled one)

    def query(self, sql: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, parameters)
        names = [d[0] for d in cursor.description or ()]
        return [dict(zip(names, row)) for row in cursor]

    def one(self, sql: str, parameters: Sequence[Any] = ()) -> dict[str, Any] | None:
        rows = self.query(sql, parameters)
        return rows[0] if rows else None

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run a write; returns the number of rows it changed. The table it writes is noted for :meth:`delta`
        (a write whose table cannot be read from the statement marks every table)."""
        match = _WRITE_TARGET.match(sql)
        if match is not None:
            self.dirty.add(match.group(1).lower())
            self.touched.add(match.group(1).lower())
        elif not _NOT_A_WRITE.match(sql):
            self.dirty.update(STATE_TABLES)
            self.touched.update(STATE_TABLES)
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

    def delta(self, full: bool = False) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """``D_t − D_0`` (see :func:`diff`), reading only the tables some write touched (``full``: every table;
        the tests check that both agree)."""
        tables = [name for name in STATE_TABLES if full or name in self.dirty]
        before = {name: self.template.snapshot[name] for name in tables}
        return diff(before, snapshot(self.conn, tables))

    def take_touched(self) -> list[str]:
        """The state tables written since the last call (in declaration order), and forget them."""
        touched = self.touched
        if not touched:  # a read or a refused call before its tool code ran
            return []
        self.touched = set()
        return [name for name in STATE_TABLES if name in touched]

    def table_delta(self, table: str) -> dict[str, list[dict[str, Any]]]:
        """``D_t − D_0`` of one table (``{}`` when it is unchanged); rows are compared as tuples and turned into
        dicts only when they changed (:meth:`table_changes` is the same without the dicts)."""
        before = self.template.raw(table)
        now = raw_rows(self.conn, table)
        if now == before:
            return {}
        cols = TABLES[table].column_names
        changed_now = {k: dict(zip(cols, v)) for k, v in now.items() if before.get(k) != v}
        changed_before = {k: dict(zip(cols, v)) for k, v in before.items() if now.get(k) != v}
        return diff({table: changed_before}, {table: changed_now}).get(table, {})

    def table_changes(self, table: str) -> TableChanges:
        """``D_t − D_0`` of one table as raw column tuples (:func:`raw_rows`' form, nothing decoded or sorted):
        the rows added, the rows removed, and ``(key, before, after)`` of each row changed — what
        :meth:`table_delta` holds, for a scorer that keys the rows itself after every write."""
        sql, index = _reader(table)
        rows = self.conn.execute(sql).fetchall()
        base = self.template.raw_list(table)
        if rows == base:
            return TableChanges((), (), ())
        before = self.template.raw(table)
        # the usual writes, without a keyed diff: rows appended after S_0's (an INSERT), or rows changed where they
        # stand (an UPDATE keeps a row's place); anything else (a DELETE, a REPLACE, another order) is diffed by key
        if len(rows) > len(base) and rows[:len(base)] == base:
            appended = rows[len(base):]
            keys = {_key(row, index) for row in appended}
            if len(keys) == len(appended) and keys.isdisjoint(before):
                return TableChanges(tuple(appended), (), ())
        elif len(rows) == len(base):
            in_place = [(_key(row, index), old, row) for old, row in zip(base, rows) if old != row]
            if all(key == _key(old, index) for key, old, _ in in_place):
                return TableChanges((), (), tuple(in_place))
        now = _keyed(rows, index)
        added = tuple(row for key, row in now.items() if key not in before)
        removed = tuple(row for key, row in before.items() if key not in now)
        changed = tuple((key, old, row) for key, row in now.items()
                        if (old := before.get(key)) is not None and old != row)
        return TableChanges(added, removed, changed)

    def close(self) -> None:
        """End the episode: its transaction is rolled back and the connection goes back to the pool for the
        next :meth:`~StateTemplate.restore`; this state can no longer be used (read the delta and audit first)."""
        conn, self.conn = self.conn, None  # type: ignore[assignment]
        if conn is not None:
            _give_back(conn)
