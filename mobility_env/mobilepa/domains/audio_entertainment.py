"""Audio and entertainment: music, podcasts, video and FM/AM radio; playback, the play queue, playlists,
likes, podcast subscriptions, offline downloads, per-app volume and the sleep timer.

The library is the ``media`` table (``kind``: song, podcast, video, radio). Each kind plays in its
app (:data:`PLAYER_APPS`): an app the phone lists as not installed blocks playback (``not_found``,
fixed by ``install_app``). The player is a set of settings: ``now_playing`` (a media id),
``playback`` (``playing`` | ``paused`` | ``stopped``), ``shuffle``, ``repeat_mode`` and
``sleep_timer_min``; ``shuffle`` is recorded for the apps, while the sandbox plays the queue
(``media_queue``) in its order. Streaming (anything not downloaded, radio aside: it is broadcast)
needs the network.
"""

from __future__ import annotations

from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import choice, flag, frequency, integer, text
from ..state import PhoneState
from .system_settings import choice_tool, offline_failure, online, put_setting, switch_tool

DOMAIN = "audio_entertainment"
KINDS = ("song", "podcast", "video", "radio")
PLAYER_APPS = {"song": "music", "podcast": "podcasts", "video": "video", "radio": "radio"}
REPEAT_MODES = ("off", "one", "all")
_MEDIA_COLUMNS = "media_id, kind, title, artist, collection, duration_s"


def _media(state: PhoneState, media_id: str) -> dict[str, Any] | None:
    return state.one(f"SELECT {_MEDIA_COLUMNS}, liked, downloaded FROM media WHERE media_id = ?", (media_id,))


def _no_media(media_id: str) -> Feedback:
    return failure(ErrorKind.NOT_FOUND, f"no media {media_id!r}; search_media finds songs, podcasts, videos and "
                   "radio stations")


def _start(state: PhoneState, item: dict[str, Any]) -> Feedback:
    """Play ``item`` in its app: the app must be installed, a stream needs the network."""
    app = PLAYER_APPS.get(item["kind"], "music")
    row = state.one("SELECT installed FROM apps WHERE app = ?", (app,))
    if row is not None and not row["installed"]:
        return failure(ErrorKind.NOT_FOUND, f"the {app} app is not installed; install_app installs it", app=app)
    if item["kind"] != "radio" and not item["downloaded"] and not online(state):
        return offline_failure(f"streaming {item['title']!r} (download_media keeps it offline)")
    put_setting(state, "now_playing", item["media_id"])
    put_setting(state, "playback", "playing")
    return success(media_id=item["media_id"], title=item["title"], app=app, playback="playing")


def _playing(state: PhoneState) -> str:
    return state.setting("playback", "stopped") or "stopped"


@tool("search_media", DOMAIN, "Search songs, podcast episodes, videos and radio stations by title, artist or "
      "album/show.", text("query", "words to look for"), choice("kind", "only this kind", KINDS, required=False))
def search_media(state: PhoneState, args: dict[str, Any]) -> Feedback:
    pattern = f"%{args['query'].strip()}%"
    sql = f"SELECT {_MEDIA_COLUMNS} FROM media WHERE (title LIKE ? OR artist LIKE ? OR collection LIKE ?)"
    params = [pattern] * 3 + ([args["kind"]] if args.get("kind") else [])
    return success(results=state.query(sql + (" AND kind = ?" if args.get("kind") else "") + " ORDER BY media_id "
                                       "LIMIT 20", params))


@tool("play_media", DOMAIN, "Play a song, podcast episode, video or radio station now.",
      text("media_id", "the item (search_media)"), writes=("settings",))
def play_media(state: PhoneState, args: dict[str, Any]) -> Feedback:
    item = _media(state, args["media_id"])
    if item is None:
        return _no_media(args["media_id"])
    if state.setting("now_playing") == item["media_id"] and _playing(state) == "playing":
        return failure(ErrorKind.STATE_CONFLICT, f"{item['title']} is already playing")
    return _start(state, item)


def _transition(name: str, description: str, allowed: tuple[str, ...], after: str) -> None:
    def run(state: PhoneState, args: dict[str, Any]) -> Feedback:
        current = _playing(state)
        if current not in allowed:
            return failure(ErrorKind.STATE_CONFLICT, f"playback is {current}", setting="playback", value=current)
        put_setting(state, "playback", after)
        return success(media_id=state.setting("now_playing"), playback=after)
    tool(name, DOMAIN, description, writes=("settings",))(run)


_transition("pause_playback", "Pause what is playing.", ("playing",), "paused")
_transition("resume_playback", "Resume paused playback.", ("paused",), "playing")
_transition("stop_playback", "Stop playback.", ("playing", "paused"), "stopped")


@tool("get_now_playing", DOMAIN, "What is playing: the item, playback state, shuffle, repeat, sleep timer and queue "
      "length.")
def get_now_playing(state: PhoneState, args: dict[str, Any]) -> Feedback:
    item = _media(state, state.setting("now_playing") or "")
    queued = state.one("SELECT COUNT(*) AS n FROM media_queue") or {"n": 0}
    return success(item=None if item is None else {k: item[k] for k in ("media_id", "kind", "title", "artist")},
                   playback=_playing(state), shuffle=state.setting("shuffle", "off"),
                   repeat_mode=state.setting("repeat_mode", "off"),
                   sleep_timer_min=int(state.setting("sleep_timer_min") or 0), queued=queued["n"])


@tool("skip_next", DOMAIN, "Play the next item of the queue (it leaves the queue).",
      writes=("settings", "media_queue"))
def skip_next(state: PhoneState, args: dict[str, Any]) -> Feedback:
    head = state.one("SELECT q.position, m.media_id, m.kind, m.title, m.downloaded FROM media_queue q JOIN media m "
                     "ON m.media_id = q.media_id ORDER BY q.position LIMIT 1")
    if head is None:
        return failure(ErrorKind.STATE_CONFLICT, "the queue is empty; add_to_queue or play_playlist fills it")
    state.execute("DELETE FROM media_queue WHERE position = ?", (head["position"],))
    return _start(state, head)


@tool("add_to_queue", DOMAIN, "Add an item to the end of the play queue.", text("media_id", "the item (search_media)"),
      writes=("media_queue",))
def add_to_queue(state: PhoneState, args: dict[str, Any]) -> Feedback:
    item = _media(state, args["media_id"])
    if item is None:
        return _no_media(args["media_id"])
    if item["kind"] == "radio":
        return failure(ErrorKind.STATE_CONFLICT, "a radio station is live and cannot be queued; tune_radio plays it")
    if state.one("SELECT position FROM media_queue WHERE media_id = ?", (args["media_id"],)) is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{item['title']} is already in the queue")
    position = (state.one("SELECT COALESCE(MAX(position), 0) + 1 AS p FROM media_queue") or {"p": 1})["p"]
    state.execute("INSERT INTO media_queue (position, media_id) VALUES (?, ?)", (position, args["media_id"]))
    return success(media_id=args["media_id"], position=position)


@tool("list_queue", DOMAIN, "The play queue, in order.")
def list_queue(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(queue=state.query("SELECT q.position, m.media_id, m.title, m.artist FROM media_queue q JOIN media "
                                     "m ON m.media_id = q.media_id ORDER BY q.position"))


@tool("clear_queue", DOMAIN, "Remove everything from the play queue.", writes=("media_queue",))
def clear_queue(state: PhoneState, args: dict[str, Any]) -> Feedback:
    removed = state.execute("DELETE FROM media_queue")
    if not removed:
        return failure(ErrorKind.STATE_CONFLICT, "the queue is already empty")
    return success(removed=removed)


switch_tool("set_shuffle", DOMAIN, "shuffle", "shuffle", description="Turn shuffle play on or off.")


choice_tool("set_repeat_mode", DOMAIN, "Repeat nothing, the current item, or the whole queue.", "repeat_mode",
            "repeat mode", choice("mode", "repeat mode", REPEAT_MODES), default="off")


@tool("set_media_liked", DOMAIN, "Like an item (add it to the favourites) or unlike it.",
      text("media_id", "the item (search_media)"), flag("liked", "true to like, false to unlike"), writes=("media",))
def set_media_liked(state: PhoneState, args: dict[str, Any]) -> Feedback:
    item = _media(state, args["media_id"])
    if item is None:
        return _no_media(args["media_id"])
    if bool(item["liked"]) == args["liked"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{item['title']} is already {'' if args['liked'] else 'not '}liked")
    state.execute("UPDATE media SET liked = ? WHERE media_id = ?", (int(args["liked"]), args["media_id"]))
    return success(media_id=args["media_id"], liked=args["liked"])


@tool("list_liked_media", DOMAIN, "The liked items, optionally of one kind.",
      choice("kind", "only this kind", KINDS, required=False))
def list_liked_media(state: PhoneState, args: dict[str, Any]) -> Feedback:
    kind = " AND kind = ?" if args.get("kind") else ""
    return success(liked=state.query(f"SELECT {_MEDIA_COLUMNS} FROM media WHERE liked = 1{kind} ORDER BY media_id",
                                     [args["kind"]] if kind else []))


def _playlist(state: PhoneState, playlist_id: str) -> dict[str, Any] | None:
    return state.one("SELECT name FROM playlists WHERE playlist_id = ?", (playlist_id,))


def _no_playlist(playlist_id: str) -> Feedback:
    return failure(ErrorKind.NOT_FOUND, f"no playlist {playlist_id!r}; list_playlists shows them")


@tool("create_playlist", DOMAIN, "Create an empty playlist.", text("name", "the playlist's name"),
      writes=("playlists", "counters"))
def create_playlist(state: PhoneState, args: dict[str, Any]) -> Feedback:
    name = args["name"].strip()
    clash = state.one("SELECT playlist_id FROM playlists WHERE lower(name) = lower(?)", (name,))
    if clash is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"a playlist named {name!r} exists ({clash['playlist_id']})",
                       playlist_id=clash["playlist_id"])
    playlist_id = state.next_id("playlist")
    state.execute("INSERT INTO playlists (playlist_id, name) VALUES (?, ?)", (playlist_id, name))
    return success(playlist_id=playlist_id, name=name)


@tool("list_playlists", DOMAIN, "The playlists with their items (media ids, in order).")
def list_playlists(state: PhoneState, args: dict[str, Any]) -> Feedback:
    playlists = {row["playlist_id"]: {**row, "items": []}
                 for row in state.query("SELECT playlist_id, name FROM playlists ORDER BY playlist_id")}
    for row in state.query("SELECT playlist_id, media_id FROM playlist_items ORDER BY playlist_id, position"):
        if row["playlist_id"] in playlists:
            playlists[row["playlist_id"]]["items"].append(row["media_id"])
    return success(playlists=list(playlists.values()))


@tool("add_to_playlist", DOMAIN, "Add a song, podcast episode or video to a playlist.",
      text("playlist_id", "the playlist (list_playlists)"), text("media_id", "the item (search_media)"),
      writes=("playlist_items",))
def add_to_playlist(state: PhoneState, args: dict[str, Any]) -> Feedback:
    playlist, item = _playlist(state, args["playlist_id"]), _media(state, args["media_id"])
    if playlist is None:
        return _no_playlist(args["playlist_id"])
    if item is None:
        return _no_media(args["media_id"])
    if item["kind"] == "radio":
        return failure(ErrorKind.STATE_CONFLICT, "a radio station is live and cannot go in a playlist")
    if state.one("SELECT 1 AS present FROM playlist_items WHERE playlist_id = ? AND media_id = ?",
                 (args["playlist_id"], args["media_id"])) is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{item['title']} is already in {playlist['name']}")
    position = (state.one("SELECT COALESCE(MAX(position), 0) + 1 AS p FROM playlist_items WHERE playlist_id = ?",
                          (args["playlist_id"],)) or {"p": 1})["p"]
    state.execute("INSERT INTO playlist_items (playlist_id, media_id, position) VALUES (?, ?, ?)",
                  (args["playlist_id"], args["media_id"], position))
    return success(playlist_id=args["playlist_id"], media_id=args["media_id"], position=position)


@tool("remove_from_playlist", DOMAIN, "Remove an item from a playlist.",
      text("playlist_id", "the playlist (list_playlists)"), text("media_id", "the item"), writes=("playlist_items",))
def remove_from_playlist(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if _playlist(state, args["playlist_id"]) is None:
        return _no_playlist(args["playlist_id"])
    if state.execute("DELETE FROM playlist_items WHERE playlist_id = ? AND media_id = ?",
                     (args["playlist_id"], args["media_id"])) == 0:
        return failure(ErrorKind.NOT_FOUND, f"{args['media_id']!r} is not in playlist {args['playlist_id']}; "
                       "list_playlists shows its items")
    return success(playlist_id=args["playlist_id"], media_id=args["media_id"], removed=True)


@tool("delete_playlist", DOMAIN, "Delete a playlist (the items stay in the library).",
      text("playlist_id", "the playlist (list_playlists)"), writes=("playlists", "playlist_items"))
def delete_playlist(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM playlists WHERE playlist_id = ?", (args["playlist_id"],)) == 0:
        return _no_playlist(args["playlist_id"])
    state.execute("DELETE FROM playlist_items WHERE playlist_id = ?", (args["playlist_id"],))
    return success(playlist_id=args["playlist_id"], deleted=True)


@tool("play_playlist", DOMAIN, "Play a playlist: its first item now, the rest replace the queue.",
      text("playlist_id", "the playlist (list_playlists)"), writes=("settings", "media_queue"))
def play_playlist(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if _playlist(state, args["playlist_id"]) is None:
        return _no_playlist(args["playlist_id"])
    items = state.query("SELECT m.media_id, m.kind, m.title, m.downloaded FROM playlist_items i JOIN media m ON "
                        "m.media_id = i.media_id WHERE i.playlist_id = ? ORDER BY i.position", (args["playlist_id"],))
    if not items:
        return failure(ErrorKind.STATE_CONFLICT, "the playlist is empty; add_to_playlist adds items")
    state.execute("DELETE FROM media_queue")
    for position, item in enumerate(items[1:], 1):
        state.execute("INSERT INTO media_queue (position, media_id) VALUES (?, ?)", (position, item["media_id"]))
    started = _start(state, items[0])
    return started if not started.ok else success(**started.payload, queued=len(items) - 1)


@tool("set_podcast_subscription", DOMAIN, "Subscribe to a podcast show, or unsubscribe.",
      text("show", "the show's name (search_media, kind podcast)"), flag("subscribed", "true to subscribe"),
      writes=("podcast_subscriptions",))
def set_podcast_subscription(state: PhoneState, args: dict[str, Any]) -> Feedback:
    show = state.one("SELECT collection FROM media WHERE kind = 'podcast' AND lower(collection) = lower(?)",
                     (args["show"].strip(),))
    if show is None:
        return failure(ErrorKind.NOT_FOUND, f"no podcast show {args['show']!r}; search_media with kind podcast "
                       "finds shows")
    name = show["collection"]
    subscribed = state.one("SELECT 1 AS present FROM podcast_subscriptions WHERE show = ?", (name,)) is not None
    if subscribed == args["subscribed"]:
        return failure(ErrorKind.STATE_CONFLICT, f"already {'' if subscribed else 'not '}subscribed to {name}")
    if args["subscribed"]:
        state.execute("INSERT INTO podcast_subscriptions (show, subscribed_at) VALUES (?, ?)",
                      (name, state.setting("clock", "")))
    else:
        state.execute("DELETE FROM podcast_subscriptions WHERE show = ?", (name,))
    return success(show=name, subscribed=args["subscribed"])


@tool("tune_radio", DOMAIN, "Tune the FM/AM radio to a station's frequency and play it.",
      frequency("frequency", "the station's frequency"), writes=("settings",))
def tune_radio(state: PhoneState, args: dict[str, Any]) -> Feedback:
    station = state.one("SELECT media_id, kind, title, downloaded FROM media WHERE kind = 'radio' AND collection = ?",
                        (args["frequency"],))
    if station is None:
        return failure(ErrorKind.NOT_FOUND, f"no station on {args['frequency']}; search_media with kind radio "
                       "lists the stations")
    if state.setting("now_playing") == station["media_id"] and _playing(state) == "playing":
        return failure(ErrorKind.STATE_CONFLICT, f"{station['title']} is already playing")
    return _start(state, station)


@tool("download_media", DOMAIN, "Download an item to play it offline (needs the network and storage permission).",
      text("media_id", "the item (search_media)"), permission=("music", "storage"), writes=("media",))
def download_media(state: PhoneState, args: dict[str, Any]) -> Feedback:
    item = _media(state, args["media_id"])
    if item is None:
        return _no_media(args["media_id"])
    if item["kind"] == "radio":
        return failure(ErrorKind.STATE_CONFLICT, "a radio station is live and cannot be downloaded")
    if item["downloaded"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{item['title']} is already downloaded")
    if not online(state):
        return offline_failure("a download")
    state.execute("UPDATE media SET downloaded = 1 WHERE media_id = ?", (args["media_id"],))
    return success(media_id=args["media_id"], downloaded=True)


@tool("set_app_volume", DOMAIN, "Set one app's own volume (relative to the media volume).",
      text("app", "the app, e.g. music or video"), integer("level", "volume percent", 0, 100),
      writes=("app_volumes",))
def set_app_volume(state: PhoneState, args: dict[str, Any]) -> Feedback:
    app = state.one("SELECT installed FROM apps WHERE app = ?", (args["app"],))
    if app is None or not app["installed"]:
        return failure(ErrorKind.NOT_FOUND, f"{args['app']!r} is not installed; list_apps shows what is")
    current = state.one("SELECT level FROM app_volumes WHERE app = ?", (args["app"],))
    if current is not None and current["level"] == args["level"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']}'s volume is already {args['level']}")
    state.execute("INSERT INTO app_volumes (app, level) VALUES (?, ?) ON CONFLICT(app) DO UPDATE SET level = "
                  "excluded.level", (args["app"], args["level"]))
    return success(app=args["app"], level=args["level"])


@tool("set_sleep_timer", DOMAIN, "Stop playback after some minutes; 0 cancels the sleep timer.",
      integer("minutes", "minutes until playback stops", 0, 180), writes=("settings",))
def set_sleep_timer(state: PhoneState, args: dict[str, Any]) -> Feedback:
    current = int(state.setting("sleep_timer_min") or 0)
    if args["minutes"] == 0:
        if current == 0:
            return failure(ErrorKind.STATE_CONFLICT, "no sleep timer is set")
    elif _playing(state) != "playing":
        return failure(ErrorKind.STATE_CONFLICT, "nothing is playing: start playback before setting a sleep timer",
                       setting="playback", value=_playing(state))
    elif current == args["minutes"]:
        return failure(ErrorKind.STATE_CONFLICT, f"the sleep timer is already {current} minutes")
    put_setting(state, "sleep_timer_min", str(args["minutes"]))
    return success(sleep_timer_min=args["minutes"])
