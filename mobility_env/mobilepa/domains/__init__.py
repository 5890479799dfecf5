"""Tool code by domain; importing this package registers every tool in ``catalogue.PHONE_TOOLS``.

One module per domain of :data:`~mobility_env.mobilepa.catalogue.DOMAINS` (``maps_travel`` reuses the
MobilityBench replay tools and has no module here). Tools are registered in import order: a module
registers its tools when first imported (``system_settings`` first: the others build on its helpers).
"""

from . import (ai_assistant, apps_storage, audio_entertainment, calls_communication, display_sound,  # noqa: F401
               system_settings, time_management)
