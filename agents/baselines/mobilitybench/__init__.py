"""MobilityBench-v0's baselines: :class:`~.rule.RuleAgent` (plays from observations; :mod:`.observations` reads
them and writes the answer) and :class:`~.oracle.OracleAgent` (replays the gold: an upper bound)."""
