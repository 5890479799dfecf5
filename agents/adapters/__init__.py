"""The envs handed to trainers and evaluators: :mod:`.openenv` (``mobility-env serve``, an OpenEnv server and its
client) and :mod:`.verifiers` (``load_environment``, verifiers v1). Each drives envs through
``mobility_agents.targets``, so every registered suite works, and reproduces the in-process env step by step."""
