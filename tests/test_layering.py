"""The import layering, read from the sources with ``ast`` (nothing is imported).

Layers, lowest first; a module may import its own layer and the layers below, never above:

0. **kernel**: ``mobility_env.*`` (episodes, loaders, tools, sandbox, build, stores, the
   :class:`~mobility_env.scoring.Scorer` protocol, the synthetic generator), except below;
1. **scoring**: ``mobility_rewards.*``;
2. **env**: ``mobility_env.mobilitybench.env``, ``mobility_env.mobilepa.env``, each suite's runtime part
   (``mobility_env.mobilitybench.suite``, ``mobility_env.mobilepa.suite``: its data and env) and ``mobility_env``
   itself (its ``__init__`` registers ``MobilityBench-v0`` and ``MobilePA-v0``, their Gymnasium ids and their suite
   entries, and resolves ``mobility_env.MobilityEnv`` lazily);
3. **composition**: ``mobility_agents.*`` and the CLI (``mobility_env.cli``, which names
   the agents' and the rewards' subcommand modules, and ``mobility_env.synth.commands``, whose
   ``synth --suite mobilepa`` checks each generated task with the scoring layer's verifier).

Every import counts, wherever it stands: at module level, deferred inside a function, under
``if TYPE_CHECKING``; so does a string that names a module exactly (``importlib.import_module``
arguments, registration entry points ``"pkg.mod:Attr"``). ``mobility_env/__init__.py`` runs
before every kernel module, so its own module-level imports must stay in the kernel. Import
cycles (import statements, deferred ones included) are checked among the modules of each package.

Across the layers runs the horizontal rule: each suite is a folder in each package (``SUITES``), everything else
is the shared core or joins the suites (``JOINING``: registration, the command line, reports over both, the answer
generators); the core refers to no suite, and a suite to no other suite, except the maps-and-travel bridge
(``BRIDGE``, each entry still in use).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = {"mobility_env": REPO / "mobility_env", "mobility_rewards": REPO / "rewards",
                "mobility_agents": REPO / "agents"}

KERNEL, SCORING, ENV, COMPOSITION = 0, 1, 2, 3
LAYER_NAMES = {KERNEL: "kernel", SCORING: "scoring", ENV: "env", COMPOSITION: "composition"}
# each suite's runtime part (mobility_env.*.suite) builds its env: env layer
ENV_MODULES = frozenset({"mobility_env", "mobility_env.mobilitybench.env", "mobility_env.mobilepa.env",
                         "mobility_env.mobilitybench.suite", "mobility_env.mobilepa.suite"})
COMPOSITION_MODULES = frozenset({"mobility_env.cli", "mobility_env.synth.commands"})

# Cycles that must be fixed in files this test's author does not own; each entry is the set of
# modules of one cycle. The test fails when a listed cycle is gone (delete the entry then) and
# when any other cycle appears.
KNOWN_CYCLES: list[frozenset[str]] = []

_MODULE_NAME = re.compile(r"(mobility_env|mobility_rewards|mobility_agents)(\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class Reference:
    """``source`` refers to ``target`` at ``line``: by an import statement, or by a string naming it."""

    source: str
    target: str
    line: int
    module_level: bool  # runs when ``source`` is imported (not deferred inside a function)
    by_string: bool


def layer_of(module: str) -> int:
    if module in COMPOSITION_MODULES or module.split(".")[0] == "mobility_agents":
        return COMPOSITION
    if module in ENV_MODULES:
        return ENV
    if module.split(".")[0] == "mobility_rewards":
        return SCORING
    return KERNEL


def discover_modules() -> dict[str, tuple[Path, bool]]:
    """``{module name: (file, is package __init__)}`` for every ``.py`` file of the three packages."""
    modules: dict[str, tuple[Path, bool]] = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            is_package = parts[-1] == "__init__"
            name = ".".join((package, *parts[:-1])) if is_package else ".".join((package, *parts))
            modules[name] = (path, is_package)
    return modules


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([name] if name else [])])


def _docstring_nodes(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                ids.add(id(value))
    return ids


def references(module: str, source: str, known: set[str], *, is_package: bool = False) -> list[Reference]:
    """Every reference of ``module`` (its ``source`` text) to one of the ``known`` modules.

    ``from pkg import name`` refers to ``pkg.name`` when that is a module, else to ``pkg``;
    ``import a.b.c`` to ``a.b.c``. A string constant (not a docstring) that is exactly a known
    module name, optionally followed by ``:attribute``, is a reference by string.
    """
    tree = ast.parse(source, filename=module)
    deferred: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            deferred.update(id(inner) for inner in ast.walk(node) if inner is not node)
    docstrings = _docstring_nodes(tree)
    found: list[Reference] = []

    def add(target: str, node: ast.AST, by_string: bool = False) -> None:
        if target in known:
            found.append(Reference(module, target, node.lineno, id(node) not in deferred, by_string))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_relative(module, is_package, node.level, node.module) if node.level else node.module or ""
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                add(submodule if submodule in known else base, node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value.split(":", 1)[0] if node.value.count(":") == 1 else node.value
            if _MODULE_NAME.fullmatch(text):
                add(text, node, by_string=True)
    return found


def all_references(sources: dict[str, tuple[str, bool]]) -> list[Reference]:
    """References among ``{module: (source, is_package)}``."""
    known = set(sources)
    return [ref for module, (source, is_package) in sorted(sources.items())
            for ref in references(module, source, known, is_package=is_package)]


def layer_violations(refs: list[Reference]) -> list[str]:
    """One line per reference that points up the layers, or that makes ``import mobility_env`` leave the kernel."""
    problems = []
    for ref in refs:
        how = "names by string" if ref.by_string else "imports" if ref.module_level else "imports (deferred)"
        if layer_of(ref.target) > layer_of(ref.source):
            problems.append(f"{ref.source}:{ref.line} ({LAYER_NAMES[layer_of(ref.source)]}) {how} {ref.target} "
                            f"({LAYER_NAMES[layer_of(ref.target)]})")
        elif ref.source == "mobility_env" and ref.module_level and not ref.by_string and layer_of(ref.target) != KERNEL:
            problems.append(f"mobility_env/__init__.py:{ref.line} imports {ref.target} at import time: every kernel "
                            "module would load it")
    return problems


def import_cycles(refs: list[Reference], package: str) -> list[frozenset[str]]:
    """The strongly connected components (more than one module, or a module importing itself) of the
    import-statement graph among ``package``'s modules (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {}
    for ref in refs:
        if ref.by_string or ref.source.split(".")[0] != package or ref.target.split(".")[0] != package:
            continue
        graph.setdefault(ref.source, set()).add(ref.target)
        graph.setdefault(ref.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []

    def visit(node: str) -> None:  # recursion depth is bounded by the module count (~100)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                cycles.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


@pytest.fixture(scope="module")
def project_refs() -> list[Reference]:
    modules = discover_modules()
    expected = {"mobility_env.mobilitybench.env", "mobility_env.mobilitybench.sandbox",
                "mobility_rewards.mobilitybench.shaping", "mobility_agents.runner"}
    assert expected <= set(modules)
    return all_references({name: (path.read_text(encoding="utf-8"), is_package)
                           for name, (path, is_package) in modules.items()})


# ---------------------------------------------------------------- the horizontal rule

# Each suite is a folder in each package; the shared core (every other module of mobility_env and mobility_rewards)
# knows no suite. A suite's modules refer to the core, never to another suite's modules, except the bridge below.
SUITES = {
    "mobilitybench": ("mobility_env.mobilitybench", "mobility_env.synth", "mobility_rewards.mobilitybench",
                      "mobility_agents.baselines.mobilitybench"),
    "mobilepa": ("mobility_env.mobilepa", "mobility_rewards.mobilepa", "mobility_agents.baselines.mobilepa"),
}
# Modules that join the suites (registration, the command line, the reports over both, the answer generators that
# probe both): they may name any suite. Everything else outside a suite folder is core.
JOINING = frozenset({"mobility_env", "mobility_env.cli", "mobility_env.synth.commands", "mobility_rewards",
                     "mobility_rewards.commands", "mobility_rewards.repeats", "mobility_rewards.suites"})
JOINING_PACKAGES = ("mobility_agents", "mobility_rewards.probes")  # composition, and the generators of both suites
# The maps-and-travel bridge: MobilePA's maps & travel domain replays MobilityBench's recorded map responses
# (its store, its compact observations) and draws its parameters with MobilityBench's tool samples.
BRIDGE = frozenset({
    ("mobility_env.mobilepa.domains.maps_travel", "mobility_env.mobilitybench.observation"),
    ("mobility_env.mobilepa.domains.maps_travel", "mobility_env.mobilitybench.sandbox"),
    ("mobility_env.mobilepa.domains.maps_travel", "mobility_env.mobilitybench.store"),
    ("mobility_env.mobilepa.generate_world", "mobility_env.mobilitybench.observation"),
    ("mobility_env.mobilepa.generate_world", "mobility_env.mobilitybench.store"),
    ("mobility_env.mobilepa.params", "mobility_env.mobilitybench.tool_samples"),
})


def suite_of(module: str) -> str | None:
    if module in JOINING:
        return None
    for suite, prefixes in SUITES.items():
        if any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return suite
    return None


def is_joining(module: str) -> bool:
    return module in JOINING or any(module == p or module.startswith(p + ".") for p in JOINING_PACKAGES)


def horizontal_violations(refs: list[Reference]) -> list[str]:
    """One line per reference from a suite to another suite (outside the bridge) or from the core to any suite."""
    problems = []
    for ref in refs:
        target = suite_of(ref.target)
        if target is None or is_joining(ref.source):
            continue
        source = suite_of(ref.source)
        if source == target or (ref.source, ref.target) in BRIDGE:
            continue
        where = f"suite {source}" if source else "the core"
        problems.append(f"{ref.source}:{ref.line} ({where}) refers to {ref.target} (suite {target})")
    return problems


# ---------------------------------------------------------------- the project


def test_no_import_points_up_the_layers(project_refs):
    assert layer_violations(project_refs) == []


def test_suites_refer_to_the_core_never_to_each_other(project_refs):
    assert horizontal_violations(project_refs) == []


def test_the_bridge_is_still_used(project_refs):
    # an entry nothing uses any more is deleted, so the list stays the bridge and not a list of exemptions
    used = {(ref.source, ref.target) for ref in project_refs}
    assert sorted(BRIDGE - used) == []


@pytest.mark.parametrize("module, source, flagged", [
    ("mobility_env.mobilepa.state", "from mobility_env.mobilitybench.episode import Episode\n", True),
    ("mobility_rewards.mobilitybench.verify", "def f():\n    from mobility_rewards.mobilepa import verify\n", True),
    ("mobility_env.actions", "from mobility_env.mobilitybench.tools import X\n", True),
    ("mobility_rewards.runs", "NAME = 'mobility_rewards.mobilepa.verify'\n", True),
    ("mobility_env.mobilepa.params", "from ..mobilitybench.tool_samples import sample_coordinate\n", False),
    ("mobility_rewards.suites", "from .mobilepa.verify import PhoneScorer\n", False),
    ("mobility_agents.runner", "from mobility_agents.baselines.mobilepa.rule import PhoneRuleAgent\n", False),
    ("mobility_env.mobilepa.state", "from mobility_env.reading.quantities import quantities\n", False),
])
def test_horizontal_checker(module, source, flagged):
    known = {"mobility_env.mobilitybench.episode", "mobility_rewards.mobilepa.verify",
             "mobility_env.mobilitybench.tools",
             "mobility_env.mobilitybench.tool_samples", "mobility_agents.baselines.mobilepa.rule",
             "mobility_env.reading.quantities"}
    problems = horizontal_violations(references(module, source, known))
    assert len(problems) == int(flagged), problems


def test_the_env_gets_its_default_scorer_from_the_scoring_layer(project_refs):
    env_refs = {ref.target for ref in project_refs if ref.source == "mobility_env.mobilitybench.env"}
    assert "mobility_rewards.mobilitybench.scorer" in env_refs and "mobility_env.scoring" in env_refs
    # the scorer protocol is kernel: the scoring layer implements it without importing the env
    assert layer_of("mobility_env.scoring") == KERNEL
    scorer_refs = {ref.target for ref in project_refs if ref.source == "mobility_rewards.mobilitybench.scorer"}
    assert "mobility_env.scoring" in scorer_refs


@pytest.mark.parametrize("package", sorted(PACKAGE_DIRS))
def test_no_import_cycles(project_refs, package):
    cycles = import_cycles(project_refs, package)
    known = [cycle for cycle in KNOWN_CYCLES if next(iter(cycle)).split(".")[0] == package]
    assert sorted(map(sorted, cycles)) == sorted(map(sorted, known))


# ---------------------------------------------------------------- the checker itself


FAKE_KNOWN = {"mobility_env", "mobility_env.tools", "mobility_env.mobilitybench.sandbox",
              "mobility_env.mobilitybench.env", "mobility_env.cli", "mobility_rewards",
              "mobility_rewards.mobilitybench.shaping", "mobility_agents", "mobility_agents.runner"}


def _violations(module: str, source: str, *, is_package: bool = False) -> list[str]:
    return layer_violations(references(module, source, FAKE_KNOWN, is_package=is_package))


@pytest.mark.parametrize("module, source", [
    ("mobility_env.mobilitybench.sandbox", "import mobility_rewards.mobilitybench.shaping\n"),
    ("mobility_env.mobilitybench.sandbox",
     "def score():\n    from mobility_rewards.mobilitybench.shaping import RewardShaper\n"),
    ("mobility_env.mobilitybench.sandbox",
     "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mobility_agents import runner\n"),
    ("mobility_env.mobilitybench.sandbox",
     "import importlib\nMOD = importlib.import_module('mobility_rewards.mobilitybench.shaping')\n"),
    ("mobility_env.mobilitybench.sandbox", "from .env import MobilityEnv\n"),
    ("mobility_env.mobilitybench.sandbox", "from .. import cli\n"),
    ("mobility_env.tools", "ENTRY = 'mobility_env.mobilitybench.env:MobilityEnv'\n"),
    ("mobility_rewards.mobilitybench.shaping", "from mobility_agents.runner import run\n"),
    ("mobility_rewards.mobilitybench.shaping", "from mobility_env.mobilitybench import env\n"),
    ("mobility_rewards.mobilitybench.shaping",
     "def make():\n    from mobility_env.mobilitybench.env import MobilityEnv\n"),
    ("mobility_env.mobilitybench.env", "from mobility_agents import runner\n"),
    ("mobility_env", "from mobility_rewards.mobilitybench import shaping\n"),
    ("mobility_env", "from .mobilitybench.env import MobilityEnv\n"),
])
def test_checker_flags_a_wrong_way_import(module, source):
    problems = _violations(module, source, is_package=module in ("mobility_env", "mobility_rewards"))
    assert len(problems) == 1 and problems[0].startswith(module), problems


@pytest.mark.parametrize("module, source", [
    ("mobility_env.mobilitybench.sandbox", "from .tools import TOOLS\nimport mobility_env.tools\n"),
    ("mobility_env.mobilitybench.sandbox",
     '"""Used by mobility_rewards.mobilitybench.shaping and mobility_agents.runner."""\n'),
    ("mobility_env.mobilitybench.sandbox", "MESSAGE = 'see mobility_rewards.mobilitybench.shaping for the rewards'\n"),
    ("mobility_rewards.mobilitybench.shaping",
     "from mobility_env.tools import TOOLS\nfrom mobility_env.mobilitybench import sandbox\n"),
    ("mobility_env.mobilitybench.env",
     "from mobility_rewards.mobilitybench.shaping import RewardShaper\nfrom . import tools\n"),
    ("mobility_env.cli", "MODULES = ('mobility_agents.runner', 'mobility_rewards.mobilitybench.shaping')\n"),
    ("mobility_env",
     "ENTRY = 'mobility_env.mobilitybench.env:MobilityEnv'\ndef load():\n    import mobility_env.mobilitybench.env\n"),
    ("mobility_agents.runner",
     "from mobility_env.mobilitybench.env import MobilityEnv\nfrom mobility_rewards.mobilitybench import shaping\n"),
])
def test_checker_accepts_a_right_way_import(module, source):
    assert _violations(module, source, is_package=module == "mobility_env") == []


def test_relative_imports_resolve_from_modules_and_packages():
    known = {"mobility_env", "mobility_env.synth", "mobility_env.synth.names", "mobility_env.errors",
             "mobility_env.tools"}
    refs = references("mobility_env.synth.world", "from . import names\nfrom ..errors import ConfigError\n"
                      "from .. import tools\n", known)
    assert [(r.target, r.line) for r in refs] == [("mobility_env.synth.names", 1), ("mobility_env.errors", 2),
                                                  ("mobility_env.tools", 3)]
    refs = references("mobility_env.synth", "from .names import X\nfrom . import names\n", known, is_package=True)
    assert [r.target for r in refs] == ["mobility_env.synth.names", "mobility_env.synth.names"]


def test_deferred_imports_are_marked_and_still_count():
    source = "import mobility_env.tools\ndef f():\n    import mobility_rewards.mobilitybench.shaping\n"
    refs = references("mobility_env.mobilitybench.sandbox", source, FAKE_KNOWN)
    assert [(r.target, r.module_level) for r in refs] == [("mobility_env.tools", True),
                                                          ("mobility_rewards.mobilitybench.shaping", False)]
    assert len(layer_violations(refs)) == 1


def test_cycle_finder_reports_deferred_cycles_and_ignores_strings():
    sources = {
        "mobility_env.a": ("from .b import X\n", False),
        "mobility_env.b": ("def f():\n    from .a import Y\n", False),  # deferred: still a cycle
        "mobility_env.c": ("from . import d\n", False),
        "mobility_env.d": ("NAME = 'mobility_env.c'\n", False),  # by string: no cycle
        "mobility_env.e": ("import mobility_env.e\n", False),  # imports itself
    }
    cycles = import_cycles(all_references(sources), "mobility_env")
    assert sorted(map(sorted, cycles)) == [["mobility_env.a", "mobility_env.b"], ["mobility_env.e"]]
