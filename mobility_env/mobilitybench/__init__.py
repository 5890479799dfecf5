"""MobilityBench-v0's own parts beside the shared kernel (:mod:`.suite`: what a run needs to open its data and build
its env); the env itself is :class:`mobility_env.env.MobilityEnv`."""
