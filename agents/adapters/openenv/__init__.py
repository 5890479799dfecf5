"""``mobility-env serve``: :mod:`.serve` (the subcommand, the ``server`` script, and the client and server names),
:mod:`.config` (``ServeConfig``), :mod:`.environment` (one session's env behind OpenEnv's ``Environment``, the request
bodies), :mod:`.mcp` (its tools and tool calls as OpenEnv's MCP types), :mod:`.rpc` (MCP JSON-RPC on ``/mcp``),
:mod:`.server` (the HTTP/WebSocket server), :mod:`.connections` (connection limits), :mod:`.client`
(``MobilityEnvClient``)."""
