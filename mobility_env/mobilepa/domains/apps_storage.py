"""Apps and storage: open and close apps; install, update and uninstall them from the store; grant and revoke
permissions; storage usage, app caches and data; files (with a trash) and downloads.

Storage is counted in whole MB: the phone's capacity is the ``storage_total_mb`` setting
(:data:`DEFAULT_STORAGE_MB` when the phone has none); installed apps (``app_storage``: code, data,
cache) and files (the trash included, until it is emptied) use it. Installing and updating need
the network and room for the app. An installed app without an ``app_storage`` row is preinstalled
(phone, messages…): it takes no storage of its own and updates with the system.
"""

from __future__ import annotations

from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import flag, text
from ..state import PhoneState
from .system_settings import offline_failure, online

DEFAULT_STORAGE_MB = 65536


def used_mb(state: PhoneState) -> dict[str, int]:
    """Storage in use by kind: ``apps`` (code), ``app_data`` (data and cache), ``files``, ``trash``."""
    apps = state.one("SELECT COALESCE(SUM(app_mb), 0) AS code, COALESCE(SUM(data_mb + cache_mb), 0) AS data "
                     "FROM app_storage") or {}
    files = state.one("SELECT COALESCE(SUM(size_mb * (1 - trashed)), 0) AS kept, COALESCE(SUM(size_mb * trashed), "
                      "0) AS trash FROM files") or {}
    return {"apps": apps["code"], "app_data": apps["data"], "files": files["kept"], "trash": files["trash"]}


def free_mb(state: PhoneState) -> int:
    return int(state.setting("storage_total_mb") or DEFAULT_STORAGE_MB) - sum(used_mb(state).values())


def _not_installed(app: str) -> Feedback:
    return failure(ErrorKind.NOT_FOUND, f"{app!r} is not installed; list_apps shows what is")


def _installed(state: PhoneState, app: str) -> bool:
    row = state.one("SELECT installed FROM apps WHERE app = ?", (app,))
    return row is not None and bool(row["installed"])


@tool("list_apps", "apps_storage", "List the installed apps and whether each is running.")
def list_apps(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(apps=state.query("SELECT app, running FROM apps WHERE installed = 1 ORDER BY app"))


@tool("open_app", "apps_storage", "Open an installed app.", text("app", "the app"), writes=("apps",))
def open_app(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT installed, running FROM apps WHERE app = ?", (args["app"],))
    if row is None or not row["installed"]:
        return failure(ErrorKind.NOT_FOUND, f"{args['app']!r} is not installed; list_apps shows what is")
    if row["running"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} is already open")
    state.execute("UPDATE apps SET running = 1 WHERE app = ?", (args["app"],))
    return success(app=args["app"], running=True)


@tool("close_app", "apps_storage", "Close a running app.", text("app", "the app"), writes=("apps",))
def close_app(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT running FROM apps WHERE app = ? AND installed = 1", (args["app"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"{args['app']!r} is not installed; list_apps shows what is")
    if not row["running"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} is not running")
    state.execute("UPDATE apps SET running = 0 WHERE app = ?", (args["app"],))
    return success(app=args["app"], running=False)


@tool("grant_permission", "apps_storage", "Grant an app a permission (e.g. messages: sms, phone: call).",
      text("app", "the app"), text("permission", "the permission"), writes=("permissions",))
def grant_permission(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT granted FROM permissions WHERE app = ? AND permission = ?",
                    (args["app"], args["permission"]))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"{args['app']} does not ask for a {args['permission']!r} permission; "
                       "list_app_permissions shows what it asks for")
    if row["granted"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} already has the {args['permission']} permission")
    state.execute("UPDATE permissions SET granted = 1 WHERE app = ? AND permission = ?",
                  (args["app"], args["permission"]))
    return success(app=args["app"], permission=args["permission"], granted=True)


@tool("revoke_permission", "apps_storage", "Take a permission back from an app.", text("app", "the app"),
      text("permission", "the permission"), writes=("permissions",))
def revoke_permission(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT granted FROM permissions WHERE app = ? AND permission = ?",
                    (args["app"], args["permission"]))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"{args['app']} does not ask for a {args['permission']!r} permission; "
                       "list_app_permissions shows what it asks for")
    if not row["granted"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} does not have the {args['permission']} permission")
    state.execute("UPDATE permissions SET granted = 0 WHERE app = ? AND permission = ?",
                  (args["app"], args["permission"]))
    return success(app=args["app"], permission=args["permission"], granted=False)


@tool("list_app_permissions", "apps_storage", "List the permissions an app asks for and whether each is granted.",
      text("app", "the app"))
def list_app_permissions(state: PhoneState, args: dict[str, Any]) -> Feedback:
    rows = state.query("SELECT permission, granted FROM permissions WHERE app = ? ORDER BY permission", (args["app"],))
    if not rows and not _installed(state, args["app"]):
        return _not_installed(args["app"])
    return success(app=args["app"], permissions=rows)


@tool("search_app_store", "apps_storage", "Search the app store by name or category.",
      text("query", "an app name or a category such as music"))
def search_app_store(state: PhoneState, args: dict[str, Any]) -> Feedback:
    pattern = f"%{args['query'].strip()}%"
    return success(apps=state.query(
        "SELECT s.app, s.latest_version, s.size_mb, s.category, COALESCE(a.installed, 0) AS installed FROM app_store "
        "s LEFT JOIN apps a ON a.app = s.app WHERE s.app LIKE ? OR s.category LIKE ? ORDER BY s.app LIMIT 20",
        (pattern, pattern)))


def _store_entry(state: PhoneState, app: str) -> dict[str, Any] | None:
    return state.one("SELECT latest_version, size_mb, category FROM app_store WHERE app = ?", (app,))


@tool("install_app", "apps_storage", "Install an app from the store (needs the network and free storage).",
      text("app", "the app's store name"), writes=("apps", "app_storage"))
def install_app(state: PhoneState, args: dict[str, Any]) -> Feedback:
    entry = _store_entry(state, args["app"])
    if entry is None:
        return failure(ErrorKind.NOT_FOUND, f"the store has no app {args['app']!r}; search_app_store finds apps")
    if _installed(state, args["app"]):
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} is already installed")
    if not online(state):
        return offline_failure("installing an app")
    free = free_mb(state)
    if free < entry["size_mb"]:
        return failure(ErrorKind.STATE_CONFLICT, f"not enough storage: {args['app']} needs {entry['size_mb']} MB, "
                       f"{free} MB free (clear_app_cache, delete_file and empty_trash free space)",
                       needed_mb=entry["size_mb"], free_mb=free)
    state.execute("INSERT INTO apps (app, installed, running) VALUES (?, 1, 0) ON CONFLICT(app) DO UPDATE SET "
                  "installed = 1, running = 0", (args["app"],))
    state.execute("INSERT OR REPLACE INTO app_storage (app, version, app_mb, data_mb, cache_mb) VALUES (?, ?, ?, 0, 0)",
                  (args["app"], entry["latest_version"], entry["size_mb"]))
    return success(app=args["app"], version=entry["latest_version"], installed=True)


@tool("uninstall_app", "apps_storage", "Uninstall an app and delete its data (system apps cannot be removed).",
      text("app", "the app"), writes=("apps", "app_storage"))
def uninstall_app(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if not _installed(state, args["app"]):
        return _not_installed(args["app"])
    entry = _store_entry(state, args["app"])
    if entry is not None and entry["category"] == "system":
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} is a system app and cannot be uninstalled")
    state.execute("UPDATE apps SET installed = 0, running = 0 WHERE app = ?", (args["app"],))
    state.execute("DELETE FROM app_storage WHERE app = ?", (args["app"],))
    return success(app=args["app"], installed=False)


@tool("list_app_updates", "apps_storage", "List the installed apps with a newer version in the store.")
def list_app_updates(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(updates=state.query(
        "SELECT s.app, s.version, t.latest_version FROM app_storage s JOIN app_store t ON t.app = s.app JOIN apps a "
        "ON a.app = s.app WHERE a.installed = 1 AND s.version != t.latest_version ORDER BY s.app"))


@tool("update_app", "apps_storage", "Update an installed app to the store's latest version (needs the network).",
      text("app", "the app"), writes=("app_storage",))
def update_app(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if not _installed(state, args["app"]):
        return _not_installed(args["app"])
    row = state.one("SELECT version FROM app_storage WHERE app = ?", (args["app"],))
    if row is None:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} is preinstalled: it updates with the system "
                       "(check_system_update)")
    entry = _store_entry(state, args["app"])
    if entry is None or entry["latest_version"] == row["version"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} is up to date ({row['version']})")
    if not online(state):
        return offline_failure("updating an app")
    state.execute("UPDATE app_storage SET version = ?, app_mb = ? WHERE app = ?",
                  (entry["latest_version"], entry["size_mb"], args["app"]))
    return success(app=args["app"], version=entry["latest_version"], previous=row["version"])


@tool("get_storage_usage", "apps_storage", "Storage in MB: total, free, and what uses it (apps, app data, files, "
      "trash); the five largest apps.")
def get_storage_usage(state: PhoneState, args: dict[str, Any]) -> Feedback:
    used = used_mb(state)
    largest = state.query("SELECT app, app_mb + data_mb + cache_mb AS total_mb, cache_mb FROM app_storage "
                          "ORDER BY total_mb DESC, app LIMIT 5")
    return success(total_mb=int(state.setting("storage_total_mb") or DEFAULT_STORAGE_MB), free_mb=free_mb(state),
                   used_mb=used, largest_apps=largest)


def _footprint(state: PhoneState, app: str) -> dict[str, Any] | None:
    """An installed app's data and cache in MB (zero for a preinstalled one); None when not installed."""
    if not _installed(state, app):
        return None
    row = state.one("SELECT data_mb, cache_mb FROM app_storage WHERE app = ?", (app,))
    return row or {"data_mb": 0, "cache_mb": 0}


@tool("clear_app_cache", "apps_storage", "Delete an app's cached files (its data and settings stay).",
      text("app", "the app"), writes=("app_storage",))
def clear_app_cache(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _footprint(state, args["app"])
    if row is None:
        return _not_installed(args["app"])
    if not row["cache_mb"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} has no cache to clear")
    state.execute("UPDATE app_storage SET cache_mb = 0 WHERE app = ?", (args["app"],))
    return success(app=args["app"], freed_mb=row["cache_mb"])


@tool("clear_app_data", "apps_storage", "Erase an app's data and cache, as if newly installed (stops the app).",
      text("app", "the app"), writes=("app_storage", "apps"))
def clear_app_data(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _footprint(state, args["app"])
    if row is None:
        return _not_installed(args["app"])
    if not row["cache_mb"] and not row["data_mb"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['app']} has no data to clear")
    state.execute("UPDATE app_storage SET cache_mb = 0, data_mb = 0 WHERE app = ?", (args["app"],))
    state.execute("UPDATE apps SET running = 0 WHERE app = ?", (args["app"],))
    return success(app=args["app"], freed_mb=row["cache_mb"] + row["data_mb"])


@tool("list_files", "apps_storage", "List files, optionally of one folder, or the trash.",
      text("folder", "a folder such as Download or Pictures/Screenshots", required=False),
      flag("trash", "true to list the trash instead", required=False))
def list_files(state: PhoneState, args: dict[str, Any]) -> Feedback:
    sql, params = "SELECT file_id, folder, name, size_mb FROM files WHERE trashed = ?", [int(bool(args.get("trash")))]
    if args.get("folder"):
        sql, params = sql + " AND folder = ?", params + [args["folder"].strip("/ ")]
    return success(files=state.query(sql + " ORDER BY folder, name LIMIT 50", params))


def _file(state: PhoneState, file_id: str) -> dict[str, Any] | None:
    return state.one("SELECT folder, name, size_mb, trashed FROM files WHERE file_id = ?", (file_id,))


def _no_file(file_id: str) -> Feedback:
    return failure(ErrorKind.NOT_FOUND, f"no file {file_id!r}; list_files shows them")


@tool("delete_file", "apps_storage", "Move a file to the trash (empty_trash deletes it for good).",
      text("file_id", "the file (list_files)"), writes=("files",))
def delete_file(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _file(state, args["file_id"])
    if row is None:
        return _no_file(args["file_id"])
    if row["trashed"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is already in the trash")
    state.execute("UPDATE files SET trashed = 1 WHERE file_id = ?", (args["file_id"],))
    return success(file_id=args["file_id"], trashed=True)


@tool("restore_file", "apps_storage", "Take a file back out of the trash.", text("file_id", "the file (list_files "
      "with trash=true)"), writes=("files",))
def restore_file(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _file(state, args["file_id"])
    if row is None:
        return _no_file(args["file_id"])
    if not row["trashed"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is not in the trash")
    state.execute("UPDATE files SET trashed = 0 WHERE file_id = ?", (args["file_id"],))
    return success(file_id=args["file_id"], trashed=False)


@tool("empty_trash", "apps_storage", "Delete every file in the trash for good.", writes=("files",))
def empty_trash(state: PhoneState, args: dict[str, Any]) -> Feedback:
    freed = used_mb(state)["trash"]
    removed = state.execute("DELETE FROM files WHERE trashed = 1")
    if not removed:
        return failure(ErrorKind.STATE_CONFLICT, "the trash is empty")
    return success(removed=removed, freed_mb=freed)


def _relocate(state: PhoneState, file_id: str, folder: str, name: str) -> Feedback:
    row = _file(state, file_id)
    if row is None:
        return _no_file(file_id)
    if row["trashed"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is in the trash: restore_file first")
    if (row["folder"], row["name"]) == (folder, name):
        return failure(ErrorKind.STATE_CONFLICT, f"{folder}/{name} is already there")
    clash = state.one("SELECT file_id FROM files WHERE folder = ? AND name = ? AND trashed = 0", (folder, name))
    if clash is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{folder}/{name} already exists ({clash['file_id']})",
                       file_id=clash["file_id"])
    state.execute("UPDATE files SET folder = ?, name = ? WHERE file_id = ?", (folder, name, file_id))
    return success(file_id=file_id, folder=folder, name=name)


@tool("move_file", "apps_storage", "Move a file to another folder.", text("file_id", "the file (list_files)"),
      text("folder", "the destination folder"), writes=("files",))
def move_file(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _file(state, args["file_id"])
    return _relocate(state, args["file_id"], args["folder"].strip("/ "), row["name"] if row else "")


@tool("rename_file", "apps_storage", "Rename a file (in its folder).", text("file_id", "the file (list_files)"),
      text("name", "the new name, with its extension"), writes=("files",))
def rename_file(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if "/" in args["name"]:
        return failure(ErrorKind.SCHEMA_ERROR, "a file name cannot contain '/': move_file changes folders",
                       fields=["name"])
    row = _file(state, args["file_id"])
    return _relocate(state, args["file_id"], row["folder"] if row else "", args["name"].strip())


@tool("list_downloads", "apps_storage", "List downloads with their progress and status.")
def list_downloads(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(downloads=state.query("SELECT download_id, name, size_mb, progress, status FROM downloads "
                                         "ORDER BY download_id"))


def _download(state: PhoneState, download_id: str) -> dict[str, Any] | None:
    return state.one("SELECT name, status FROM downloads WHERE download_id = ?", (download_id,))


@tool("pause_download", "apps_storage", "Pause a running download.", text("download_id", "the download "
      "(list_downloads)"), writes=("downloads",))
def pause_download(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _download(state, args["download_id"])
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no download {args['download_id']!r}; list_downloads shows them")
    if row["status"] != "running":
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is {row['status']}, not running")
    state.execute("UPDATE downloads SET status = 'paused' WHERE download_id = ?", (args["download_id"],))
    return success(download_id=args["download_id"], status="paused")


@tool("resume_download", "apps_storage", "Resume a paused or failed download (needs the network).",
      text("download_id", "the download (list_downloads)"), writes=("downloads",))
def resume_download(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _download(state, args["download_id"])
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no download {args['download_id']!r}; list_downloads shows them")
    if row["status"] not in ("paused", "failed"):
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is {row['status']}: only a paused or failed "
                       "download can resume")
    if not online(state):
        return offline_failure("a download")
    state.execute("UPDATE downloads SET status = 'running' WHERE download_id = ?", (args["download_id"],))
    return success(download_id=args["download_id"], status="running")
