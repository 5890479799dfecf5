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
from typing import Any, Mapping, Sequence


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


def alias_moved(package: str, moved: Mapping[str, str]) -> None:
    """Make each old ``package.<old>`` importable as ``package.<new>`` (names relative to ``package``)."""
    sys.meta_path.append(_MovedModules({f"{package}.{old}": f"{package}.{new}" for old, new in moved.items()}))
