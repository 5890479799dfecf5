"""Tool code by domain; importing this package registers every tool in ``catalogue.PHONE_TOOLS``.

One module per domain of :data:`~mobility_env.mobilepa.catalogue.DOMAINS` (``maps_travel`` answers its
reads from the MobilityBench replay sandbox), and :mod:`.memory`, the assistant's long-term memory (tools
of the ``ai_assistant`` domain, in a module of their own for their retrieval). Tools are registered in
import order: a module registers its tools when first imported (``system_settings`` first: the others
build on its helpers). The five domains that complete the paper's thirteen (messaging & social, shopping &
payments, health & fitness, smart home, files & photos) are imported last, so that the tools registered
before them keep their places in the catalogue's order.
"""

from . import (ai_assistant, apps_storage, audio_entertainment, calls_communication, display_sound,  # noqa: F401
               maps_travel, memory, skills, subagents, system_settings, time_management)
from . import files_photos, health_fitness, messaging_social, shopping_payments, smart_home  # noqa: F401
