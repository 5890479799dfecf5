"""MobilePA: a stateful mobile-assistant sandbox and ``MobilePA-v0``.

* :mod:`.state`: ``S_t = ⟨D_t, O_t⟩`` in an in-memory SQLite database per episode, restored from
  a task's template, with an append-only audit log and ``D_t − D_0`` as a row diff;
* :mod:`.catalogue`: one registry of phone tools (schema, permission, code) and :func:`execute`,
  which returns the paper's feedback ``⟨status, error_type, payload⟩`` and never raises on an
  agent's call; runtime obstacles (planted faults, missing permissions, state conflicts) come
  back as typed :class:`~mobility_env.trajectory.ErrorKind` values;
* :mod:`.domains`: tool code by domain (importing it registers the tools);
* :mod:`.tasks` (the task model), :mod:`.generate` (the seeded generator), :mod:`.episode` (a task being
  played) and :mod:`.env` (``MobilePAEnv``, registered as ``MobilePA-v0``; not imported here: it sits in the
  env layer, above the scorer).
"""

from . import domains  # noqa: F401  (registers the tools)
from .catalogue import PHONE_TOOLS, Feedback, PhoneTool, execute, openai_tools
from .state import TABLES, PhoneState, StateTemplate

__all__ = ["PHONE_TOOLS", "Feedback", "PhoneTool", "execute", "openai_tools", "TABLES", "PhoneState", "StateTemplate"]
