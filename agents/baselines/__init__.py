"""The baselines of each suite, one folder per suite (:mod:`.mobilitybench`, :mod:`.mobilepa`), which never import
each other; ``mobility_agents.suites.BASELINES`` names them for ``--agent rule`` / ``oracle``."""
