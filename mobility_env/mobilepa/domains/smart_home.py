"""Smart home: the home's devices by room (lights, plugs, thermostats, locks), their power, brightness,
temperature and locks, every light of a room at once, and saved scenes.

State dependencies: the phone reaches the home hub over Wi-Fi or, nearby, Bluetooth, so a command needs
one of them on (``wifi``, ``bluetooth``); a device that is offline (``reachable = 0``: unplugged, out of
range) does not answer; each command fits one kind of device (a lock has no power switch, only a
thermostat takes a temperature). Commands need ``home: control``; listing reads the hub's last known
state and needs neither.
"""

from __future__ import annotations

import json
from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import flag, integer, text
from ..state import PhoneState

HOME_CONTROL = ("home", "control")
#: What a device of each kind can be set to (a scene's actions name only these).
SETTABLE = {"light": ("power", "level"), "plug": ("power",), "thermostat": ("power", "level"), "lock": ("locked",)}


def _no_link(state: PhoneState) -> Feedback | None:
    if "on" in (state.setting("wifi"), state.setting("bluetooth")):
        return None
    return failure(ErrorKind.STATE_CONFLICT, "the phone cannot reach the home hub: turn Wi-Fi or Bluetooth on "
                   "(set_wifi, set_bluetooth)", setting="wifi", value=state.setting("wifi", "off"))


def _controllable(state: PhoneState, device_id: str, *kinds: str) -> dict[str, Any] | Feedback:
    """The device, if a command of ``kinds`` can reach it now; else why not."""
    row = state.one("SELECT device_id, name, room, kind, power, level, locked, reachable FROM home_devices WHERE "
                    "device_id = ?", (device_id,))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no device {device_id!r}; list_home_devices shows them")
    if row["kind"] not in kinds:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is a {row['kind']}: this command is for a "
                       f"{' or '.join(kinds)}", kind=row["kind"])
    refused = _no_link(state)
    if refused is not None:
        return refused
    if not row["reachable"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is offline (unplugged or out of range)",
                       device_id=device_id, reachable=False)
    return row


@tool("list_home_devices", "smart_home", "The smart-home devices, optionally of one room: kind, power, brightness or "
      "temperature, lock, and whether each is online.", text("room", "a room such as 客厅 or bedroom", required=False))
def list_home_devices(state: PhoneState, args: dict[str, Any]) -> Feedback:
    sql, params = "SELECT device_id, name, room, kind, power, level, locked, reachable FROM home_devices", []
    if args.get("room"):
        sql, params = sql + " WHERE room = ?", [args["room"].strip()]
    return success(devices=state.query(sql + " ORDER BY room, device_id", params))


@tool("set_device_power", "smart_home", "Switch a light, plug or thermostat on or off.",
      text("device_id", "the device (list_home_devices)"), flag("on", "true to switch it on"),
      permission=HOME_CONTROL, writes=("home_devices",))
def set_device_power(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _controllable(state, args["device_id"], "light", "plug", "thermostat")
    if isinstance(row, Feedback):
        return row
    wanted = "on" if args["on"] else "off"
    if row["power"] == wanted:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is already {wanted}")
    state.execute("UPDATE home_devices SET power = ? WHERE device_id = ?", (wanted, args["device_id"]))
    return success(device_id=args["device_id"], power=wanted)


@tool("set_light_brightness", "smart_home", "Set a light's brightness (switches it on).",
      text("device_id", "the light (list_home_devices)"), integer("level", "brightness in %", 1, 100),
      permission=HOME_CONTROL, writes=("home_devices",))
def set_light_brightness(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _controllable(state, args["device_id"], "light")
    if isinstance(row, Feedback):
        return row
    if row["power"] == "on" and row["level"] == args["level"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is already on at {args['level']}%")
    state.execute("UPDATE home_devices SET power = 'on', level = ? WHERE device_id = ?",
                  (args["level"], args["device_id"]))
    return success(device_id=args["device_id"], power="on", level=args["level"])


@tool("set_thermostat", "smart_home", "Set a thermostat's target temperature (switches it on).",
      text("device_id", "the thermostat (list_home_devices)"), integer("celsius", "target temperature in °C", 16, 30),
      permission=HOME_CONTROL, writes=("home_devices",))
def set_thermostat(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _controllable(state, args["device_id"], "thermostat")
    if isinstance(row, Feedback):
        return row
    if row["power"] == "on" and row["level"] == args["celsius"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is already on at {args['celsius']} °C")
    state.execute("UPDATE home_devices SET power = 'on', level = ? WHERE device_id = ?",
                  (args["celsius"], args["device_id"]))
    return success(device_id=args["device_id"], power="on", celsius=args["celsius"])


@tool("set_lock", "smart_home", "Lock or unlock a smart door lock.", text("device_id", "the lock (list_home_devices)"),
      flag("locked", "true to lock, false to unlock"), permission=HOME_CONTROL, writes=("home_devices",))
def set_lock(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _controllable(state, args["device_id"], "lock")
    if isinstance(row, Feedback):
        return row
    if bool(row["locked"]) == args["locked"]:
        state_now = "locked" if row["locked"] else "unlocked"
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is already {state_now}")
    state.execute("UPDATE home_devices SET locked = ? WHERE device_id = ?", (int(args["locked"]), args["device_id"]))
    return success(device_id=args["device_id"], locked=args["locked"])


@tool("set_room_lights", "smart_home", "Switch every light of a room on or off (offline lights are skipped and "
      "named).", text("room", "the room (list_home_devices)"), flag("on", "true to switch them on"),
      permission=HOME_CONTROL, writes=("home_devices",))
def set_room_lights(state: PhoneState, args: dict[str, Any]) -> Feedback:
    room = args["room"].strip()
    lights = state.query("SELECT device_id, name, power, reachable FROM home_devices WHERE room = ? AND kind = "
                         "'light' ORDER BY device_id", (room,))
    if not lights:
        return failure(ErrorKind.NOT_FOUND, f"no lights in {room!r}; list_home_devices shows the rooms")
    refused = _no_link(state)
    if refused is not None:
        return refused
    wanted = "on" if args["on"] else "off"
    switch = [d["device_id"] for d in lights if d["reachable"] and d["power"] != wanted]
    skipped = [d["device_id"] for d in lights if not d["reachable"]]
    if not switch:
        return failure(ErrorKind.STATE_CONFLICT, f"every reachable light in {room} is already {wanted}"
                       + (f"; offline: {', '.join(skipped)}" if skipped else ""), skipped=skipped)
    for device_id in switch:
        state.execute("UPDATE home_devices SET power = ? WHERE device_id = ?", (wanted, device_id))
    return success(room=room, power=wanted, switched=switch, skipped=skipped)


@tool("list_home_scenes", "smart_home", "The saved smart-home scenes and what each sets.")
def list_home_scenes(state: PhoneState, args: dict[str, Any]) -> Feedback:
    scenes = state.query("SELECT scene_id, name, actions FROM home_scenes ORDER BY scene_id")
    return success(scenes=[{**s, "actions": json.loads(s["actions"] or "[]")} for s in scenes])


@tool("run_home_scene", "smart_home", "Run a saved scene: set each of its devices as it says (offline devices are "
      "skipped and named).", text("scene_id", "the scene (list_home_scenes)"), permission=HOME_CONTROL,
      writes=("home_devices",))
def run_home_scene(state: PhoneState, args: dict[str, Any]) -> Feedback:
    scene = state.one("SELECT name, actions FROM home_scenes WHERE scene_id = ?", (args["scene_id"],))
    if scene is None:
        return failure(ErrorKind.NOT_FOUND, f"no scene {args['scene_id']!r}; list_home_scenes shows them")
    refused = _no_link(state)
    if refused is not None:
        return refused
    changed, skipped = [], []
    for action in json.loads(scene["actions"] or "[]"):
        row = state.one("SELECT kind, power, level, locked, reachable FROM home_devices WHERE device_id = ?",
                        (action.get("device_id"),))
        if row is None or not row["reachable"]:
            skipped.append(action.get("device_id"))
            continue
        updates = {k: action[k] for k in SETTABLE.get(row["kind"], ()) if k in action and row[k] != action[k]}
        if updates:
            state.execute(f"UPDATE home_devices SET {', '.join(f'{k} = ?' for k in updates)} WHERE device_id = ?",
                          (*updates.values(), action["device_id"]))
            changed.append(action["device_id"])
    if not changed:
        return failure(ErrorKind.STATE_CONFLICT, f"every device of {scene['name']} is already as it sets"
                       + (f"; offline: {', '.join(map(str, skipped))}" if skipped else ""), skipped=skipped)
    return success(scene_id=args["scene_id"], changed=changed, skipped=skipped)
