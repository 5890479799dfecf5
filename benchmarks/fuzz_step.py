"""Fuzz ``env.step`` of every registered env with N hostile actions each: 0 exceptions, flat memory.

The actions (drawn from each env's own tools and argument names) mix what was measured breaking ``step``
before the action caps (lone surrogates, 400-digit coordinates and radii, JSON integers over 4,300
digits, arguments nested ~990 deep) with megabyte strings, NaN/inf, non-JSON Python values, unknown
tools, extra keys, wrong types, JSON text and OpenAI tool-call forms, and valid calls (sampled, gold,
and gold calls with one argument replaced by a hostile value), plain-text answers made of what quantity
readers scan (digits of every script, numerals, separators, units) and Python objects whose own code
raises (dunders, ``__getattr__``, a Fraction no float holds). Episodes are reset on their end and every
``--episode-steps`` actions. Every step's result is checked (5-tuple, ``str`` observation writable as
UTF-8, finite float reward, error types from the documented list); an exception or a violation is
counted with its category and the first ones are printed.

RSS is read from /proc/self/smaps_rollup at ``--checkpoints`` evenly spaced points with the
entries held by the env's text caches; the table shows start, peak and end.

Those caches are bounded (entries x characters per entry) but fill up with the sampled
coordinates and names, so RSS rises slowly until they are full; ``--clear-caches`` empties
them at each checkpoint, leaving flat what is not a cache.

    python benchmarks/fuzz_step.py [--env all|MobilityBench-v0|MobilePA-v0] [--n 1000000] [--seed 0] [--data DIR]
                                   [--direct] [--clear-caches] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
import traceback
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine, memory_kib  # noqa: E402

SURROGATES = ("\ud800", "北京\udfff", "\udc00\udc00", "a\ud83d", "\udbff")
#: Pieces of plain-text answers: digits of several scripts, numerals, separators, units, signs.
NUMBERISH = ("1", "12", "0.5", "3.", ".7", "1,234", "12:30", "：", ":", "Ⅻ", "Ⅳ", "ⅲ", "①", "１２", "０．５", "一", "十二",
             "两", "半", "万", "亿", "〇", "零点五", "三分之一", "½", "²", "⁴", "-", "−", "+", "~", "～", "%", "‰", "e5",
             "1e400", "9" * 60, "公里", "km", "英里", "miles", "里", "点", "分", "时", "小时", "min", "元", "°C", "度",
             "第", "约", "大约", "多", "几", "至", "到", " ", "\n", "。", "，", ",", "/", "·", "号", "路", "月", "日")


class _Boom(Exception):
    pass


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise _Boom("hostile")


_DUNDERS = ("__getattr__", "__getattribute__", "__iter__", "__len__", "__int__", "__index__", "__float__",
            "__repr__", "__str__", "__eq__", "__hash__", "__bool__", "keys", "items", "__getitem__", "model_dump")
_BASES: tuple[type, ...] = (object, int, float, str, dict, list, tuple)


def hostile_object(rng: random.Random) -> Any:
    """An instance of a JSON type (or object) subclass with some methods replaced by ones that raise, or a Fraction
    no float holds."""
    if rng.random() < 0.2:
        return rng.choice((Fraction(10 ** 400, 3), Fraction(-(10 ** 400), 7), Fraction(1, 10 ** 400)))
    base = rng.choice(_BASES)
    cls = type("Hostile", (base,), {name: _raise for name in rng.sample(_DUNDERS, rng.randint(1, 4))})
    value: Any = {"name": "finish"} if base is dict else [1] if base in (list, tuple) else "x" if base is str else 3
    try:
        return cls(value) if base is not object else cls()
    except _Boom:
        return cls.__new__(cls)  # type: ignore[call-overload]


def gold_calls(env: Any) -> list[Any]:
    """The calls that solve the current episode (MobilityBench's gold calls, MobilePA's oracle calls)."""
    inner = env.unwrapped
    episode = getattr(inner, "episode", None)
    if episode is not None:
        return list(episode.gold_calls)
    session = getattr(inner, "session", None)
    task = getattr(session, "task", None)
    return list(getattr(task, "oracle_calls", ()))


class Fuzzer:
    """Seeded generator of hostile and valid actions (``random.Random``: fast enough for 10^6)."""

    def __init__(self, env: Any, seed: int):
        self.rng = random.Random(seed)
        self.space = env.action_space
        self.space.seed(seed)
        samples = [self.space.sample() for _ in range(500)]  # the suite's tools and argument names, as offered
        self.tools = sorted({a["name"] for a in samples}) + ["traffic_status_road_api", "teleport"]
        self.arg_names = sorted({k for a in samples for k in a["arguments"]}) + ["extra", "", "名称"]
        limits = env.unwrapped.limits
        self.long = limits.max_string_chars
        self.digits = limits.max_number_digits
        self.megabyte = "京" * 1_000_000
        self.categories: list[tuple[str, float, Callable[[Any], Any]]] = [
            ("valid_sample", 10, lambda env: self.space.sample()),
            ("gold", 8, self.gold),
            ("gold_one_value_replaced", 25, self.gold_mutated),
            ("hostile_arguments", 15, self.hostile_arguments),
            ("json_text", 14, self.json_text),
            ("openai_shape", 10, self.openai_shape),
            ("envelope_garbage", 10, self.envelope_garbage),
            ("finish", 7, self.finish),
            ("plain_text_answer", 5, self.plain_text_answer),
            ("hostile_object", 5, self.hostile_object),
            ("megabyte", 1, self.megabyte_action),
        ]
        self.weights = [w for _, w, _ in self.categories]

    # ---------------------------------------------------------------- values
    def nested(self, depth: int) -> Any:
        value: Any = [] if self.rng.random() < 0.5 else {}
        for _ in range(depth):
            value = [value] if self.rng.random() < 0.5 else {"a": value}
        return value

    def text(self) -> str:
        rng = self.rng
        pick = rng.random()
        if pick < 0.3:
            return "".join(chr(rng.choice((rng.randint(32, 126), rng.randint(0x4E00, 0x9FFF),
                                           rng.randint(1, 0x10FFFF))))
                           for _ in range(rng.randint(0, 12)))
        if pick < 0.5:
            return rng.choice(SURROGATES)
        if pick < 0.7:
            return "1" * rng.choice((400, 5_000)) + rng.choice((",39.9", "", ".5,39.9"))
        if pick < 0.85:
            return "京" * rng.choice((self.long - 1, self.long + 1, 3 * self.long))
        return rng.choice(("", " ", "\x00", "116.4,39.9", "北京市", "NaN", "true", "[]"))

    def value(self) -> Any:
        rng = self.rng
        kind = rng.randrange(10)
        if kind == 0:
            return 10 ** rng.choice((self.digits, 400, 4_301, 6_000)) * rng.choice((1, -1))
        if kind == 1:
            return rng.choice((math.nan, math.inf, -math.inf, 1e308, -0.0, 5e-324))
        if kind == 2:
            return self.nested(rng.choice((3, 17, 200, 990, 1_500)))
        if kind == 3:
            return rng.choice(({1, 2}, b"\xff", object(), 1j, (1, 2), {1: "x"}, frozenset()))
        if kind == 4:
            return rng.choice(([], {}, True, False, None, 0, -1, 1.5, [self.text()], {"k": self.text()}))
        return self.text()

    # ---------------------------------------------------------------- actions
    def gold(self, env: Any) -> dict[str, Any]:
        calls = gold_calls(env)
        if not calls:
            return self.space.sample()
        call = calls[self.rng.randrange(len(calls))]
        return {"name": call.name, "arguments": dict(call.arguments)}

    def gold_mutated(self, env: Any) -> dict[str, Any]:
        action = self.gold(env)
        arguments = action["arguments"]
        key = (self.rng.choice(list(arguments) or ["extra"]) if self.rng.random() < 0.8
               else self.rng.choice(self.arg_names))
        arguments[key] = self.value()
        return action

    def hostile_arguments(self, env: Any) -> dict[str, Any]:
        arguments = {self.rng.choice(self.arg_names): self.value() for _ in range(self.rng.randint(0, 3))}
        return {"name": self.rng.choice(self.tools), "arguments": arguments}

    def json_text(self, env: Any) -> str:
        rng = self.rng
        tool, name = rng.choice(self.tools), rng.choice(self.arg_names)
        kind = rng.randrange(6)
        if kind == 0:
            return '{"name": "%s", "arguments": {"%s": %s}}' % (tool, name, "9" * rng.choice((41, 400, 4_301, 9_000)))
        if kind == 1:
            depth = rng.choice((17, 990, 5_000))
            return '{"name": "%s", "arguments": {"%s": %s}}' % (tool, name, "[" * depth + "]" * depth)
        if kind == 2:
            return '{"name": "%s", "arguments": {"%s": %s}}' % (
                tool, name, rng.choice(("NaN", "Infinity", "-Infinity", "1e400")))
        if kind == 3:
            return rng.choice(("{not json", '{"name": "query_poi", "arguments": {', "", "[1, 2]", "null", '"x"',
                               "\ud800"))
        action = self.gold_mutated(env) if rng.random() < 0.5 else self.space.sample()
        try:  # ensure_ascii escapes lone surrogates: valid JSON grammar, invalid Unicode
            return json.dumps(action, ensure_ascii=rng.random() < 0.5)
        except (TypeError, ValueError, RecursionError):
            return json.dumps({"name": action.get("name"), "arguments": {"x": self.text()}})

    def openai_shape(self, env: Any) -> dict[str, Any]:
        action = self.gold_mutated(env) if self.rng.random() < 0.6 else self.space.sample()
        arguments: Any = action["arguments"]
        if self.rng.random() < 0.7:
            try:
                arguments = json.dumps(arguments, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                arguments = '{"broken": '
        return {"id": "call_0", "type": "function", "function": {"name": action["name"], "arguments": arguments}}

    def envelope_garbage(self, env: Any) -> Any:
        rng = self.rng
        return rng.choice((
            lambda: {"arguments": {}},
            lambda: {"name": self.value(), "arguments": {}},
            lambda: {"name": "teleport" + self.text()[:10], "arguments": {"to": "home"}},
            lambda: {"name": "query_poi", "arguments": {"keywords": "银行"}, self.text()[:20]: self.value()},
            lambda: {"name": "query_poi", "arguments": self.value()},
            lambda: {"type": "function", "function": self.value()},
            lambda: self.value(),
        ))()

    def finish(self, env: Any) -> dict[str, Any]:
        rng = self.rng
        arguments: dict[str, Any] = {"answer": rng.choice(("全程约12公里。", self.text(), "\ud800 晴"))}
        if rng.random() < 0.5:
            arguments[rng.choice(("intent", "slots", "plan", "route_index", "extra"))] = self.value()
        return {"name": "finish", "arguments": arguments}

    def plain_text_answer(self, env: Any) -> dict[str, Any]:
        """A finish whose answer is prose made of what quantity and time readers scan: digits of every script,
        numerals, separators, units and signs in random order (``Ⅻ1：12:30`` crashed MobilePA's reader)."""
        rng = self.rng
        pieces = [rng.choice(NUMBERISH) if rng.random() < 0.8 else self.text()[:8] for _ in range(rng.randint(1, 14))]
        return {"name": "finish", "arguments": {"answer": "".join(pieces)}}

    def hostile_object(self, env: Any) -> Any:
        """A Python object whose own code raises, or a number no float holds, as the action, its arguments or one
        argument (in-process policies; test_hostile_objects.py holds the same recipes as a property test)."""
        rng = self.rng
        obj = hostile_object(rng)
        place = rng.randrange(4)
        if place == 0:
            return obj
        if place == 1:
            return {"name": "finish", "arguments": obj}
        if place == 2:
            return {"name": rng.choice(self.tools), "arguments": {rng.choice(self.arg_names): obj}}
        return {"name": "finish", "arguments": {"answer": obj}}

    def megabyte_action(self, env: Any) -> Any:
        tag = str(self.rng.random())  # a distinct string every time: nothing may be cached or kept
        if self.rng.random() < 0.5:
            return tag + self.megabyte
        name, argument = self.rng.choice(self.tools), self.rng.choice(self.arg_names)
        return {"name": name, "arguments": {argument: tag + self.megabyte}}

    def draw(self, env: Any) -> tuple[str, Any]:
        name, _, make = self.rng.choices(self.categories, weights=self.weights)[0]
        return name, make(env)


def text_cache_functions() -> tuple[Any, ...]:
    """The functions whose caches are keyed by agent text (mobility_env.tools.bounded_text_cache)."""
    from mobility_env.canonical import _canonical_point_text
    from mobility_env.tools import _parse_coordinate_text
    from mobility_rewards.mobilitybench.slots import _cached_city, _cached_fold, _cached_point, _canonical_line

    return (_parse_coordinate_text, _canonical_point_text, _cached_point, _cached_fold, _cached_city, _canonical_line)


def text_caches() -> dict[str, Any]:
    """Entries and capacity of each text cache."""
    return {f"{f.__module__}.{f.__name__}": [sum(p.cache_info().currsize for p in f.cache_parts),
                                             sum(p.cache_info().maxsize for p in f.cache_parts)]
            for f in text_cache_functions()}


def check(result: Any, error_types: tuple[str, ...]) -> str | None:
    """What is wrong with one step's return value, or None."""
    if not isinstance(result, tuple) or len(result) != 5:
        return "not a 5-tuple"
    obs, reward, terminated, truncated, info = result
    if not isinstance(obs, str):
        return "observation not str"
    try:
        obs.encode("utf-8")
    except UnicodeEncodeError:
        return "observation not UTF-8"
    if not isinstance(reward, float) or not math.isfinite(reward):
        return f"reward {reward!r}"
    if "error" in info and info["error"].get("type") not in error_types:
        return f"error type {info['error'].get('type')!r}"
    return None


def main() -> None:
    import mobility_env  # noqa: F401  (registers the suites)
    from mobility_env.suites import env_ids

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="all", choices=["all", *env_ids()],
                        help="the env fuzzed, or all registered ones in turn (default all)")
    parser.add_argument("--n", type=int, default=1_000_000, help="fuzzed actions per env (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default=None, help="built directory or official file for MobilityBench-v0, a task "
                                                     "directory for MobilePA-v0 (default: the bundled set)")
    parser.add_argument("--direct", action="store_true", help="env.unwrapped instead of gymnasium.make (no wrappers)")
    parser.add_argument("--episode-steps", type=int, default=12,
                        help="reset after this many actions (default 12: episodes also reach the step limit)")
    parser.add_argument("--checkpoints", type=int, default=20)
    parser.add_argument("--clear-caches", action="store_true",
                        help="empty the text caches after each checkpoint: what remains growing would be a leak")
    parser.add_argument("--out", default=None, help="also write the JSON result here")
    args = parser.parse_args()
    results = [fuzz(env_id, args) for env_id in (env_ids() if args.env == "all" else [args.env])]
    emit(results[0] if len(results) == 1 else {"benchmark": "fuzz_step", "envs": results}, args.out)


def fuzz(env_id: str, args: argparse.Namespace) -> dict[str, Any]:
    """Fuzz one env for ``args.n`` actions; print its table and return its result."""
    import gymnasium as gym

    from mobility_env.actions import ERROR_TYPES

    env = gym.make(env_id, **({"data": args.data} if args.data else {}))
    if args.direct:
        env = env.unwrapped
    env.reset(seed=args.seed)
    fuzzer = Fuzzer(env, args.seed)
    every = max(1, args.n // args.checkpoints)
    exceptions: Counter[str] = Counter()
    violations: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    first_failures: list[str] = []
    rows: list[dict[str, Any]] = []
    steps_in_episode = 0
    started = time.perf_counter()

    def checkpoint(done: int) -> None:
        memory, caches = memory_kib(), text_caches()
        rows.append({"actions": done, "seconds": round(time.perf_counter() - started, 1),
                     "rss_mib": round(memory.get("rss_kib", 0) / 1024, 1),
                     "anon_mib": round(memory.get("anon_kib", 0) / 1024, 1),
                     "cache_entries": sum(n for n, _ in caches.values()),
                     "cache_capacity": sum(m for _, m in caches.values()),
                     "caches": caches, "exceptions": sum(exceptions.values())})

    checkpoint(0)
    for done in range(1, args.n + 1):
        category, action = fuzzer.draw(env)
        categories[category] += 1
        try:
            result = env.step(action)
        except Exception:  # the very thing being counted: step must never raise
            exceptions[category] += 1
            if len(first_failures) < 5:
                first_failures.append(f"[{category}] {traceback.format_exc(limit=6)}")
            env.reset()
            steps_in_episode = 0
            continue
        problem = check(result, ERROR_TYPES)
        if problem is not None:
            violations[f"{category}: {problem}"] += 1
        info = result[4]
        errors[info["error"]["type"] if "error" in info else "none"] += 1
        steps_in_episode += 1
        if result[2] or result[3] or steps_in_episode >= args.episode_steps:
            env.reset()
            steps_in_episode = 0
        if done % every == 0 or done == args.n:
            checkpoint(done)
            if args.clear_caches:
                for function in text_cache_functions():
                    function.cache_clear()
    elapsed = time.perf_counter() - started

    rss = [row["rss_mib"] for row in rows]
    print(f"\n[{env_id}]")
    print(f"{'actions':>10} {'seconds':>8} {'RSS MiB':>8} {'anon MiB':>9} "
          f"{'text cache entries (of ' + format(rows[0]['cache_capacity'], ',') + ')':>30} {'exceptions':>10}")
    for row in rows:
        print(f"{row['actions']:>10,} {row['seconds']:>8} {row['rss_mib']:>8} {row['anon_mib']:>9} "
              f"{row['cache_entries']:>30,} {row['exceptions']:>10}")
    print(f"\nactions {args.n:,} in {elapsed:.0f} s ({args.n / elapsed:,.0f}/s); "
          f"exceptions {sum(exceptions.values())}; "
          f"contract violations {sum(violations.values())}")
    print(f"RSS MiB start / peak / end: {rss[0]} / {max(rss)} / {rss[-1]}  (after the first checkpoint: "
          f"{rows[1]['rss_mib'] if len(rows) > 1 else rss[0]} / {max(rss[1:] or rss)} / {rss[-1]})")
    for failure in first_failures:
        print(failure)
    env.close()
    return {"benchmark": "fuzz_step", "env_id": env_id, "n": args.n, "seed": args.seed,
            "env": "direct" if args.direct else "gymnasium.make",
            "seconds": round(elapsed, 1), "actions_per_s": round(args.n / elapsed), "exceptions": dict(exceptions),
            "violations": dict(violations), "categories": dict(categories), "error_types": dict(errors),
            "rss_mib": {"start": rss[0], "peak": max(rss), "end": rss[-1]}, "checkpoints": rows, "machine": machine()}


if __name__ == "__main__":
    main()
