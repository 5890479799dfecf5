"""What ``mobility-env serve`` serves and its limits (no server imports: the CLI reads it for ``--help``).

:class:`ServeConfig` is checked once, when it is built: an unknown env id, a bad limit, or a
host other than the loopback without ``allow_remote`` is a :class:`~mobility_env.errors.ConfigError`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from mobility_env.errors import ConfigError

from ...targets import MOBILITYBENCH, check_env_id, default_env_options

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Sessions (WebSocket connections and HTTP sessions together) the server holds at once.
DEFAULT_MAX_SESSIONS = 32
#: Seconds without a message after which a session is closed and its slot freed.
DEFAULT_IDLE_TIMEOUT_S = 300.0
#: The largest WebSocket message or HTTP request body accepted. The env refuses an action over
#: 20,000 characters anyway (as an ``invalid_json`` observation); this bounds what the server reads.
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024
#: Seconds a connection has to send a whole request (headers and body), from its opening or its previous
#: response; also the time a WebSocket has to send its first message.
DEFAULT_REQUEST_TIMEOUT_S = 10.0
#: Connections open at once (HTTP and WebSocket), and from one peer address.
DEFAULT_MAX_CONNECTIONS = 512
DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 128


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServeConfig:
    """One server: the env it serves (``env_id``, ``data``, ``env_kwargs``), where, and its limits.

    ``env_kwargs`` default to the options ``mobility-env run`` gives the env
    (:func:`~mobility_agents.targets.default_env_options`). ``idle_timeout_s`` 0 keeps idle
    sessions forever. ``port`` 0 takes a free port (the running server reports it). The connection
    limits (``request_timeout_s``, ``max_connections``, ``max_connections_per_client``) are
    :mod:`~mobility_agents.adapters.openenv.connections`'.
    """

    env_id: str = MOBILITYBENCH
    data: str | None = None
    env_kwargs: dict[str, Any] | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_connections_per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT
    allow_remote: bool = False
    options: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        check_env_id(self.env_id)
        object.__setattr__(self, "options", default_env_options(self.env_id) if self.env_kwargs is None
                           else dict(self.env_kwargs))
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be 0..65535, got {self.port!r}")
        if not isinstance(self.max_sessions, int) or self.max_sessions < 1:
            raise ConfigError(f"max_sessions must be at least 1, got {self.max_sessions!r}")
        if not self.idle_timeout_s >= 0:  # also refuses NaN
            raise ConfigError(f"idle_timeout_s must be 0 (never) or positive, got {self.idle_timeout_s!r}")
        if not isinstance(self.max_message_bytes, int) or self.max_message_bytes < 1024:
            raise ConfigError(f"max_message_bytes must be at least 1024, got {self.max_message_bytes!r}")
        if not (isinstance(self.request_timeout_s, (int, float)) and 0 < self.request_timeout_s < float("inf")):
            raise ConfigError(f"request_timeout_s must be a positive number of seconds, got {self.request_timeout_s!r}")
        for name in ("max_connections", "max_connections_per_client"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be at least 1, got {value!r}")
        if not is_loopback(self.host) and not self.allow_remote:
            raise ConfigError(f"refusing to serve on {self.host!r}: the server has no authentication, so anyone who "
                              "can reach the port can run episodes; bind 127.0.0.1 (the default) or pass "
                              "--allow-remote to serve on another interface on purpose")

    @property
    def idle_timeout(self) -> float | None:
        """The idle timeout in seconds, None when sessions never time out."""
        return self.idle_timeout_s or None
