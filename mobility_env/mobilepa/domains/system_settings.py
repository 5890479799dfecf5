"""System settings: connectivity (Wi-Fi networks, Bluetooth devices, mobile data, airplane mode, hotspot,
NFC, VPN), battery, language, time zone and system updates.

State-dependent throughout: switching a setting to the state it is in is a ``state_conflict``, and
so is a call whose implicit dependency does not hold (Wi-Fi on while airplane mode is on, a hotspot
without mobile data, joining a network with Wi-Fi off). Shared with the other domains:

* :func:`put_setting`: the one upsert of a ``settings`` row;
* :func:`switch_tool`: registers an on/off tool for one setting, with its preconditions
  (:func:`blocked_by`: refuse while another setting has some value);
* :func:`choice_tool` (:func:`choice_code`): a tool that sets one setting to the value of its one
  argument (a conflict when the setting already has it);
* :func:`online` and :func:`offline_failure`: the network rule (airplane mode off, and Wi-Fi or
  mobile data on) and the conflict a tool returns when it does not hold.
"""

from __future__ import annotations

from typing import Any, Callable

from ...tools import ParamSpec
from ...trajectory import ErrorKind
from ..catalogue import Feedback, ToolCode, failure, success, tool
from ..params import choice, flag, text
from ..state import PhoneState

LANGUAGES = ("zh-CN", "zh-TW", "en-US", "en-GB", "ja-JP", "ko-KR", "fr-FR", "de-DE", "es-ES")
TIME_ZONES = ("Asia/Shanghai", "Asia/Tokyo", "Asia/Singapore", "Europe/London", "Europe/Paris", "America/New_York",
              "America/Los_Angeles", "Australia/Sydney", "UTC")
#: Below this battery level a system update needs the charger.
UPDATE_MIN_BATTERY = 30

Precondition = Callable[[PhoneState, bool], "Feedback | None"]


def put_setting(state: PhoneState, key: str, value: str) -> None:
    state.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                  "excluded.value", (key, value))


def online(state: PhoneState) -> bool:
    """The phone has a network: airplane mode off, and Wi-Fi or mobile data on."""
    return state.setting("airplane_mode") != "on" and "on" in (state.setting("wifi"), state.setting("mobile_data"))


def offline_failure(what: str) -> Feedback:
    return failure(ErrorKind.STATE_CONFLICT, f"no network: {what} needs Wi-Fi or mobile data on and airplane mode "
                   f"off (set_wifi, set_mobile_data, set_airplane_mode)", setting="network", value="offline")


def blocked_by(key: str, value: str, message: str, when_on: bool = True, default: str = "off") -> Precondition:
    """Refuse switching on (``when_on``) or off while setting ``key`` is ``value`` (``default`` when unset)."""
    def rule(state: PhoneState, on: bool) -> Feedback | None:
        if on == when_on and state.setting(key, default) == value:
            return failure(ErrorKind.STATE_CONFLICT, message, setting=key, value=value)
        return None
    return rule


def switch_tool(name: str, domain: str, key: str, label: str, *preconditions: Precondition, default: str = "off",
                description: str | None = None, permission: tuple[str, str] | None = None) -> None:
    """Register ``name(on)``: set ``key`` to ``"on"``/``"off"``; already so (``default`` when the phone has no
    such row) → ``state_conflict``; then each precondition may refuse the change."""
    def run(state: PhoneState, args: dict[str, Any]) -> Feedback:
        wanted = "on" if args["on"] else "off"
        current = state.setting(key, default)
        if current == wanted:
            return failure(ErrorKind.STATE_CONFLICT, f"{label} is already {wanted}", setting=key, value=current)
        for rule in preconditions:
            refused = rule(state, args["on"])
            if refused is not None:
                return refused
        put_setting(state, key, wanted)
        return success(setting=key, value=wanted)
    tool(name, domain, description or f"Turn {label} on or off.", flag("on", f"true to turn {label} on"),
         permission=permission, writes=("settings",))(run)


def choice_code(key: str, label: str, param: str, default: str | None = None) -> ToolCode:
    """Code that sets ``key`` to argument ``param`` (as text); the value it already has (``default`` when the
    phone has no such row) is a ``state_conflict``."""
    def run(state: PhoneState, args: dict[str, Any]) -> Feedback:
        value = str(args[param])
        if state.setting(key, default) == value:
            return failure(ErrorKind.STATE_CONFLICT, f"the {label} is already {value}", setting=key, value=value)
        put_setting(state, key, value)
        return success(setting=key, value=value)
    return run


def choice_tool(name: str, domain: str, description: str, key: str, label: str, param: ParamSpec,
                default: str | None = None) -> None:
    """Register ``name(param)`` with :func:`choice_code`."""
    tool(name, domain, description, param, writes=("settings",))(choice_code(key, label, param.name, default))


def _not_in_airplane_mode(label: str) -> Precondition:
    return blocked_by("airplane_mode", "on", f"airplane mode is on: turn it off before turning {label} on")


for _name, _key, _label, _radio in (("set_wifi", "wifi", "Wi-Fi", True),
                                    ("set_bluetooth", "bluetooth", "Bluetooth", True),
                                    ("set_mobile_data", "mobile_data", "mobile data", True),
                                    ("set_airplane_mode", "airplane_mode", "airplane mode", False),
                                    ("set_location_service", "location", "location service", False)):
    switch_tool(_name, "system_settings", _key, _label, *([_not_in_airplane_mode(_label)] if _radio else []))
switch_tool("set_hotspot", "system_settings", "hotspot", "the mobile hotspot", _not_in_airplane_mode("the hotspot"),
            blocked_by("mobile_data", "off", "mobile data is off: the hotspot shares mobile data, turn it on first "
                       "(set_mobile_data)"),
            description="Turn the mobile hotspot (sharing mobile data over Wi-Fi) on or off.")
switch_tool("set_nfc", "system_settings", "nfc", "NFC", description="Turn NFC (tap to pay, tap to pair) on or off.")
switch_tool("set_battery_saver", "system_settings", "battery_saver", "battery saver",
            description="Turn battery saver on or off (while on, high refresh rates and the always-on display "
                        "are unavailable).")
switch_tool("set_auto_time_zone", "system_settings", "auto_time_zone", "the automatic time zone", default="on",
            description="Turn the automatic (network-provided) time zone on or off.")


@tool("get_device_status", "system_settings", "Read the phone's connectivity, sound and display settings.")
def get_device_status(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(settings={row["key"]: row["value"] for row in state.query("SELECT key, value FROM settings "
                                                                             "ORDER BY key")})


def _wifi_off() -> Feedback:
    return failure(ErrorKind.STATE_CONFLICT, "Wi-Fi is off: turn it on first (set_wifi)", setting="wifi", value="off")


@tool("list_wifi_networks", "system_settings", "Scan for Wi-Fi networks: name (ssid), signal, secured, saved, "
      "connected.")
def list_wifi_networks(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.setting("wifi") != "on":
        return _wifi_off()
    return success(networks=state.query("SELECT ssid, signal, secured, saved, connected FROM wifi_networks "
                                        "ORDER BY signal DESC, ssid"))


@tool("connect_wifi", "system_settings", "Join a Wi-Fi network. A secured network that is not saved needs its "
      "password (ask the user for it).", text("ssid", "the network name"),
      text("password", "the network password", required=False), writes=("wifi_networks",))
def connect_wifi(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.setting("wifi") != "on":
        return _wifi_off()
    row = state.one("SELECT secured, saved, connected FROM wifi_networks WHERE ssid = ?", (args["ssid"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no Wi-Fi network {args['ssid']!r} in range; list_wifi_networks "
                       "shows them")
    if row["connected"]:
        return failure(ErrorKind.STATE_CONFLICT, f"already connected to {args['ssid']}")
    if row["secured"] and not row["saved"] and not args.get("password"):
        return failure(ErrorKind.MISSING_PARAMETER, f"{args['ssid']} is secured: its password is needed (ask the "
                       "user)", fields=["password"])
    state.execute("UPDATE wifi_networks SET connected = 0 WHERE connected = 1")
    state.execute("UPDATE wifi_networks SET connected = 1, saved = 1 WHERE ssid = ?", (args["ssid"],))
    return success(ssid=args["ssid"], connected=True)


@tool("forget_wifi_network", "system_settings", "Forget a saved Wi-Fi network (and disconnect from it).",
      text("ssid", "the network name"), writes=("wifi_networks",))
def forget_wifi_network(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT saved FROM wifi_networks WHERE ssid = ?", (args["ssid"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no Wi-Fi network {args['ssid']!r}; list_wifi_networks shows them")
    if not row["saved"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['ssid']} is not a saved network")
    state.execute("UPDATE wifi_networks SET saved = 0, connected = 0 WHERE ssid = ?", (args["ssid"],))
    return success(ssid=args["ssid"], saved=False)


@tool("list_bluetooth_devices", "system_settings", "List the Bluetooth devices nearby or paired.")
def list_bluetooth_devices(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(devices=state.query("SELECT device_id, name, kind, paired, connected FROM bluetooth_devices "
                                       "ORDER BY device_id"))


def _device(state: PhoneState, device_id: str) -> dict[str, Any] | None:
    return state.one("SELECT name, paired, connected FROM bluetooth_devices WHERE device_id = ?", (device_id,))


@tool("connect_bluetooth_device", "system_settings", "Pair (if needed) and connect a Bluetooth device.",
      text("device_id", "the device (list_bluetooth_devices)"), writes=("bluetooth_devices",))
def connect_bluetooth_device(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.setting("bluetooth") != "on":
        return failure(ErrorKind.STATE_CONFLICT, "Bluetooth is off: turn it on first (set_bluetooth)",
                       setting="bluetooth", value="off")
    row = _device(state, args["device_id"])
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no device {args['device_id']!r}; list_bluetooth_devices shows them")
    if row["connected"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is already connected")
    state.execute("UPDATE bluetooth_devices SET paired = 1, connected = 1 WHERE device_id = ?", (args["device_id"],))
    return success(device_id=args["device_id"], name=row["name"], connected=True)


@tool("disconnect_bluetooth_device", "system_settings", "Disconnect a connected Bluetooth device (it stays paired).",
      text("device_id", "the device (list_bluetooth_devices)"), writes=("bluetooth_devices",))
def disconnect_bluetooth_device(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _device(state, args["device_id"])
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no device {args['device_id']!r}; list_bluetooth_devices shows them")
    if not row["connected"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is not connected")
    state.execute("UPDATE bluetooth_devices SET connected = 0 WHERE device_id = ?", (args["device_id"],))
    return success(device_id=args["device_id"], connected=False)


@tool("list_vpn_profiles", "system_settings", "List the configured VPN profiles and which one is connected.")
def list_vpn_profiles(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(profiles=state.query("SELECT profile_id, name, server, connected FROM vpn_profiles "
                                        "ORDER BY profile_id"))


@tool("connect_vpn", "system_settings", "Connect a VPN profile (any other VPN is disconnected).",
      text("profile_id", "the profile (list_vpn_profiles)"), writes=("vpn_profiles",))
def connect_vpn(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT name, connected FROM vpn_profiles WHERE profile_id = ?", (args["profile_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no VPN profile {args['profile_id']!r}; list_vpn_profiles shows them")
    if row["connected"]:
        return failure(ErrorKind.STATE_CONFLICT, f"VPN {row['name']} is already connected")
    if not online(state):
        return offline_failure("a VPN")
    state.execute("UPDATE vpn_profiles SET connected = 0 WHERE connected = 1")
    state.execute("UPDATE vpn_profiles SET connected = 1 WHERE profile_id = ?", (args["profile_id"],))
    return success(profile_id=args["profile_id"], connected=True)


@tool("disconnect_vpn", "system_settings", "Disconnect the VPN.", writes=("vpn_profiles",))
def disconnect_vpn(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("UPDATE vpn_profiles SET connected = 0 WHERE connected = 1") == 0:
        return failure(ErrorKind.STATE_CONFLICT, "no VPN is connected")
    return success(connected=False)


@tool("get_battery_status", "system_settings", "Read the battery level, whether it is charging, and battery saver.")
def get_battery_status(state: PhoneState, args: dict[str, Any]) -> Feedback:
    level = state.setting("battery_level")
    return success(level=None if level is None else int(level), charging=state.setting("charging") == "on",
                   battery_saver=state.setting("battery_saver", "off"))


choice_tool("set_language", "system_settings", "Set the phone's display language.", "language", "language",
            choice("language", "language tag", LANGUAGES))


@tool("set_time_zone", "system_settings", "Set the time zone by hand (the automatic time zone must be off).",
      choice("time_zone", "IANA time zone", TIME_ZONES), writes=("settings",))
def set_time_zone(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.setting("auto_time_zone", "on") == "on":
        return failure(ErrorKind.STATE_CONFLICT, "the time zone is set automatically: turn that off first "
                       "(set_auto_time_zone)", setting="auto_time_zone", value="on")
    return choice_code("time_zone", "time zone", "time_zone")(state, args)


@tool("check_system_update", "system_settings", "Compare the installed system version with the latest one.")
def check_system_update(state: PhoneState, args: dict[str, Any]) -> Feedback:
    current, latest = state.setting("os_version"), state.setting("os_latest_version")
    return success(version=current, latest=latest, update_available=latest is not None and latest != current)


@tool("install_system_update", "system_settings", f"Download and install the latest system update (needs Wi-Fi, "
      f"and {UPDATE_MIN_BATTERY}% battery or the charger).", writes=("settings",))
def install_system_update(state: PhoneState, args: dict[str, Any]) -> Feedback:
    current, latest = state.setting("os_version"), state.setting("os_latest_version")
    if latest is None or latest == current:
        return failure(ErrorKind.STATE_CONFLICT, f"the system is up to date ({current})")
    if state.setting("wifi") != "on" or state.setting("airplane_mode") == "on":
        return failure(ErrorKind.STATE_CONFLICT, "system updates download over Wi-Fi: turn Wi-Fi on (set_wifi)",
                       setting="wifi", value=state.setting("wifi", "off"))
    level = int(state.setting("battery_level") or 100)
    if level < UPDATE_MIN_BATTERY and state.setting("charging") != "on":
        return failure(ErrorKind.STATE_CONFLICT, f"the battery is at {level}%: plug in the charger or wait until "
                       f"it reaches {UPDATE_MIN_BATTERY}%", setting="battery_level", value=str(level))
    put_setting(state, "os_version", latest)
    return success(version=latest, previous=current)
