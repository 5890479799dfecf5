"""Display and sound: brightness, dark mode, font size, screen timeout, rotation, refresh rate, night light,
always-on display, wallpaper and screenshots; volume by stream, ringer mode, do-not-disturb (and its schedule),
sound profiles, ringtones, haptics and lock-screen notifications.

Implicit dependencies: brightness needs auto brightness off, a ring volume above 0 needs a ringer that is not
silent, high refresh rates and the always-on display need battery saver off, a wallpaper must be an image file.
"""

from __future__ import annotations

from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import choice, clock, flag, integer, integer_of, text
from ..state import PhoneState
from .apps_storage import free_mb
from .system_settings import blocked_by, choice_code, choice_tool, put_setting, switch_tool

STREAMS = ("media", "ring", "alarm", "call")
RINGER_MODES = ("normal", "vibrate", "silent")
FONT_SIZES = ("small", "default", "large", "largest")
SCREEN_TIMEOUTS = (15, 30, 60, 120, 300, 600)
REFRESH_RATES = (60, 90, 120)
TONES = ("classic", "chime", "marimba", "breeze", "digital", "pulse")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".heic", ".webp")
LOCK_SCREEN_MODES = ("show_all", "hide_content", "hide_all")
#: What each sound profile sets (besides ``sound_profile`` itself).
SOUND_PROFILES: dict[str, dict[str, str]] = {
    "standard": {"ringer_mode": "normal", "volume_ring": "60", "do_not_disturb": "off"},
    "meeting": {"ringer_mode": "vibrate", "volume_ring": "0", "do_not_disturb": "off"},
    "outdoor": {"ringer_mode": "normal", "volume_ring": "100", "do_not_disturb": "off"},
    "sleep": {"ringer_mode": "silent", "volume_ring": "0", "do_not_disturb": "on"},
}


@tool("set_brightness", "display_sound", "Set the screen brightness.", integer("level", "brightness percent", 0, 100),
      writes=("settings",))
def set_brightness(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.setting("auto_brightness") == "on":
        return failure(ErrorKind.STATE_CONFLICT, "auto brightness is on: turn it off first (set_auto_brightness)",
                       setting="auto_brightness", value="on")
    put_setting(state, "brightness", str(args["level"]))
    return success(setting="brightness", value=args["level"])


@tool("set_auto_brightness", "display_sound", "Turn automatic brightness on or off.",
      flag("on", "true for automatic brightness"), writes=("settings",))
def set_auto_brightness(state: PhoneState, args: dict[str, Any]) -> Feedback:
    wanted = "on" if args["on"] else "off"
    if state.setting("auto_brightness", "off") == wanted:
        return failure(ErrorKind.STATE_CONFLICT, f"auto brightness is already {wanted}")
    put_setting(state, "auto_brightness", wanted)
    return success(setting="auto_brightness", value=wanted)


@tool("set_volume", "display_sound", "Set the volume of one audio stream.", choice("stream", "audio stream", STREAMS),
      integer("level", "volume percent", 0, 100), writes=("settings",))
def set_volume(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if args["stream"] == "ring" and state.setting("ringer_mode") == "silent" and args["level"] > 0:
        return failure(ErrorKind.STATE_CONFLICT, "the ringer is silent: set the ringer mode to normal first",
                       setting="ringer_mode", value="silent")
    put_setting(state, f"volume_{args['stream']}", str(args["level"]))
    return success(setting=f"volume_{args['stream']}", value=args["level"])


@tool("set_ringer_mode", "display_sound", "Set the ringer to normal, vibrate or silent.",
      choice("mode", "ringer mode", RINGER_MODES), writes=("settings",))
def set_ringer_mode(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.setting("ringer_mode", "normal") == args["mode"]:
        return failure(ErrorKind.STATE_CONFLICT, f"the ringer is already {args['mode']}")
    put_setting(state, "ringer_mode", args["mode"])
    return success(setting="ringer_mode", value=args["mode"])


@tool("set_do_not_disturb", "display_sound", "Turn do-not-disturb on or off.", flag("on", "true to turn it on"),
      writes=("settings",))
def set_do_not_disturb(state: PhoneState, args: dict[str, Any]) -> Feedback:
    wanted = "on" if args["on"] else "off"
    if state.setting("do_not_disturb", "off") == wanted:
        return failure(ErrorKind.STATE_CONFLICT, f"do-not-disturb is already {wanted}")
    put_setting(state, "do_not_disturb", wanted)
    return success(setting="do_not_disturb", value=wanted)


_SAVER_ON = "battery saver is on: turn it off first (set_battery_saver)"
switch_tool("set_dark_mode", "display_sound", "dark_mode", "dark mode")
switch_tool("set_auto_rotate", "display_sound", "auto_rotate", "auto-rotate",
            description="Turn automatic screen rotation on or off.")
switch_tool("set_night_light", "display_sound", "night_light", "night light",
            description="Turn night light (the warm, blue-light-filtered screen tint) on or off.")
switch_tool("set_always_on_display", "display_sound", "always_on_display", "the always-on display",
            blocked_by("battery_saver", "on", _SAVER_ON))
switch_tool("set_haptic_feedback", "display_sound", "haptic_feedback", "haptic feedback", default="on",
            description="Turn haptic feedback (vibration on touch) on or off.")


for _name, _key, _label, _param, _default in (
        ("set_font_size", "font_size", "font size", choice("size", "text size", FONT_SIZES), "default"),
        ("set_screen_timeout", "screen_timeout_s", "screen timeout",
         integer_of("seconds", "seconds of inactivity before the screen turns off", SCREEN_TIMEOUTS), None),
        ("set_ringtone", "ringtone", "ringtone", choice("tone", "the ringtone for calls", TONES), None),
        ("set_notification_sound", "notification_sound", "notification sound",
         choice("tone", "the sound of notifications", TONES), None),
        ("set_lock_screen_notifications", "lock_screen_notifications", "lock-screen notification mode",
         choice("mode", "show notifications in full, hide their content, or hide them", LOCK_SCREEN_MODES),
         "show_all")):
    choice_tool(_name, "display_sound", f"Set the {_label}.", _key, _label, _param, _default)


@tool("set_refresh_rate", "display_sound", "Set the screen refresh rate (above 60 Hz needs battery saver off).",
      integer_of("hz", "refresh rate in Hz", REFRESH_RATES), writes=("settings",))
def set_refresh_rate(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if args["hz"] > 60 and state.setting("battery_saver") == "on":
        return failure(ErrorKind.STATE_CONFLICT, _SAVER_ON, setting="battery_saver", value="on")
    return choice_code("refresh_rate_hz", "refresh rate", "hz", "60")(state, args)


@tool("set_sound_profile", "display_sound", "Switch to a sound profile: standard, meeting (vibrate), outdoor "
      "(loud) or sleep (silent, do-not-disturb on).", choice("profile", "the profile", tuple(SOUND_PROFILES)),
      writes=("settings",))
def set_sound_profile(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.setting("sound_profile", "standard") == args["profile"]:
        return failure(ErrorKind.STATE_CONFLICT, f"the sound profile is already {args['profile']}")
    applied = {"sound_profile": args["profile"], **SOUND_PROFILES[args["profile"]]}
    for key, value in applied.items():
        put_setting(state, key, value)
    return success(profile=args["profile"], settings=applied)


@tool("set_dnd_schedule", "display_sound", "Schedule do-not-disturb every day from start to end, or remove the "
      "schedule.", flag("enabled", "true to schedule, false to remove the schedule"),
      clock("start", "when it starts", required=False), clock("end", "when it ends", required=False),
      writes=("settings",))
def set_dnd_schedule(state: PhoneState, args: dict[str, Any]) -> Feedback:
    current = state.setting("dnd_schedule", "off")
    if not args["enabled"]:
        if current == "off":
            return failure(ErrorKind.STATE_CONFLICT, "no do-not-disturb schedule is set")
        put_setting(state, "dnd_schedule", "off")
        return success(setting="dnd_schedule", value="off")
    missing = [name for name in ("start", "end") if not args.get(name)]
    if missing:
        return failure(ErrorKind.MISSING_PARAMETER, f"a schedule needs {' and '.join(missing)} (ask the user)",
                       fields=missing)
    if args["start"] == args["end"]:
        return failure(ErrorKind.SCHEMA_ERROR, "the schedule must start and end at different times", fields=["end"])
    value = f"{args['start']}-{args['end']}"
    if current == value:
        return failure(ErrorKind.STATE_CONFLICT, f"do-not-disturb is already scheduled {value}")
    put_setting(state, "dnd_schedule", value)
    return success(setting="dnd_schedule", value=value)


@tool("set_wallpaper", "display_sound", "Use an image file as the wallpaper of the home screen, the lock screen or "
      "both.", text("file_id", "the image (list_files)"), choice("screen", "which screen", ("home", "lock", "both")),
      writes=("settings",))
def set_wallpaper(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT name, trashed FROM files WHERE file_id = ?", (args["file_id"],))
    if row is None or row["trashed"]:
        return failure(ErrorKind.NOT_FOUND, f"no file {args['file_id']!r}; list_files shows them")
    if not (row["name"] or "").lower().endswith(IMAGE_SUFFIXES):
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is not an image ({', '.join(IMAGE_SUFFIXES)})")
    keys = [f"wallpaper_{screen}" for screen in (("home", "lock") if args["screen"] == "both" else (args["screen"],))]
    if all(state.setting(key) == args["file_id"] for key in keys):
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is already the {args['screen']} wallpaper")
    for key in keys:
        put_setting(state, key, args["file_id"])
    return success(file_id=args["file_id"], screens=[key.split("_")[1] for key in keys])


@tool("take_screenshot", "display_sound", "Capture the screen into Pictures/Screenshots.",
      writes=("files", "counters"))
def take_screenshot(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if free_mb(state) < 1:
        return failure(ErrorKind.STATE_CONFLICT, "the storage is full: free some space (clear_app_cache, "
                       "delete_file, empty_trash)", setting="storage", value="full")
    file_id = state.next_id("file")
    stamp = "".join(c for c in state.setting("clock", "") or "" if c.isdigit())
    name = f"Screenshot_{stamp}_{file_id.rsplit('-', 1)[1]}.png"
    state.execute("INSERT INTO files (file_id, folder, name, size_mb, trashed) VALUES (?, 'Pictures/Screenshots', "
                  "?, 1, 0)", (file_id, name))
    return success(file_id=file_id, folder="Pictures/Screenshots", name=name)
