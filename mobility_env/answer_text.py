"""A final answer as it is read: the text a chat model wrote, without its markdown.

Both verifiers (``mobility_rewards.verify`` for MobilityBench-v0, ``mobility_env.mobilepa.answers`` for
MobilePA-v0) read answers through :func:`plain_answer`, and a word as denied from a distance with
:data:`ZH_FAR_DENIAL` and :data:`EN_FAR_DENIAL`. In :func:`plain_answer`, emphasis (``**…**``, ``__…__``,
``*…*``, ``~~…~~``), code marks, heading and quote marks at line starts, and link targets are no claims, and left
in they split amounts (``**3小时****12分钟**`` was read as 3 hours) or signs (``-**4℃**`` as 4℃). A bare ``*``
between digits (``5*3``) stays.
"""

from __future__ import annotations

import re

_MARKDOWN = re.compile(r"\*\*|__|~~|`|^\s{0,3}#{1,6}\s+|^\s{0,3}>\s?", re.MULTILINE)
_MARKDOWN_EMPHASIS = re.compile(r"(?<![*A-Za-z0-9])\*(?=\S)([^*\n]{1,200}?)(?<=\S)\*(?![*A-Za-z0-9])")  # *斜体*; not 5*3
# link text holds no bracket: a run of "[" fails at once at each one (1 MB of "[" took 1.25 s when it could hold one)
_MARKDOWN_LINK = re.compile(r"\[([^\[\]\n]{1,200})\]\([^()\s]{0,500}\)")


def plain_answer(answer: str) -> str:
    """The answer as read aloud: markdown emphasis, code marks, headings, quote marks and link targets removed
    (``全程**3小时12分钟**`` -> ``全程3小时12分钟``, ``-**4℃**`` -> ``-4℃``, ``[天安门](https://…)`` -> ``天安门``)."""
    if not any(ch in answer for ch in "*_~`#>["):
        return answer
    return _MARKDOWN.sub("", _MARKDOWN_EMPHASIS.sub(r"\1", _MARKDOWN_LINK.sub(r"\1", answer)))


# Denials that stand further from the word they deny, matched against the text right before the word (each
# verifier chooses the window): 不太可能出现小雨, 完全没有出现拥堵, 不会有任何雾, 没怎么见到雨; no chance at all of
# rain, nothing like a storm, not a chance of fog, unlikely to see any snow.
#: A Chinese negator, bridged to the word by likelihood, degree and verbs of appearing (ends right before the word).
ZH_FAR_DENIAL = re.compile(r"(?:不是|不会|不太|不算|并非|并不|没有|[不没无未])(?:太|大|怎么|那么)?(?:可能)?(?:会)?"
                           r"(?:是|会|再|下|有|见到|遇到|见|出现|算|像|用|刮|起){0,2}(?:任何|什么|一点)?$")
#: The English ones (ends right before the word, after its article if any).
EN_FAR_DENIAL = re.compile(r"(?<![a-z])(?:(?:no|zero|little|not\s+a)\s+chance(?:\s+at\s+all)?\s+of|nothing\s+like|"
                           r"unlikely\s+to\s+(?:be|see|have|get)(?:\s+any)?)(?:\s+(?:a|an|the))?\s*$", re.IGNORECASE)
