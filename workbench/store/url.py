"""A store's URL as messages may show it: the password (in the authority or as a `password=`
parameter) replaced by `***`, whatever else the URL holds."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

URL_SCHEMES = ("postgresql://", "postgres://")

_AUTHORITY_PASSWORD = re.compile(r"^([a-z]+://[^/?#@:]*):[^/?#@]*@", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def is_url(location: str) -> bool:
    return location.lower().startswith(URL_SCHEMES)


def mask_url(url: str) -> str:
    """The URL with any password replaced by ***."""
    masked = _AUTHORITY_PASSWORD.sub(r"\1:***@", url)
    return _QUERY_PASSWORD.sub(r"\1***", masked)


def database_name(url: str) -> str | None:
    """The database the URL names (None: the server's default for the user)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return None
    name = unquote(path.lstrip("/"))
    return name or None


def plain(text: str) -> str:
    """The exact text of a `StoreLocation` (or any str), as a plain str."""
    return str.__str__(text)


class StoreLocation(str):
    """A `--db` value as the user gave it: a file path or a store URL. Opening a store uses
    its text; printing it (str(), f-strings, repr) shows a URL with its password masked, so no
    message can leak one."""

    def __str__(self) -> str:
        return mask_url(plain(self))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return repr(str(self))

    @property
    def is_url(self) -> bool:
        return is_url(plain(self))

    @property
    def stem(self) -> str:
        """A name for what the store holds: a file's stem, a database's name."""
        if self.is_url:
            return database_name(plain(self)) or "store"
        from pathlib import Path

        return Path(plain(self)).stem
