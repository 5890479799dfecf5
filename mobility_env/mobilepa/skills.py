"""MobilePA skills: composite routines an assistant loads to gain their tools (dynamic action-space expansion).

A :class:`Skill` packages a routine of several phone tools — a commute briefing binds the maps & travel
domain's weather, traffic and route tools; a bedtime routine binds do-not-disturb, the alarm, brightness
and volume — with a short how-to. A task offers skills by planting rows in the ``skills`` table of its
``S_0`` (:func:`skill_rows`) and putting the loader ``load_skill``
(:mod:`~mobility_env.mobilepa.domains.skills`) in its action space. Loading a skill returns its how-to
and tool list, and from the next step the episode offers the skill's tools
(:class:`~mobility_env.mobilepa.episode.PhoneSession`), which ``MobilePAEnv`` shows in ``info["tools"]``.

Two routings (:class:`~mobility_env.mobilepa.tasks.SkillGate`): ``skill_only`` — none of the skill's tools
is in ``A_0``, so loading is the only way to them; ``mixed`` — ``A_0`` holds some of them directly
(:func:`skill_action_space` builds either).

Example::

    >>> skill = SKILLS["commute_briefing"]
    >>> skill.tools[:3]
    ('list_saved_places', 'maps_weather', 'maps_traffic')
    >>> skill_action_space(["list_apps"], ["commute_briefing"], routing="skill_only")
    ['list_apps', 'load_skill']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal, NamedTuple

LOAD_SKILL = "load_skill"


class Bilingual(NamedTuple):
    """One text in the two task languages."""

    zh: str
    en: str

    def get(self, language: str | None) -> str:
        return self.en if language == "en" else self.zh


@dataclass(frozen=True)
class Skill:
    """A packaged routine: ``tools`` (registered phone tool names, in the order the routine uses them) and
    ``steps``, the how-to shown when it is loaded."""

    skill_id: str
    name: Bilingual
    description: Bilingual
    tools: tuple[str, ...]
    steps: Bilingual

    def card(self, language: str | None) -> dict[str, Any]:
        """What loading it returns: id, name, how-to and tool list, in ``language`` (``zh`` unless ``en``)."""
        return {"skill_id": self.skill_id, "name": self.name.get(language), "steps": self.steps.get(language),
                "tools": list(self.tools)}


def _skill(skill_id: str, name: tuple[str, str], description: tuple[str, str], tools: tuple[str, ...],
           steps: tuple[str, str]) -> Skill:
    return Skill(skill_id, Bilingual(*name), Bilingual(*description), tools, Bilingual(*steps))


#: The skill library, declared once (ids are what ``load_skill`` takes and what a task's gate names).
SKILLS: dict[str, Skill] = {s.skill_id: s for s in (
    _skill("commute_briefing", ("通勤简报", "Commute briefing"),
           ("出门通勤前查天气、路况和去公司的路线", "weather, traffic and the route to work before a commute"),
           ("list_saved_places", "maps_weather", "maps_traffic", "maps_route"),
           ("1. list_saved_places 找到家和公司；2. maps_weather 查今天的天气；3. maps_traffic 查途经道路的路况；"
            "4. maps_route 规划路线，按用户习惯选出行方式；5. 用一段话汇报天气、路况、时长。",
            "1. list_saved_places for home and work; 2. maps_weather for today; 3. maps_traffic on the roads on "
            "the way; 4. maps_route with the user's usual mode; 5. report weather, traffic and duration in one "
            "paragraph.")),
    _skill("meeting_departure", ("会议出发提醒", "Meeting departure"),
           ("根据下一个日程的地点规划路线并设置出发提醒", "route to the next event's place and a departure reminder"),
           ("list_events", "maps_search_place", "maps_route", "set_departure_reminder"),
           ("1. list_events 找到下一个日程及地点；2. maps_search_place 把地点变成坐标；3. maps_route 估算路上时间；"
            "4. set_departure_reminder 按日程开始时间设置出发提醒。",
            "1. list_events for the next event and its place; 2. maps_search_place to locate it; 3. maps_route "
            "for the travel time; 4. set_departure_reminder to arrive by the event's start.")),
    _skill("bedtime_dnd", ("睡前免打扰", "Bedtime do-not-disturb"),
           ("睡前开启免打扰、定好闹钟、调低亮度和音量", "do-not-disturb, the morning alarm, low brightness and volume"),
           ("set_do_not_disturb", "list_alarms", "create_alarm", "set_alarm_enabled", "set_brightness",
            "set_volume"),
           ("1. set_do_not_disturb 打开免打扰；2. list_alarms 看明早的闹钟，已有就 set_alarm_enabled 打开，"
            "没有就 create_alarm；3. set_brightness 调低亮度；4. set_volume 调低音量。",
            "1. set_do_not_disturb on; 2. list_alarms for tomorrow's alarm: enable it (set_alarm_enabled) or "
            "create one (create_alarm); 3. set_brightness low; 4. set_volume low.")),
    _skill("morning_routine", ("早间例行", "Morning routine"),
           ("起床后关闭免打扰，播报天气、日程和未读通知", "after waking: DND off, weather, agenda and notifications"),
           ("set_do_not_disturb", "maps_weather", "list_events", "summarize_notifications"),
           ("1. set_do_not_disturb 关闭免打扰；2. maps_weather 查今天天气；3. list_events 列出今天的日程；"
            "4. summarize_notifications 汇总未读通知；5. 一段话播报。",
            "1. set_do_not_disturb off; 2. maps_weather for today; 3. list_events for today's agenda; "
            "4. summarize_notifications; 5. brief the user in one paragraph.")),
    _skill("focus_mode", ("专注模式", "Focus mode"),
           ("专注工作：静音、免打扰、暂停播放并开一个专注计时", "silence, DND, pause media and start a focus timer"),
           ("set_do_not_disturb", "set_ringer_mode", "pause_playback", "start_timer"),
           ("1. set_do_not_disturb 打开；2. set_ringer_mode 设为静音或振动；3. 正在播放就 pause_playback；"
            "4. start_timer 按用户给的时长开专注计时。",
            "1. set_do_not_disturb on; 2. set_ringer_mode to silent or vibrate; 3. pause_playback if something "
            "plays; 4. start_timer for the focus length the user gave.")),
    _skill("travel_checkin", ("出差落地", "Travel check-in"),
           ("到达外地后对时区、加世界时钟、查当地天气并提醒", "on arrival: time zone, a world clock, local weather"),
           ("set_auto_time_zone", "add_world_clock", "maps_weather", "create_reminder"),
           ("1. set_auto_time_zone 打开自动时区；2. add_world_clock 加上出发地的时钟；3. maps_weather 查目的地"
            "天气；4. create_reminder 记下回程或入住等待办。",
            "1. set_auto_time_zone on; 2. add_world_clock for home; 3. maps_weather at the destination; "
            "4. create_reminder for the return trip or check-in.")),
    _skill("drive_mode", ("驾驶模式", "Drive mode"),
           ("上车后连车载蓝牙、开免打扰并开始导航", "in the car: car Bluetooth, DND, then navigation"),
           ("set_bluetooth", "list_bluetooth_devices", "connect_bluetooth_device", "set_do_not_disturb",
            "maps_search_place", "start_navigation"),
           ("1. set_bluetooth 打开蓝牙；2. list_bluetooth_devices 找到车载设备并 connect_bluetooth_device；"
            "3. set_do_not_disturb 打开；4. maps_search_place 找到目的地，start_navigation 开始导航。",
            "1. set_bluetooth on; 2. list_bluetooth_devices, then connect_bluetooth_device to the car; "
            "3. set_do_not_disturb on; 4. maps_search_place for the destination, then start_navigation.")),
    _skill("battery_rescue", ("低电量急救", "Battery rescue"),
           ("电量低时开省电、降亮度和刷新率、关息屏显示", "low battery: saver on, dimmer, lower refresh rate"),
           ("get_battery_status", "set_battery_saver", "set_brightness", "set_refresh_rate",
            "set_always_on_display"),
           ("1. get_battery_status 看电量；2. set_battery_saver 打开省电；3. set_brightness 调低亮度；"
            "4. set_refresh_rate 调到 60；5. set_always_on_display 关闭。",
            "1. get_battery_status; 2. set_battery_saver on; 3. set_brightness lower; 4. set_refresh_rate to "
            "60; 5. set_always_on_display off.")),
    _skill("ride_home", ("打车回家", "Ride home"),
           ("叫车回家并把预计到达时间发给家人", "hail a ride home and share the arrival time"),
           ("list_saved_places", "maps_route", "book_ride", "share_eta"),
           ("1. list_saved_places 找到家；2. maps_route 估算时间；3. book_ride 叫车（按用户常用车型）；"
            "4. share_eta 把预计到达时间发给指定联系人。",
            "1. list_saved_places for home; 2. maps_route for the time; 3. book_ride in the user's usual class; "
            "4. share_eta with the contact named.")),
    _skill("storage_cleanup", ("清理存储", "Storage cleanup"),
           ("存储不足时查看占用、清缓存、清空回收站", "low storage: usage, app caches, trash"),
           ("get_storage_usage", "clear_app_cache", "list_files", "empty_trash"),
           ("1. get_storage_usage 看哪些应用占用多；2. clear_app_cache 清掉缓存最大的应用；3. list_files 看回收站；"
            "4. empty_trash 清空回收站；5. 汇报释放了多少空间。",
            "1. get_storage_usage for the biggest apps; 2. clear_app_cache on the largest caches; 3. list_files "
            "for the trash; 4. empty_trash; 5. report the space freed.")),
)}


def skill_rows(skill_ids: Iterable[str], language: str = "zh") -> list[dict[str, str]]:
    """The ``skills`` table rows that offer ``skill_ids`` in a task's ``S_0`` (``initial_state["skills"]``);
    ``language`` is the language their how-to is shown in. An unknown id raises ``KeyError`` naming it."""
    rows = []
    for skill_id in skill_ids:
        if skill_id not in SKILLS:
            raise KeyError(f"unknown skill {skill_id!r}; skills: {', '.join(SKILLS)}")
        rows.append({"skill_id": skill_id, "language": language})
    return rows


def skill_action_space(base: Iterable[str], skill_ids: Iterable[str],
                       routing: Literal["skill_only", "mixed"] = "skill_only",
                       direct: Iterable[str] = ()) -> list[str]:
    """``A_0`` for a skill task: ``base`` plus ``load_skill``; with ``skill_only`` routing the offered skills'
    tools are taken out of it (loading is the only way to them), with ``mixed`` routing ``direct`` (some of
    their tools) are added to it as well."""
    ids = list(skill_ids)
    hidden = {name for skill_id in ids for name in SKILLS[skill_id].tools}
    names = list(dict.fromkeys(base))
    if routing == "skill_only":
        names = [name for name in names if name not in hidden]
    else:
        names += [name for name in direct if name not in names]
    if LOAD_SKILL not in names:
        names.append(LOAD_SKILL)
    return names


def offered_skill_ids(initial_state: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The skill ids a task's ``S_0`` offers (its ``skills`` rows), in order, unknown ones left out."""
    return [row["skill_id"] for row in initial_state.get("skills", ()) if row.get("skill_id") in SKILLS]
