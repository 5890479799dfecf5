"""Finding the words of a vocabulary in a text in one pass: an Aho-Corasick automaton (``pyahocorasick``).

A vocabulary of a few hundred words written as one regular-expression alternation is tried word by word at every
position of the text; the automaton reads the text once. Measured before choosing (2026-12-05, this machine): the
route-step cues (the Amap actions, headings and English turns, ~120 words) over short answer clauses took 18 us per
clause as a case-insensitive regex and 1.1 us with the automaton.

Matching is case-insensitive and leftmost-longest (``电动车`` is found, not the ``动车`` inside it); a word of ASCII
letters is found only between non-letters, and one that is not gives way to the words inside it (``rain`` is not
in ``rainbow``; a CJK character next to it is a boundary:
``可以BRT过去``).
"""

from __future__ import annotations

from typing import Any, Generic, Iterable, Iterator, NamedTuple, TypeVar

import ahocorasick

T = TypeVar("T")


class Hit(NamedTuple, Generic[T]):
    start: int
    end: int
    word: str
    payload: T


def _is_letter(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


class Lexicon(Generic[T]):
    """Words (each with a payload), found in texts in one pass."""

    def __init__(self, words: Iterable[tuple[str, T]]):
        self._automaton = ahocorasick.Automaton()
        for word, payload in words:
            key = word.lower()
            if key and key not in self._automaton:
                self._automaton.add_word(key, (word, payload))
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()

    def finditer(self, text: str) -> Iterator[Hit[T]]:
        """Every vocabulary word in ``text``, leftmost-longest, non-overlapping, in order; an ASCII word only at letter
        boundaries (a longer word that fails its boundary gives way to the words inside it: in ``by airplane`` the
        word ``by air`` does not hide ``airplane``)."""
        if self._empty or not text:
            return
        lowered = text.lower()
        if len(lowered) != len(text):  # a character whose lower case is longer (İ): read it as written
            lowered = text
        found = []
        for last, (word, payload) in self._automaton.iter(lowered):
            start = last - len(word) + 1
            if _is_letter(word[0]) and start > 0 and _is_letter(text[start - 1]):
                continue
            if _is_letter(word[-1]) and last + 1 < len(text) and _is_letter(text[last + 1]):
                continue
            found.append((start, -len(word), payload))
        found.sort(key=lambda item: (item[0], item[1]))
        taken = 0
        for start, negative_length, payload in found:
            if start >= taken:
                taken = start - negative_length
                yield Hit(start, taken, text[start:taken], payload)

    def blank(self, text: str) -> str:
        """``text`` with every vocabulary word found replaced by spaces of its length (positions kept): one pass, one
        join, linear in the text however many words it holds."""
        pieces, done = [], 0
        for hit in self.finditer(text):
            pieces += [text[done:hit.start], " " * (hit.end - hit.start)]
            done = hit.end
        return "".join(pieces) + text[done:] if pieces else text

    def search(self, text: str) -> Hit[T] | None:
        """The first word of the vocabulary in ``text``, or None."""
        return next(self.finditer(text), None)


def trie_pattern(words: Iterable[str], tail: dict[str, str] | None = None) -> str:
    """One regular expression for ``words`` factored by their common prefixes (``k(?:m|ilomet(?:er|re))``): the
    engine follows one branch per character instead of trying every word at every place, and the longest word wins
    (each branch lists its longer continuations first). ``tail`` adds a pattern after a word's last character (a
    guard, a letter boundary)."""
    import re

    tails = tail or {}
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = word

    def emit(node: dict[str, Any]) -> str:
        branches = []
        for ch in sorted((c for c in node if c), key=lambda c: -_depth(node[c])):
            branches.append((r"\s*" if ch == " " else re.escape(ch)) + emit(node[ch]))  # a space: any spacing
        if "" in node:
            branches.append(tails.get(node[""], ""))  # the word ends here: tried after every longer continuation
        if len(branches) == 1:
            return branches[0]
        return "(?:" + "|".join(branches) + ")"
    return emit(trie)


def _depth(node: dict[str, Any]) -> int:
    return max((1 + _depth(child) for key, child in node.items() if key), default=0)
