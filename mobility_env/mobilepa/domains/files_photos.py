"""Files and photos: the gallery (photos by place and day, favourites, albums, Recently deleted) and sharing
photos and files with contacts. The files themselves (folders, rename, move, the files' trash) are apps &
storage's (``list_files``...); this domain sends them.

State dependencies: sharing needs the network (:func:`~.system_settings.online`), a saved contact, and an
item that is not in the trash; a file above :data:`MAX_SHARE_MB` is too large to send; a photo in
Recently deleted cannot join an album. The gallery needs ``gallery: photos``; sending a file
``files: storage``.
"""

from __future__ import annotations

from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, ToolCode, failure, success, tool
from ..params import day, flag, text
from ..state import PhoneState
from .system_settings import offline_failure, online

GALLERY = ("gallery", "photos")
#: The largest file a share sends (MB).
MAX_SHARE_MB = 100


def _photo(state: PhoneState, photo_id: str) -> dict[str, Any] | Feedback:
    row = state.one("SELECT photo_id, taken_at, place, favorite, trashed FROM photos WHERE photo_id = ?", (photo_id,))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no photo {photo_id!r}; search_photos finds them")
    return row


def _in_trash(photo_id: str) -> Feedback:
    return failure(ErrorKind.STATE_CONFLICT, f"photo {photo_id} is in Recently deleted: restore_photo first")


@tool("search_photos", "files_photos", "Find photos by place and/or day, or only favourites (Recently deleted with "
      "trash=true).", text("place", "where it was taken, or part of it", required=False),
      day("date", "the day it was taken", required=False),
      flag("favorites_only", "true for favourites only", required=False),
      flag("trash", "true to search Recently deleted instead", required=False), permission=GALLERY)
def search_photos(state: PhoneState, args: dict[str, Any]) -> Feedback:
    sql = "SELECT photo_id, taken_at, place, size_mb, favorite FROM photos WHERE trashed = ?"
    params: list[Any] = [int(bool(args.get("trash")))]
    if args.get("place"):
        sql, params = sql + " AND place LIKE ?", params + [f"%{args['place'].strip()}%"]
    if args.get("date"):
        sql, params = sql + " AND substr(taken_at, 1, 10) = ?", params + [args["date"]]
    if args.get("favorites_only"):
        sql += " AND favorite = 1"
    return success(photos=state.query(sql + " ORDER BY taken_at DESC, photo_id LIMIT 50", params))


@tool("list_albums", "files_photos", "The photo albums with how many photos each holds.", permission=GALLERY)
def list_albums(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(albums=state.query(
        "SELECT a.album_id, a.name, COUNT(p.photo_id) AS photos FROM albums a LEFT JOIN album_photos ap ON "
        "ap.album_id = a.album_id LEFT JOIN photos p ON p.photo_id = ap.photo_id AND p.trashed = 0 GROUP BY "
        "a.album_id ORDER BY a.name, a.album_id"))


@tool("create_album", "files_photos", "Create an empty photo album.", text("name", "the album's name"),
      permission=GALLERY, writes=("albums", "counters"))
def create_album(state: PhoneState, args: dict[str, Any]) -> Feedback:
    name = args["name"].strip()
    clash = state.one("SELECT album_id FROM albums WHERE name = ?", (name,))
    if clash is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"an album {name!r} exists ({clash['album_id']})",
                       album_id=clash["album_id"])
    album_id = state.next_id("album")
    state.execute("INSERT INTO albums (album_id, name) VALUES (?, ?)", (album_id, name))
    return success(album_id=album_id, name=name)


@tool("add_photo_to_album", "files_photos", "Add a photo to an album.", text("album_id", "the album (list_albums)"),
      text("photo_id", "the photo (search_photos)"), permission=GALLERY, writes=("album_photos",))
def add_photo_to_album(state: PhoneState, args: dict[str, Any]) -> Feedback:
    album = state.one("SELECT name FROM albums WHERE album_id = ?", (args["album_id"],))
    if album is None:
        return failure(ErrorKind.NOT_FOUND, f"no album {args['album_id']!r}; list_albums shows them")
    photo = _photo(state, args["photo_id"])
    if isinstance(photo, Feedback):
        return photo
    if photo["trashed"]:
        return _in_trash(args["photo_id"])
    if state.one("SELECT 1 AS present FROM album_photos WHERE album_id = ? AND photo_id = ?",
                 (args["album_id"], args["photo_id"])) is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"photo {args['photo_id']} is already in {album['name']}")
    state.execute("INSERT INTO album_photos (album_id, photo_id) VALUES (?, ?)", (args["album_id"], args["photo_id"]))
    return success(album_id=args["album_id"], photo_id=args["photo_id"], added=True)


@tool("set_photo_favorite", "files_photos", "Mark a photo as a favourite, or unmark it.",
      text("photo_id", "the photo (search_photos)"), flag("favorite", "true to mark, false to unmark"),
      permission=GALLERY, writes=("photos",))
def set_photo_favorite(state: PhoneState, args: dict[str, Any]) -> Feedback:
    photo = _photo(state, args["photo_id"])
    if isinstance(photo, Feedback):
        return photo
    if bool(photo["favorite"]) == args["favorite"]:
        return failure(ErrorKind.STATE_CONFLICT, f"photo {args['photo_id']} is already "
                       f"{'a favourite' if photo['favorite'] else 'not a favourite'}")
    state.execute("UPDATE photos SET favorite = ? WHERE photo_id = ?", (int(args["favorite"]), args["photo_id"]))
    return success(photo_id=args["photo_id"], favorite=args["favorite"])


def _trash_photo(to_trash: bool) -> ToolCode:
    def run(state: PhoneState, args: dict[str, Any]) -> Feedback:
        photo = _photo(state, args["photo_id"])
        if isinstance(photo, Feedback):
            return photo
        if bool(photo["trashed"]) == to_trash:
            return failure(ErrorKind.STATE_CONFLICT, f"photo {args['photo_id']} is "
                           f"{'already' if to_trash else 'not'} in Recently deleted")
        state.execute("UPDATE photos SET trashed = ? WHERE photo_id = ?", (int(to_trash), args["photo_id"]))
        return success(photo_id=args["photo_id"], trashed=to_trash)
    return run


tool("delete_photo", "files_photos", "Move a photo to Recently deleted (it leaves its albums' view until restored).",
     text("photo_id", "the photo (search_photos)"), permission=GALLERY, writes=("photos",))(_trash_photo(True))
tool("restore_photo", "files_photos", "Take a photo back out of Recently deleted.",
     text("photo_id", "the photo (search_photos with trash=true)"), permission=GALLERY,
     writes=("photos",))(_trash_photo(False))


def _recipient(state: PhoneState, contact_id: str) -> Feedback | None:
    if state.one("SELECT 1 AS present FROM contacts WHERE contact_id = ?", (contact_id,)) is None:
        return failure(ErrorKind.NOT_FOUND, f"no contact {contact_id!r}; search_contacts finds them")
    return None


def _share(state: PhoneState, kind: str, item_id: str, contact_id: str) -> Feedback:
    if not online(state):
        return offline_failure(f"sharing a {kind}")
    share_id = state.next_id("share")
    state.execute("INSERT INTO shares (share_id, kind, item_id, contact_id, shared_at) VALUES (?, ?, ?, ?, ?)",
                  (share_id, kind, item_id, contact_id, state.setting("clock", "")))
    return success(share_id=share_id, kind=kind, item_id=item_id, contact_id=contact_id)


@tool("share_photo", "files_photos", "Send a photo to a saved contact (needs the network).",
      text("photo_id", "the photo (search_photos)"), text("contact_id", "the contact (search_contacts)"),
      permission=GALLERY, writes=("shares", "counters"))
def share_photo(state: PhoneState, args: dict[str, Any]) -> Feedback:
    photo = _photo(state, args["photo_id"])
    if isinstance(photo, Feedback):
        return photo
    refused = _recipient(state, args["contact_id"])
    if refused is not None:
        return refused
    if photo["trashed"]:
        return _in_trash(args["photo_id"])
    return _share(state, "photo", args["photo_id"], args["contact_id"])


@tool("share_file", "files_photos", f"Send a file (at most {MAX_SHARE_MB} MB) to a saved contact (needs the "
      "network).", text("file_id", "the file (list_files)"), text("contact_id", "the contact (search_contacts)"),
      permission=("files", "storage"), writes=("shares", "counters"))
def share_file(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT name, size_mb, trashed FROM files WHERE file_id = ?", (args["file_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no file {args['file_id']!r}; list_files shows them")
    refused = _recipient(state, args["contact_id"])
    if refused is not None:
        return refused
    if row["trashed"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is in the trash: restore_file first")
    if row["size_mb"] > MAX_SHARE_MB:
        return failure(ErrorKind.STATE_CONFLICT, f"{row['name']} is {row['size_mb']} MB: at most {MAX_SHARE_MB} MB "
                       "can be sent", size_mb=row["size_mb"])
    return _share(state, "file", args["file_id"], args["contact_id"])
