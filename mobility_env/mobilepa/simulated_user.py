"""The simulated user of ``MobilePA-v0``: answers an ``ask_user`` question from the task's hidden facts.

A task's :class:`~mobility_env.mobilepa.tasks.UserFact` list is what the user wants and did not say (a level, a
time, a message's text, which of two contacts called 张伟 …). :func:`answer` is deterministic and rule-based, and
always answers in the task's language:

a. **a confirmation** — the question proposes one value of a fact's slot ("调到40%可以吗？", "Should I set it to
   7:30 AM?", "是同事张伟吗？"): ``yes`` and the fact's reply when it is the fact's value, ``no`` and the fact's reply
   when it is another (one of the fact's ``others``, or any other value the slot's reader reads: another
   percentage, another time of day, another quoted text). Values are read by the slot's reader: numbers for a
   ``level``, :func:`~mobility_env.reading.clock.clock_claims` for a ``time`` or ``span`` (``7点`` without a period
   fits 07:00 and 19:00 alike), the readings' words (at word and number boundaries,
   :func:`~mobility_env.mobilepa.answers.mention_spans`) for the other slots. A question naming several values ("早上
   7点那个还是晚上7点那个？") asks for the slot: rule b; so does one naming a value with a slot's word and no yes/no
   form ("现在是30%，要调到多少？");
b. **a question for a slot** ("几点？", "Which volume?", "发给哪一位？", :data:`SLOT_WORDS`): the reply of a fact
   of that slot not told yet;
c. **any other question** ("能说具体一点吗？", "Anything else?"), or one for a slot whose facts were all told: the
   reply of the next fact not told yet, as a real user asked to clarify says what they want; an agent is never
   refused because its wording is not in a word list. Each fact is told once this way (asked again, the user does
   not repeat it; a confirmation checks it): when every fact was told, the answer is a fixed "that's all"
   (:data:`ALL_TOLD`).

Every ``ask_user`` text is taken as a question (it is the tool's contract); the user never invents a fact. ``told``
(the indexes of the facts already told) is the session's; :func:`answer` adds to it.

Example::

    from mobility_env.mobilepa.tasks import UserFact
    facts = [UserFact(slot="level", value="40", reply="调到40%吧")]
    told: set[int] = set()
    answer("调到50%可以吗？", facts, told, "zh")   # '不是，调到40%吧'
    answer("还有别的吗？", facts, told, "zh")       # '就这些，没有别的了。'
"""

from __future__ import annotations

import re
from typing import Sequence

from ..reading.clock import ClockClaim, clock_claims, clock_matches
from ..reading.numerals import written_in_digits
from .answers import mention_spans, normalized
from .tasks import Reading, UserFact

#: What the user says when asked again after every fact was told.
ALL_TOLD = {"zh": "就这些，没有别的了。", "en": "That's all — nothing else."}
_YES = {"zh": "对，", "en": "Yes — "}
_NO = {"zh": "不是，", "en": "No — "}
#: Words of a question that asks for a slot (normalized: case-folded); a question matching none is rule c's.
SLOT_WORDS: dict[str, tuple[str, ...]] = {
    "level": ("多少", "百分之几", "多亮", "多大", "how much", "what level", "which level", "how bright", "how loud",
              "what brightness", "percent"),
    "stream": ("哪个音量", "什么音量", "哪种音量", "which volume", "which stream", "what volume"),
    "time": ("几点", "什么时候", "什么时间", "哪个时间", "what time", "when", "which time"),
    "span": ("几点开始", "几点结束", "到几点", "多长时间", "from what time", "until when", "how long", "what time"),
    "text": ("内容", "说什么", "写什么", "发什么", "what should the message", "what should it say", "what to say",
             "say what", "the message say", "what text", "wording"),
    "contact": ("哪位", "哪一位", "哪个联系人", "谁", "which contact", "which person", "who", "which one"),
    "place": ("哪里", "哪儿", "去哪", "地址", "什么地方", "where", "which place", "address", "destination"),
    "choice": ("哪个", "哪一个", "哪种", "which"),
    "value": ("什么", "哪天", "what", "which day"),
}
#: A yes/no question ("内容是“…”吗？", "Is it 40%?"): one naming a value is a confirmation even with a slot's word.
_YES_NO = re.compile(r"吗|是不是|对不对|行不行|可不可以|好不好|是否|^(?:is|are|should|shall|do|does|did|can|could|would|"
                     r"will|was|may)(?![a-z])|(?:right|ok|okay|correct)\s*[?？]")
_NUMBER = re.compile(r"(?<![\d.:])(\d{1,3})(?![\d:]|\s*点|\.\d)")
_QUOTED = re.compile(r"[“\"「『‘]([^“”\"「」『』‘’]+)[”\"」』’]")


def answer(question: str, facts: Sequence[UserFact], told: set[int], lang: str) -> str:
    """The user's reply to ``question`` (see the module docstring); adds the index of the fact it tells to
    ``told``. ``lang``: ``zh`` or ``en`` (the task's language)."""
    lang = "en" if lang == "en" else "zh"
    text = normalized(question)
    asked = [i for i, fact in enumerate(facts) if _asks_for(text, fact.slot)]
    for index, fact in enumerate(facts):
        proposed = [] if index in asked and not _YES_NO.search(text) else _proposals(text, fact)
        if len(proposed) == 1:  # a confirmation: the fact's value, or another
            told.add(index)
            return (_YES if proposed[0] is fact else _NO)[lang] + fact.reply
        if proposed:  # several values named: a question for the slot
            asked.insert(0, index)
            break
    untold = [i for i in range(len(facts)) if i not in told]  # a fact is told once; confirmations may check it again
    chosen = next((i for i in asked if i not in told), untold[0] if untold else None)
    if chosen is None:
        return ALL_TOLD[lang]
    told.add(chosen)
    return facts[chosen].reply


def _asks_for(text: str, slot: str) -> bool:
    return any(word in text for word in SLOT_WORDS[slot])


def _proposals(text: str, fact: UserFact) -> list[Reading | None]:
    """The values of ``fact``'s slot a (normalized) question names: the fact itself, its other readings, or None
    for each value its reader reads that is no reading at all (another percentage, another time)."""
    readings: list[Reading] = [fact, *fact.others]
    read_slot = fact.slot in ("level", "time", "span")
    named: list[Reading | None] = [r for r in readings if _words_named(text, r, skip_numbers=read_slot)]
    if fact.slot == "level":
        for number in dict.fromkeys(int(m.group(1)) for m in _NUMBER.finditer(written_in_digits(text, min_run=2))):
            hit = next((r for r in readings if r.value.isdigit() and int(r.value) == number), None)
            if hit is None and number <= 100:
                named.append(None)
            elif hit is not None and hit not in named:
                named.append(hit)
    elif fact.slot == "time":  # each time stated: the readings it fits (7点 fits 07:00 and 19:00), or another time
        for claim in _clock_claims(text):
            fitting = [r for r in readings if _times_fit((claim,), r.value)]
            named += [r for r in fitting if r not in named] if fitting else [None]
    elif fact.slot == "span":  # the times stated, together: a reading's start and end, or another span
        claims = _clock_claims(text)
        if claims:
            fitting = [r for r in readings if _times_fit(claims, r.value)]
            named += [r for r in fitting if r not in named] if fitting else [None]
    elif fact.slot == "text":
        for quoted in _QUOTED.findall(text):
            if not any(normalized(r.value).strip(" .。!！") in quoted for r in readings):
                named.append(None)
    return named


def _words_named(text: str, reading: Reading, skip_numbers: bool) -> bool:
    """Whether the question names ``reading`` by its value or one of its words (at word and number boundaries);
    ``skip_numbers``: leave times and numbers to the slot's reader."""
    spellings = [normalized(w) for w in [reading.value, *reading.words] if w.strip()]
    return any(mention_spans(text, s, asserted_only=False) for s in spellings
               if not (skip_numbers and _numeric(s)))


def _numeric(spelling: str) -> bool:
    """A value or word that is a time or a number (its slot's reader reads it, never a substring match)."""
    return bool(re.fullmatch(r"[\d:\-\s%]+", spelling)) or bool(clock_claims(spelling))


#: 一点 as "a bit" (具体一点, 快一点), which the clock reader would read as 1 o'clock: no period before it, no minutes after.
_A_BIT = re.compile(r"(?<![早上午下晚凌中傍夜间里\d])一点(?![半钟整刻\d零一二三四五六七八九十])")


def _clock_claims(text: str) -> tuple[ClockClaim, ...]:
    return clock_claims(_A_BIT.sub("", text))


def _minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def _times_fit(claims: tuple[ClockClaim, ...], value: str) -> bool:
    """Whether every time the question states is one of ``value``'s (a time, or a span's start and end), and (a
    span) the question states at least one of them."""
    times = [_minutes(part) for part in value.split("-") if re.fullmatch(r"\d{2}:\d{2}", part)]
    return bool(times) and all(any(clock_matches(c, t, True, 0) for t in times) for c in claims)
