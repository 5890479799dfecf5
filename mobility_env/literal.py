"""Parsing of the official MobilityBench cells: Python-literal dicts and lists.

The released CSV stores tool responses as ``repr()`` of Python objects. Two defects need care:

* enum reprs such as ``<ToolStatus.SUCCESS: 0>`` are not literals; they become the member
  name (``"SUCCESS"``), which is what the reference tools compare against;
* cells longer than Excel's limit were cut at exactly 32,767 characters. Such a cell is
  repaired by keeping every *complete* element of its outermost open list (the route's
  ``paths`` or ``transits``) and dropping the cut tail, then closing the open containers.

``parse_cell`` never guesses silently: it returns a :class:`ParsedCell` that says whether the
value was repaired and how, or raises :class:`CellParseError`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

EXCEL_CELL_LIMIT = 32_767

_ENUM_REPR = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*): (-?\d+)>")
# A string literal (as repr writes it) or an enum repr: enum-like text inside a string is data.
_STRING_OR_ENUM = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|""" + _ENUM_REPR.pattern)
_CLOSER = {"[": "]", "{": "}", "(": ")"}


class CellParseError(ValueError):
    """A cell is not a Python literal and could not be repaired."""


@dataclass(frozen=True)
class ParsedCell:
    value: Any
    repaired: bool = False
    detail: str = ""


def replace_enum_reprs(text: str) -> str:
    """``<ToolStatus.SUCCESS: 0>`` -> ``'SUCCESS'`` (the member name, as a string literal)."""
    return _STRING_OR_ENUM.sub(lambda m: repr(m.group(2)) if m.group(2) else m.group(0), text)


def parse_cell(text: str) -> ParsedCell:
    """Parse one official cell; repair a cell cut at the Excel limit.

    Cells that are not containers (``37分钟``, ``1.0``, ``118.1,24.4``) are returned as the
    stripped text itself.
    Raises CellParseError only for text that looks like a container but cannot be parsed
    or repaired.
    """
    stripped = text.strip()
    if not stripped:
        return ParsedCell(None)
    if stripped[0] not in "[{(":
        # Scalars stay text: '1.0', '37分钟' and '118.1,24.4' mean what their column says,
        # and a literal_eval would turn the last into a tuple.
        return ParsedCell(stripped)
    source = replace_enum_reprs(stripped)
    try:
        return ParsedCell(ast.literal_eval(source))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        first_error = exc  # TypeError: an unhashable dict key or set item, e.g. "{[]: 1}"
    repaired = repair_truncated_literal(source)
    if repaired is None:
        raise CellParseError(f"not a Python literal ({type(first_error).__name__}: {first_error})")
    fixed_text, kept, detail = repaired
    try:
        value = ast.literal_eval(fixed_text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise CellParseError(f"truncated literal could not be repaired: {exc}") from exc
    cut_note = " (cell is at the Excel limit)" if len(text) >= EXCEL_CELL_LIMIT else ""
    return ParsedCell(value, True, f"truncated literal{cut_note}: {detail}; kept {kept} complete element(s)")


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
