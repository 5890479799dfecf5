"""Typed exceptions for bad user input (files, paths, options).

Bad *agent* actions never raise; they become observations (see ``mobility_env.mobilitybench.env``).
Bad *user* input raises one of these, and the message says what, where and what to do.
"""

from __future__ import annotations


class MobilityEnvError(Exception):
    """Base class of every error this package raises on purpose."""


class DataFileError(MobilityEnvError):
    """A data file is missing, unreadable or not in a supported format."""

    def __init__(self, path: object, message: str, *, row: int | None = None, column: str | None = None):
        self.path = str(path)
        self.row = row
        self.column = column
        where = self.path
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")


class RowError(DataFileError):
    """One row of a data file cannot be turned into an episode."""


class SandboxError(MobilityEnvError):
    """A built sandbox directory is missing files or is inconsistent."""


class CorruptDataError(DataFileError, SandboxError):
    """A file of a built directory is damaged: it differs from the size and checksum that
    ``manifest.json`` records, it is missing, or it does not decode.

    Both a :class:`DataFileError` (``.path`` names the file) and a :class:`SandboxError`, so
    code that guards either kind of failure catches it.
    """


class DuplicateEpisodeError(DataFileError, ValueError):
    """Two episodes with the same id were given to one build."""


class ConfigError(MobilityEnvError, ValueError):
    """An option, argument or config file is invalid."""
