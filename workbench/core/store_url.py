"""A location as messages and stores may show it: a URL's secrets (the user info's password, a
query parameter named like one: password, key, token, secret, signature) replaced by `***`,
whatever else the URL holds. Pure text, so a command can take `--db` / `--qrels` (or an LLM's
`--endpoint`) without importing the store."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

URL_SCHEMES = ("postgresql://", "postgres://")

_QUERY_PARAM = re.compile(r"([?&])([^=&]*)=([^&]*)")
_SECRET_NAME = re.compile(r"pass|pwd|key|token|secret|auth|sig|credential", re.IGNORECASE)
"""A query parameter whose name holds one of these carries a secret (sslpassword, api_key,
access_token, X-Amz-Signature, ...): masked, even where it is not one (sslkey's file name)."""


def _is_secret(name: str) -> bool:
    return _SECRET_NAME.search(unquote(name)) is not None


def is_url(location: str) -> bool:
    return location.lower().startswith(URL_SCHEMES)


def _split(url: str) -> tuple[str, str, str, str] | None:
    """(scheme://, user info, host and path, query) of a URL with an '@', taking the last '@'
    before the query as the end of the user info (a password may hold '#', '/' or '@')."""
    head, sep, rest = url.partition("://")
    if not sep:
        return None
    body, qmark, query = rest.partition("?")
    user_info, at, host = body.rpartition("@")
    if not at:
        return None
    return head + sep, user_info, host, qmark + query


def passwords(url: str) -> list[str]:
    """The secrets a URL carries (the user info's password and any parameter named like a
    secret), as written and percent-decoded, longest first."""
    found: list[str] = []
    parts = _split(url)
    if parts and ":" in parts[1]:
        found.append(parts[1].split(":", 1)[1])
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
    parameter named like a secret, e.g. sslpassword or key)."""
    parts = _split(url)
    masked = url
    if parts and ":" in parts[1]:
        scheme, user_info, host, query = parts
        masked = f"{scheme}{user_info.split(':', 1)[0]}:***@{host}{query}"
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
