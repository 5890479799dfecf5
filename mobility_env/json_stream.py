"""A streaming reader of large JSON objects nested a fixed number of levels deep, one entry at a time.

The official MobilityBench replay cache keeps each tool's answers in one JSON object per file, nested by
the lookup's arguments (``{destination: {origin: {strategy: {waypoints: value}}}}``), up to 1.4 GB a
file. :func:`read_official_entries` walks such a file in chunks and yields ``(keys, value, byte offset)``
for every innermost value, decoding only that value (``json.JSONDecoder.raw_decode``); the window holds
at most two chunks plus the entry being read. What cannot be read is reported through a callback
(``on_problem(kind, keys, offset, detail)``) and skipped, resuming at the next key; a file that cannot
be read as a whole (empty, not an object, cut short) raises :class:`OfficialSandboxFileError` naming the
byte offset. :mod:`mobility_env.mobilitybench.official_sandbox` turns the entries into sandbox rows.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from dataclasses import dataclass
from json.decoder import JSONDecoder
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

from .errors import DataFileError

__all__ = ["OfficialSandboxFileError", "read_official_entries", "DEFAULT_CHUNK_BYTES", "DEFAULT_MAX_ENTRY_BYTES",
           "MAX_NUMBER_CHARS"]

DEFAULT_CHUNK_BYTES = 2 << 20
DEFAULT_MAX_ENTRY_BYTES = 64 << 20

_SHOWN_KEY_CHARS = 120


class OfficialSandboxFileError(DataFileError):
    """An official sandbox file that cannot be read as a whole (empty, not an object, cut short).

    ``offset`` is the byte offset in the file where reading failed (the start of the entry that
    never ends, for a file cut short).
    """

    def __init__(self, path: object, message: str, *, offset: int):
        super().__init__(path, f"byte {offset:,}: {message}")
        self.offset = offset


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(_shown(k, 30) for k in list(value)[:5])
        return f"an object with keys {keys or '(none)'}"
    if isinstance(value, str):
        return f"text {_shown(value, 60)}"
    return type(value).__name__ if value is not None else "null"


def _shown(text: str, limit: int = _SHOWN_KEY_CHARS) -> str:
    """``text`` for a report: repr, cut to ``limit`` characters with its full length."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


# --------------------------------------------------------------------------- the streaming reader
_WS = re.compile(r"[ \t\n\r]*")
_STRUCTURAL = re.compile(r'["{}\[\]]')
_STRING_STOP = re.compile(r'["\\]')
_SCALAR_END = re.compile(r"[,}\]\s]")
_RESYNC = re.compile(r'["{}\[]')
_NUMBER_TAIL = re.compile(r"[0-9eE.+-]*")


class _Window:
    """The decoded text of a file around the reading position.

    Positions are *serials*: character counts from the start of the file, stable while text
    before them is dropped. ``text[0]`` is serial ``dropped``, at byte ``base``. Text before
    ``min(pos, pin)`` is dropped when a chunk is appended. The byte offset of the member being
    read is remembered apart (:meth:`remember_offset`), so its pin can be let go early and
    reports still name where it starts.
    """

    def __init__(self, handle: BinaryIO, chunk_bytes: int):
        self.handle = handle
        self.chunk_bytes = chunk_bytes
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self.hasher = hashlib.blake2b(digest_size=16)
        self.text = ""
        self.pos = 0                  # index into text
        self.pin: int | None = None   # a serial whose text must stay (the entry being read)
        self._remembered = (-1, 0)    # (serial, byte offset) of the member being read
        self.dropped = 0              # serial of text[0]
        self.base = 0                 # byte offset of text[0]
        self.bytes_read = 0
        self.eof = False
        self._mark = (0, 0)           # (serial, byte offset) of the last offset computed

    def serial(self) -> int:
        return self.dropped + self.pos

    def more(self) -> bool:
        """Append one chunk (at least as much as is held: a long entry is read in doubling steps)."""
        if self.eof:
            return False
        keep = self.pos if self.pin is None else min(self.pos, self.pin - self.dropped)
        if keep > 0:
            self.base = self.offset_of(self.dropped + keep)
            self.text, self.pos = self.text[keep:], self.pos - keep
            self.dropped += keep
        raw = self.handle.read(max(self.chunk_bytes, len(self.text)))
        if not raw:
            self.eof = True
            tail = self.decoder.decode(b"", final=True)
            self.text += tail
            return bool(tail)
        self.bytes_read += len(raw)
        self.hasher.update(raw)
        self.text += self.decoder.decode(raw)
        return True

    def remember_offset(self, serial: int) -> None:
        """Keep the byte offset of ``serial`` (still in the window) answerable by :meth:`offset_of`
        after its text is dropped, in place of the serial remembered before."""
        if serial != self._remembered[0]:
            self._remembered = (serial, self.offset_of(serial))

    def offset_of(self, serial: int) -> int:
        """The byte offset of a serial still in the window, or of the remembered one (each character
        is measured once while offsets are asked in order)."""
        if serial == self._remembered[0]:
            return self._remembered[1]
        assert serial >= self.dropped, "the offset of dropped text was asked for"
        mark_serial, mark_bytes = self._mark
        if not self.dropped <= mark_serial <= serial:
            mark_serial, mark_bytes = self.dropped, self.base
        piece = self.text[mark_serial - self.dropped:serial - self.dropped]
        offset = mark_bytes + len(piece.encode("utf-8", "surrogateescape"))
        self._mark = (serial, offset)
        return offset

    def drain(self) -> None:
        """Read the rest of the file (for its checksum) without keeping it."""
        self.text, self.pos, self.pin = "", 0, None
        while True:
            raw = self.handle.read(self.chunk_bytes)
            if not raw:
                self.eof = True
                return
            self.bytes_read += len(raw)
            self.hasher.update(raw)


class _ValueEnd:
    """Finds where a JSON value ends without decoding it (strings and brackets only), resumably."""

    __slots__ = ("serial", "depth", "in_string", "started")

    def __init__(self, start: int):
        self.serial = start
        self.depth = 0
        self.in_string = False
        self.started = False

    def advance(self, window: _Window) -> int | None:
        """The serial just past the value, or None when the window ends first."""
        text, dropped = window.text, window.dropped
        n = len(text)
        i = self.serial - dropped
        if not self.started:
            if i >= n:
                return dropped + n if window.eof else None
            c = text[i]
            if c == '"':
                self.in_string = True
            elif c in "{[":
                self.depth = 1
            else:  # a scalar, or text that is no value at all: it ends where a member would
                m = _SCALAR_END.search(text, i)
                if m is not None:
                    return dropped + max(m.start(), i + 1)
                return dropped + n if window.eof else None
            self.started = True
            i += 1
        while True:
            if self.in_string:
                m = _STRING_STOP.search(text, i)
                if m is None:
                    self.serial = dropped + n
                    return None
                if m.group() == "\\":
                    if m.end() >= n:
                        self.serial = dropped + m.start()
                        return None
                    i = m.end() + 1
                    continue
                self.in_string = False
                i = m.end()
                if self.depth == 0:
                    return dropped + i
            else:
                m = _STRUCTURAL.search(text, i)
                if m is None:
                    self.serial = dropped + n
                    return None
                c, i = m.group(), m.end()
                if c == '"':
                    self.in_string = True
                elif c in "{[":
                    self.depth += 1
                else:
                    self.depth -= 1
                    if self.depth == 0:
                        return dropped + i


@dataclass(frozen=True)
class _Entry:
    keys: tuple[str, ...]
    value: Any
    serial: int  # where its innermost key starts
    raw: str     # the value's text in the file
    plain_numbers: bool  # every number in ``raw`` is written as ``json.dumps`` writes it


class _Reader:
    """Streams the entries ``(keys, value)`` of one official file: ``depth`` levels of objects,
    the innermost values decoded one at a time (see the module docstring)."""

    def __init__(self, path: Path, handle: BinaryIO, depth: int, *, chunk_bytes: int, max_entry_bytes: int,
                 report: Callable[[str, tuple[str, ...], int, str], None]):
        self.path = path
        self.window = _Window(handle, chunk_bytes)
        self.depth = depth
        self.max_entry_chars = max_entry_bytes  # a character is at least one byte
        self.report = report  # (kind, keys, serial, detail)
        # NaN/Infinity and numbers that overflow a float are not JSON data: refused while decoding
        self.decoder = JSONDecoder(parse_float=self._float, parse_int=self._int, parse_constant=_no_constant)
        self.plain_numbers = True  # of the value decoded last

    # ------------------------------------------------------------------ structure
    def entries(self) -> Iterator[_Entry]:
        w = self.window
        c = self._next_char()
        if c == "\ufeff":  # a byte-order mark some editors write
            w.pos += 1
            c = self._next_char()
        if c == "":
            raise OfficialSandboxFileError(self.path, "empty file: expected one JSON object (an official sandbox "
                                                      "file); remove the file or download it again", offset=0)
        if c != "{":
            raise OfficialSandboxFileError(
                self.path, f"the top level is not a JSON object (it starts with {c!r}); an official sandbox file is "
                           f"one object keyed by the tool's arguments", offset=w.offset_of(w.serial()))
        w.pos += 1
        yield from self._members(())
        if self._next_char() != "":
            self.report("garbage", (), w.serial(), "text after the top-level object (ignored)")
            w.drain()

    def _members(self, path: tuple[str, ...]) -> Iterator[_Entry]:
        """The members of the object whose ``{`` was just read, up to and including its ``}``."""
        w = self.window
        leaf = len(path) == self.depth - 1
        expect_key = True
        found: tuple[str, int] | None = None  # (key, serial) of a member _resync read up to its ':'
        while True:
            key: Any = None
            if found is None:
                c = self._next_char()
                if c == "":
                    raise self._cut(path, None)
                if c == "}":
                    w.pos += 1
                    return
                if not expect_key:
                    if c == ",":
                        w.pos += 1
                        expect_key = True
                        continue
                    if c == '"':
                        self.report("garbage", path, w.serial(), "missing ',' before this member (read anyway)")
                    else:
                        found = self._resync(path, "expected ',' or '}' after a member")
                        continue
                if c != '"':
                    found = self._resync(path, "expected a key (a JSON string)")
                    continue
                key_serial = w.serial()
            else:
                (key, key_serial), found = found, None
                if not expect_key:
                    self.report("garbage", path, key_serial, "missing ',' before this member (read anyway)")
            if key_serial >= w.dropped:  # a key _resync found may be gone (a long whitespace run after it)
                w.pin = key_serial
            try:
                if key is None:
                    key = self._read(path, key_serial, is_key=True)
                    if key is _SKIPPED:
                        found = self._resync(path, None)
                        continue
                keys = path + (key,)
                if self._next_char() != ":":
                    if w.pos >= len(w.text):
                        raise self._cut(path, key_serial)
                    self.report("garbage", keys, key_serial, "a key without ':' (its member is skipped)")
                    found = self._resync(path, None)
                    continue
                w.pos += 1
                c = self._next_char()
                if c == "":
                    raise self._cut(path, key_serial)
                if not leaf and c == "{":
                    w.pin = None
                    w.pos += 1
                    yield from self._members(keys)
                else:
                    start = w.serial()
                    value = self._read(keys, key_serial, is_key=False)
                    if value is not _SKIPPED:
                        if leaf:
                            raw = w.text[start - w.dropped:w.pos]  # still held: reading keeps the value's start
                            yield _Entry(keys, value, key_serial, raw, self.plain_numbers)
                        else:
                            self.report("not_an_object", keys, key_serial,
                                        f"expected an object keyed by {len(path) + 1}th-level keys, got "
                                        f"{_kind(value)}")
            finally:
                w.pin = None
            expect_key = False

    def _next_char(self) -> str:
        """Skip whitespace; the next character, or '' at the end of the file.

        Past a chunk of whitespace the pinned text is let go (its offset stays remembered): a run
        after a key, of any length, is never held with it.
        """
        w = self.window
        skipped = 0
        while True:
            start = w.pos
            w.pos = _WS.match(w.text, w.pos).end()  # type: ignore[union-attr]  # matches the empty string
            if w.pos < len(w.text):
                return w.text[w.pos]
            skipped += w.pos - start
            if skipped > w.chunk_bytes:
                w.pin = None
            if not w.more():
                return ""

    def _resync(self, path: tuple[str, ...], why: str | None) -> tuple[str, int] | None:
        """Skip what is not a member up to the next key (a string followed by ':') or the object's ``}``.

        Returns that key and its serial, read up to its ':' (not rewound to: the whitespace before
        the ':' may be gone), or None at the ``}``. Called where the text is not a member; every
        turn consumes text or stops, so it ends.
        """
        w = self.window
        if why is not None:
            self.report("garbage", path, w.serial(), f"{why}, found {w.text[w.pos:w.pos + 20]!r} (skipped to the "
                                                     f"next key)")
        while True:
            c = self._next_char()
            if c == "":
                raise self._cut(path, None)
            if c == "}":
                return None
            if c == '"':
                start = w.serial()
                w.pin = start
                text = self._read(path, start, is_key=True, report=False)
                is_key = text is not _SKIPPED and self._next_char() == ":"
                w.pin = None
                if is_key:
                    return text, start
            elif c in "{[":
                self._read(path, w.serial(), is_key=False, report=False)
            else:
                m = _RESYNC.search(w.text, w.pos + 1)
                w.pos = m.start() if m is not None else len(w.text)

    # ------------------------------------------------------------------ values
    def _read(self, keys: tuple[str, ...], key_serial: int, *, is_key: bool, report: bool = True) -> Any:
        """Decode the value (or key string) at the reading position; :data:`_SKIPPED` when it is
        not JSON (reported unless ``report`` is false) and skipped to its end.

        ``keys``: the member's key path (for a key: its parent's), named in reports and errors;
        ``key_serial``: where the member starts, its offset remembered for them.
        """
        w = self.window
        w.remember_offset(key_serial)
        start = w.serial()
        end_finder: _ValueEnd | None = None
        while True:
            i = start - w.dropped
            self.plain_numbers = True
            try:
                value, end = self.decoder.raw_decode(w.text, i)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
                error: Exception = exc
            else:
                end_serial = w.dropped + end
                if not _may_go_on(value, w.text, end) or w.eof or not w.more():
                    w.pos = end_serial - w.dropped
                    return value
                continue  # decode it again with more text
            # not JSON, or cut by the window's end: find where the value ends (resumably, once per character)
            end_finder = end_finder or _ValueEnd(start)
            found = end_finder.advance(w)
            if found is None:
                if w.eof:
                    raise self._cut(keys, key_serial)
                if len(w.text) - i > self.max_entry_chars:
                    return self._skip_large(keys, key_serial, end_finder, report)
                w.more()
                continue
            w.pos = found - w.dropped
            if report:
                what = "key" if is_key else "value"
                if isinstance(error, RecursionError):
                    detail = f"the {what} is nested too deeply to decode"
                else:
                    detail = f"the {what} is not JSON ({error})"
                self.report("bad_json", keys, key_serial, detail)
            return _SKIPPED

    def _float(self, text: str) -> float:
        value = float(text)
        if value in _INFINITIES:
            raise ValueError(f"the number {text[:40]}{'…' if len(text) > 40 else ''} is out of a float's range")
        if self.plain_numbers and repr(value) != text:
            self.plain_numbers = False  # e.g. 1.50, 1e5: json.dumps writes it otherwise
        return value

    def _int(self, text: str) -> int:
        if len(text) > MAX_NUMBER_CHARS:
            raise ValueError(f"an integer of {len(text):,} digits (over {MAX_NUMBER_CHARS:,})")
        if text == "-0":
            self.plain_numbers = False
        return int(text)

    def _skip_large(self, keys: tuple[str, ...], key_serial: int, end_finder: _ValueEnd, report: bool) -> Any:
        """Skip an entry over ``max_entry_bytes`` without holding it."""
        w = self.window
        if report:
            self.report("too_large", keys, key_serial, f"over {self.max_entry_chars:,} bytes (max_entry_bytes); "
                                                       f"skipped")
        w.pin = None
        while True:
            found = end_finder.advance(w)
            if found is not None:
                w.pos = found - w.dropped
                return _SKIPPED
            w.pos = end_finder.serial - w.dropped  # the scanned text may go
            if not w.more():
                raise self._cut(keys[:-1] if keys else keys, key_serial)

    def _cut(self, keys: tuple[str, ...], serial: int | None) -> OfficialSandboxFileError:
        w = self.window
        end = f"the file ends at byte {w.bytes_read:,}"
        if serial is None:
            where = f"the object {_path_text(keys)}" if keys else "the top-level object"
            return OfficialSandboxFileError(
                self.path, f"{end} inside {where}: it is cut short (or a bracket or string never closes); "
                           f"nothing after this point can be read", offset=w.bytes_read)
        return OfficialSandboxFileError(
            self.path, f"the member {_path_text(keys) if keys else ''} starting here never ends: {end} inside it "
                       f"(cut short, or a string or bracket never closes); nothing from here on can be read",
            offset=w.offset_of(serial))


_SKIPPED = object()
_INFINITIES = (float("inf"), float("-inf"))
#: Numbers longer than this are refused (``bad_json``): Python's own limit for integers.
MAX_NUMBER_CHARS = 4300


def _may_go_on(value: Any, text: str, end: int) -> bool:
    """Could text past the window's end change ``value``, decoded from ``text`` up to ``end``?

    A number can go on; one cut after ``1.`` or ``1e`` decodes as ``1`` with text left over, so
    what follows it in the window must be more than number characters.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _NUMBER_TAIL.match(text, end).end() == len(text)  # type: ignore[union-attr]  # matches ''
    return end == len(text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _printable(text: str) -> str:
    """``text`` with what UTF-8 cannot hold (lone surrogates, undecodable bytes) as ``\\udcXX`` escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _key_shown(key: str) -> str:
    """A key as a report lists it: itself, or its first 120 characters and its length."""
    if len(key) > _SHOWN_KEY_CHARS:
        key = f"{key[:_SHOWN_KEY_CHARS]}… ({len(key):,} characters)"
    return _printable(key)


def _path_text(keys: tuple[str, ...]) -> str:
    return "[" + "][".join(_shown(k, 60) for k in keys) + "]"


def read_official_entries(path: str | os.PathLike, depth: int, *, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
                          max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES,
                          on_problem: Callable[[str, tuple[str, ...], int, str], None] | None = None
                          ) -> Iterator[tuple[tuple[str, ...], Any, int]]:
    """Stream ``(keys, value, byte offset of the innermost key)`` from a JSON object nested
    ``depth`` levels deep (an official sandbox file), one decoded value at a time.

    ``on_problem(kind, keys, byte_offset, detail)`` hears about each skipped part (see the
    module docstring); a file that cannot be read raises :class:`OfficialSandboxFileError`.
    """
    path = Path(path)
    with open(path, "rb") as handle:
        reader = _Reader(path, handle, depth, chunk_bytes=chunk_bytes, max_entry_bytes=max_entry_bytes,
                         report=lambda kind, keys, serial, detail: on_problem and on_problem(
                             kind, keys, reader.window.offset_of(serial), detail))
        for entry in reader.entries():
            yield entry.keys, entry.value, reader.window.offset_of(entry.serial)
