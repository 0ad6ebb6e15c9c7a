"""The served app's door keys (`workbench serve token`): a long random token per annotator,
shown once in that annotator's URL; the store keeps only its hash, so a copy of the store (or
of its backups) opens no door. Pure: no store, no files."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from workbench.core.model import Role

TOKEN_BYTES = 32
"""256 random bits: guessing is hopeless, so one SHA-256 (no slow hash) keeps it safe at rest."""
URL_KEY = "key"
"""The URL's fragment holds `key=TOKEN`: a browser never sends a fragment in a request line, so
no server or proxy log can hold it; the page posts it to the server in a body."""

LEAD = "lead"
"""The role of a token that opens the lead's page (who judged what, and how fast), not the app."""
TOKEN_ROLES = (Role.HUMAN.value, Role.ADJUDICATOR.value, LEAD)


@dataclass(frozen=True, slots=True)
class TokenHolder:
    """Whose a live token is: the annotator it judges as, in a role of `TOKEN_ROLES`."""

    annotator: str
    role: str


def new_token() -> str:
    """A fresh token, URL-safe (43 characters)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    """What the store keeps of a token (hex SHA-256)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def looks_like_token(text: str) -> bool:
    """Whether `text` could be a token at all (checked before any store read: a page may post
    anything)."""
    return 20 <= len(text) <= 128 and all(c.isalnum() or c in "-_" for c in text)


def annotator_url(base_url: str, token: str) -> str:
    """The URL handed to an annotator: the server's address, the token in the fragment."""
    return f"{base_url.rstrip('/')}/#{URL_KEY}={token}"
