"""OracleAgent: replays the gold tool calls and answers from the replayed evidence.

It reads the episode's gold (privileged), so it is an upper bound and a self-check of the
env and the scorer together: on every episode whose gold is intact (see ``mobility-env
audit``) it must reach FPR 1.0. Its final answer is ``mobility_rewards.mobilitybench.reference.reference_finish``:
the gold intent, slots and plan, and an answer stating the recorded evidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from mobility_rewards.mobilitybench.reference import reference_finish

from ...base import Agent, EpisodeSession

if TYPE_CHECKING:
    from mobility_env.mobilitybench.env import MobilityEnv


class OracleAgent(Agent):
    """Plays ``episode.gold_calls`` in order, then finishes with the reference answer."""

    name = "oracle"

    def play(self, session: EpisodeSession) -> None:
        episode = cast("MobilityEnv", session.env.unwrapped).episode
        assert episode is not None  # a session plays an episode that reset started
        for call in episode.gold_calls:
            session.call(call.name, dict(call.arguments))
            if session.done:
                return
        finish = reference_finish(episode)
        session.finish(finish.answer, intent=finish.intent, slots=finish.slots, plan=finish.plan,
                       route_index=finish.route_index)
