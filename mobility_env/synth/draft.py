"""One episode under construction: its official row, gold calls and recorded alternatives.

A scenario builder gets a :class:`Draft`, picks places, writes the query, adds gold calls
with :meth:`Draft.gold` (the response goes to the official column that the loader maps it
back from) and wrong-but-real alternatives with :meth:`Draft.alternative` (they go to
``sandbox_extra``). Alternatives whose canonical request equals a gold call or an earlier
alternative are dropped, so every recorded request is unique in the sandbox.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from typing import Any

from ..canonical import canonical_request
from ..mobilitybench.episode import FAMILY_OF
from ..mobilitybench.official import EXTRA_CALLS_COLUMN, OFFICIAL_COLUMNS
from ..tools import validate_call
from .geo import Point, format_device_location, format_location, haversine_m, offset
from .places import CELL_M, cell_places, sibling_of
from .catalog import NEARBY_CATEGORIES
from .world import City, Poi, World

MAX_ALTERNATIVES = 5


class Draft:
    def __init__(self, world: World, rng: random.Random, scenario: str, city: City, user: Point, when: dt.datetime):
        self.world, self.rng, self.scenario, self.city, self.user, self.when = world, rng, scenario, city, user, when
        self.user_loc = format_device_location(user)
        self.row: dict[str, Any] = {column: None for column in OFFICIAL_COLUMNS}
        self.row.update(task_scenario=scenario, intent_family=FAMILY_OF[scenario])
        self.tool_list: list[dict[str, Any]] = []
        self.extra: list[dict[str, Any]] = []
        self._keys: set[tuple[str, str]] = set()

    def _key(self, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
        if validate_call(name, arguments):
            raise ValueError(f"generator produced an invalid {name} call: {arguments}")
        return name, canonical_request(name, arguments).key

    def gold(self, name: str, arguments: dict[str, Any], column: str, response: Any) -> None:
        self._keys.add(self._key(name, arguments))
        self.tool_list.append({"name": name, "arguments": arguments})
        self.row[column] = response

    def alternative(self, name: str, arguments: dict[str, Any], response: Any) -> None:
        key = self._key(name, arguments)
        if key in self._keys or len(self.extra) >= MAX_ALTERNATIVES:
            return
        self._keys.add(key)
        self.extra.append({"name": name, "arguments": arguments, "response": response})

    def set(self, **cells: Any) -> None:
        self.row.update(cells)

    def finish(self, query: str, context: dict[str, Any]) -> dict[str, Any]:
        self.row.update(query=query, context=context, tool_list=self.tool_list)
        self.row[EXTRA_CALLS_COLUMN] = self.extra
        return self.row

    def move_user(self, point: Point) -> None:
        self.user = point
        self.user_loc = format_device_location(point)

    # -- places ---------------------------------------------------------------------------
    def u(self) -> float:
        return self.rng.random()

    def landmark_between(self, center: Point, low_m: float, high_m: float, pool: list[Poi] | None = None) -> Poi | None:
        """A landmark (or station) at ``low_m``..``high_m`` from ``center``, or None."""
        pool = pool if pool is not None else self.city.landmarks + self.city.stations
        fits = [p for p in pool if low_m <= haversine_m(center, p.location) <= high_m]
        return fits[self.rng.randrange(len(fits))] if fits else None

    def neighbourhood_place(self, center: Point, within_m: float) -> Poi:
        """A shop or service near ``center`` (a procedural cell place)."""
        for _ in range(30):
            a, r = self.rng.uniform(0, 2 * math.pi), within_m * math.sqrt(self.rng.random())
            x, y = self.city.xy(offset(center, r * math.cos(a), r * math.sin(a)))
            category = NEARBY_CATEGORIES[self.rng.randrange(len(NEARBY_CATEGORIES))]
            places = cell_places(self.world, self.city, category, int(x // CELL_M), int(y // CELL_M))
            if places:
                return places[0]
        return self.city.landmarks[self.rng.randrange(len(self.city.landmarks))]

    def sibling(self, poi: Poi, salt: str = "") -> Poi:
        return sibling_of(self.world, self.city, poi, salt)

    def near_stop(self) -> Point:
        """A point a short walk from a random transit stop (for transit episodes)."""
        line = self.city.lines[self.rng.randrange(len(self.city.lines))]
        stop = line.stop_points[self.rng.randrange(len(line.stop_points))]
        return offset(stop, self.rng.uniform(-500, 500), self.rng.uniform(-500, 500))

    def place_at(self, point: Point, label: str) -> Poi:
        return Poi(label, "address", point, self.city.district_of(point), self.city.street_address(point, label))


def loc(poi: Poi) -> str:
    return format_location(poi.location)
