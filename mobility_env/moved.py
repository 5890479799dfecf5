"""Old import paths of modules that moved into the suite folders, kept working for one release.

Each package names its own moves (``MOVED`` in its ``__init__``) and calls :func:`alias_moved`. Importing an old
path (``import mobility_agents.rule``, ``from mobility_env.env import MobilityEnv``) warns with a
``DeprecationWarning`` naming the new one and gives a module whose names are the new module's: the same classes
and functions, not copies (setting an attribute on the old path does not reach the new module).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from typing import Any, Callable, Mapping, Sequence


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, moved: Mapping[str, str]) -> None:
        self.moved = dict(moved)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in self.moved else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the default: a fresh module, filled by exec_module

    def exec_module(self, module: types.ModuleType) -> None:
        new = self.moved[module.__name__]
        warnings.warn(f"{module.__name__} moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new)
        module.__dict__.update({name: value for name, value in vars(target).items()
                                if not (name.startswith("__") and name.endswith("__"))})
        module.__doc__ = f"Moved to :mod:`{new}`."

        def __getattr__(name: str) -> Any:  # a name the new module defines lazily (its own __getattr__)
            return getattr(target, name)

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def moved_to(package: str, new: str) -> str:
    """The full name of a ``MOVED`` entry: relative to ``package``, or absolute when it names another package."""
    return new if new.startswith("mobility_") else f"{package}.{new}"


def alias_moved(package: str, moved: Mapping[str, str]) -> None:
    """Make each old ``package.<old>`` importable as its new module (see :func:`moved_to`)."""
    sys.meta_path.append(_MovedModules({f"{package}.{old}": moved_to(package, new) for old, new in moved.items()}))


def names_moved_to(package: str, module: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of a package that was one module before: the names of its ``module`` (now
    ``package.module``), each with a ``DeprecationWarning`` naming the new place."""

    def __getattr__(name: str) -> Any:
        target = importlib.import_module(f"{package}.{module}")
        if name.startswith("__") or not hasattr(target, name):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(f"{package}.{name} moved to {package}.{module}.{name}", DeprecationWarning, stacklevel=2)
        return getattr(target, name)

    return __getattr__
