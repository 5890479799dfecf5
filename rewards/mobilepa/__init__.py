"""MobilePA-v0's scoring: the verifier and per-step rewards (:mod:`.verify`), the memory and delegation gates, the
scorecard (:mod:`.scorecard`) and the report (:mod:`.report`).

``from mobility_rewards.mobilepa import PhoneScorer`` (this package was one module before the suite folders) still
works, with a ``DeprecationWarning``: import from :mod:`mobility_rewards.mobilepa.verify`.
"""

from mobility_env.moved import names_moved_to

__getattr__ = names_moved_to(__name__, "verify")
