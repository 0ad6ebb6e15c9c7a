"""`workbench store role-sql`'s use case: the SQL of a PostgreSQL login for annotators, shared
by trusted annotators (it adds judgments, never changes one) or one annotator's own login in a
study (it writes that annotator's checked rows only, and reads that annotator's judgments
only). A password it makes is said once, through `tell`; the SQL holds only its SCRAM hash."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.errors import InputError

if TYPE_CHECKING:
    from workbench.core.store_url import StoreLocation


@dataclass(frozen=True)
class LoginAsk:
    """Whose login, in which schema (the command's options, checked)."""

    schema: str = "public"
    annotator: str | None = None
    adjudicator: bool = False
    login: str | None = None
    new_password: bool = False


def login_sql(
    db: StoreLocation | None, ask: LoginAsk, password: str | None, tell: Callable[[str], None]
) -> str:
    """The SQL that makes the login; `password` None: one generated (said through `tell`)."""
    from workbench.core.model import Role
    from workbench.store.pg_logins import new_password, own_login_script, role_sql, scram_verifier
    from workbench.store.pg_schema import ANNOTATOR_ROLE_SQL

    if not ask.annotator:
        password = password or _said_once("workbench_annotator", new_password(), tell)
        role = role_sql("workbench_annotator", scram_verifier(password))
        return ANNOTATOR_ROLE_SQL.format(schema=f'"{ask.schema}"', role=role)
    store = _study_store(db)
    with store:
        wanted = Role.ADJUDICATOR if ask.adjudicator else Role.HUMAN
        login, exists = store.login_for(ask.annotator, wanted, ask.login)
        if password is None and (ask.new_password or not exists):
            password = _said_once(login.login, new_password(), tell)
        elif password is None:
            tell(f"The login {login.login} exists: its password is kept (--new-password sets"
                 " another).")  # fmt: skip
        verifier = scram_verifier(password) if password else None
        return own_login_script(store.schema, login, verifier)


def _study_store(db: StoreLocation | None):  # type: ignore[no-untyped-def]
    """The PostgreSQL store an own login is made for: it must hold a pool's tables already."""
    from workbench.store import open_store

    if db is None:
        raise InputError(
            ["--annotator: give --db URL, the study's store: an own login is named for its study"
             " (database and schema) and checks rows against it"]
        )  # fmt: skip
    if not db.is_url:
        raise InputError([f"--db {db}: logins are a PostgreSQL store's (a SQLite file has none)"])
    from workbench.store.postgres import NoStore

    try:
        return open_store(db, read_only=True)
    except NoStore as exc:
        raise InputError(
            [*exc.problems[:-1], exc.problems[-1] + "; make logins after it is pooled"]
        ) from None


def _said_once(login: str, password: str, tell: Callable[[str], None]) -> str:
    tell(f"Password of {login} (generated, shown this once; the SQL holds only its hash):"
         f" {password}")  # fmt: skip
    return password
