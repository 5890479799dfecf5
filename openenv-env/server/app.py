"""OpenEnv's entry points of the repository's OpenEnv environment (``openenv validate openenv-env`` and
``openenv build`` look for them here).

* ``app`` — the ASGI app ``openenv.yaml`` names (``uvicorn server.app:app``): MobilityBench-v0 on its bundled
  data, its store opened when the server starts, not at import
  (:class:`mobility_agents.adapters.openenv.serve.LazyApp`);
* ``main`` — ``mobility-env serve`` with the command line's options, as the ``server`` console script
  (``uv run server --env MobilePA-v0``) and ``python -m server.app`` run it; it adds the connection limits.
"""

from __future__ import annotations

from typing import Optional, Sequence

from mobility_agents.adapters.openenv.serve import LazyApp
from mobility_agents.adapters.openenv.serve import main as serve_main

app = LazyApp()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``mobility-env serve`` (``--env``, ``--port``, ``--host`` ... as that command takes them)."""
    return serve_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
