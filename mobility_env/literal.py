"""Parsing of the official MobilityBench cells: Python-literal dicts and lists.

The released CSV stores tool responses as ``repr()`` of Python objects. Three defects need care:

* enum reprs such as ``<ToolStatus.SUCCESS: 0>`` are not literals; they become the member
  name (``"SUCCESS"``), which is what the reference tools compare against;
* cells longer than Excel's limit were cut at exactly 32,767 characters. Such a cell is
  repaired by keeping every *complete* element of its outermost open list (the route's
  ``paths`` or ``transits``) and dropping the cut tail, then closing the open containers;
* a cell may be arbitrarily large or deep. ``ast.literal_eval`` needs about 500 bytes of
  memory per element (a 29 MB cell took 6.5 GB), so cells are read by a small parser of our
  own (:func:`parse_literal`) that builds the values directly, with no syntax tree and no
  recursion, under :class:`CellLimits` (size in UTF-8 bytes, nesting depth).

``parse_cell`` never guesses silently: it returns a :class:`ParsedCell` that says whether the
value was repaired and how, or raises :class:`CellParseError`. A cell is repaired only when
it is *incomplete* (every character up to its end is valid and only its end is missing, see
:attr:`CellParseError.incomplete`); a cell with an error anywhere before its end is garbled,
and garbled cells are never repaired.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import Any

EXCEL_CELL_LIMIT = 32_767
#: default bound on one cell; the largest real cell (sample_dev.csv, an Excel-cut route) is 42,481 bytes
MAX_CELL_BYTES = 4 * 1024 * 1024
#: default bound on nesting; the deepest real cell is 13 levels
MAX_DEPTH = 64

_ENUM_REPR = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*): (-?\d+)>")
# A string literal (as repr writes it) or an enum repr: enum-like text inside a string is data.
_STRING_OR_ENUM = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|""" + _ENUM_REPR.pattern)
_CLOSER = {"[": "]", "{": "}", "(": ")"}


class CellParseError(ValueError):
    """A cell is not a Python literal and could not be repaired.

    ``incomplete`` is True when the text is a valid beginning of a literal that stops too
    early (a cut), False when it has an error before its end (garbled).
    """

    def __init__(self, message: str, *, incomplete: bool = False):
        super().__init__(message)
        self.incomplete = incomplete


@dataclass(frozen=True)
class CellLimits:
    """Bounds on one cell: its size in UTF-8 bytes and how deep its containers nest."""

    max_cell_bytes: int = MAX_CELL_BYTES
    max_depth: int = MAX_DEPTH

    def __post_init__(self) -> None:
        if self.max_cell_bytes < 1 or self.max_depth < 1:
            raise ValueError(f"cell limits must be positive, got {self}")


DEFAULT_LIMITS = CellLimits()


@dataclass(frozen=True)
class ParsedCell:
    value: Any
    repaired: bool = False
    detail: str = ""
    kept: int | None = None  # complete elements kept by a truncation repair


def utf8_size(text: str, limit: int) -> int | None:
    """The UTF-8 size of ``text`` if it exceeds ``limit`` bytes, else None (cheap for short text)."""
    if len(text) * 4 <= limit:
        return None
    if len(text) > limit:
        return len(text.encode("utf-8", "surrogatepass"))
    size = len(text.encode("utf-8", "surrogatepass"))
    return size if size > limit else None


def at_excel_limit(text: str) -> bool:
    """Is ``text`` exactly as long as Excel's cell limit (in code points or in UTF-16 units)?"""
    if len(text) == EXCEL_CELL_LIMIT:
        return True
    # an astral character counts twice in UTF-16 (as Excel counts), so only text of half the limit or more can be cut
    return EXCEL_CELL_LIMIT // 2 <= len(text) < EXCEL_CELL_LIMIT and \
        len(text.encode("utf-16-le", "surrogatepass")) == 2 * EXCEL_CELL_LIMIT


def replace_enum_reprs(text: str) -> str:
    """``<ToolStatus.SUCCESS: 0>`` -> ``'SUCCESS'`` (the member name, as a string literal)."""
    return _STRING_OR_ENUM.sub(lambda m: repr(m.group(2)) if m.group(2) else m.group(0), text)


def parse_cell(text: str, *, limits: CellLimits = DEFAULT_LIMITS, repair: bool = True) -> ParsedCell:
    """Parse one official cell; repair a cell cut short (``repair=True``).

    Cells that are not containers (``37分钟``, ``1.0``, ``118.1,24.4``) are returned as the
    stripped text itself. Raises CellParseError for text that looks like a container but is
    not a literal, for a cut cell that cannot be repaired (or ``repair=False``), and for a
    cell over ``limits`` (bytes or depth).
    """
    too_big = utf8_size(text, limits.max_cell_bytes)
    if too_big is not None:
        raise CellParseError(f"cell is {too_big:,} bytes, over the limit of {limits.max_cell_bytes:,} (max_cell_bytes)")
    stripped = text.strip()
    if not stripped:
        return ParsedCell(None)
    if stripped[0] not in "[{(":
        # Scalars stay text: '1.0', '37分钟' and '118.1,24.4' mean what their column says,
        # and a literal_eval would turn the last into a tuple.
        return ParsedCell(stripped)
    source = replace_enum_reprs(stripped)
    try:
        return ParsedCell(parse_literal(source, max_depth=limits.max_depth))
    except CellParseError as exc:
        if not exc.incomplete or not repair:
            raise
        first_error = exc
    repaired = repair_truncated_literal(source)
    if repaired is None:
        raise CellParseError(f"cut short and not repairable ({first_error}): the cut is not inside a list")
    fixed_text, kept, detail = repaired
    try:
        value = parse_literal(fixed_text, max_depth=limits.max_depth)
    except CellParseError as exc:
        raise CellParseError(f"truncated literal could not be repaired: {exc}") from exc
    cut_note = " (cell is at the Excel limit)" if at_excel_limit(text) else ""
    return ParsedCell(value, True, f"truncated literal{cut_note}: {detail}; kept {kept} complete element(s)", kept)


_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as UTF-8 (a lone surrogate: an undecodable byte or an
    escape such as ``\\ud800``), or None. Fast when there is none: UTF-8 encoding is a C loop; the
    regex that names the character runs only when it fails."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    bad = _SURROGATE.search(text)
    if bad is None:
        return None
    code = ord(bad.group(0))
    what = f"undecodable byte 0x{code - 0xDC00:02X}" if 0xDC80 <= code <= 0xDCFF else f"lone surrogate U+{code:04X}"
    return f"{what} at character {bad.start()} (not valid UTF-8 text)"


def json_value_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why ``value`` is not plain JSON data the build can store unchanged, or None.

    JSON data: dicts with text keys, lists, text, int, float, bool, None, nested at most
    ``max_depth`` deep. A tuple, set, bytes, complex number or non-text key would come back
    changed (or not at all) from the built Parquet file, so it is refused, not converted.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                return problem
        elif isinstance(item, (dict, list)):
            if depth > max_depth:
                return f"nested deeper than {max_depth} levels (max_depth)"
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        return f"dict key {key!r:.40} is not text"
                    problem = text_problem(key)
                    if problem is not None:
                        return f"dict key: {problem}"
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        elif item is not None and not isinstance(item, (bool, int, float)):
            return f"a {type(item).__name__} ({item!r:.40}) is not JSON data (use lists, dicts, text, numbers)"
    return None


# --------------------------------------------------------------------------- the parser
_WS = re.compile(r"[ \t\f\r\n]*")
_PLAIN_STRING = re.compile(r"""'[^'\\\r\n\x00]*'|"[^"\\\r\n\x00]*\"""")
_STRING_START = re.compile(r"""(?:[bB][rR]?|[rR][bB]?|[uU])?('''|\"\"\"|'|")""")
_INT = re.compile(r"[+-]?[ \t\f\r\n]*(?:0|[1-9][0-9]*)(?![0-9_.eEjJxXoObB])")
_FLOAT = re.compile(r"[+-]?[ \t\f\r\n]*(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?![0-9_.eEjJ])")
_OTHER_NUMBER = re.compile(r"[+-]?[ \t\f\r\n]*(?:0[xXoObB][0-9a-fA-F_]+|[0-9][0-9_]*\.?[0-9_]*(?:[eE][+-]?[0-9_]+)?"
                           r"|\.[0-9][0-9_]*(?:[eE][+-]?[0-9_]+)?)[jJ]?(?![0-9A-Za-z_.])")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAMES = {"True": True, "False": False, "None": None}
# tails that a cut can leave: a sign, part of a number, of True/False/None, of a string prefix
# or of an enum repr. Text ending in one of these is incomplete, not garbled.
_PARTIAL_TAIL = re.compile(r"[+-]?[ \t\f\r\n]*(?:[0-9][0-9_]*\.?[0-9_]*(?:[eE][+-]?[0-9_]*)?"
                           r"|\.[0-9_]*(?:[eE][+-]?[0-9_]*)?"
                           r"|0[xXoObB][0-9a-fA-F_]*)?"
                           r"|T(?:r(?:ue?)?)?|F(?:a(?:l(?:se?)?)?)?|N(?:o(?:ne?)?)?|[bBrRuU]|[bB][rR]|[rR][bB]"
                           r"|<(?:[A-Za-z_][A-Za-z0-9_]*(?:\.(?:[A-Za-z_][A-Za-z0-9_]*(?::(?: -?[0-9]*)?)?)?)?)?")
_STRING_PREFIX = re.compile(r"[bBrRuU]|[bB][rR]|[rR][bB]")
_MISSING = object()

# parser states
_START, _VALUE, _VALUE_OR_CLOSE, _AFTER, _AFTER_FIRST, _AFTER_KEY, _DONE = range(7)


class _Frame:
    __slots__ = ("kind", "items", "key", "comma")

    def __init__(self, kind: str):
        self.kind = kind          # '[' list, '(' tuple, '{' dict or set (not known yet), 'd' dict, 's' set
        self.items: Any = []
        self.key: Any = _MISSING  # a dict key waiting for its value (or the first item of '{')
        self.comma = False


def _incomplete(message: str) -> CellParseError:
    return CellParseError(f"cut short: {message}", incomplete=True)


def _invalid(text: str, pos: int, message: str) -> CellParseError:
    return CellParseError(f"{message} at character {pos} ({text[max(0, pos - 20):pos + 20]!r})")


def _read_string(text: str, pos: int) -> tuple[Any, int]:
    """One string literal (with prefix) at ``pos``: (value, end). Adjacent literals are joined later."""
    plain = None if text.startswith(("'''", '"""'), pos) else _PLAIN_STRING.match(text, pos)
    if plain is not None:
        return text[pos + 1:plain.end() - 1], plain.end()
    start = _STRING_START.match(text, pos)
    assert start is not None
    quote = start.group(1)
    i, n = start.end(), len(text)
    triple = len(quote) == 3
    while True:
        if i >= n:
            raise _incomplete("inside a string")
        c = text[i]
        if c == "\\":
            if i + 1 >= n:
                raise _incomplete("inside a string escape")
            i += 2 + (text[i + 1] == "\r" and i + 2 < n and text[i + 2] == "\n")
            continue
        if c == "\x00":
            raise _invalid(text, i, "NUL character in a string")
        if not triple and c in "\r\n":
            raise _invalid(text, i, "line break inside a one-line string")
        if text.startswith(quote, i):
            end = i + len(quote)
            break
        i += 1
    try:  # escapes, prefixes and triple quotes: Python decides, on this one token only
        with warnings.catch_warnings():  # '\d' is kept as backslash-d, as Python does; no warning per cell
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
            return ast.literal_eval(text[pos:end]), end
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError) as exc:
        raise _invalid(text, pos, f"bad string literal ({exc})") from exc


def _read_number(text: str, pos: int) -> tuple[Any, int] | None:
    match = _INT.match(text, pos)
    convert: Any = int
    if match is None:
        match, convert = _FLOAT.match(text, pos), float
    if match is None:
        match, convert = _OTHER_NUMBER.match(text, pos), None
    if match is None:
        return None
    token = match.group(0)
    if token[0] in "+-":  # '- 1' is -1, as in Python
        token = re.sub(r"[ \t\f\r\n]+", "", token)
    try:
        if convert is not None:
            return convert(token), match.end()
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError) as exc:  # e.g. over 4,300 digits
        raise _invalid(text, pos, f"bad number ({exc})") from exc
    if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        raise _invalid(text, pos, "bad number")
    return value, match.end()


def _close(frame: _Frame, text: str, pos: int) -> Any:
    kind = frame.kind
    try:
        if kind == "[":
            return frame.items
        if kind == "(":
            return frame.items[0] if len(frame.items) == 1 and not frame.comma else tuple(frame.items)
        if kind == "s":
            return set(frame.items)
        if kind == "{":  # '{}' or '{x}'
            return {} if frame.key is _MISSING else {frame.key}
        return frame.items  # 'd'
    except TypeError as exc:  # an unhashable set item
        raise _invalid(text, pos, f"unhashable set item ({exc})") from exc


def _ws_end(text: str, pos: int) -> int:
    """The position after the whitespace that starts at ``pos`` (``pos`` itself when there is none)."""
    match = _WS.match(text, pos)
    assert match is not None  # the pattern also matches the empty string
    return match.end()


def parse_literal(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """The value of a Python literal (dicts, lists, tuples, sets, strings, bytes, numbers,
    True/False/None), as ``ast.literal_eval`` gives it, in memory proportional to the value.

    Raises CellParseError: ``incomplete=True`` when the text ends before the literal does.
    Comments, line continuations outside strings, ``set()`` and complex sums are not read.
    """
    stack: list[_Frame] = []
    state = _START
    result: Any = _MISSING
    n = len(text)
    pos = _ws_end(text, 0)
    while pos < n:
        c = text[pos]
        token_start = pos
        if c in "[({":
            if state not in (_START, _VALUE, _VALUE_OR_CLOSE):
                raise _invalid(text, pos, f"unexpected {c!r}")
            if len(stack) >= max_depth:
                raise CellParseError(f"nested deeper than {max_depth} levels (max_depth) at character {pos}")
            stack.append(_Frame(c))
            state = _VALUE_OR_CLOSE
            pos = _ws_end(text, pos + 1)
            continue
        if c in "])}":
            frame = stack[-1] if stack else None
            opener = frame.kind if frame is not None else ""
            expected = "}" if opener in "{ds" else _CLOSER.get(opener, "")
            if frame is None or c != expected or state not in (_VALUE_OR_CLOSE, _AFTER, _AFTER_FIRST):
                raise _invalid(text, pos, f"unexpected {c!r}")
            stack.pop()
            value = _close(frame, text, pos)
            pos = _ws_end(text, pos + 1)
        elif c == ",":
            frame = stack[-1] if stack else None
            if frame is None or state not in (_AFTER, _AFTER_FIRST):
                raise _invalid(text, pos, "unexpected ','")
            if state == _AFTER_FIRST:  # '{x,' is a set
                frame.kind, frame.items = "s", [frame.key]
                frame.key = _MISSING
            frame.comma = True
            state = _VALUE_OR_CLOSE
            pos = _ws_end(text, pos + 1)
            continue
        elif c == ":":
            frame = stack[-1] if stack else None
            if frame is None or state not in (_AFTER_FIRST, _AFTER_KEY):
                raise _invalid(text, pos, "unexpected ':'")
            if state == _AFTER_FIRST:  # '{k:' is a dict
                key = frame.key
                frame.kind, frame.items, frame.key = "d", {}, key
            state = _VALUE
            pos = _ws_end(text, pos + 1)
            continue
        else:
            if state not in (_START, _VALUE, _VALUE_OR_CLOSE):
                if _STRING_PREFIX.fullmatch(text, pos):  # 'a' b… may go on as 'a' b'c': a cut
                    raise _incomplete("inside a string prefix")
                raise _invalid(text, pos, "a value follows another value without a ','")
            value, pos = _read_value(text, pos)
            pos = _ws_end(text, pos)
        # a complete value ``value`` ends before ``pos``
        if not stack:
            result, state = value, _DONE
            continue
        frame = stack[-1]
        if frame.kind == "{":
            frame.key, state = value, _AFTER_FIRST
        elif frame.kind == "d":
            if frame.key is _MISSING:
                frame.key, state = value, _AFTER_KEY
            else:
                try:
                    frame.items[frame.key] = value
                except TypeError as exc:
                    raise _invalid(text, token_start, f"unhashable dict key ({exc})") from exc
                frame.key, state = _MISSING, _AFTER
        else:
            frame.items.append(value)
            state = _AFTER
    if stack or state == _START or state == _VALUE:
        raise _incomplete(f"{len(stack)} container(s) left open" if stack else "no value")
    return result


def _read_value(text: str, pos: int) -> tuple[Any, int]:
    """A string (adjacent literals joined), number, True/False/None at ``pos``: (value, end)."""
    c = text[pos]
    if c in "+-.0123456789":
        number = _read_number(text, pos)
        if number is not None:
            return number
    elif c in "'\"bBrRuU" and _STRING_START.match(text, pos) is not None:
        value, end = _read_string(text, pos)
        parts = [value]
        while True:  # 'a' 'b' is 'ab', as in Python
            nxt = _ws_end(text, end)
            if nxt >= len(text) or _STRING_START.match(text, nxt) is None:
                return (value if len(parts) == 1 else value[:0].join(parts)), end
            more, end = _read_string(text, nxt)
            if isinstance(more, bytes) != isinstance(value, bytes):
                raise _invalid(text, nxt, "bytes and text literals joined")
            parts.append(more)
    name = _NAME.match(text, pos)
    if name is not None and name.group(0) in _NAMES:
        return _NAMES[name.group(0)], name.end()
    if _PARTIAL_TAIL.fullmatch(text, pos):
        raise _incomplete("inside a value")
    if c == "\x00":
        raise _invalid(text, pos, "NUL character")
    raise _invalid(text, pos, "not a literal value")


# --------------------------------------------------------------------------- repair of a cut
def _scan(text: str):
    """Walk a literal; return the open-container stack at the end of the text.

    Each stack item is ``[opener, open_pos, last_sep_pos, key_path_hint, complete_end]`` where
    ``last_sep_pos`` is the index of the last comma at that depth (or None) and
    ``complete_end`` the end of a string or container closed after that comma (or None): an
    element the cut left whole.
    """
    stack: list[list[Any]] = []
    i, n = 0, len(text)
    last_key = None
    while i < n:
        ch = text[i]
        if ch in "'\"":
            quote = ch
            triple = text.startswith(quote * 3, i)
            end_seq = quote * 3 if triple else quote
            j = i + len(end_seq)
            start = j
            while j < n:
                c = text[j]
                if c == "\\":
                    j += 2
                    continue
                if text.startswith(end_seq, j):
                    break
                j += 1
            if j >= n:
                return stack, True  # cut inside a string
            last_key = text[start:j]
            i = j + len(end_seq)
            if stack:
                stack[-1][4] = i
            continue
        if ch in _CLOSER:
            stack.append([ch, i, None, last_key, None])
        elif ch in "]})":
            if stack:
                stack.pop()
            if stack:
                stack[-1][4] = i + 1
        elif ch == "," and stack:
            stack[-1][2] = i
            stack[-1][4] = None
        i += 1
    return stack, False


def repair_truncated_literal(text: str) -> tuple[str, int, str] | None:
    """Cut a truncated literal back to its last complete list element and close it.

    The list cut is the outermost open one holding at least one complete element (normally
    ``paths`` or ``transits``); every container above it is closed as it stands.

    Returns ``(repaired_text, kept_elements, description)``, or None when there is no open
    list to cut back to (a cut inside plain dicts cannot be repaired without inventing data).
    Only meaningful for text that :func:`parse_literal` reports as *incomplete*.
    """
    stack, _ = _scan(text)
    if not stack:
        return None
    open_lists = [d for d, item in enumerate(stack) if item[0] == "["]
    if not open_lists:
        return None
    # The outermost open list that still has a complete element: a route whose first path
    # alone exceeds the limit keeps that path with its complete steps instead of nothing.
    list_depth = next((d for d in open_lists if stack[d][2] is not None or stack[d][4] is not None), open_lists[0])
    opener, open_pos, last_sep, key_hint, complete_end = stack[list_depth]
    # A cut that fell just after an element's closing bracket or quote leaves it whole: keep it.
    cut = complete_end if complete_end is not None else last_sep if last_sep is not None else open_pos + 1
    head = text[:cut]
    kept = _count_top_level_items(text[open_pos + 1:cut])
    closers = "".join(_CLOSER[item[0]] for item in reversed(stack[: list_depth + 1]))
    name = f"'{key_hint}'" if key_hint else "list"
    dropped = "no element was cut" if complete_end is not None else "dropped the incomplete tail element"
    return head + closers, kept, f"cut inside {name}, {dropped}"


def _count_top_level_items(body: str) -> int:
    if not body.strip():
        return 0
    depth = 0
    count = 1
    quote = None
    i = 0
    while i < len(body):
        c = body[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == "," and depth == 0:
            count += 1
        i += 1
    return count
