"""What a final answer claims about the outcome of the action the user asked for: it failed, it was done, or neither.

:func:`claimed_outcome` reads an answer as a *claim with polarity*, clause by clause, not as a bag of words:

1. The answer is read as the verifier reads answers (:func:`mobility_env.mobilepa.answers.normalized`: the kernel's
   reading, :func:`mobility_env.reading.read_answer` — no markdown, no invisible characters, Simplified characters:
   ``操作失敗了`` reads as ``操作失败了`` — then NFKC, case-folded), curly apostrophes straight.
2. Words that are no claim about the action are blanked: quoted text (:data:`QUOTED`: the message sent, a label —
   someone's words, not the assistant's report), then (:data:`NO_CLAIM`) names and set phrases holding a negator
   (``do not disturb``, ``don't worry``, ``no longer``), lookup misses (``couldn't find``, ``没找到``: what the
   assistant looked for, not what it was asked to do) and denied faults (``没有出现任何错误``).
3. The rest is cut into clauses at punctuation and at contrast or sequence connectives (:data:`CLAUSE_BREAKS`). A
   question (``?`` after it, a final ``吗``) claims nothing, nor does a clause about other things than the action
   (:data:`OTHER_THINGS`: ``nothing else was changed``, ``其他闹钟没有改动``: a careful report's side remark).
4. In each clause the cues are found: a :data:`FAILURE_CUES` match asserts failure, a :data:`SUCCESS_CUES` match
   success. A cue is *denied* by a negator right before it in its clause: one of :data:`EN_NEGATORS` (or a word ending
   in ``n't``) among the three words before it, with no new subject (:data:`EN_SUBJECTS`) in between, or one of
   :data:`ZH_NEGATORS` among the three characters before it, not inside a :data:`ZH_NOT_NEGATING` word. A denied
   failure (``没有失败``, ``didn't fail``, ``nothing went wrong``) claims nothing; a denied success (``没有改好``,
   ``wasn't set``, ``nothing was changed``) claims failure, and so does a success cue right after a failure cue
   (``failed to set``, ``没能成功``: the verb of the action that failed). ``已`` is never denied (Chinese denies a
   completion with 没, not before 已: ``不下雨，已…`` is no denial). A cue after a condition or a modal word in its clause
   (:data:`CONDITIONS`: ``if it fails``, ``如果失败``, ``some apps may not work``, ``可能无法``) claims nothing.
5. The answer claims what its **last** claim says: a report ends with the outcome (``it failed at first, but I retried
   and it's done`` claims success; ``alarm set, but the label could not be saved`` claims failure — part of the
   action failed).

Kept simple on purpose: a failure of something other than the action mentioned *after* the outcome (``alarm set; the
weather service failed``) reads as the last claim, a failure — only lookup misses and clauses naming other things are
told apart. Answers that say neither (a fact, a question, ``Wi-Fi was off; it is on now``) give None.
"""

from __future__ import annotations

import re
from typing import Iterator

from .answers import normalized

FAILURE = "failure"
SUCCESS = "success"

#: Regular expressions (matched on the normalized, Simplified, case-folded answer) of words that assert the requested
#: action failed, was not done, could not be done, or changed nothing. Denied (``没有失败``) they assert nothing.
FAILURE_CUES: tuple[str, ...] = (
    # Chinese: failed, cannot / could not, an error, refused, nothing changed, not done (没 / 未 + an action verb)
    r"失败", r"无法", r"不能", r"没能", r"未能", r"没法", r"没办法", r"办不到", r"做不到", r"[改设删发订调存办做弄]不了",
    r"出错", r"报错", r"故障", r"(?:出现|发生|遇到|碰到|返回|提示)了?(?:一个|一些)?(?:错误|故障|异常)",
    r"出了?点?问题", r"遇到了?(?:一些|一点)?问题", r"被拒绝?", r"拒绝了",
    r"什么都没有?[改变动做弄]", r"什么也没有?[改变动做弄]",
    r"(?:没有?|未)(?:做|进行|作)?(?:出)?任何(?:修改|更改|改动|变更|变动|操作|更新)",
    r"(?:没有?|未)(?:帮[你您]|为[你您])?(?:修改|更改|设置|设定|发送|删除|保存|更新|预订|执行|调整|添加|新建|创建|处理|"
    r"改|设|发(?!现|生|烧)|删|订|调)",
    # English: failed, could not, did not work, went wrong, an error, refused, no change made, did not <act>
    r"\bfail(?:s|ed|ing|ure|ures)?\b", r"\bunsuccessful(?:ly)?\b",
    r"\b(?:couldn't|could not|can't|cannot|can not|unable to|didn't manage to|did not manage to)\b",
    r"(?:\bnot|n't) able to\b",
    r"\b(?:didn't|did not) (?:work|go through)\b", r"\bwent wrong\b",
    r"\b(?:an?|some) error (?:occurred|happened|came up)\b", r"\berrors? (?:occurred|happened)\b",
    r"\b(?:got|hit|returned|gave|threw|ran into|encountered) (?:an? |some )?errors?\b",
    r"\b(?:there (?:was|were)|ran into|hit|had|encountered) (?:a |an |some )?(?:problem|issue)s?\b",
    r"\bnot possible\b", r"\bimpossible\b", r"\b(?:rejected|refused|denied)\b",
    r"\bno (?:changes?|updates?|modifications?) (?:were|was|have been|has been|got) (?:made|applied|saved)\b",
    r"\bmade no changes?\b", r"\bnothing (?:has |had )?happened\b",
    r"\b(?:didn't|did not|haven't|have not|hasn't|has not|hadn't|had not|never) (?:\w+ )?"
    r"(?:change|update|set|save|send|delete|remove|add|create|book|schedule|turn|switch|enable|disable|start|open|"
    r"clear|connect|move|adjust|text|call|cancel|finish|apply|complete|make|do|fix)\b",
)

#: Regular expressions of words that assert the requested action was done. Denied (``没有改好``, ``wasn't set``,
#: ``nothing was changed``) or right after a failure cue (``failed to set``) they assert failure.
SUCCESS_CUES: tuple[str, ...] = (
    r"已经?", r"[改设置调弄办做搞订删发存修换]好", r"搞定", r"完成", r"成功", r"生效", r"办妥",
    r"(?:打开|关闭|关掉|开启|设置|设定|修改|更改|调整|删除|删掉|发送|发出|添加|新建|创建|保存|更新|预订|取消|连上|连接)了",
    r"\b(?:done|all set|completed?|succeeded|successful(?:ly)?|success|worked|finished|went through)\b",
    r"\b(?:changed|updated|set|saved|sent|deleted|removed|added|created|booked|scheduled|turned|switched|enabled|"
    r"disabled|started|opened|cleared|connected|moved|adjusted|texted|replied|called|cancell?ed|applied|handed|"
    r"modified|renamed|reset|activated|deactivated|confirmed|fixed|corrected)\b",
    r"\b(?:navigating|calling)\b",
)

#: English words that deny a cue among the three words before it (so does any word ending in ``n't``).
EN_NEGATORS: tuple[str, ...] = ("no", "not", "never", "nothing", "none", "neither", "nor", "without", "cannot")

#: English words that start a new predicate: a negator before one of them denies something else (``since it's not
#: raining I set …``).
EN_SUBJECTS: tuple[str, ...] = ("i", "we", "you", "he", "she", "they", "i've", "i'm", "i'll", "we've", "you're",
                                "it's")

#: Chinese characters that deny a cue among the three characters before it (not inside :data:`ZH_NOT_NEGATING`).
ZH_NEGATORS: str = "不没未无非"

#: Chinese words that hold a negator character but deny nothing that follows (``不好意思无法设置`` is a failure).
ZH_NOT_NEGATING: tuple[str, ...] = (
    "不过", "不用", "不必", "不需要", "无需", "无须", "没问题", "没关系", "不客气", "不好意思", "对不起", "不错", "无论",
    "不仅", "不但", "非常", "不久", "不少", "不再", "不断", "不同", "不然", "要不", "不要紧")

#: Words before a cue, in its clause, that make it a condition, a possibility or a plan, not a report (``if it
#: fails``, ``some apps may not work``, ``I'll set it``, ``如果失败``, ``可能无法使用``).
CONDITIONS: tuple[str, ...] = (
    r"\bif\b", r"\bwhether\b", r"\bunless\b", r"\bin case\b", r"\bnot sure\b", r"\bunsure\b", r"\bmay\b", r"\bmight\b",
    r"\bwill\b", r"'ll\b", r"\bwould\b", r"\bshould\b",
    r"如果", r"要是", r"假如", r"万一", r"是否", r"一旦", r"不确定", r"不知道", r"可能", r"也许", r"或许", r"将会")

#: Quoted text (at most 60 characters between the marks): someone's words (a message, a label), no claim of the
#: assistant's. Blanked first, before apostrophes are straightened (``I’ve`` holds no opening mark).
QUOTED: tuple[str, ...] = (r"“[^”]{0,60}”", r"\"[^\"]{0,60}\"", r"‘[^’]{0,60}’", r"「[^」]{0,60}」", r"『[^』]{0,60}』",
                           r"《[^》]{0,60}》")

#: Spans blanked before the cues are read, as no claim about the action: names and set phrases holding a negator,
#: lookup misses (what was looked for is not what was asked to be done), denied faults.
NO_CLAIM: tuple[str, ...] = (
    r"\bdo[- ]not[- ]disturb\b", r"\bdon't disturb\b", r"\bdon't worry\b", r"\bdo not worry\b", r"\bno worries\b",
    r"\bno problem\b", r"\bnot only\b", r"\bno longer\b", r"\bno need\b",
    r"(?:\b(?:couldn't|could not|can't|cannot|can not|unable to|didn't|did not|failed to)|(?:\bnot|n't) able to) "
    r"(?:find|locate|look up|see|get|fetch|retrieve|load|access|read|check|confirm|verify)\b", r"\bnot found\b",
    r"(?:找不到|找不着|没有?找到|未找到|无法找到|查不到|没有?查到|未查到|无法查到|搜不到|没有?搜到|无法(?:获取|读取|确认|查看))",
    r"(?:没有?|未|并未|并没有?)(?:出现|发生|遇到|碰到|出)(?:任何)?(?:错误|错|问题|故障|异常)",
)

#: Words that make a clause a remark about other things than the action; such a clause claims nothing.
OTHER_THINGS: tuple[str, ...] = (r"\belse\b", r"\bother\b", r"\bothers\b", r"其他", r"其它", r"其余", r"别的")

#: Where a clause ends: punctuation, and the connectives after which a report goes on to another outcome.
CLAUSE_BREAKS: tuple[str, ...] = (
    r"[,.;:!?()、。\n—–]", r"\s-\s", r"\b(?:but|however|though|although|then|so|yet|instead|anyway)\b",
    r"但是", r"但", r"不过", r"可是", r"然而", r"然后", r"后来", r"于是", r"所以", r"结果", r"而是")

# one pass finds both kinds; at one position a failure cue wins (没有设置好 is 没有设置, not 置好)
_CUE = re.compile(f"(?P<failure>{'|'.join(FAILURE_CUES)})|(?P<success>{'|'.join(SUCCESS_CUES)})")
_CONDITION = re.compile("|".join(CONDITIONS))
_QUOTED = re.compile("|".join(QUOTED))
_NO_CLAIM = re.compile("|".join(NO_CLAIM))
_OTHER_THINGS = re.compile("|".join(OTHER_THINGS))
_CLAUSE = re.compile("|".join(CLAUSE_BREAKS))
_ZH_NOT_NEGATING = re.compile("|".join(ZH_NOT_NEGATING))
_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NEVER_DENIED = re.compile(r"已经?")


def _read(answer: str) -> str:
    """The answer as its cues are matched: normalized, Simplified, quotes blanked, straight apostrophes, no-claim
    spans blanked (each by a space, so that no words are joined)."""
    text = _QUOTED.sub(" ", normalized(answer)).replace("’", "'")
    return _NO_CLAIM.sub(" ", text)


def _clauses(text: str) -> Iterator[str]:
    """The clauses of ``text`` that may claim: questions and remarks about other things left out."""
    start = 0
    for cut in [*_CLAUSE.finditer(text), None]:
        clause = text[start:cut.start() if cut else len(text)]
        question = cut is not None and cut.group(0) == "?" or clause.rstrip().endswith(("吗", "么"))
        if not question and not _OTHER_THINGS.search(clause):
            yield clause
        start = cut.end() if cut else len(text)


def _denied(clause: str, start: int) -> bool:
    """Whether a negator stands right before ``clause[start:]`` (module docstring, 4). Only a short window before
    the cue is read, so that a long clause of many cues is read in linear time."""
    for word in reversed(_EN_WORD.findall(clause, max(0, start - 48), start)[-3:]):
        if word in EN_NEGATORS or word.endswith("n't"):
            return True
        if word in EN_SUBJECTS:
            break
    window = max(0, start - 8)  # a ZH_NOT_NEGATING word reaching into the three characters before the cue
    inside_words = {at for m in _ZH_NOT_NEGATING.finditer(clause, window, start) for at in range(m.start(), m.end())}
    return any(clause[at] in ZH_NEGATORS and at not in inside_words for at in range(max(0, start - 3), start))


def _right_after(clause: str, end: int, start: int) -> bool:
    """Whether a failure cue ending at ``end`` stands at most four characters, or two English words, before
    ``start`` (``failed to set``, ``没能成功``): the success cue then names the action that failed."""
    gap = clause[end:start]
    return len(gap) <= 4 or len(gap) <= 32 and gap.isascii() and len(_EN_WORD.findall(gap)) <= 2


def _claims(clause: str) -> Iterator[str]:
    """The claims of one clause, in order: each cue's polarity after its negation (module docstring, 4)."""
    condition = _CONDITION.search(clause)
    failure_end = -1  # where the last failure cue so far ended
    for cue in _CUE.finditer(clause):
        start = cue.start()
        if cue.end() == start or condition is not None and condition.end() <= start:
            continue
        if cue.lastgroup == FAILURE:
            failure_end = cue.end()
            if not _denied(clause, start):
                yield FAILURE
        elif _NEVER_DENIED.match(clause, start):
            yield SUCCESS
        elif _denied(clause, start) or failure_end >= 0 and _right_after(clause, failure_end, start):
            yield FAILURE
        else:
            yield SUCCESS


def claimed_outcome(answer: str) -> str | None:
    """``"failure"`` when the answer's last outcome claim says the requested action failed, could not be done or
    changed nothing; ``"success"`` when it says the action was done; None when it claims neither (module docstring).

    >>> claimed_outcome("抱歉，操作失败了，什么都没有改。"), claimed_outcome("已經幫您改好了")
    ('failure', 'success')
    >>> claimed_outcome("Nothing went wrong."), claimed_outcome("Sorry, nothing was changed."), claimed_outcome("晴，20℃")
    (None, 'failure', None)
    """
    claim = None
    for clause in _clauses(_read(answer)):
        for said in _claims(clause):
            claim = said
    return claim
