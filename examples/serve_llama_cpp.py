"""Serve a GGUF model with llama-cpp-python's OpenAI server, with the settings that work on a CPU.

Run it with the Python that has ``llama-cpp-python[server]`` (its own virtualenv: it compiles llama.cpp;
``CMAKE_ARGS=-DGGML_NATIVE=OFF`` builds a portable CPU backend), not the project's::

    python -m venv llamavenv && CMAKE_ARGS=-DGGML_NATIVE=OFF llamavenv/bin/pip install 'llama-cpp-python[server]'
    llamavenv/bin/python examples/serve_llama_cpp.py --model SmolLM2-135M-Instruct.Q4_1.gguf --port 8000

then, from the project's environment::

    LLAMA_API_KEY=EMPTY mobility-env models check --models-file examples/models.toml --preset llama-cpp-python
    LLAMA_API_KEY=EMPTY mobility-env run --agent react --models-file examples/models.toml --preset llama-cpp-python

What it sets, and why:

* **extra weight buffer types off** (``use_extra_bufts = false``; ``--extra-bufts`` keeps them). On a CPU
  that advertises AMX, llama.cpp picks its AMX kernels; where the kernel does not grant AMX to the process
  (VMs, sandboxes) the first decode dies with a general protection fault and the client sees only
  "Server disconnected". Off, llama.cpp neither uses AMX nor repacks weights;
* **the chat format**: the GGUF's own template by default, for ``--tool-mode json`` (the JSON-in-text
  protocol; tool results come back as user messages, which every template shows the model).
  ``--chat-format chatml-function-calling`` is the only llama-cpp-python format that returns native
  ``tool_calls``, but its template has no branch for ``tool`` messages: the model never sees what a tool
  returned (``mobility-env models check`` shows it: native fails its round trip, json passes);
* 127.0.0.1 and one request at a time (the server's own); a request the client gave up on keeps
  generating, so give the run a generous ``--timeout`` (the client tells busy from down).

``benchmarks/real_model_smoke.py`` starts its servers through this file.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence


def without_extra_buffer_types() -> None:
    """Make llama.cpp's default model parameters leave its extra weight buffer types (AMX, repacking) off."""
    import llama_cpp.llama_cpp as low

    defaults = low.llama_model_default_params

    def params() -> object:
        value = defaults()
        value.use_extra_bufts = False
        return value

    low.llama_model_default_params = params


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Other options go to llama_cpp.server unchanged (after --).")
    parser.add_argument("--model", required=True, help="the GGUF file")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="context size (default 8192)")
    parser.add_argument("--n-threads", type=int, default=1, help="threads (default 1)")
    parser.add_argument("--chat-format", default="",
                        help="llama-cpp-python chat format (default: the GGUF's template, for --tool-mode json; "
                             "chatml-function-calling gives native tool calls but drops tool results)")
    parser.add_argument("--extra-bufts", action="store_true",
                        help="keep llama.cpp's extra buffer types (AMX kernels, repacking): faster where AMX works")
    args, rest = parser.parse_known_args(argv)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    try:
        import llama_cpp.server.__main__ as server
    except ImportError:
        sys.exit("llama-cpp-python[server] is not installed in this Python: run this file with the Python of its "
                 "virtualenv (see the docstring)")
    if not args.extra_bufts:
        without_extra_buffer_types()
    sys.argv = ["llama_cpp.server", "--model", args.model, "--host", args.host, "--port", str(args.port),
                "--n_ctx", str(args.n_ctx), "--n_threads", str(args.n_threads),
                "--n_threads_batch", str(args.n_threads)]
    sys.argv += ["--chat_format", args.chat_format] if args.chat_format else []
    sys.argv += list(rest)
    server.main()


if __name__ == "__main__":
    main()
