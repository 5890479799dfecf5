"""The MobilePA catalogue: thirteen domains of 7–25 tools (≥ 212 in all), each tool called successfully on a seeded
``S_0`` with its effect checked row by row, each way it can fail checked for its typed error (and for
leaving no write behind), permissions that block and are cleared by granting, and a fuzz over every
tool with junk and near-valid arguments (``execute`` never raises, every call is logged, and nothing
changes a table that no successful tool declared it writes)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_env.mobilepa import PHONE_TOOLS as CATALOGUE, StateTemplate, execute
from mobility_env.mobilepa.catalogue import DOMAINS
from mobility_env.mobilepa.domains.subagents import HANDOFF_TOOLS
from mobility_env.mobilepa.skills import LOAD_SKILL
from mobility_env.mobilepa.state import STATE_TABLES, TABLES, diff, snapshot
from mobility_env.trajectory import ErrorKind

E = ErrorKind
CAPABILITY_TOOLS = {LOAD_SKILL, *HANDOFF_TOOLS}  # the skill loader and sub-agent entry tools: test_mobilepa_skills.py
PHONE_TOOLS = {n: s for n, s in CATALOGUE.items() if s.domain != "maps_travel" and n not in CAPABILITY_TOOLS}  # maps:
# tests/test_mobilepa_maps.py


def _rows(columns: str, *values: tuple) -> list[dict[str, Any]]:
    names = columns.split()
    return [dict(zip(names, row)) for row in values]


S0: dict[str, list[dict[str, Any]]] = {
    "settings": _rows("key value", ("wifi", "on"), ("mobile_data", "off"), ("airplane_mode", "off"),
                      ("bluetooth", "on"), ("clock", "2026-12-01 08:00"), ("battery_level", "25"), ("charging", "off"),
                      ("battery_saver", "on"), ("os_version", "15.0"), ("os_latest_version", "15.1"),
                      ("language", "zh-CN"), ("auto_time_zone", "on"), ("time_zone", "Asia/Shanghai"),
                      ("storage_total_mb", "4000"), ("now_playing", "song-1"), ("playback", "paused"),
                      ("ringer_mode", "normal")),
    "apps": _rows("app installed running", *[(a, int(a != "video"), int(a in ("music", "camera"))) for a in (
        "messages", "phone", "contacts", "music", "podcasts", "radio", "video", "taobao", "camera", "weather")]),
    "permissions": _rows("app permission granted", ("messages", "sms", 1), ("phone", "call", 1),
                         ("phone", "call_log", 1), ("phone", "voicemail", 1), ("contacts", "write", 1),
                         ("music", "storage", 1), ("assistant", "accessibility", 1), ("assistant", "microphone", 1),
                         ("camera", "location", 0), ("chat", "contacts", 1), ("payments", "pay", 1),
                         ("health", "read", 1), ("health", "write", 1), ("home", "control", 1),
                         ("gallery", "photos", 1), ("files", "storage", 1)),
    "app_store": _rows("app latest_version size_mb category", ("music", "3.2", 200, "music"),
                       ("video", "5.0", 150, "video"), ("taobao", "10.1", 300, "shopping"),
                       ("camera", "1.0", 50, "system"), ("weather", "2.0", 80, "weather"),
                       ("game", "1.0", 3000, "games")),
    "app_storage": _rows("app version app_mb data_mb cache_mb", ("music", "3.1", 200, 300, 120),
                         ("taobao", "10.1", 300, 500, 0), ("camera", "1.0", 50, 0, 0), ("weather", "2.0", 80, 10, 5)),
    "files": _rows("file_id folder name size_mb trashed", ("f1", "Pictures", "beach.jpg", 5, 0),
                   ("f2", "Documents", "report.pdf", 2, 0), ("f3", "Download", "old.zip", 400, 1),
                   ("f4", "Backup", "report.pdf", 2, 0)),
    "downloads": _rows("download_id name size_mb progress status", ("d1", "movie.mp4", 900, 40, "running"),
                       ("d2", "setup.apk", 60, 10, "paused"), ("d3", "map.pdf", 3, 100, "completed")),
    "alarms": _rows("alarm_id time label repeat enabled", ("alarm-0", "07:00", "起床", "weekdays", 0),
                    ("alarm-5", "22:30", "睡觉", "daily", 1)),
    "events": _rows("event_id title start end location", ("e1", "周会", "2026-12-01 10:00", "2026-12-01 11:00", "A")),
    "contacts": _rows("contact_id name phone relation", ("c1", "王芳", "13800000000", "妈妈"),
                      ("c2", "李雷", "13911112222", "同事")),
    "messages": _rows("message_id contact_id direction text sent_at", ("m1", "c1", "in", "到家了吗", "2026-11-30 21:00")),
    "calls": _rows("call_id contact_id direction at", ("k1", "c2", "missed", "2026-11-30 20:00"),
                   ("k2", "c1", "in", "2026-11-30 18:00")),
    "blocked_numbers": _rows("phone blocked_at", ("4001234567", "2026-11-01 09:00")),
    "voicemails": _rows("voicemail_id phone at duration_s transcript heard",
                        ("v1", "13911112222", "2026-11-30 20:01", 30, "明天开会改到十点", 0)),
    "media": _rows("media_id kind title artist collection duration_s liked downloaded",
                   ("song-1", "song", "晴天", "周杰伦", "叶惠美", 269, 1, 1), ("song-2", "song", "稻香", "周杰伦", "魔杰座", 223, 0, 0),
                   ("pod-1", "podcast", "第1期", "主播", "大内密谈", 3600, 0, 0),
                   ("vid-1", "video", "猫咪合集", "萌宠频道", "萌宠频道", 600, 0, 0),
                   ("radio-1", "radio", "中国之声", "", "FM 106.1", 0, 0, 0)),
    "playlists": _rows("playlist_id name", ("pl-1", "跑步"), ("pl-2", "空歌单")),
    "playlist_items": _rows("playlist_id media_id position", ("pl-1", "song-1", 1), ("pl-1", "song-2", 2)),
    "media_queue": _rows("position media_id", (1, "pod-1")),
    "app_volumes": _rows("app level", ("music", 80)),
    "wifi_networks": _rows("ssid secured saved signal connected", ("Home", 1, 1, 90, 1), ("Cafe", 1, 0, 60, 0),
                           ("Free", 0, 0, 30, 0)),
    "bluetooth_devices": _rows("device_id name kind paired connected", ("bt-1", "AirPods", "headphones", 1, 0),
                               ("bt-2", "Car", "car", 1, 1)),
    "vpn_profiles": _rows("profile_id name server connected", ("vpn-1", "Work", "vpn.example.com", 0),
                          ("vpn-2", "Home", "home.example.com", 0)),
    "timers": _rows("timer_id label duration_s state", ("t1", "面条", 600, "running"), ("t2", "", 300, "paused")),
    "reminders": _rows("reminder_id text due done", ("r1", "买牛奶", "2026-12-01 18:00", 0), ("r2", "交电费", "", 1)),
    "world_clocks": _rows("city time_zone", ("London", "Europe/London")),
    "handoffs": _rows("handoff_id app instruction status created_at", ("h1", "taobao", "买猫粮", "queued", ""),
                      ("h2", "taobao", "查快递", "done", "")),
    "memories": _rows("memory_id content category created_at", ("mem1", "妈妈的生日是3月8日", "person", ""),
                      ("mem2", "用户喜欢靠窗的座位", "preference", "")),
    "notes": _rows("note_id title body folder pinned", ("n1", "购物清单", "鸡蛋", "", 0), ("n2", "会议记录", "讨论预算", "工作", 1)),
    "translations": _rows("source target_language translation", ("谢谢", "en", "Thank you"), ("谢谢", "ja", "ありがとう")),
    "notifications": _rows("notification_id app title text read", ("nt1", "messages", "王芳", "到家了吗", 0),
                           ("nt2", "taobao", "快递", "已发货", 0), ("nt3", "weather", "降温", "明天降温", 1)),
    # messaging & social
    "chats": _rows("chat_id app title kind muted", ("chat-1", "WeChat", "王芳", "direct", 0),
                   ("chat-2", "WeChat", "家庭群", "group", 1)),
    "chat_members": _rows("chat_id contact_id", ("chat-1", "c1"), ("chat-2", "c1"), ("chat-2", "c2")),
    "chat_messages": _rows("chat_message_id chat_id sender text sent_at read",
                           ("cm1", "chat-1", "c1", "晚上回家吃饭吗", "2026-11-30 19:00", 0),
                           ("cm2", "chat-2", "c2", "周末聚餐？", "2026-11-30 20:00", 1)),
    "social_posts": _rows("post_id author text visibility posted_at liked",
                          ("post-1", "c2", "新家装修好了", "friends", "2026-11-30 12:00", 0),
                          ("post-2", "me", "今天跑了10公里", "public", "2026-11-29 08:00", 0)),
    # shopping & payments: the cart (79.80) costs more than the default wallet holds (50.00)
    "products": _rows("product_id name category price stock", ("p1", "抽纸 24包", "日用品", 39.9, 10),
                      ("p2", "猫粮 2kg", "宠物", 89.0, 1), ("p3", "蓝牙耳机", "数码", 299.0, 0)),
    "cart_items": _rows("product_id quantity", ("p1", 2)),
    "payment_methods": _rows("method_id kind label balance is_default", ("pm-1", "wallet", "零钱", 50.0, 1),
                             ("pm-2", "card", "招商银行信用卡", None, 0)),
    "orders": _rows("order_id items total method_id status placed_at",
                    ("o1", [{"product_id": "p2", "quantity": 1, "price": 89.0}], 89.0, "pm-2", "paid",
                     "2026-11-30 10:00"),
                    ("o2", [{"product_id": "p1", "quantity": 1, "price": 39.9}], 39.9, "pm-1", "delivered",
                     "2026-11-20 10:00"),
                    ("o3", [{"product_id": "p1", "quantity": 1, "price": 39.9}], 39.9, "pm-1", "shipped",
                     "2026-11-29 10:00"),
                    ("o4", [{"product_id": "p1", "quantity": 1, "price": 39.9}], 39.9, "pm-1", "paid",
                     "2026-11-30 11:00")),
    # health & fitness (today is 2026-12-01; the step goal is the default 8000)
    "health_metrics": _rows("day metric value", ("2026-12-01", "steps", 3200), ("2026-11-30", "steps", 9500),
                            ("2026-11-30", "distance_m", 7000), ("2026-11-30", "sleep_min", 410),
                            ("2026-11-29", "sleep_min", 380), ("2026-11-01", "sleep_min", 300)),
    "workouts": _rows("workout_id kind started_at ended_at status",
                      ("w1", "run", "2026-11-30 07:00", "2026-11-30 07:40", "finished")),
    "medications": _rows("medication_id name dose time active", ("med-1", "维生素D", "1 片", "08:00", 1),
                         ("med-2", "布洛芬", "1 粒", "20:00", 0)),
    "medication_log": _rows("medication_id day taken_at", ("med-1", "2026-11-30", "2026-11-30 08:05")),
    "health_records": _rows("record_id kind name detail recorded_on", ("hr1", "allergy", "青霉素", "皮疹", "2020-05-01"),
                            ("hr2", "blood_type", "A", "", "2015-01-01")),
    # smart home: light-3 is offline
    "home_devices": _rows("device_id name room kind power level locked reachable",
                          ("light-1", "客厅主灯", "客厅", "light", "off", 80, None, 1),
                          ("light-2", "客厅灯带", "客厅", "light", "on", 30, None, 1),
                          ("light-3", "卧室灯", "卧室", "light", "off", 50, None, 0),
                          ("ac-1", "卧室空调", "卧室", "thermostat", "off", 26, None, 1),
                          ("plug-1", "加湿器插座", "卧室", "plug", "on", None, None, 1),
                          ("lock-1", "前门锁", "玄关", "lock", "", None, 1, 1)),
    "home_scenes": _rows("scene_id name actions",
                         ("scene-1", "回家", [{"device_id": "light-1", "power": "on"},
                                            {"device_id": "lock-1", "locked": 0},
                                            {"device_id": "ac-1", "power": "on", "level": 24}]),
                         ("scene-2", "睡觉", [{"device_id": "light-2", "power": "off"},
                                            {"device_id": "light-3", "power": "off"}])),
    # files & photos: ph3 is in Recently deleted
    "photos": _rows("photo_id taken_at place size_mb favorite trashed", ("ph1", "2026-11-28 15:00", "三亚 海滩", 4, 1, 0),
                    ("ph2", "2026-11-28 16:00", "三亚 酒店", 3, 0, 0), ("ph3", "2026-11-30 09:00", "北京 公司", 2, 0, 1)),
    "albums": _rows("album_id name", ("album-1", "旅行")),
    "album_photos": _rows("album_id photo_id", ("album-1", "ph1")),
}


class Case(NamedTuple):
    tool: str
    args: dict[str, Any]
    error: ErrorKind | None = None
    setup: tuple = ()  # SQL statements or (tool, args) calls that must succeed first
    payload: dict[str, Any] | None = None
    rows: tuple = ()  # (table, fields): a row the call added or changed to contain these fields
    gone: tuple = ()  # (table, fields): a row the call removed

    def __repr__(self) -> str:
        outcome = "" if self.error is None else f"→{self.error}"
        return f"{self.tool}({json.dumps(self.args, ensure_ascii=False)}){outcome}"


def ok(tool: str, args: dict | None = None, *, setup: tuple = (), payload: dict | None = None, rows: tuple = (),
       gone: tuple = ()) -> Case:
    return Case(tool, args or {}, None, setup, payload, rows, gone)


def err(tool: str, args: dict, error: ErrorKind, *, setup: tuple = (), payload: dict | None = None) -> Case:
    return Case(tool, args, error, setup, payload)


def R(table: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return (table, fields)


def S(key: str, value: str) -> tuple[str, dict[str, Any]]:
    return R("settings", key=key, value=value)


OFFLINE = (("set_wifi", {"on": False}),)
SAVER_OFF = (("set_battery_saver", {"on": False}),)

CASES: list[Case] = [
    # ---- system settings
    ok("set_wifi", {"on": False}, rows=(S("wifi", "off"),)), err("set_wifi", {"on": True}, E.STATE_CONFLICT),
    ok("set_bluetooth", {"on": False}, rows=(S("bluetooth", "off"),)),
    err("set_bluetooth", {"on": True}, E.STATE_CONFLICT),
    ok("set_mobile_data", {"on": True}, rows=(S("mobile_data", "on"),)),
    err("set_mobile_data", {"on": True}, E.STATE_CONFLICT, setup=(("set_airplane_mode", {"on": True}),),
        payload={"setting": "airplane_mode"}),
    ok("set_airplane_mode", {"on": True}, rows=(S("airplane_mode", "on"),)),
    err("set_airplane_mode", {"on": False}, E.STATE_CONFLICT),
    ok("set_location_service", {"on": True}, rows=(S("location", "on"),)),
    err("set_location_service", {"on": False}, E.STATE_CONFLICT),
    ok("get_device_status", payload={"settings": {"wifi": "on", "battery_level": "25"}}),
    ok("set_hotspot", {"on": True}, setup=(("set_mobile_data", {"on": True}),), rows=(S("hotspot", "on"),)),
    err("set_hotspot", {"on": True}, E.STATE_CONFLICT, payload={"setting": "mobile_data", "value": "off"}),
    ok("set_nfc", {"on": True}, rows=(S("nfc", "on"),)), err("set_nfc", {"on": False}, E.STATE_CONFLICT),
    ok("set_battery_saver", {"on": False}, rows=(S("battery_saver", "off"),)),
    err("set_battery_saver", {"on": True}, E.STATE_CONFLICT),
    ok("set_auto_time_zone", {"on": False}, rows=(S("auto_time_zone", "off"),)),
    err("set_auto_time_zone", {"on": True}, E.STATE_CONFLICT),
    ok("list_wifi_networks", payload={"networks": [{"ssid": "Home", "connected": 1}, {"ssid": "Cafe"},
                                                   {"ssid": "Free"}]}),
    err("list_wifi_networks", {}, E.STATE_CONFLICT, setup=OFFLINE),
    ok("connect_wifi", {"ssid": "Cafe", "password": "x"}, rows=(R("wifi_networks", ssid="Cafe", connected=1, saved=1),
                                                                R("wifi_networks", ssid="Home", connected=0))),
    ok("connect_wifi", {"ssid": "Free"}, rows=(R("wifi_networks", ssid="Free", connected=1),
                                               R("wifi_networks", ssid="Home", connected=0))),
    err("connect_wifi", {"ssid": "Cafe"}, E.MISSING_PARAMETER, payload={"fields": ["password"]}),
    err("connect_wifi", {"ssid": "Nope"}, E.NOT_FOUND), err("connect_wifi", {"ssid": "Home"}, E.STATE_CONFLICT),
    err("connect_wifi", {"ssid": "Free"}, E.STATE_CONFLICT, setup=OFFLINE),
    ok("forget_wifi_network", {"ssid": "Home"}, rows=(R("wifi_networks", ssid="Home", saved=0, connected=0),)),
    err("forget_wifi_network", {"ssid": "Cafe"}, E.STATE_CONFLICT),
    err("forget_wifi_network", {"ssid": "Nope"}, E.NOT_FOUND),
    ok("list_bluetooth_devices", payload={"devices": [{"device_id": "bt-1"}, {"device_id": "bt-2", "connected": 1}]}),
    ok("connect_bluetooth_device", {"device_id": "bt-1"},
       rows=(R("bluetooth_devices", device_id="bt-1", connected=1),)),
    err("connect_bluetooth_device", {"device_id": "bt-2"}, E.STATE_CONFLICT),
    err("connect_bluetooth_device", {"device_id": "bt-9"}, E.NOT_FOUND),
    err("connect_bluetooth_device", {"device_id": "bt-1"}, E.STATE_CONFLICT, setup=(("set_bluetooth", {"on": False}),)),
    ok("disconnect_bluetooth_device", {"device_id": "bt-2"},
       rows=(R("bluetooth_devices", device_id="bt-2", connected=0),)),
    err("disconnect_bluetooth_device", {"device_id": "bt-1"}, E.STATE_CONFLICT),
    err("disconnect_bluetooth_device", {"device_id": "bt-9"}, E.NOT_FOUND),
    ok("list_vpn_profiles", payload={"profiles": [{"profile_id": "vpn-1"}, {"profile_id": "vpn-2"}]}),
    ok("connect_vpn", {"profile_id": "vpn-1"}, rows=(R("vpn_profiles", profile_id="vpn-1", connected=1),)),
    ok("connect_vpn", {"profile_id": "vpn-2"}, setup=(("connect_vpn", {"profile_id": "vpn-1"}),),
       rows=(R("vpn_profiles", profile_id="vpn-1", connected=0), R("vpn_profiles", profile_id="vpn-2", connected=1))),
    err("connect_vpn", {"profile_id": "vpn-9"}, E.NOT_FOUND),
    err("connect_vpn", {"profile_id": "vpn-1"}, E.STATE_CONFLICT, setup=(("connect_vpn", {"profile_id": "vpn-1"}),)),
    err("connect_vpn", {"profile_id": "vpn-1"}, E.STATE_CONFLICT, setup=OFFLINE, payload={"value": "offline"}),
    ok("disconnect_vpn", setup=(("connect_vpn", {"profile_id": "vpn-1"}),),
       rows=(R("vpn_profiles", profile_id="vpn-1", connected=0),)),
    err("disconnect_vpn", {}, E.STATE_CONFLICT),
    ok("get_battery_status", payload={"level": 25, "charging": False, "battery_saver": "on"}),
    ok("set_language", {"language": "en-US"}, rows=(S("language", "en-US"),)),
    err("set_language", {"language": "zh-CN"}, E.STATE_CONFLICT),
    ok("set_time_zone", {"time_zone": "Asia/Tokyo"}, setup=(("set_auto_time_zone", {"on": False}),),
       rows=(S("time_zone", "Asia/Tokyo"),)),
    err("set_time_zone", {"time_zone": "Asia/Tokyo"}, E.STATE_CONFLICT, payload={"setting": "auto_time_zone"}),
    err("set_time_zone", {"time_zone": "Asia/Shanghai"}, E.STATE_CONFLICT,
        setup=(("set_auto_time_zone", {"on": False}),)),
    ok("check_system_update", payload={"version": "15.0", "latest": "15.1", "update_available": True}),
    ok("install_system_update", setup=("UPDATE settings SET value = 'on' WHERE key = 'charging'",),
       rows=(S("os_version", "15.1"),), payload={"previous": "15.0"}),
    err("install_system_update", {}, E.STATE_CONFLICT, payload={"setting": "battery_level", "value": "25"}),
    err("install_system_update", {}, E.STATE_CONFLICT, setup=OFFLINE, payload={"setting": "wifi"}),
    err("install_system_update", {}, E.STATE_CONFLICT,
        setup=("UPDATE settings SET value = '15.1' WHERE key = 'os_version'",)),
    # ---- display & sound
    ok("set_brightness", {"level": 40}, rows=(S("brightness", "40"),)),
    err("set_brightness", {"level": 40}, E.STATE_CONFLICT, setup=(("set_auto_brightness", {"on": True}),)),
    ok("set_auto_brightness", {"on": True}, rows=(S("auto_brightness", "on"),)),
    err("set_auto_brightness", {"on": False}, E.STATE_CONFLICT),
    ok("set_volume", {"stream": "media", "level": 30}, rows=(S("volume_media", "30"),)),
    err("set_volume", {"stream": "ring", "level": 50}, E.STATE_CONFLICT,
        setup=(("set_ringer_mode", {"mode": "silent"}),)),
    ok("set_ringer_mode", {"mode": "vibrate"}, rows=(S("ringer_mode", "vibrate"),)),
    err("set_ringer_mode", {"mode": "normal"}, E.STATE_CONFLICT),
    ok("set_do_not_disturb", {"on": True}, rows=(S("do_not_disturb", "on"),)),
    err("set_do_not_disturb", {"on": False}, E.STATE_CONFLICT),
    ok("set_dark_mode", {"on": True}, rows=(S("dark_mode", "on"),)),
    err("set_dark_mode", {"on": False}, E.STATE_CONFLICT),
    ok("set_auto_rotate", {"on": True}, rows=(S("auto_rotate", "on"),)),
    err("set_auto_rotate", {"on": False}, E.STATE_CONFLICT),
    ok("set_night_light", {"on": True}, rows=(S("night_light", "on"),)),
    err("set_night_light", {"on": False}, E.STATE_CONFLICT),
    ok("set_always_on_display", {"on": True}, setup=SAVER_OFF, rows=(S("always_on_display", "on"),)),
    err("set_always_on_display", {"on": True}, E.STATE_CONFLICT, payload={"setting": "battery_saver"}),
    ok("set_haptic_feedback", {"on": False}, rows=(S("haptic_feedback", "off"),)),
    err("set_haptic_feedback", {"on": True}, E.STATE_CONFLICT),
    ok("set_font_size", {"size": "large"}, rows=(S("font_size", "large"),)),
    err("set_font_size", {"size": "default"}, E.STATE_CONFLICT),
    ok("set_screen_timeout", {"seconds": 60}, rows=(S("screen_timeout_s", "60"),)),
    err("set_screen_timeout", {"seconds": 60}, E.STATE_CONFLICT, setup=(("set_screen_timeout", {"seconds": 60}),)),
    err("set_screen_timeout", {"seconds": 45}, E.SCHEMA_ERROR),
    ok("set_ringtone", {"tone": "chime"}, rows=(S("ringtone", "chime"),)),
    err("set_ringtone", {"tone": "chime"}, E.STATE_CONFLICT, setup=(("set_ringtone", {"tone": "chime"}),)),
    ok("set_notification_sound", {"tone": "breeze"}, rows=(S("notification_sound", "breeze"),)),
    err("set_notification_sound", {"tone": "pulse"}, E.STATE_CONFLICT,
        setup=(("set_notification_sound", {"tone": "pulse"}),)),
    ok("set_lock_screen_notifications", {"mode": "hide_content"},
       rows=(S("lock_screen_notifications", "hide_content"),)),
    err("set_lock_screen_notifications", {"mode": "show_all"}, E.STATE_CONFLICT),
    ok("set_refresh_rate", {"hz": 120}, setup=SAVER_OFF, rows=(S("refresh_rate_hz", "120"),)),
    err("set_refresh_rate", {"hz": 120}, E.STATE_CONFLICT, payload={"setting": "battery_saver"}),
    err("set_refresh_rate", {"hz": 60}, E.STATE_CONFLICT),
    ok("set_sound_profile", {"profile": "sleep"}, rows=(S("sound_profile", "sleep"), S("ringer_mode", "silent"),
                                                        S("do_not_disturb", "on"), S("volume_ring", "0"))),
    err("set_sound_profile", {"profile": "standard"}, E.STATE_CONFLICT),
    ok("set_dnd_schedule", {"enabled": True, "start": "22:00", "end": "07:00"},
       rows=(S("dnd_schedule", "22:00-07:00"),)),
    ok("set_dnd_schedule", {"enabled": False}, setup=(("set_dnd_schedule", {"enabled": True, "start": "22:00",
                                                                            "end": "07:00"}),),
       rows=(S("dnd_schedule", "off"),)),
    err("set_dnd_schedule", {"enabled": True, "start": "22:00"}, E.MISSING_PARAMETER, payload={"fields": ["end"]}),
    err("set_dnd_schedule", {"enabled": False}, E.STATE_CONFLICT),
    err("set_dnd_schedule", {"enabled": True, "start": "22:00", "end": "07:00"}, E.STATE_CONFLICT,
        setup=(("set_dnd_schedule", {"enabled": True, "start": "22:00", "end": "07:00"}),)),
    err("set_dnd_schedule", {"enabled": True, "start": "22:00", "end": "22:00"}, E.SCHEMA_ERROR),
    ok("set_wallpaper", {"file_id": "f1", "screen": "both"},
       rows=(S("wallpaper_home", "f1"), S("wallpaper_lock", "f1"))),
    err("set_wallpaper", {"file_id": "f2", "screen": "home"}, E.STATE_CONFLICT),
    err("set_wallpaper", {"file_id": "f3", "screen": "home"}, E.NOT_FOUND),
    err("set_wallpaper", {"file_id": "f1", "screen": "lock"}, E.STATE_CONFLICT,
        setup=(("set_wallpaper", {"file_id": "f1", "screen": "both"}),)),
    ok("take_screenshot", rows=(R("files", file_id="file-1", folder="Pictures/Screenshots",
                                  name="Screenshot_202612010800_1.png", trashed=0),)),
    err("take_screenshot", {}, E.STATE_CONFLICT,
        setup=("UPDATE settings SET value = '1974' WHERE key = 'storage_total_mb'",)),
    # ---- apps & storage (used: apps 630 + app data 935 + files 9 + trash 400 = 1974 of 4000 MB)
    ok("list_apps", payload={"apps": lambda apps: [a["app"] for a in apps] == sorted(
        a["app"] for a in S0["apps"] if a["installed"])}),
    ok("open_app", {"app": "podcasts"}, rows=(R("apps", app="podcasts", running=1),)),
    err("open_app", {"app": "music"}, E.STATE_CONFLICT), err("open_app", {"app": "video"}, E.NOT_FOUND),
    ok("close_app", {"app": "music"}, rows=(R("apps", app="music", running=0),)),
    err("close_app", {"app": "podcasts"}, E.STATE_CONFLICT), err("close_app", {"app": "video"}, E.NOT_FOUND),
    ok("grant_permission", {"app": "camera", "permission": "location"},
       rows=(R("permissions", app="camera", permission="location", granted=1),)),
    err("grant_permission", {"app": "phone", "permission": "call"}, E.STATE_CONFLICT),
    err("grant_permission", {"app": "phone", "permission": "x"}, E.NOT_FOUND),
    ok("revoke_permission", {"app": "phone", "permission": "call"},
       rows=(R("permissions", app="phone", permission="call", granted=0),)),
    err("revoke_permission", {"app": "camera", "permission": "location"}, E.STATE_CONFLICT),
    err("revoke_permission", {"app": "phone", "permission": "x"}, E.NOT_FOUND),
    ok("list_app_permissions", {"app": "phone"}, payload={"permissions": [
        {"permission": "call", "granted": 1}, {"permission": "call_log"}, {"permission": "voicemail"}]}),
    err("list_app_permissions", {"app": "nothing"}, E.NOT_FOUND),
    ok("search_app_store", {"query": "game"}, payload={"apps": [{"app": "game", "size_mb": 3000, "installed": 0}]}),
    ok("install_app", {"app": "video"}, rows=(R("apps", app="video", installed=1),
                                              R("app_storage", app="video", version="5.0", app_mb=150))),
    err("install_app", {"app": "music"}, E.STATE_CONFLICT), err("install_app", {"app": "nope"}, E.NOT_FOUND),
    err("install_app", {"app": "game"}, E.STATE_CONFLICT, payload={"needed_mb": 3000, "free_mb": 2026}),
    err("install_app", {"app": "video"}, E.STATE_CONFLICT, setup=OFFLINE),
    ok("uninstall_app", {"app": "taobao"}, rows=(R("apps", app="taobao", installed=0),),
       gone=(R("app_storage", app="taobao"),)),
    err("uninstall_app", {"app": "camera"}, E.STATE_CONFLICT), err("uninstall_app", {"app": "video"}, E.NOT_FOUND),
    ok("list_app_updates", payload={"updates": [{"app": "music", "version": "3.1", "latest_version": "3.2"}]}),
    ok("update_app", {"app": "music"}, rows=(R("app_storage", app="music", version="3.2"),)),
    err("update_app", {"app": "taobao"}, E.STATE_CONFLICT), err("update_app", {"app": "video"}, E.NOT_FOUND),
    err("update_app", {"app": "music"}, E.STATE_CONFLICT, setup=OFFLINE),
    err("update_app", {"app": "messages"}, E.STATE_CONFLICT),
    ok("get_storage_usage", payload={"total_mb": 4000, "free_mb": 2026, "used_mb": {
        "apps": 630, "app_data": 935, "files": 9, "trash": 400}, "largest_apps": [
        {"app": "taobao", "total_mb": 800}, {"app": "music", "total_mb": 620}, {"app": "weather"}, {"app": "camera"}]}),
    ok("clear_app_cache", {"app": "music"}, rows=(R("app_storage", app="music", cache_mb=0, data_mb=300),),
       payload={"freed_mb": 120}),
    err("clear_app_cache", {"app": "taobao"}, E.STATE_CONFLICT), err("clear_app_cache", {"app": "video"}, E.NOT_FOUND),
    ok("clear_app_data", {"app": "music"}, rows=(R("app_storage", app="music", cache_mb=0, data_mb=0),
                                                 R("apps", app="music", running=0)), payload={"freed_mb": 420}),
    err("clear_app_data", {"app": "camera"}, E.STATE_CONFLICT), err("clear_app_data", {"app": "video"}, E.NOT_FOUND),
    err("clear_app_cache", {"app": "messages"}, E.STATE_CONFLICT),  # preinstalled: no storage row, nothing cached
    ok("list_files", payload={"files": [{"file_id": "f4"}, {"file_id": "f2"}, {"file_id": "f1"}]}),
    ok("list_files", {"trash": True}, payload={"files": [{"file_id": "f3", "size_mb": 400}]}),
    ok("list_files", {"folder": "/Documents"}, payload={"files": [{"file_id": "f2", "name": "report.pdf"}]}),
    ok("delete_file", {"file_id": "f1"}, rows=(R("files", file_id="f1", trashed=1),)),
    err("delete_file", {"file_id": "f3"}, E.STATE_CONFLICT), err("delete_file", {"file_id": "f9"}, E.NOT_FOUND),
    ok("restore_file", {"file_id": "f3"}, rows=(R("files", file_id="f3", trashed=0),)),
    err("restore_file", {"file_id": "f1"}, E.STATE_CONFLICT), err("restore_file", {"file_id": "f9"}, E.NOT_FOUND),
    ok("empty_trash", gone=(R("files", file_id="f3"),), payload={"removed": 1, "freed_mb": 400}),
    err("empty_trash", {}, E.STATE_CONFLICT, setup=(("restore_file", {"file_id": "f3"}),)),
    ok("move_file", {"file_id": "f2", "folder": "Download/"}, rows=(R("files", file_id="f2", folder="Download"),)),
    err("move_file", {"file_id": "f2", "folder": "Backup"}, E.STATE_CONFLICT, payload={"file_id": "f4"}),
    err("move_file", {"file_id": "f3", "folder": "Backup"}, E.STATE_CONFLICT),
    err("move_file", {"file_id": "f9", "folder": "Backup"}, E.NOT_FOUND),
    ok("rename_file", {"file_id": "f2", "name": "summary.pdf"}, rows=(R("files", file_id="f2", name="summary.pdf"),)),
    err("rename_file", {"file_id": "f2", "name": "a/b.pdf"}, E.SCHEMA_ERROR),
    err("rename_file", {"file_id": "f2", "name": "report.pdf"}, E.STATE_CONFLICT),
    err("rename_file", {"file_id": "f9", "name": "x.pdf"}, E.NOT_FOUND),
    ok("list_downloads", payload={"downloads": [{"download_id": "d1"}, {"download_id": "d2"}, {"download_id": "d3"}]}),
    ok("pause_download", {"download_id": "d1"}, rows=(R("downloads", download_id="d1", status="paused"),)),
    err("pause_download", {"download_id": "d2"}, E.STATE_CONFLICT),
    err("pause_download", {"download_id": "d9"}, E.NOT_FOUND),
    ok("resume_download", {"download_id": "d2"}, rows=(R("downloads", download_id="d2", status="running"),)),
    err("resume_download", {"download_id": "d3"}, E.STATE_CONFLICT),
    err("resume_download", {"download_id": "d9"}, E.NOT_FOUND),
    err("resume_download", {"download_id": "d2"}, E.STATE_CONFLICT, setup=OFFLINE),
    # ---- audio & entertainment (S0: song-1 is paused, pod-1 is queued, the video app is not installed)
    ok("search_media", {"query": "周杰伦"}, payload={"results": [{"media_id": "song-1"}, {"media_id": "song-2"}]}),
    ok("search_media", {"query": "大内", "kind": "podcast"}, payload={"results": [{"media_id": "pod-1"}]}),
    ok("play_media", {"media_id": "song-2"}, rows=(S("now_playing", "song-2"), S("playback", "playing"))),
    ok("play_media", {"media_id": "song-1"}, setup=OFFLINE, rows=(S("playback", "playing"),)),  # downloaded
    err("play_media", {"media_id": "vid-1"}, E.NOT_FOUND, payload={"app": "video"}),
    err("play_media", {"media_id": "x"}, E.NOT_FOUND),
    err("play_media", {"media_id": "song-2"}, E.STATE_CONFLICT, setup=OFFLINE),
    err("play_media", {"media_id": "song-2"}, E.STATE_CONFLICT, setup=(("play_media", {"media_id": "song-2"}),)),
    ok("pause_playback", setup=(("play_media", {"media_id": "song-2"}),), rows=(S("playback", "paused"),)),
    err("pause_playback", {}, E.STATE_CONFLICT),
    ok("resume_playback", rows=(S("playback", "playing"),)),
    err("resume_playback", {}, E.STATE_CONFLICT, setup=(("stop_playback", {}),)),
    ok("stop_playback", rows=(S("playback", "stopped"),)),
    err("stop_playback", {}, E.STATE_CONFLICT, setup=(("stop_playback", {}),)),
    ok("get_now_playing", payload={"item": {"media_id": "song-1", "title": "晴天"}, "playback": "paused", "queued": 1,
                                   "sleep_timer_min": 0}),
    ok("skip_next", rows=(S("now_playing", "pod-1"), S("playback", "playing")), gone=(R("media_queue", position=1),)),
    err("skip_next", {}, E.STATE_CONFLICT, setup=(("clear_queue", {}),)),
    err("skip_next", {}, E.NOT_FOUND, setup=("UPDATE apps SET installed = 0 WHERE app = 'podcasts'",)),
    ok("add_to_queue", {"media_id": "song-1"}, rows=(R("media_queue", position=2, media_id="song-1"),)),
    err("add_to_queue", {"media_id": "pod-1"}, E.STATE_CONFLICT),
    err("add_to_queue", {"media_id": "radio-1"}, E.STATE_CONFLICT), err("add_to_queue", {"media_id": "x"}, E.NOT_FOUND),
    ok("list_queue", payload={"queue": [{"position": 1, "media_id": "pod-1", "title": "第1期"}]}),
    ok("clear_queue", gone=(R("media_queue", media_id="pod-1"),)),
    err("clear_queue", {}, E.STATE_CONFLICT, setup=(("clear_queue", {}),)),
    ok("set_shuffle", {"on": True}, rows=(S("shuffle", "on"),)), err("set_shuffle", {"on": False}, E.STATE_CONFLICT),
    ok("set_repeat_mode", {"mode": "all"}, rows=(S("repeat_mode", "all"),)),
    err("set_repeat_mode", {"mode": "off"}, E.STATE_CONFLICT),
    ok("set_media_liked", {"media_id": "song-2", "liked": True}, rows=(R("media", media_id="song-2", liked=1),)),
    err("set_media_liked", {"media_id": "song-1", "liked": True}, E.STATE_CONFLICT),
    err("set_media_liked", {"media_id": "x", "liked": True}, E.NOT_FOUND),
    ok("list_liked_media", payload={"liked": [{"media_id": "song-1"}]}),
    ok("create_playlist", {"name": "学习"}, rows=(R("playlists", playlist_id="playlist-1", name="学习"),)),
    err("create_playlist", {"name": "跑步"}, E.STATE_CONFLICT, payload={"playlist_id": "pl-1"}),
    ok("list_playlists", payload={"playlists": [{"playlist_id": "pl-1", "items": ["song-1", "song-2"]},
                                                {"playlist_id": "pl-2", "items": []}]}),
    ok("add_to_playlist", {"playlist_id": "pl-2", "media_id": "pod-1"},
       rows=(R("playlist_items", playlist_id="pl-2", media_id="pod-1", position=1),)),
    err("add_to_playlist", {"playlist_id": "pl-1", "media_id": "song-1"}, E.STATE_CONFLICT),
    err("add_to_playlist", {"playlist_id": "pl-9", "media_id": "song-1"}, E.NOT_FOUND),
    err("add_to_playlist", {"playlist_id": "pl-2", "media_id": "x"}, E.NOT_FOUND),
    err("add_to_playlist", {"playlist_id": "pl-2", "media_id": "radio-1"}, E.STATE_CONFLICT),
    ok("remove_from_playlist", {"playlist_id": "pl-1", "media_id": "song-1"},
       gone=(R("playlist_items", playlist_id="pl-1", media_id="song-1"),)),
    err("remove_from_playlist", {"playlist_id": "pl-2", "media_id": "song-1"}, E.NOT_FOUND),
    err("remove_from_playlist", {"playlist_id": "pl-9", "media_id": "song-1"}, E.NOT_FOUND),
    ok("delete_playlist", {"playlist_id": "pl-1"}, gone=(R("playlists", playlist_id="pl-1"),
                                                         R("playlist_items", media_id="song-1"),
                                                         R("playlist_items", media_id="song-2"))),
    err("delete_playlist", {"playlist_id": "pl-9"}, E.NOT_FOUND),
    ok("play_playlist", {"playlist_id": "pl-1"}, rows=(S("playback", "playing"), ("media_queue", {
        "position": 1, "media_id": "song-2"})), payload={"media_id": "song-1", "queued": 1}),
    err("play_playlist", {"playlist_id": "pl-2"}, E.STATE_CONFLICT),
    err("play_playlist", {"playlist_id": "pl-9"}, E.NOT_FOUND),
    ok("set_podcast_subscription", {"show": "大内密谈", "subscribed": True},
       rows=(R("podcast_subscriptions", show="大内密谈", subscribed_at="2026-12-01 08:00"),)),
    ok("set_podcast_subscription", {"show": "大内密谈", "subscribed": False},
       setup=(("set_podcast_subscription", {"show": "大内密谈", "subscribed": True}),),
       gone=(R("podcast_subscriptions", show="大内密谈"),)),
    err("set_podcast_subscription", {"show": "大内密谈", "subscribed": False}, E.STATE_CONFLICT),
    err("set_podcast_subscription", {"show": "nope", "subscribed": True}, E.NOT_FOUND),
    ok("tune_radio", {"frequency": "FM 106.1"}, rows=(S("now_playing", "radio-1"), S("playback", "playing"))),
    err("tune_radio", {"frequency": "FM 99.9"}, E.NOT_FOUND),
    err("tune_radio", {"frequency": "FM 120.0"}, E.SCHEMA_ERROR),
    err("tune_radio", {"frequency": "FM 106.1"}, E.STATE_CONFLICT, setup=(("tune_radio", {"frequency": "FM 106.1"}),)),
    ok("download_media", {"media_id": "song-2"}, rows=(R("media", media_id="song-2", downloaded=1),)),
    err("download_media", {"media_id": "song-1"}, E.STATE_CONFLICT),
    err("download_media", {"media_id": "radio-1"}, E.STATE_CONFLICT),
    err("download_media", {"media_id": "x"}, E.NOT_FOUND),
    err("download_media", {"media_id": "song-2"}, E.STATE_CONFLICT, setup=OFFLINE),
    ok("set_app_volume", {"app": "music", "level": 50}, rows=(R("app_volumes", app="music", level=50),)),
    ok("set_app_volume", {"app": "podcasts", "level": 20}, rows=(R("app_volumes", app="podcasts", level=20),)),
    err("set_app_volume", {"app": "music", "level": 80}, E.STATE_CONFLICT),
    err("set_app_volume", {"app": "video", "level": 80}, E.NOT_FOUND),
    ok("set_sleep_timer", {"minutes": 30}, setup=(("resume_playback", {}),), rows=(S("sleep_timer_min", "30"),)),
    ok("set_sleep_timer", {"minutes": 0}, setup=(("resume_playback", {}), ("set_sleep_timer", {"minutes": 30})),
       rows=(S("sleep_timer_min", "0"),)),
    err("set_sleep_timer", {"minutes": 30}, E.STATE_CONFLICT, payload={"setting": "playback", "value": "paused"}),
    err("set_sleep_timer", {"minutes": 0}, E.STATE_CONFLICT),
    err("set_sleep_timer", {"minutes": 30}, E.STATE_CONFLICT, setup=(("resume_playback", {}),
                                                                     ("set_sleep_timer", {"minutes": 30}))),
    # ---- time management
    ok("create_alarm", {"time": "06:30", "label": "晨跑"},
       rows=(R("alarms", alarm_id="alarm-1", time="06:30", enabled=1, repeat="once"),)),
    err("create_alarm", {"time": "07:00"}, E.STATE_CONFLICT, payload={"alarm_id": "alarm-0"}),
    ok("list_alarms", payload={"alarms": [{"alarm_id": "alarm-0"}, {"alarm_id": "alarm-5"}]}),
    ok("set_alarm_enabled", {"alarm_id": "alarm-0", "enabled": True},
       rows=(R("alarms", alarm_id="alarm-0", enabled=1),)),
    err("set_alarm_enabled", {"alarm_id": "alarm-5", "enabled": True}, E.STATE_CONFLICT),
    err("set_alarm_enabled", {"alarm_id": "alarm-9", "enabled": True}, E.NOT_FOUND),
    ok("delete_alarm", {"alarm_id": "alarm-5"}, gone=(R("alarms", alarm_id="alarm-5"),)),
    err("delete_alarm", {"alarm_id": "alarm-9"}, E.NOT_FOUND),
    ok("create_event", {"title": "午饭", "start": "2026-12-01 12:00", "end": "2026-12-01 13:00"},
       rows=(R("events", event_id="event-1", title="午饭", location=""),), payload={"overlaps": None}),
    err("create_event", {"title": "x", "start": "2026-12-01 12:00", "end": "2026-12-01 12:00"}, E.SCHEMA_ERROR),
    ok("list_events", {"date": "2026-12-01"}, payload={"events": [{"event_id": "e1", "title": "周会"}]}),
    ok("update_alarm", {"alarm_id": "alarm-0", "time": "06:45"},
       rows=(R("alarms", alarm_id="alarm-0", time="06:45", label="起床"),)),
    err("update_alarm", {"alarm_id": "alarm-0", "time": "22:30"}, E.STATE_CONFLICT, payload={"alarm_id": "alarm-5"}),
    err("update_alarm", {"alarm_id": "alarm-0"}, E.MISSING_PARAMETER),
    err("update_alarm", {"alarm_id": "alarm-0", "label": "起床"}, E.STATE_CONFLICT),
    err("update_alarm", {"alarm_id": "alarm-9", "label": "x"}, E.NOT_FOUND),
    ok("update_event", {"event_id": "e1", "location": "B"},
       rows=(R("events", event_id="e1", location="B", title="周会"),)),
    err("update_event", {"event_id": "e1"}, E.MISSING_PARAMETER),
    err("update_event", {"event_id": "e1", "end": "2026-12-01 09:00"}, E.SCHEMA_ERROR),
    err("update_event", {"event_id": "e1", "title": "周会"}, E.STATE_CONFLICT),
    err("update_event", {"event_id": "e9", "title": "x"}, E.NOT_FOUND),
    ok("delete_event", {"event_id": "e1"}, gone=(R("events", event_id="e1"),)),
    err("delete_event", {"event_id": "e9"}, E.NOT_FOUND),
    ok("start_timer", {"minutes": 5, "seconds": 30, "label": "泡茶"},
       rows=(R("timers", timer_id="timer-1", duration_s=330, state="running", label="泡茶"),)),
    err("start_timer", {"minutes": 0}, E.SCHEMA_ERROR),
    err("start_timer", {"minutes": 3, "label": "面条"}, E.STATE_CONFLICT, payload={"timer_id": "t1"}),
    ok("list_timers", payload={"timers": [{"timer_id": "t1", "state": "running"}, {"timer_id": "t2"}]}),
    ok("pause_timer", {"timer_id": "t1"}, setup=(("resume_timer", {"timer_id": "t2"}),),  # t2 must stay running
       rows=(R("timers", timer_id="t1", state="paused"),)),
    err("pause_timer", {"timer_id": "t2"}, E.STATE_CONFLICT), err("pause_timer", {"timer_id": "t9"}, E.NOT_FOUND),
    ok("resume_timer", {"timer_id": "t2"}, rows=(R("timers", timer_id="t2", state="running"),)),
    err("resume_timer", {"timer_id": "t1"}, E.STATE_CONFLICT),
    ok("cancel_timer", {"timer_id": "t1"}, gone=(R("timers", timer_id="t1"),)),
    err("cancel_timer", {"timer_id": "t9"}, E.NOT_FOUND),
    ok("start_stopwatch", rows=(S("stopwatch", "running"),)),
    err("start_stopwatch", {}, E.STATE_CONFLICT, setup=(("start_stopwatch", {}),)),
    ok("stop_stopwatch", setup=(("start_stopwatch", {}),), rows=(S("stopwatch", "stopped"),)),
    err("stop_stopwatch", {}, E.STATE_CONFLICT),
    ok("reset_stopwatch", setup=(("start_stopwatch", {}), ("stop_stopwatch", {})), rows=(S("stopwatch", "idle"),)),
    err("reset_stopwatch", {}, E.STATE_CONFLICT),
    ok("create_reminder", {"text": "取快递", "due": "2026-12-02 09:00"},
       rows=(R("reminders", reminder_id="reminder-1", due="2026-12-02 09:00", done=0),)),
    err("create_reminder", {"text": "买牛奶", "due": "2026-12-01 18:00"}, E.STATE_CONFLICT, payload={"reminder_id": "r1"}),
    ok("list_reminders", payload={"reminders": [{"reminder_id": "r1"}]}),
    ok("list_reminders", {"include_done": True}, payload={"reminders": [{"reminder_id": "r1"}, {"reminder_id": "r2"}]}),
    ok("complete_reminder", {"reminder_id": "r1"}, rows=(R("reminders", reminder_id="r1", done=1),)),
    err("complete_reminder", {"reminder_id": "r2"}, E.STATE_CONFLICT),
    err("complete_reminder", {"reminder_id": "r9"}, E.NOT_FOUND),
    ok("delete_reminder", {"reminder_id": "r2"}, gone=(R("reminders", reminder_id="r2"),)),
    err("delete_reminder", {"reminder_id": "r9"}, E.NOT_FOUND),
    ok("add_world_clock", {"city": "东京"}, rows=(R("world_clocks", city="Tokyo", time_zone="Asia/Tokyo"),)),
    err("add_world_clock", {"city": "london"}, E.STATE_CONFLICT),
    err("add_world_clock", {"city": "Atlantis"}, E.NOT_FOUND),
    ok("remove_world_clock", {"city": "伦敦"}, gone=(R("world_clocks", city="London"),)),
    err("remove_world_clock", {"city": "Tokyo"}, E.NOT_FOUND),
    ok("list_world_clocks", payload={"clocks": [{"city": "London", "local_time": "2026-12-01 00:00"}]}),
    ok("list_world_clocks", setup=(("add_world_clock", {"city": "New York"}),
                                   "UPDATE settings SET value = 'Asia/Tokyo' WHERE key = 'time_zone'"),
       payload={"clocks": [{"city": "London", "local_time": "2026-11-30 23:00"},  # 08:00 in Tokyo (UTC+9)
                           {"city": "New York", "local_time": "2026-11-30 18:00"}]}),
    ok("list_world_clocks", setup=("DELETE FROM settings WHERE key = 'clock'",),
       payload={"clocks": [{"city": "London", "local_time": None}]}),
    # ---- AI assistant
    ok("route_to_gui_agent", {"app": "taobao", "instruction": "在淘宝买一袋猫粮"}, rows=(("handoffs", {
        "handoff_id": "handoff-1", "app": "taobao", "status": "queued", "created_at": "2026-12-01 08:00"}),)),
    err("route_to_gui_agent", {"app": "video", "instruction": "播放"}, E.NOT_FOUND),
    ok("list_handoffs", {"status": "queued"}, payload={"handoffs": [{"handoff_id": "h1", "instruction": "买猫粮"}]}),
    ok("cancel_handoff", {"handoff_id": "h1"}, rows=(R("handoffs", handoff_id="h1", status="cancelled"),)),
    err("cancel_handoff", {"handoff_id": "h2"}, E.STATE_CONFLICT),
    err("cancel_handoff", {"handoff_id": "h9"}, E.NOT_FOUND),
    ok("search_memory", {"query": "妈妈 生日"}, payload={"memories": [{"memory_id": "mem1"}]}),
    ok("search_memory", {"query": "座位 生日 妈妈"}, payload={"memories": [{"memory_id": "mem1"}, {"memory_id": "mem2"}]}),
    ok("list_memories", {"category": "person"}, payload={"memories": [{"memory_id": "mem1"}]}),
    ok("save_memory", {"content": "用户对花生过敏", "category": "fact"},
       rows=(R("memories", memory_id="memory-1", content="用户对花生过敏", category="fact"),)),
    err("save_memory", {"content": "妈妈的生日是3月8日", "category": "person"}, E.STATE_CONFLICT,
        payload={"memory_id": "mem1"}),
    err("save_memory", {"content": "新的事", "category": "fact"}, E.STATE_CONFLICT,
        setup=(("set_memory_enabled", {"on": False}),)),
    ok("get_memory", {"memory_id": "mem2"}, payload={"memory": {"memory_id": "mem2", "content": "用户喜欢靠窗的座位"}}),
    err("get_memory", {"memory_id": "mem9"}, E.NOT_FOUND),
    ok("update_memory", {"memory_id": "mem2", "content": "用户喜欢靠过道的座位"},
       rows=(R("memories", memory_id="mem2", content="用户喜欢靠过道的座位", updated_at="2026-12-01 08:00"),)),
    err("update_memory", {"memory_id": "mem2", "content": "用户喜欢靠窗的座位"}, E.STATE_CONFLICT),
    err("update_memory", {"memory_id": "mem9", "content": "x"}, E.NOT_FOUND),
    ok("delete_memory", {"memory_id": "mem1"}, gone=(R("memories", memory_id="mem1"),)),
    err("delete_memory", {"memory_id": "mem9"}, E.NOT_FOUND),
    ok("set_memory_enabled", {"on": False}, rows=(S("assistant_memory", "off"),)),
    err("set_memory_enabled", {"on": True}, E.STATE_CONFLICT),
    ok("set_voice_wake_up", {"on": True}, rows=(S("voice_wake_up", "on"),)),
    err("set_voice_wake_up", {"on": False}, E.STATE_CONFLICT),
    ok("set_proactive_suggestions", {"on": True}, rows=(S("proactive_suggestions", "on"),)),
    err("set_proactive_suggestions", {"on": True}, E.STATE_CONFLICT, setup=(("set_memory_enabled", {"on": False}),),
        payload={"setting": "assistant_memory"}),
    ok("create_note", {"title": "旅行计划", "body": "订酒店", "folder": "生活"},
       rows=(R("notes", note_id="note-1", title="旅行计划", folder="生活", pinned=0),)),
    err("create_note", {"title": "购物清单", "body": "x"}, E.STATE_CONFLICT, payload={"note_id": "n1"}),
    ok("list_notes", payload={"notes": [{"note_id": "n2", "pinned": 1}, {"note_id": "n1"}]}),
    ok("list_notes", {"folder": "工作"}, payload={"notes": [{"note_id": "n2"}]}),
    ok("search_notes", {"query": "鸡蛋"}, payload={"notes": [{"note_id": "n1", "snippet": "鸡蛋"}]}),
    ok("append_to_note", {"note_id": "n1", "text": "牛奶"}, rows=(R("notes", note_id="n1", body="鸡蛋\n牛奶"),)),
    err("append_to_note", {"note_id": "n9", "text": "x"}, E.NOT_FOUND),
    ok("pin_note", {"note_id": "n1", "pinned": True}, rows=(R("notes", note_id="n1", pinned=1),)),
    err("pin_note", {"note_id": "n2", "pinned": True}, E.STATE_CONFLICT),
    err("pin_note", {"note_id": "n9", "pinned": True}, E.NOT_FOUND),
    ok("delete_note", {"note_id": "n1"}, gone=(R("notes", note_id="n1"),)),
    err("delete_note", {"note_id": "n9"}, E.NOT_FOUND),
    ok("translate_text", {"text": "谢谢", "target_language": "ja"}, payload={"translation": "ありがとう"}),
    err("translate_text", {"text": "你好", "target_language": "en"}, E.NOT_FOUND),
    ok("set_assistant_voice", {"voice": "calm"}, rows=(S("assistant_voice", "calm"),)),
    err("set_assistant_voice", {"voice": "warm"}, E.STATE_CONFLICT),
    ok("summarize_notifications", payload={"unread": 2, "by_app": {"messages": [{"notification_id": "nt1"}],
                                                                   "taobao": [{"notification_id": "nt2"}]}},
       rows=(R("notifications", notification_id="nt1", read=1), R("notifications", notification_id="nt2", read=1))),
    ok("summarize_notifications", {"app": "taobao"}, payload={"unread": 1},
       rows=(R("notifications", notification_id="nt2", read=1),)),
    ok("dismiss_notification", {"notification_id": "nt3"}, gone=(R("notifications", notification_id="nt3"),)),
    err("dismiss_notification", {"notification_id": "nt9"}, E.NOT_FOUND),
    # ---- calls & communication
    ok("search_contacts", {"query": "妈妈"}, payload={"contacts": [{"contact_id": "c1", "name": "王芳"}]}),
    ok("send_message", {"contact_id": "c1", "text": "我到了"}, rows=(("messages", {
        "message_id": "message-1", "contact_id": "c1", "direction": "out", "text": "我到了"}),)),
    err("send_message", {"contact_id": "c9", "text": "x"}, E.NOT_FOUND),
    err("send_message", {"contact_id": "c1", "text": "x"}, E.STATE_CONFLICT,
        setup=(("set_airplane_mode", {"on": True}),)),
    ok("call_contact", {"contact_id": "c2"}, rows=(R("calls", call_id="call-1", contact_id="c2", direction="out"),)),
    err("call_contact", {"contact_id": "c9"}, E.NOT_FOUND),
    err("call_contact", {"contact_id": "c2"}, E.STATE_CONFLICT, setup=(("set_airplane_mode", {"on": True}),)),
    ok("list_messages", {"contact_id": "c1"}, payload={"messages": [{"message_id": "m1", "text": "到家了吗"}]}),
    err("list_messages", {"contact_id": "c9"}, E.NOT_FOUND),
    ok("create_contact", {"name": "张伟", "phone": "139-0000-1111"},
       rows=(R("contacts", contact_id="contact-1", name="张伟", phone="13900001111", relation=""),)),
    err("create_contact", {"name": "妈", "phone": "138 0000 0000"}, E.STATE_CONFLICT, payload={"contact_id": "c1"}),
    err("create_contact", {"name": "x", "phone": "12"}, E.SCHEMA_ERROR),
    ok("update_contact", {"contact_id": "c2", "relation": "老板"}, rows=(R("contacts", contact_id="c2", relation="老板"),)),
    err("update_contact", {"contact_id": "c2"}, E.MISSING_PARAMETER),
    err("update_contact", {"contact_id": "c2", "phone": "13800000000"}, E.STATE_CONFLICT, payload={"contact_id": "c1"}),
    err("update_contact", {"contact_id": "c2", "name": "李雷"}, E.STATE_CONFLICT),
    err("update_contact", {"contact_id": "c9", "name": "x"}, E.NOT_FOUND),
    ok("delete_contact", {"contact_id": "c2"}, gone=(R("contacts", contact_id="c2"),)),
    err("delete_contact", {"contact_id": "c9"}, E.NOT_FOUND),
    ok("get_call_log", {"direction": "missed"}, payload={"calls": [{"call_id": "k1", "name": "李雷"}]}),
    ok("get_call_log", payload={"calls": [{"call_id": "k1"}, {"call_id": "k2"}]}),
    ok("delete_call_log_entry", {"call_id": "k1"}, gone=(R("calls", call_id="k1"),)),
    err("delete_call_log_entry", {"call_id": "k9"}, E.NOT_FOUND),
    ok("block_number", {"phone": "139 1111 2222"},
       rows=(R("blocked_numbers", phone="13911112222", blocked_at="2026-12-01 08:00"),)),
    err("block_number", {"phone": "400-123-4567"}, E.STATE_CONFLICT),
    ok("unblock_number", {"phone": "4001234567"}, gone=(R("blocked_numbers", phone="4001234567"),)),
    err("unblock_number", {"phone": "13800000000"}, E.STATE_CONFLICT),
    ok("list_blocked_numbers", payload={"blocked": [{"phone": "4001234567", "name": None}]}),
    ok("list_voicemails", payload={"voicemails": [{"voicemail_id": "v1", "name": "李雷", "heard": 0}]}),
    ok("play_voicemail", {"voicemail_id": "v1"}, rows=(R("voicemails", voicemail_id="v1", heard=1),),
       payload={"transcript": "明天开会改到十点"}),
    err("play_voicemail", {"voicemail_id": "v9"}, E.NOT_FOUND),
    ok("delete_voicemail", {"voicemail_id": "v1"}, gone=(R("voicemails", voicemail_id="v1"),)),
    err("delete_voicemail", {"voicemail_id": "v9"}, E.NOT_FOUND),
    # ---- messaging & social
    ok("list_chats", payload={"chats": [{"chat_id": "chat-2", "unread": 0, "muted": 1},
                                        {"chat_id": "chat-1", "unread": 1, "kind": "direct"}]}),
    ok("list_chats", {"unread_only": True}, payload={"chats": [{"chat_id": "chat-1", "unread": 1}]}),
    ok("read_chat", {"chat_id": "chat-1"}, rows=(R("chat_messages", chat_message_id="cm1", read=1),),
       payload={"messages": [{"chat_message_id": "cm1", "sender_name": "王芳"}]}),
    err("read_chat", {"chat_id": "chat-9"}, E.NOT_FOUND),
    ok("send_chat_message", {"chat_id": "chat-2", "text": "好的"},
       rows=(R("chat_messages", chat_id="chat-2", sender="me", text="好的", sent_at="2026-12-01 08:00"),)),
    err("send_chat_message", {"chat_id": "chat-9", "text": "好的"}, E.NOT_FOUND),
    err("send_chat_message", {"chat_id": "chat-2", "text": "好的"}, E.STATE_CONFLICT, setup=OFFLINE,
        payload={"value": "offline"}),
    err("send_chat_message", {"chat_id": "chat-1", "text": "在吗"}, E.STATE_CONFLICT,
        setup=(("block_number", {"phone": "13800000000"}),), payload={"phone": "13800000000"}),
    ok("create_group_chat", {"title": "项目组", "members": ["c1", "c2"]},
       rows=(R("chats", chat_id="chat-3", title="项目组", kind="group", app="WeChat"),
             R("chat_members", chat_id="chat-3", contact_id="c1"),
             R("chat_members", chat_id="chat-3", contact_id="c2"))),
    err("create_group_chat", {"title": "项目组", "members": ["c1", "c9"]}, E.NOT_FOUND, payload={"missing": ["c9"]}),
    err("create_group_chat", {"title": "项目组", "members": ["c1", "c2"]}, E.STATE_CONFLICT, setup=OFFLINE),
    err("create_group_chat", {"title": "项目组", "members": ["c1"]}, E.SCHEMA_ERROR),
    ok("add_chat_member", {"chat_id": "chat-2", "contact_id": "c3"},
       setup=("INSERT INTO contacts (contact_id, name, phone, relation) VALUES ('c3', '张伟', '13700000000', '朋友')",),
       rows=(R("chat_members", chat_id="chat-2", contact_id="c3"),)),
    err("add_chat_member", {"chat_id": "chat-1", "contact_id": "c2"}, E.STATE_CONFLICT),
    err("add_chat_member", {"chat_id": "chat-2", "contact_id": "c1"}, E.STATE_CONFLICT),
    err("add_chat_member", {"chat_id": "chat-2", "contact_id": "c9"}, E.NOT_FOUND),
    ok("set_chat_muted", {"chat_id": "chat-1", "muted": True}, rows=(R("chats", chat_id="chat-1", muted=1),)),
    err("set_chat_muted", {"chat_id": "chat-2", "muted": True}, E.STATE_CONFLICT),
    err("set_chat_muted", {"chat_id": "chat-9", "muted": False}, E.NOT_FOUND),
    ok("list_social_feed", payload={"posts": [{"post_id": "post-1", "author_name": "李雷"}, {"post_id": "post-2"}]}),
    ok("publish_post", {"text": "初雪", "visibility": "public"},
       rows=(R("social_posts", post_id="post-3", author="me", text="初雪", visibility="public"),)),
    ok("publish_post", {"text": "初雪"}, rows=(R("social_posts", visibility="friends", liked=0),)),
    err("publish_post", {"text": "初雪"}, E.STATE_CONFLICT, setup=OFFLINE),
    ok("like_post", {"post_id": "post-1"}, rows=(R("social_posts", post_id="post-1", liked=1),)),
    err("like_post", {"post_id": "post-2"}, E.STATE_CONFLICT), err("like_post", {"post_id": "post-9"}, E.NOT_FOUND),
    # ---- shopping & payments
    ok("search_products", {"query": "猫粮"}, payload={"products": [{"product_id": "p2", "price": 89.0, "stock": 1}]}),
    ok("add_to_cart", {"product_id": "p1", "quantity": 3}, rows=(R("cart_items", product_id="p1", quantity=5),)),
    ok("add_to_cart", {"product_id": "p2"}, rows=(R("cart_items", product_id="p2", quantity=1),)),
    err("add_to_cart", {"product_id": "p3"}, E.STATE_CONFLICT, payload={"stock": 0}),
    err("add_to_cart", {"product_id": "p9"}, E.NOT_FOUND),
    ok("remove_from_cart", {"product_id": "p1"}, gone=(R("cart_items", product_id="p1"),)),
    err("remove_from_cart", {"product_id": "p2"}, E.NOT_FOUND),
    ok("view_cart", payload={"items": [{"product_id": "p1", "quantity": 2, "price": 39.9}], "total": 79.8}),
    ok("list_payment_methods", payload={"methods": [{"method_id": "pm-1", "is_default": 1, "balance": 50.0},
                                                    {"method_id": "pm-2", "balance": None}]}),
    ok("set_default_payment_method", {"method_id": "pm-2"},
       rows=(R("payment_methods", method_id="pm-1", is_default=0),
             R("payment_methods", method_id="pm-2", is_default=1))),
    err("set_default_payment_method", {"method_id": "pm-1"}, E.STATE_CONFLICT),
    err("set_default_payment_method", {"method_id": "pm-9"}, E.NOT_FOUND),
    ok("checkout_cart", {"method_id": "pm-2"}, rows=(R("orders", order_id="order-1", total=79.8, method_id="pm-2",
                                                       status="paid", placed_at="2026-12-01 08:00",
                                                       items='[{"price": 39.9, "product_id": "p1", "quantity": 2}]'),
                                                     R("products", product_id="p1", stock=8)),
       gone=(R("cart_items", product_id="p1"),), payload={"total": 79.8}),
    ok("checkout_cart", setup=("UPDATE cart_items SET quantity = 1",),
       rows=(R("orders", total=39.9, method_id="pm-1"), R("products", product_id="p1", stock=9),
             R("payment_methods", method_id="pm-1", balance=10.1)), gone=(R("cart_items", product_id="p1"),)),
    err("checkout_cart", {}, E.STATE_CONFLICT, payload={"balance": 50.0, "total": 79.8}),
    err("checkout_cart", {}, E.MISSING_PARAMETER, setup=("UPDATE payment_methods SET is_default = 0",),
        payload={"fields": ["method_id"]}),
    err("checkout_cart", {"method_id": "pm-9"}, E.NOT_FOUND),
    err("checkout_cart", {"method_id": "pm-2"}, E.STATE_CONFLICT, setup=(("remove_from_cart", {"product_id": "p1"}),)),
    err("checkout_cart", {"method_id": "pm-2"}, E.STATE_CONFLICT, setup=("UPDATE products SET stock = 1",),
        payload={"product_id": "p1", "stock": 1}),
    err("checkout_cart", {"method_id": "pm-2"}, E.STATE_CONFLICT, setup=OFFLINE, payload={"value": "offline"}),
    ok("list_orders", {"status": "paid"}, payload={"orders": [{"order_id": "o4"}, {"order_id": "o1", "items": [
        {"product_id": "p2", "quantity": 1, "price": 89.0}]}]}),
    ok("cancel_order", {"order_id": "o1"}, rows=(R("orders", order_id="o1", status="cancelled"),
                                                 R("products", product_id="p2", stock=2)), payload={"refunded": 89.0}),
    ok("cancel_order", {"order_id": "o4"}, rows=(R("orders", order_id="o4", status="cancelled"),
                                                 R("products", product_id="p1", stock=11),
                                                 R("payment_methods", method_id="pm-1", balance=89.9))),
    err("cancel_order", {"order_id": "o3"}, E.STATE_CONFLICT, payload={"status": "shipped"}),
    err("cancel_order", {"order_id": "o9"}, E.NOT_FOUND),
    err("cancel_order", {"order_id": "o1"}, E.STATE_CONFLICT, setup=OFFLINE),
    ok("request_refund", {"order_id": "o2", "reason": "包装破损"},
       rows=(R("refunds", refund_id="refund-1", order_id="o2", amount=39.9, status="requested"),
             R("orders", order_id="o2", status="refund_requested"))),
    err("request_refund", {"order_id": "o1", "reason": "不想要了"}, E.STATE_CONFLICT, payload={"status": "paid"}),
    err("request_refund", {"order_id": "o9", "reason": "不想要了"}, E.NOT_FOUND),
    err("request_refund", {"order_id": "o2", "reason": "包装破损"}, E.STATE_CONFLICT, setup=OFFLINE),
    # ---- health & fitness
    ok("get_activity_summary", payload={"date": "2026-12-01", "steps": 3200, "step_goal": 8000, "goal_met": False,
                                        "workouts": []}),
    ok("get_activity_summary", {"date": "2026-11-30"}, payload={"steps": 9500, "goal_met": True, "distance_m": 7000,
                                                                "workouts": [{"workout_id": "w1"}]}),
    err("get_activity_summary", {"date": "2026-12-05"}, E.STATE_CONFLICT),
    err("get_activity_summary", {"date": "2026-02-30"}, E.SCHEMA_ERROR),
    ok("get_health_trend", {"metric": "sleep_min", "days": 7},
       payload={"values": [{"day": "2026-11-29", "value": 380}, {"day": "2026-11-30", "value": 410}],
                "average": 395.0}),
    ok("set_step_goal", {"steps": 10000}, rows=(S("step_goal", "10000"),), payload={"previous": 8000}),
    err("set_step_goal", {"steps": 8000}, E.STATE_CONFLICT),
    ok("start_workout", {"kind": "yoga"}, rows=(R("workouts", workout_id="workout-1", kind="yoga", status="active",
                                                  started_at="2026-12-01 08:00"),)),
    ok("start_workout", {"kind": "run"}, setup=(("set_location_service", {"on": True}),),
       rows=(R("workouts", kind="run", status="active"),)),
    err("start_workout", {"kind": "run"}, E.STATE_CONFLICT, payload={"setting": "location"}),
    err("start_workout", {"kind": "swim"}, E.STATE_CONFLICT, setup=(("start_workout", {"kind": "yoga"}),),
        payload={"workout_id": "workout-1"}),
    ok("end_workout", {"workout_id": "w2"},
       setup=("INSERT INTO workouts VALUES ('w2', 'yoga', '2026-12-01 07:30', '', 'active')",),
       rows=(R("workouts", workout_id="w2", status="finished", ended_at="2026-12-01 08:00"),)),
    err("end_workout", {"workout_id": "w1"}, E.STATE_CONFLICT), err("end_workout", {"workout_id": "w9"}, E.NOT_FOUND),
    ok("add_medication_reminder", {"name": "二甲双胍", "dose": "1 片", "time": "12:00"},
       rows=(R("medications", medication_id="medication-1", name="二甲双胍", time="12:00", active=1),)),
    err("add_medication_reminder", {"name": "维生素D", "dose": "2 片", "time": "08:00"}, E.STATE_CONFLICT,
        payload={"medication_id": "med-1"}),
    ok("list_medications", payload={"medications": [{"medication_id": "med-1", "taken_today": 0},
                                                    {"medication_id": "med-2", "active": 0}]}),
    ok("log_medication_taken", {"medication_id": "med-1"},
       rows=(R("medication_log", medication_id="med-1", day="2026-12-01", taken_at="2026-12-01 08:00"),)),
    err("log_medication_taken", {"medication_id": "med-1"}, E.STATE_CONFLICT,
        setup=(("log_medication_taken", {"medication_id": "med-1"}),)),
    err("log_medication_taken", {"medication_id": "med-2"}, E.STATE_CONFLICT),
    err("log_medication_taken", {"medication_id": "med-9"}, E.NOT_FOUND),
    ok("list_health_records", {"kind": "allergy"}, payload={"records": [{"record_id": "hr1", "name": "青霉素"}]}),
    # ---- smart home
    ok("list_home_devices", {"room": "卧室"},
       payload={"devices": [{"device_id": "ac-1"}, {"device_id": "light-3", "reachable": 0}, {"device_id": "plug-1"}]}),
    ok("set_device_power", {"device_id": "light-1", "on": True}, rows=(R("home_devices", device_id="light-1",
                                                                         power="on", level=80),)),
    ok("set_device_power", {"device_id": "plug-1", "on": False}, setup=OFFLINE,  # Bluetooth reaches the hub
       rows=(R("home_devices", device_id="plug-1", power="off"),)),
    err("set_device_power", {"device_id": "lock-1", "on": True}, E.STATE_CONFLICT, payload={"kind": "lock"}),
    err("set_device_power", {"device_id": "light-2", "on": True}, E.STATE_CONFLICT),
    err("set_device_power", {"device_id": "light-3", "on": True}, E.STATE_CONFLICT, payload={"reachable": False}),
    err("set_device_power", {"device_id": "light-9", "on": True}, E.NOT_FOUND),
    err("set_device_power", {"device_id": "light-1", "on": True}, E.STATE_CONFLICT,
        setup=OFFLINE + (("set_bluetooth", {"on": False}),), payload={"setting": "wifi"}),
    ok("set_light_brightness", {"device_id": "light-1", "level": 60},
       rows=(R("home_devices", device_id="light-1", power="on", level=60),)),
    err("set_light_brightness", {"device_id": "ac-1", "level": 60}, E.STATE_CONFLICT),
    err("set_light_brightness", {"device_id": "light-2", "level": 30}, E.STATE_CONFLICT),
    ok("set_thermostat", {"device_id": "ac-1", "celsius": 24},
       rows=(R("home_devices", device_id="ac-1", power="on", level=24),)),
    err("set_thermostat", {"device_id": "light-1", "celsius": 24}, E.STATE_CONFLICT),
    ok("set_lock", {"device_id": "lock-1", "locked": False}, rows=(R("home_devices", device_id="lock-1", locked=0),)),
    err("set_lock", {"device_id": "lock-1", "locked": True}, E.STATE_CONFLICT),
    ok("set_room_lights", {"room": "客厅", "on": True}, rows=(R("home_devices", device_id="light-1", power="on"),),
       payload={"switched": ["light-1"], "skipped": []}),
    err("set_room_lights", {"room": "卧室", "on": True}, E.STATE_CONFLICT, payload={"skipped": ["light-3"]}),
    err("set_room_lights", {"room": "车库", "on": True}, E.NOT_FOUND),
    ok("list_home_scenes", payload={"scenes": [{"scene_id": "scene-1", "actions": lambda a: len(a) == 3},
                                               {"scene_id": "scene-2"}]}),
    ok("run_home_scene", {"scene_id": "scene-1"}, rows=(R("home_devices", device_id="light-1", power="on"),
                                                        R("home_devices", device_id="lock-1", locked=0),
                                                        R("home_devices", device_id="ac-1", power="on", level=24))),
    ok("run_home_scene", {"scene_id": "scene-2"}, rows=(R("home_devices", device_id="light-2", power="off"),),
       payload={"changed": ["light-2"], "skipped": ["light-3"]}),
    err("run_home_scene", {"scene_id": "scene-2"}, E.STATE_CONFLICT,
        setup=(("set_device_power", {"device_id": "light-2", "on": False}),)),
    err("run_home_scene", {"scene_id": "scene-9"}, E.NOT_FOUND),
    # ---- files & photos
    ok("search_photos", {"place": "三亚"}, payload={"photos": [{"photo_id": "ph2"}, {"photo_id": "ph1", "favorite": 1}]}),
    ok("search_photos", {"trash": True}, payload={"photos": [{"photo_id": "ph3"}]}),
    ok("search_photos", {"date": "2026-11-28", "favorites_only": True}, payload={"photos": [{"photo_id": "ph1"}]}),
    ok("list_albums", payload={"albums": [{"album_id": "album-1", "name": "旅行", "photos": 1}]}),
    ok("create_album", {"name": "家人"}, rows=(R("albums", album_id="album-2", name="家人"),)),
    err("create_album", {"name": "旅行"}, E.STATE_CONFLICT, payload={"album_id": "album-1"}),
    ok("add_photo_to_album", {"album_id": "album-1", "photo_id": "ph2"},
       rows=(R("album_photos", album_id="album-1", photo_id="ph2"),)),
    err("add_photo_to_album", {"album_id": "album-1", "photo_id": "ph1"}, E.STATE_CONFLICT),
    err("add_photo_to_album", {"album_id": "album-1", "photo_id": "ph3"}, E.STATE_CONFLICT),
    err("add_photo_to_album", {"album_id": "album-9", "photo_id": "ph2"}, E.NOT_FOUND),
    err("add_photo_to_album", {"album_id": "album-1", "photo_id": "ph9"}, E.NOT_FOUND),
    ok("set_photo_favorite", {"photo_id": "ph2", "favorite": True}, rows=(R("photos", photo_id="ph2", favorite=1),)),
    err("set_photo_favorite", {"photo_id": "ph1", "favorite": True}, E.STATE_CONFLICT),
    err("set_photo_favorite", {"photo_id": "ph9", "favorite": True}, E.NOT_FOUND),
    ok("delete_photo", {"photo_id": "ph2"}, rows=(R("photos", photo_id="ph2", trashed=1),)),
    err("delete_photo", {"photo_id": "ph3"}, E.STATE_CONFLICT), err("delete_photo", {"photo_id": "ph9"}, E.NOT_FOUND),
    ok("restore_photo", {"photo_id": "ph3"}, rows=(R("photos", photo_id="ph3", trashed=0),)),
    err("restore_photo", {"photo_id": "ph1"}, E.STATE_CONFLICT),
    ok("share_photo", {"photo_id": "ph1", "contact_id": "c1"},
       rows=(R("shares", share_id="share-1", kind="photo", item_id="ph1", contact_id="c1",
               shared_at="2026-12-01 08:00"),)),
    err("share_photo", {"photo_id": "ph1", "contact_id": "c9"}, E.NOT_FOUND),
    err("share_photo", {"photo_id": "ph9", "contact_id": "c1"}, E.NOT_FOUND),
    err("share_photo", {"photo_id": "ph3", "contact_id": "c1"}, E.STATE_CONFLICT),
    err("share_photo", {"photo_id": "ph1", "contact_id": "c1"}, E.STATE_CONFLICT, setup=OFFLINE),
    ok("share_file", {"file_id": "f2", "contact_id": "c2"},
       rows=(R("shares", kind="file", item_id="f2", contact_id="c2"),)),
    err("share_file", {"file_id": "f3", "contact_id": "c2"}, E.STATE_CONFLICT),
    err("share_file", {"file_id": "f3", "contact_id": "c2"}, E.STATE_CONFLICT,
        setup=(("restore_file", {"file_id": "f3"}),), payload={"size_mb": 400}),
    err("share_file", {"file_id": "f2", "contact_id": "c9"}, E.NOT_FOUND),
    err("share_file", {"file_id": "f9", "contact_id": "c2"}, E.NOT_FOUND),
]
#: Tools whose only errors are the catalogue's own (schema, permission, planted fault): reads and listings.
CANNOT_FAIL = {
    "get_device_status", "list_bluetooth_devices", "list_vpn_profiles", "get_battery_status", "check_system_update",
    "list_apps", "search_app_store", "list_app_updates", "get_storage_usage", "list_files", "list_downloads",
    "search_media", "get_now_playing", "list_queue", "list_liked_media", "list_playlists", "list_alarms",
    "list_events", "list_timers", "list_reminders", "list_world_clocks", "list_handoffs", "search_memory",
    "list_memories", "list_notes", "search_notes", "summarize_notifications", "search_contacts", "get_call_log",
    "list_blocked_numbers", "list_voicemails", "list_chats", "list_social_feed", "search_products", "view_cart",
    "list_payment_methods", "list_orders", "get_health_trend", "list_medications", "list_health_records",
    "list_home_devices", "list_home_scenes", "search_photos", "list_albums",
}


@pytest.fixture(scope="module")
def template() -> StateTemplate:
    return StateTemplate(S0)


def matches(actual: Any, expected: Any) -> bool:
    """``expected`` as a pattern: dicts match a subset of keys, lists match item by item (same length), a
    callable is a predicate, anything else must be equal."""
    if callable(expected):
        return bool(expected(actual))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and matches(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(map(matches, actual, expected))
    return actual == expected


ALL_TABLES = tuple(TABLES)  # the id counters too: a tool that issues ids must declare it writes them


def run_case(template: StateTemplate, case: Case) -> tuple[Any, dict, Any]:
    """Play the case's setup and the call; return the feedback, the call's own effect and the state."""
    state = template.restore()
    for step in case.setup:
        if isinstance(step, str):
            state.execute(step)
        else:
            assert execute(state, *step).ok, f"setup {step} failed"
    before = snapshot(state.conn, ALL_TABLES)
    feedback = execute(state, case.tool, case.args, step=1)
    return feedback, diff(before, snapshot(state.conn, ALL_TABLES)), state


def _changed_rows(effect: dict, table: str) -> list[dict]:
    entry = effect.get(table, {})
    return entry.get("added", []) + [change["after"] for change in entry.get("changed", [])]


@pytest.mark.parametrize("case", [c for c in CASES if c.error is None], ids=repr)
def test_each_tool_succeeds_with_the_expected_effect(template, case):
    assert case.payload or case.rows or case.gone, "a case must check something"
    feedback, effect, state = run_case(template, case)
    try:
        assert feedback.ok, feedback.payload
        assert set(effect) <= set(PHONE_TOOLS[case.tool].writes), "the call wrote a table it does not declare"
        for table, fields in case.rows:
            assert any(matches(row, fields) for row in _changed_rows(effect, table)), (table, fields, effect)
        for table, fields in case.gone:
            assert any(matches(row, fields) for row in effect.get(table, {}).get("removed", [])), (table, fields)
        touched = sum(len(rows) for table, kinds in effect.items() if table != "counters" for rows in kinds.values())
        assert touched == len(case.rows) + len(case.gone), effect  # no collateral change; a read changes nothing
        if case.payload:
            assert matches(feedback.payload, case.payload), feedback.payload
        if not case.setup:
            assert state.delta() == {t: change for t, change in effect.items() if t in STATE_TABLES}
        json.dumps(feedback.to_dict(), ensure_ascii=False)
    finally:
        state.close()


@pytest.mark.parametrize("case", [c for c in CASES if c.error is not None], ids=repr)
def test_each_failure_is_typed_and_leaves_no_write(template, case):
    feedback, effect, state = run_case(template, case)
    try:
        assert feedback.error_type is case.error, feedback.payload
        assert effect == {}
        message = feedback.payload["message"]
        assert isinstance(message, str) and message
        if case.error is E.NOT_FOUND:  # the hint names a tool that lists or finds what was missing
            assert any(name in message for name in PHONE_TOOLS), message
        if case.payload:
            assert matches(feedback.payload, case.payload), feedback.payload
        assert state.audit()[-1]["error_type"] == case.error.value
    finally:
        state.close()


def test_the_catalogue_has_the_papers_thirteen_domains_and_212_tools():
    counts = Counter(spec.domain for name, spec in CATALOGUE.items() if name not in CAPABILITY_TOOLS)
    assert set(counts) == set(DOMAINS) and len(DOMAINS) == 13
    assert all(7 <= n <= 25 for n in counts.values()), counts
    assert len(CATALOGUE) >= 212  # MobilePA-Bench: 13 functional domains, 212 tools
    assert counts["audio_entertainment"] == 25 == max(counts.values())
    assert counts["calls_communication"] == 15 == min(n for d, n in counts.items() if d in DOMAINS[:8])
    assert counts["smart_home"] == 8 == min(counts.values())


def test_every_schema_is_valid_json_schema_and_every_parameter_is_checked():
    jsonschema = pytest.importorskip("jsonschema")
    descriptions = Counter(spec.description for spec in PHONE_TOOLS.values())
    assert [d for d, n in descriptions.items() if n > 1] == []  # distinct tools say distinct things
    for name, spec in PHONE_TOOLS.items():
        schema = json.loads(json.dumps(spec.openai_schema(), ensure_ascii=False))
        assert schema["function"]["name"] == name and len(spec.description) >= 12
        jsonschema.Draft202012Validator.check_schema(schema["function"]["parameters"])
        for param in spec.params:
            assert param.check is not None and len(param.description) >= 3
            assert param.check(param.name, object()) is not None, f"{name}.{param.name} accepts anything"
        assert set(spec.writes) <= set(TABLES) and "audit_log" not in spec.writes
        assert spec.permission is None or any(r == dict(zip(("app", "permission"), spec.permission), granted=1)
                                              for r in S0["permissions"]), f"{name}: S0 lacks its permission"
    for case in CASES:  # every call the tests make as valid is valid by the published schema too
        parameters = PHONE_TOOLS[case.tool].openai_schema()["function"]["parameters"]
        if case.error is not E.SCHEMA_ERROR:
            jsonschema.validate(case.args, parameters)


def test_every_tool_is_called_successfully_and_fails_typed_where_it_can():
    succeeded = {c.tool for c in CASES if c.error is None}
    failed = {c.tool for c in CASES if c.error is not None and (c.error is not E.SCHEMA_ERROR or c.tool in (
        "create_event", "update_event", "start_timer", "set_dnd_schedule", "rename_file"))}  # their code's own checks
    assert succeeded == set(PHONE_TOOLS)
    assert set(PHONE_TOOLS) - failed == CANNOT_FAIL
    assert all(PHONE_TOOLS[name].writes == () for name in CANNOT_FAIL - {"summarize_notifications"})


@pytest.mark.parametrize("name", sorted(n for n, spec in PHONE_TOOLS.items() if spec.permission), ids=str)
def test_a_missing_permission_blocks_the_tool_until_it_is_granted(template, name):
    app, permission = PHONE_TOOLS[name].permission
    case = next(c for c in CASES if c.tool == name and c.error is None)
    state = template.restore()
    try:
        state.execute("UPDATE permissions SET granted = 0 WHERE app = ? AND permission = ?", (app, permission))
        for step in case.setup:
            state.execute(step) if isinstance(step, str) else execute(state, *step)
        denied = execute(state, name, case.args)
        assert denied.error_type is E.PERMISSION_DENIED and denied.payload["permission"] == permission
        assert execute(state, "grant_permission", {"app": app, "permission": permission}).ok
        assert execute(state, name, case.args).ok
    finally:
        state.close()


@pytest.mark.parametrize("name", sorted(PHONE_TOOLS), ids=str)
def test_arguments_outside_the_schema_are_refused_before_the_state_is_read(template, name):
    spec = PHONE_TOOLS[name]
    state = template.restore()
    try:
        calls = [dict(ok_args(name), surplus=1), "not an object"] + ([{}] if spec.required else [])
        for arguments in calls:
            feedback = execute(state, name, arguments)
            assert feedback.error_type is E.SCHEMA_ERROR, (arguments, feedback.payload)
        assert state.delta() == {} and len(state.audit()) == len(calls)
    finally:
        state.close()


def ok_args(name: str) -> dict[str, Any]:
    return next(c.args for c in CASES if c.tool == name and c.error is None)


# ---- fuzz: every tool, junk and near-valid arguments, in sequences
_junk = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                  st.text(max_size=12), st.lists(st.integers(), max_size=2),
                  st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
_ids = sorted({str(v) for rows in S0.values() for row in rows for v in row.values() if isinstance(v, str)}
              | {"alarm-1", "playlist-1", "FM 106.1", "07:00", "2026-12-01 09:00", "2026-12-01", "13800000000"})
_COLUMN_VALUES: dict[str, set[str]] = {}  # S0's values by column name: a parameter named after a column draws them
for _table_rows in S0.values():
    for _row in _table_rows:
        for _column, _value in _row.items():
            if isinstance(_value, str) and _value:
                _COLUMN_VALUES.setdefault(_column, set()).add(_value)
_COLUMN_VALUES.update(time={"06:30", "07:00", "22:30"}, start={"2026-12-01 10:30", "22:00"}, city={"Tokyo", "伦敦"},
                      end={"2026-12-01 12:00", "07:00"}, due={"2026-12-02 09:00"}, frequency={"FM 106.1", "FM 99.0"},
                      show={"大内密谈"})


def _near_valid(param) -> st.SearchStrategy:
    if param.enum:
        return st.sampled_from(param.enum)
    if param.type == "boolean":
        return st.booleans()
    if param.type == "integer":
        return st.one_of(st.sampled_from((0, 1, 5, 30, 60, 90, 120)), st.integers(-2, 1500))
    if param.type == "array":  # a group's members: contact ids, unknown ids, repeats, too few or too many
        return st.lists(st.sampled_from(_ids), max_size=4)
    own = sorted(_COLUMN_VALUES.get(param.name, ()))
    return st.sampled_from(own) if own and not param.name.endswith("s") else st.sampled_from(_ids)


@st.composite
def _call(draw) -> tuple[str, Any]:
    name = draw(st.sampled_from(sorted(PHONE_TOOLS)))
    if draw(st.integers(0, 9)) == 0:
        return name, draw(_junk)
    args = {}  # mostly near-valid, so that calls get past validation into the tools' code
    for param in PHONE_TOOLS[name].params:
        if draw(st.integers(0, 7)) > 0:
            args[param.name] = draw(_junk if draw(st.integers(0, 7)) == 0 else _near_valid(param))
    return name, args


_FUZZ_TEMPLATE: list[StateTemplate] = []  # built on first use: restoring it is what an episode costs


@settings(deadline=None, derandomize=True, max_examples=600)
@given(calls=st.lists(_call(), min_size=1, max_size=8))
def test_fuzz_execute_never_raises_logs_every_call_and_writes_only_declared_tables(calls):
    if not _FUZZ_TEMPLATE:
        _FUZZ_TEMPLATE.append(StateTemplate(S0))
    state = _FUZZ_TEMPLATE[0].restore()
    declared: set[str] = set()
    for step, (name, arguments) in enumerate(calls, 1):
        feedback = execute(state, name, arguments, step=step)
        assert (feedback.error_type is None) == feedback.ok
        assert feedback.ok or isinstance(feedback.payload.get("message"), str)
        json.dumps(feedback.to_dict(), ensure_ascii=False)
        if feedback.ok:
            declared |= set(PHONE_TOOLS[name].writes)
    assert len(state.audit()) == len(calls)
    assert set(state.delta()) <= declared & set(STATE_TABLES)
    assert state.delta() == state.delta(full=True)  # what the writes marked is all that changed
    state.close()
