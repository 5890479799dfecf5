"""ReAct against a local OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp…).

Start a server with function calling, e.g. ::

    vllm serve Qwen/Qwen3-8B --enable-auto-tool-choice --tool-call-parser hermes
    ollama serve   # then: ollama pull qwen3:8b

and run a few episodes::

    python examples/react_local_server.py --base-url http://127.0.0.1:8000/v1 --episodes 5
    python examples/react_local_server.py --base-url http://127.0.0.1:11434/v1 --model qwen3:8b

Without ``--model`` the server's only model is used. Servers without function calling:
add ``--tool-mode json``. Each episode prints one line; the run ends with the paper's
scorecard and its overall line. Failures (server down, context overflow) are recorded per
episode and scored DR = 0; the loop goes on.
"""

from __future__ import annotations

import argparse
import os

from mobility_agents.llm.client import LLMConfig
from mobility_agents.llm.react import ReActAgent
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_rewards.mobilitybench.scorecard import build_scorecard, format_scorecard


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"))
    parser.add_argument("--model", help="model name (default: the server's only model)")
    parser.add_argument("--data", help="built directory or official file (default: bundled synthetic set)")
    parser.add_argument("--episodes", type=int, default=5, help="how many episodes to run (default 5)")
    parser.add_argument("--language", choices=("zh", "en"), default="zh", help="prompt language")
    parser.add_argument("--tool-mode", choices=("native", "json"), default="native")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="wall-clock deadline per model request: connect, headers and body (default 120)")
    args = parser.parse_args()

    # the key comes from the environment only (a command-line key would show in `ps`)
    config = LLMConfig(model=args.model, base_url=args.base_url, api_key=os.environ.get("OPENAI_API_KEY", "EMPTY"),
                       language=args.language, tool_mode=args.tool_mode, timeout_s=args.timeout)
    agent = ReActAgent(config)
    agent.preflight()  # one tiny request: a down or misconfigured server fails here, not in every episode
    env = MobilityEnv(data=args.data)
    records = []
    for episode_id in env.episode_ids[: args.episodes]:
        result = agent.run_episode(env, episode_id, seed=0)["result"]
        records.append(result)
        m = result["metrics"]
        status = f"failed: {result['failure']['type']}" if result["failure"] else f"{result['steps']} steps"
        print(f"{episode_id}  {result['task_scenario']:<34} DR={m.get('DR', 0):.0f} FPR={m.get('FPR', 0):.0f} "
              f"IT={result['input_tokens']} OT={result['output_tokens']}  ({status})")

    scorecard = build_scorecard(records)
    print()
    print(format_scorecard(scorecard))
    overall = next(row for row in scorecard["rows"] if row["group"] == "overall")
    scores = " ".join(f"{c}={overall[c]:.3f}" for c in ("ID", "IE", "TS-P", "SC", "DR", "FPR")
                      if overall.get(c) is not None)
    print(f"\n{agent.model} on {len(records)} episode(s): {scores} IT={overall['IT']:.0f} OT={overall['OT']:.0f}")


if __name__ == "__main__":
    main()
