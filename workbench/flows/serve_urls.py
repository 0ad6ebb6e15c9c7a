"""`workbench serve token`'s use case: an annotator's URL made (a new token; the store keeps its
hash, the old one stops working) or revoked, after the checks that the name may judge in that
role through the server's login."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.errors import InputError
from workbench.core.serve_tokens import LEAD

if TYPE_CHECKING:
    from workbench.core.store_url import StoreLocation
    from workbench.store import JudgmentStore

DEFAULT_PORT = 8000
SERVE_URL_KEY = "serve_url"
"""The store's meta key of the address annotators reach the server at (`--url`, else the one
`serve` listened on): what `serve token` prints URLs with."""


def record_serving_url(store: JudgmentStore, db: StoreLocation, url: str) -> None:
    """Before `serve` listens: the store must hold a pool; the address annotators reach it at
    is recorded for `serve token`'s URLs."""
    if not store.has_pool():
        raise InputError([f"{db}: the store has no pool yet (build one with "
                          "`workbench pool`)"])  # fmt: skip
    if store.get_meta(SERVE_URL_KEY) != url:
        store.set_meta(SERVE_URL_KEY, url)


def revoke_url(db: StoreLocation, annotator: str) -> bool:
    """End the annotator's URL; False when there was none."""
    from workbench.store import open_store

    with open_store(db) as store:
        return store.revoke_serve_token(annotator)


def issue_url(db: StoreLocation, annotator: str, role: str, url: str | None) -> str:
    """The annotator's URL with a new token, at `url` (else the one `serve` recorded, else
    this machine's default); InputError when the store has no pool or the name cannot judge in
    `role` there."""
    from workbench.core.serve_tokens import annotator_url, new_token, token_hash
    from workbench.flows.annotator_roles import check_role
    from workbench.store import open_store

    with open_store(db) as store:
        if not store.has_pool():
            raise InputError([f"{db}: the store has no pool yet (build one with "
                              "`workbench pool`)"])  # fmt: skip
        if role != LEAD:
            check_role(store, annotator, role)
            _check_own_login(store, annotator, role)
        base = url or store.get_meta(SERVE_URL_KEY) or f"http://127.0.0.1:{DEFAULT_PORT}/"
        secret = new_token()
        store.set_serve_token(annotator, str(role), token_hash(secret))
    return annotator_url(base, secret)


def _check_own_login(store, annotator: str, role: str) -> None:  # type: ignore[no-untyped-def]
    """An annotator with their own PostgreSQL login is served through it (`SET ROLE` at
    connection): the server's login must be allowed to take that role, checked now rather than
    when the annotator opens the page."""
    login = next((x for x in store.logins() if x.annotator == annotator), None)
    if login is None:
        return
    if login.role != role:
        raise InputError([f"--annotator {annotator}: the login {login.login} writes {login.role} "
                          f"rows in {store.location}; give {role} work another name"])  # fmt: skip
    if not store.can_act_as(login.login):
        raise InputError(
            [f"{store.location}: {annotator} has the own login {login.login}, which the served "
             f"app writes through, but this login may not take its role; as the owner run: "
             f"GRANT {login.login} TO CURRENT_USER"]
        )  # fmt: skip

