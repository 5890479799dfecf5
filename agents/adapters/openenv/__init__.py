"""``mobility-env serve``: :mod:`.serve` (the subcommand, and the client and server names), :mod:`.config`
(``ServeConfig``), :mod:`.environment` (one session's env behind OpenEnv's ``Environment``, the request bodies),
:mod:`.server` (the HTTP/WebSocket server), :mod:`.client` (``MobilityEnvClient``)."""
