"""A location as messages and stores may show it: a URL's secrets (the user info's password, a
query parameter named like one: password, key, token, secret, signature) replaced by `***`,
whatever else the URL holds. Pure text, so a command can take `--db` / `--qrels` (or an LLM's
`--endpoint`) without importing the store."""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

URL_SCHEMES = ("postgresql://", "postgres://")

_QUERY_PARAM = re.compile(r"([?&])([^=&]*)=([^&]*)")
_SECRET_NAME = re.compile(r"pass|pwd|key|token|secret|auth|sig|credential", re.IGNORECASE)
"""A query parameter whose name holds one of these carries a secret (sslpassword, api_key,
access_token, X-Amz-Signature, ...): masked, even where it is not one (sslkey's file name)."""


def _is_secret(name: str) -> bool:
    return _SECRET_NAME.search(unquote(name)) is not None

DSN_KEYWORDS = (
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service", "options",
    "sslmode", "sslpassword", "sslcert", "sslkey", "sslrootcert", "connect_timeout",
    "application_name", "target_session_attrs", "gssencmode", "channel_binding",
)  # fmt: skip
"""The libpq keywords a keyword/value connection string ("host=... dbname=...") starts with."""
_DSN_START = re.compile(rf"\s*(?:{'|'.join(DSN_KEYWORDS)})\s*=", re.IGNORECASE)
_DSN_PASSWORD = re.compile(r"(\w*password\w*\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)", re.IGNORECASE)


def is_url(location: str) -> bool:
    return location.lower().startswith(URL_SCHEMES)


SQLITE_MEMORY = ":memory:"


def sqlite_name_problem(location: str) -> str | None:
    """Why a `--db` that is no URL cannot be taken as a file path, or None. SQLite (built with
    URI names on, as many are) reads `file:...` as a URI, which may name another file
    (`file:other.db` is other.db) or none, and `:memory:` as a database that vanishes: a path is
    opened as that path, so these are refused, with the spelling that names such a file."""
    if location == SQLITE_MEMORY:
        return (
            f"{location}: SQLite's name for a database in memory, which no command can keep;"
            f" give a file path (for a file really named so, write ./{location})"
        )
    if location[:5].lower() == "file:":
        return (
            f"{location}: SQLite would read a name starting with 'file:' as a URI, which may"
            " name another file; --db takes a file path or a postgresql:// URL (for a file"
            f" really named so, write ./{location})"
        )
    return None


def is_keyword_dsn(location: str) -> bool:
    """Whether `location` reads as libpq's keyword/value form ("host=db password=..."), which
    `--db` does not take (see `workbench.store.open_store`): never a file name to create."""
    return bool(_DSN_START.match(location))


def _libpq_and_written(url: str) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """(user info, the rest) as libpq reads the URL (the user info ends at the first '@'
    before any '/') and as its writer may have meant it (at the last '@' before the '?'); None
    where a reading finds no user info. They differ where a '@', '/' or '?' in a password was
    not percent-encoded."""
    _, sep, rest = url.partition("://")
    if not sep:
        return None, None
    end = next((i for i, c in enumerate(rest) if c in "@/"), len(rest))
    libpq = (rest[:end], rest[end + 1 :]) if rest[end : end + 1] == "@" else None
    body = rest.partition("?")[0]
    at = body.rfind("@")
    written = (rest[:at], rest[at + 1 :]) if at >= 0 else None
    return libpq, written


def _readings(url: str) -> list[tuple[str, str]]:
    """The distinct readings of the URL's user info (none, one, or libpq's and the writer's)."""
    return list(dict.fromkeys(r for r in _libpq_and_written(url) if r is not None))


def _split(url: str) -> tuple[str, str, str] | None:
    """(scheme://, user info, the rest) of a URL with user info, taking the longest reading,
    so that a mask covers whatever libpq or the URL's writer took for the password."""
    readings = _readings(url)
    if not readings:
        return None
    user_info, rest = max(readings, key=lambda r: len(r[0]))
    return url.partition("://")[0] + "://", user_info, rest


def url_problem(url: str) -> str | None:
    """Why libpq would read the URL's user name or password otherwise than it was written (and
    show the rest of a password as a host name), or None."""
    libpq, written = _libpq_and_written(url)
    if libpq != written and any(":" in user_info for user_info, _ in _readings(url)):
        return (
            "a '@', '/' or '?' in the user name or password must be percent-encoded"
            " (%40, %2F, %3F), or libpq reads part of the password as the host"
        )
    return None


def passwords(url: str) -> list[str]:
    """The secrets a URL carries (the user info's password and any parameter named like a
    secret), as written and percent-decoded, longest first."""
    found: list[str] = []
    for user_info, _ in _readings(url):
        if ":" in user_info:
            found.append(user_info.split(":", 1)[1])
    query = url.partition("?")[2]
    for _, name, value in _QUERY_PARAM.findall("?" + query if query else ""):
        if _is_secret(name):
            found.append(value)
    secrets = {v for s in found for v in (s, unquote(s)) if v}
    return sorted(secrets, key=len, reverse=True)


def mask_text(text: str, url: str) -> str:
    """`text` (a message that may echo the URL or parts of it) with the URL's secrets masked."""
    text = text.replace(url, mask_url(url))
    for secret in passwords(url):
        text = text.replace(secret, "***")
    return text


def mask_url(url: str) -> str:
    """The URL with any secret replaced by *** (the user info's password, and any query
    parameter named like a secret, e.g. sslpassword or key); a keyword/value string's password
    too."""
    if is_keyword_dsn(url):
        return _DSN_PASSWORD.sub(r"\1***", url)
    parts = _split(url)
    masked = url
    if parts and ":" in parts[1]:
        scheme, user_info, rest = parts
        masked = f"{scheme}{user_info.split(':', 1)[0]}:***@{rest}"
    head, qmark, query = masked.partition("?")
    if not qmark:
        return masked

    def hide(match: re.Match[str]) -> str:
        sep, name, value = match.groups()
        return f"{sep}{name}=***" if _is_secret(name) else match.group(0)

    return head + "?" + _QUERY_PARAM.sub(hide, "?" + query)[1:]


def database_name(url: str) -> str | None:
    """The database the URL names (None: the server's default for the user)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return None
    name = unquote(path.lstrip("/"))
    return name or None


def plain(location: str | os.PathLike[str] | StoreLocation) -> str:
    """The exact text of a location, secrets included: a `StoreLocation`'s `secret_text()`, a
    path's `os.fspath`, a str itself. The one call that opens a store or compares two."""
    if isinstance(location, StoreLocation):
        return location.secret_text()
    return str.__str__(os.fspath(location))


class StoreLocation:
    """A `--db` value as the user gave it: a file path or a store URL. Not a str: printing it
    (str(), f-strings, repr, format) shows a URL with its secrets masked, and the exact text is
    given only by an explicit `secret_text()` (or `plain`), as posting's SecretStr does. A file's
    location is path-like (`os.fspath`, `Path(...)`); a URL's is not (a Path of it would print
    its password)."""

    __slots__ = ("_text",)

    def __init__(self, location: str | os.PathLike[str] | StoreLocation) -> None:
        self._text = plain(location)

    def secret_text(self) -> str:
        """The location exactly as given, password included: for opening the store only."""
        return self._text

    def __str__(self) -> str:
        return mask_url(self._text)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"StoreLocation({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreLocation) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)

    def __bool__(self) -> bool:
        return bool(self._text)

    def __fspath__(self) -> str:
        if self.is_url:
            raise TypeError(f"{self}: a store URL is not a file path")
        return self._text

    @property
    def is_url(self) -> bool:
        return is_url(self._text)

    @property
    def is_keyword_dsn(self) -> bool:
        return is_keyword_dsn(self._text)

    @property
    def stem(self) -> str:
        """A name for what the store holds: a file's stem, a database's name."""
        if self.is_url:
            return database_name(self._text) or "store"
        from pathlib import Path

        return Path(self._text).stem


def with_session_role(url: str, role: str) -> str:
    """The store URL with its sessions switched to `role` at connection (libpq's `options`
    `-c role=...`, as SET ROLE): the served app writes through an annotator's own login while
    the server holds the owner's credentials. An existing `options` parameter is kept."""
    from urllib.parse import quote

    setting = quote(f"-c role={role}", safe="")
    head, qmark, query = url.partition("?")
    params = query.split("&") if qmark and query else []
    for i, param in enumerate(params):
        if param.partition("=")[0] == "options":
            params[i] = f"{param}%20{setting}"
            break
    else:
        params.append(f"options={setting}")
    return f"{head}?{'&'.join(params)}"
