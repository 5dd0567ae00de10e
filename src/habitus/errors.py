"""Named exceptions raised by the habitus library.

The library never prints or exits; the CLI turns these into messages and exit codes
(1 for an expected error, 2 for usage).
"""

from __future__ import annotations


class HabitusError(Exception):
    """Base class of every error habitus raises on purpose."""


class ConfigError(HabitusError):
    """The configuration file is unreadable, has an unknown key, or a bad value."""


class MarkerError(HabitusError):
    """A file's habitus markers are broken (one missing, duplicated, or out of order)."""


class StoreError(HabitusError):
    """The store cannot be opened or migrated."""


class SourceError(HabitusError):
    """A transcript path cannot be read or is not a known transcript format."""


class SecretError(HabitusError):
    """Text about to be stored, rendered or sent still matches a secret rule."""


class NotFoundError(HabitusError):
    """A belief, session or file named by the user does not exist."""


class LLMError(HabitusError):
    """The configured LLM backend is missing, failed, or answered with nothing usable."""
