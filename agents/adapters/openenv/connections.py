"""Connection limits of ``mobility-env serve``: a deadline for every request, a cap on open connections.

uvicorn closes a keep-alive connection that stays idle after a response, but never one that has not
yet sent a whole request: a connection that sends nothing, half its headers or half its body holds a
file descriptor for ever, and a few hundred of them from any local process left the server
answering nothing once its descriptors ran out. Here, for every HTTP connection:

* **A deadline.** A request must arrive whole (headers and body) within ``request_timeout_s`` of the
  connection's opening or of its previous response; otherwise the connection is closed. A request
  the app is answering has no deadline from here (a step is milliseconds; the env bounds its own work).
* **A cap.** At most ``max_connections`` are open, at most ``max_per_client`` from one peer address.
  A connection over a cap closes the oldest connection in that scope that is *waiting* (idle, or still
  sending its request): a request that arrives is worth more than one that stalls, so a flood of idle
  sockets cannot lock out ``/health`` or a client. When none is waiting (each is being answered, or
  is a WebSocket), the new connection is answered ``503`` with the typed error ``CAPACITY_REACHED``
  and closed.

A WebSocket counts against the caps until it closes, and is never closed to make room: a session is
bounded by ``--max-sessions`` and ``--idle-timeout``, and its first message by the same deadline as a
request (:meth:`~mobility_agents.adapters.openenv.server.MobilityEnvServer.websocket_session`).

:class:`ConnectionGuard` holds the table; :meth:`ConnectionGuard.protocol` is the uvicorn HTTP protocol
class (its pure-Python h11 one, which uvicorn always has) that reports to it. The protocol reads two
attributes of uvicorn's own (``cycle`` with ``response_complete``/``more_body``, and
``on_response_complete``), the same in its h11 and httptools protocols for years; without them a
connection counts as waiting, so the guard degrades to the deadline from the connection's opening.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from typing import Any, Optional

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["ConnectionGuard"]

log = logging.getLogger(__name__)


class ConnectionGuard:
    """The open HTTP connections of one server, their deadlines and caps (see the module docstring).

    ``timed_out``, ``evicted`` and ``refused`` count what the guard closed, for ``/sessions`` and tests.
    """

    def __init__(self, max_connections: int, max_per_client: int, request_timeout_s: float):
        self.max_connections = max_connections
        self.max_per_client = max_per_client
        self.request_timeout_s = request_timeout_s
        self.open: dict["_GuardedProtocol", None] = {}  # insertion-ordered set
        self.per_client: Counter[str] = Counter()
        self.timed_out = self.evicted = self.refused = 0

    def protocol(self) -> type:
        """The uvicorn HTTP protocol class reporting to this guard (``uvicorn.Config(http=...)``)."""
        return type("GuardedH11Protocol", (_GuardedProtocol,), {"guard": self})

    def counts(self) -> dict[str, int]:
        """Open connections and what the guard has closed so far."""
        return {"open": len(self.open), "timed_out": self.timed_out, "evicted": self.evicted,
                "refused": self.refused}

    # ------------------------------------------------------------------ the table
    def admit(self, connection: "_GuardedProtocol") -> bool:
        """Add ``connection``, making room under both caps; False when there is none (refuse it)."""
        self.open[connection] = None
        self.per_client[connection.peer] += 1
        if self.per_client[connection.peer] > self.max_per_client and \
                not self._make_room(connection, connection.peer):
            return False
        if len(self.open) > self.max_connections and not self._make_room(connection, None):
            return False
        return True

    def leave(self, connection: "_GuardedProtocol") -> None:
        """Remove ``connection`` (idempotent: a closed connection is reported once more when it is lost)."""
        if self.open.pop(connection, False) is None:
            self.per_client[connection.peer] -= 1
            if not self.per_client[connection.peer]:
                del self.per_client[connection.peer]

    def _make_room(self, newcomer: "_GuardedProtocol", peer: Optional[str]) -> bool:
        """Close the oldest waiting connection (of ``peer``, or of anyone); drop the closed WebSockets first."""
        for connection in [c for c in self.open if c.transport.is_closing()]:
            self.leave(connection)  # a WebSocket that ended (uvicorn reports its end to the WebSocket protocol)
        over = (lambda: self.per_client[peer] > self.max_per_client) if peer is not None \
            else (lambda: len(self.open) > self.max_connections)
        if not over():
            return True
        waiting = [c for c in self.open if c is not newcomer and (peer is None or c.peer == peer) and c.waiting()]
        if not waiting:
            self.leave(newcomer)
            return False
        oldest = min(waiting, key=lambda c: c.waiting_since)
        oldest.close("closed to make room for a new connection (--max-connections)")
        self.evicted += 1
        return True


class _GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with a request deadline and a place in a :class:`ConnectionGuard`."""

    guard: ConnectionGuard

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.peer = self.client[0] if self.client else ""
        self.waiting_since = time.monotonic()
        self._deadline: Optional[Any] = None
        if not self.guard.admit(self):
            self._refuse()
            return
        self._arm(self.guard.request_timeout_s)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.guard.leave(self)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.waiting_since = time.monotonic()
        self._arm(self.guard.request_timeout_s)

    def waiting(self) -> bool:
        """True while no request is being answered: before the first, between requests, or one half sent."""
        if self.transport.get_protocol() is not self:
            return False  # upgraded to a WebSocket
        cycle = getattr(self, "cycle", None)
        return cycle is None or getattr(cycle, "response_complete", True) or getattr(cycle, "more_body", False)

    def close(self, why: str) -> None:
        log.debug("closing a connection from %s: %s", self.peer, why)
        self.guard.leave(self)
        self.transport.close()

    def _arm(self, delay: float) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(delay, self._check_deadline)

    def _check_deadline(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or not self.waiting():
            return  # closed, answering (the response re-arms the deadline) or a WebSocket (its own deadlines)
        left = self.waiting_since + self.guard.request_timeout_s - time.monotonic()
        if left > 0:
            self._arm(left)
            return
        self.guard.timed_out += 1
        self.close(f"no whole request within {self.guard.request_timeout_s:g} s (--request-timeout)")

    def _refuse(self) -> None:
        """Answer 503 CAPACITY_REACHED without reading the request, and close."""
        guard = self.guard
        guard.refused += 1
        message = (f"the server has {len(guard.open):,} connections open (at most {guard.max_connections:,}, "
                   f"{guard.max_per_client:,} from one address: --max-connections, --max-connections-per-client), "
                   "each answering a request or a WebSocket; try again later")
        body = json.dumps({"error": {"code": "CAPACITY_REACHED", "message": message}}).encode()
        head = (f"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n").encode()
        self.transport.write(head + body)
        self.transport.close()
