"""MobilityBench-v0 beside the shared core: its episodes and data files (:mod:`.episode`, :mod:`.loaders`,
:mod:`.official`, :mod:`.build`, :mod:`.store`), the replay sandbox (:mod:`.sandbox` and its index), its call records
(:mod:`.trajectory`), observations (:mod:`.observation`), the env (:class:`~.env.MobilityEnv`) and its runtime part
(:mod:`.suite`: what a run needs to open its data and build its env)."""
