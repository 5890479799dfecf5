"""Learn from the env's rewards: REINFORCE on a small softmax policy (numpy only).

What is learned: which of the 11 scenario procedures to run for a query. The policy sees
hashed character uni/bi-grams of the query and outputs a softmax over the procedures of
``RuleAgent`` (each procedure extracts places and constraints with the same rules and calls
the tools that scenario needs). Nothing tells it the scenario: it only gets the episode
return (shaped TS/SC/DEC terms + DR + verified FPR) after acting.

What this shows: the reward signal is learnable — mean return and FPR on *held-out*
synthetic episodes rise from a uniform policy to close to the hand-written classifier.
What it does not show: learning tool arguments or answer text (the procedures are fixed),
or anything about LLM fine-tuning beyond "the signal carries the information".

    python examples/train_reinforce.py --train 400 --test 200 --epochs 12
"""

from __future__ import annotations

import argparse
import json
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mobility_agents.baselines.mobilitybench.rule import RuleAgent
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.mobilitybench.episode import SCENARIOS
from mobility_env.synth import synthesize


@dataclass
class Hyperparameters:
    train: int = 400
    test: int = 200
    epochs: int = 12
    features: int = 1024
    learning_rate: float = 0.5
    seed: int = 0


def featurize(query: str, dim: int) -> np.ndarray:
    """Hashed character unigrams and bigrams, L2-normalized (crc32: stable across runs)."""
    vector = np.zeros(dim)
    grams = list(query) + [query[i:i + 2] for i in range(len(query) - 1)]
    for gram in grams:
        vector[zlib.crc32(gram.encode("utf-8")) % dim] += 1.0
    norm = np.linalg.norm(vector)
    return vector / norm if norm else vector


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max())
    return z / z.sum()


def play(env: MobilityEnv, episode_id: str, scenario: str) -> tuple[float, float]:
    result = RuleAgent(scenario=scenario).run_episode(env, episode_id)["result"]
    return result["total_reward"], result["metrics"]["FPR"]


def evaluate(env: MobilityEnv, weights: np.ndarray, hp: Hyperparameters, greedy: bool = True) -> dict[str, float]:
    returns, fprs = [], []
    for episode_id in env.episode_ids:
        probs = softmax(weights @ featurize(env.store.get(episode_id).query, hp.features))
        action = int(np.argmax(probs))
        ret, fpr = play(env, episode_id, SCENARIOS[action])
        returns.append(ret)
        fprs.append(fpr)
    return {"mean_return": float(np.mean(returns)), "FPR": float(np.mean(fprs))}


def train(hp: Hyperparameters, workdir: Path) -> list[dict[str, float]]:
    rng = np.random.default_rng(hp.seed)
    train_env = MobilityEnv(data=synthesize(hp.train, hp.seed + 1, workdir / "train", progress=False))
    test_env = MobilityEnv(data=synthesize(hp.test, hp.seed + 2, workdir / "test", progress=False))
    weights = np.zeros((len(SCENARIOS), hp.features))
    curve = [{"epoch": 0, **evaluate(test_env, weights, hp)}]
    print(json.dumps(curve[-1]))
    baseline = 0.0
    for epoch in range(1, hp.epochs + 1):
        for index in rng.permutation(len(train_env.episode_ids)):
            episode_id = train_env.episode_ids[int(index)]
            x = featurize(train_env.store.get(episode_id).query, hp.features)
            probs = softmax(weights @ x)
            action = int(rng.choice(len(SCENARIOS), p=probs))
            ret, _ = play(train_env, episode_id, SCENARIOS[action])
            advantage = ret - baseline
            baseline += 0.05 * (ret - baseline)
            grad = -probs
            grad[action] += 1.0
            weights += hp.learning_rate * advantage * np.outer(grad, x)
        curve.append({"epoch": epoch, **evaluate(test_env, weights, hp)})
        print(json.dumps(curve[-1]))
    return curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, value in vars(Hyperparameters()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    hp = Hyperparameters(**{k.replace("-", "_"): v for k, v in vars(parser.parse_args()).items()})
    with tempfile.TemporaryDirectory() as tmp:
        curve = train(hp, Path(tmp))
    reference = curve[0]
    print(f"held-out FPR {reference['FPR']:.3f} -> {curve[-1]['FPR']:.3f}; "
          f"mean return {reference['mean_return']:.3f} -> {curve[-1]['mean_return']:.3f}")


if __name__ == "__main__":
    main()
