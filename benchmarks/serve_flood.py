"""Hold N idle and half-sent connections against ``mobility-env serve`` limited to 1,024 open files,
then time ``/health`` and a ``/reset``.

The server runs in a subprocess with ``RLIMIT_NOFILE`` 1,024 (``--nofile``); this process opens
``--connections`` sockets to it, a third sending nothing, a third half of a request's headers, a
third whole headers and half a body, keeps them open and then asks ``/health`` ``--probes`` times
and ``POST /reset`` once, each with a ``--timeout`` (a probe that times out is reported as such).
The table shows the latencies and the server's connection counts (``GET /sessions``).

    python benchmarks/serve_flood.py [--connections 2000] [--nofile 1024] [--probes 5] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine  # noqa: E402

HALF_HEADERS = b"GET /health HTTP/1.1\r\nHost: x\r\n"
HALF_BODY = (b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
             b'{"seed"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=2_000)
    parser.add_argument("--nofile", type=int, default=1_024, help="the server's open-file limit (default 1,024)")
    parser.add_argument("--env", default="MobilePA-v0")
    parser.add_argument("--probes", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a probe waits (default 20)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    import httpx

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.connections + 300
    if hard != resource.RLIM_INFINITY and hard < wanted:
        sys.exit(f"this process may open {hard} files; --connections {args.connections} needs {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, args.nofile))

    server = subprocess.Popen([sys.executable, "-m", "mobility_env.cli", "serve", "--env", args.env, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=limit)
    held: list[socket.socket] = []
    result: dict[str, Any] = {"benchmark": "serve_flood", "connections": args.connections, "nofile": args.nofile}
    try:
        banner = server.stdout.readline() if server.stdout else ""
        if " on http://" not in banner:
            sys.exit(f"the server did not start: {banner!r}")
        base_url = banner.split(" on ", 1)[1].split(" ", 1)[0]
        host, port = base_url.removeprefix("http://").split(":")
        started = time.perf_counter()
        for index in range(args.connections):
            sock = socket.create_connection((host, int(port)), timeout=30)
            if index % 3 == 1:
                sock.sendall(HALF_HEADERS)
            elif index % 3 == 2:
                sock.sendall(HALF_BODY)
            held.append(sock)
        result["open_seconds"] = round(time.perf_counter() - started, 2)

        def probe(method: str, path: str, **kwargs: Any) -> dict[str, Any]:
            began = time.perf_counter()
            status: int | str
            try:
                with httpx.Client(timeout=args.timeout) as client:
                    status = client.request(method, f"{base_url}{path}", **kwargs).status_code
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            return {"request": f"{method} {path}", "status": status, "seconds": round(time.perf_counter() - began, 3)}

        result["probes"] = [probe("GET", "/health") for _ in range(args.probes)]
        result["probes"].append(probe("POST", "/reset", json={"seed": 1}))
        try:
            result["server_connections"] = httpx.get(f"{base_url}/sessions", timeout=args.timeout).json()[
                "connections"]
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            result["server_connections"] = type(exc).__name__
    finally:
        for sock in held:
            sock.close()
        server.kill()
        server.communicate()
    print(f"{args.connections:,} connections opened in {result.get('open_seconds')} s; server limited to "
          f"{args.nofile:,} open files")
    for row in result.get("probes", []):
        print(f"  {row['request']:<12} {row['status']!s:<14} {row['seconds']:.3f} s")
    print(f"server's connections: {result.get('server_connections')}")
    result["machine"] = machine()
    emit(result, args.out)


if __name__ == "__main__":
    main()
