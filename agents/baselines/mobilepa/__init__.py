"""MobilePA-v0's baselines: :class:`~.rule.PhoneRuleAgent` (plays from observations: :mod:`.parse` reads the request,
:mod:`.capabilities` handles memory, skills and sub-agents) and, in :mod:`.scripted`, ``PhoneOracleAgent`` (replays
the oracle calls), ``FinishAtOnceAgent`` (a floor) and ``play_tasks``."""
