"""MobilePA-v0's scoring: the verifier and per-step rewards (:mod:`.verify`), the memory and delegation gates, the
scorecard (:mod:`.scorecard`) and the report (:mod:`.report`).

``from mobility_rewards.mobilepa import PhoneScorer`` (this package was one module before the suite folders) still
works, with a ``DeprecationWarning``: import from :mod:`mobility_rewards.mobilepa.verify`.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    import importlib
    import warnings

    verify = importlib.import_module(f"{__name__}.verify")
    if name.startswith("__") or not hasattr(verify, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"{__name__}.{name} moved to {__name__}.verify.{name}", DeprecationWarning, stacklevel=2)
    return getattr(verify, name)
