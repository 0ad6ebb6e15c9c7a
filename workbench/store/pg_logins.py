"""An annotator's own PostgreSQL login (`workbench store role-sql --annotator`): a role named for
its study, mapped to one annotator in the store's `workbench_logins` table, whose rows the
database itself checks (`workbench_own_rows`: that annotator's name and role only, a grade of the
study's scale, an item of the pool, timestamps that the server's clock allows) and whose reads
of judgments it keeps to that annotator's rows (row-level security; adjudicators, the owner and
other logins read all). Everything here is idempotent: run again, or by `store copy` on another
store, it leaves one mapping, one trigger per table and one policy."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

from workbench.core.model import Role
from workbench.store.core import Login
from workbench.store.judgments import POOLED_ITEM

LOGINS_TABLE = "workbench_logins"
CLOCK_SKEW_S = 300
"""How far ahead of the server's clock a login's timestamp may be: Kerberos' default skew,
room for a laptop's clock that is not synchronised to the second."""
STAMP_LAG_S = 3600
"""How far behind the server's clock: the app keeps a grade through a lost connection and sends
it again, stamped when the key was pressed; a server away for longer than this refuses it."""
ELAPSED_SLACK_MS = 1
"""elapsed_ms is the app's whole milliseconds of graded_at - shown_at."""
SCRAM_ITERATIONS = 4096
"""PostgreSQL's own default for scram-sha-256."""

OWN_ROWS = {"judgments": "annotator", "annotators": "name", "draws": "annotator",
            "claims": "annotator"}  # fmt: skip
"""Every table an annotator's app writes, and the column naming whose row it is."""
STAMPS = {"judgments": "graded_at", "annotators": "created_at", "draws": "drawn_at",
          "claims": "claimed_at"}  # fmt: skip
"""The time each of those rows was written, which the server's clock must allow."""

JUDGED_VIEW = "workbench_judged"
"""Who judged which item (no grade, no note): what an annotator's app needs of the others' rows
to share the pool (`SharingTables.claim`), readable where their judgments are not."""


def quote_name(name: str) -> str:
    """An SQL identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'


def quote_text(text: str) -> str:
    """An SQL string literal (standard_conforming_strings, PostgreSQL's default since 9.1)."""
    return "'" + text.replace("'", "''") + "'"


def login_of(annotator: str, database: str, schema: str) -> str:
    """The role name of an annotator's own login in one study: `wb_`, a readable part of the
    name and a hash of (database, schema, name), so that two studies on one server, or names
    differing only in case or punctuation, never share a login; within PostgreSQL's 63 bytes."""
    readable = re.sub(r"[^a-z0-9_]+", "_", annotator.lower()).strip("_")[:40]
    study = "\x00".join((database, schema, annotator)).encode("utf-8")
    digest = hashlib.sha256(study).hexdigest()[:10]
    return f"wb_{readable}_{digest}" if readable else f"wb_{digest}"


def new_password() -> str:
    """A password to hand out once: 128 random bits, URL-safe (it goes into a connection URL)."""
    return secrets.token_urlsafe(16)


def scram_verifier(password: str, salt: bytes | None = None) -> str:
    """What PostgreSQL stores of a scram-sha-256 password (RFC 5802/7677): given to CREATE ROLE
    in place of the password, so the SQL that `role-sql` prints never holds the password."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, SCRAM_ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    return f"SCRAM-SHA-256${SCRAM_ITERATIONS}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


_CHECK_FUNCTION = """\
CREATE OR REPLACE FUNCTION {s}.workbench_own_rows() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $wb$
DECLARE
    mine RECORD;
    seen jsonb;
    server_now float8 := extract(epoch FROM clock_timestamp());
    stamp float8;
    scale text;
BEGIN
    SELECT annotator, role INTO mine FROM {s}.workbench_logins WHERE login = current_user;
    IF NOT FOUND THEN
        RETURN COALESCE(NEW, OLD);
    END IF;
    FOREACH seen IN ARRAY ARRAY[to_jsonb(OLD), to_jsonb(NEW)] LOOP
        IF seen IS NOT NULL AND (seen ->> TG_ARGV[0] IS DISTINCT FROM mine.annotator
                OR COALESCE(seen ->> 'role', mine.role) <> mine.role) THEN
            RAISE EXCEPTION 'the login % writes as annotator % (role %) only: refused a % row of %',
                current_user, mine.annotator, mine.role, TG_TABLE_NAME,
                concat_ws(' as ', seen ->> TG_ARGV[0], seen ->> 'role');
        END IF;
    END LOOP;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    IF TG_TABLE_NAME <> 'annotators' THEN
        IF NOT EXISTS (SELECT 1 FROM (SELECT NEW.query_id AS query_id, NEW.doc_id AS doc_id)
                       AS new_row WHERE {pooled}) THEN
            RAISE EXCEPTION 'the login % may write pooled items only: refused a % row of query % '
                'passage %, not in the pool', current_user, TG_TABLE_NAME, NEW.query_id,
                NEW.doc_id;
        END IF;
    END IF;
    IF TG_TABLE_NAME = 'judgments' THEN
        IF NEW.grade IS NOT NULL THEN
            SELECT value INTO scale FROM {s}.meta WHERE key = 'grade_scale';
            IF NOT COALESCE(jsonb_exists(scale::jsonb, NEW.grade::text), false) THEN
                RAISE EXCEPTION 'the login % may write grades of the study''s scale only: '
                    'refused grade % (the scale: %)', current_user, NEW.grade, scale;
            END IF;
        END IF;
        IF NEW.shown_at <= 0 OR NEW.shown_at > NEW.graded_at
                OR abs(NEW.elapsed_ms - (NEW.graded_at - NEW.shown_at) * 1000)
                    > {elapsed_slack} THEN
            RAISE EXCEPTION 'the login % records time per grade as the app does: refused '
                'shown_at %, graded_at %, elapsed_ms % (shown before graded, elapsed_ms the '
                'milliseconds between)', current_user, NEW.shown_at, NEW.graded_at,
                NEW.elapsed_ms;
        END IF;
    END IF;
    stamp := (to_jsonb(NEW) ->> TG_ARGV[1])::float8;
    IF stamp IS NULL OR stamp < server_now - {lag} OR stamp > server_now + {skew} THEN
        RAISE EXCEPTION 'the login % writes the server''s time only: refused % % of a % row, '
            'the server''s clock says % (allowed: {lag} s before to {skew} s after; check '
            'this machine''s clock)', current_user, TG_ARGV[1], stamp, TG_TABLE_NAME,
            round(server_now::numeric, 3);
    END IF;
    RETURN NEW;
END $wb$;
"""

_TRIGGER = (
    "DROP TRIGGER IF EXISTS {table}_own_rows ON {s}.{table};\n"
    "CREATE TRIGGER {table}_own_rows BEFORE INSERT OR UPDATE OR DELETE ON {s}.{table}\n"
    "    FOR EACH ROW EXECUTE FUNCTION {s}.workbench_own_rows('{column}', '{stamp}');\n"
)

_READS = """\
ALTER TABLE {s}.judgments ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS workbench_own_reads ON {s}.judgments;
CREATE POLICY workbench_own_reads ON {s}.judgments USING (
    NOT EXISTS (SELECT 1 FROM {s}.workbench_logins WHERE login = current_user
                AND role = 'human' AND annotator <> judgments.annotator));
CREATE OR REPLACE VIEW {s}.workbench_judged AS
    SELECT judgment_id, annotator, role, query_id, doc_id, grade IS NOT NULL AS graded
    FROM {s}.judgments;
"""
"""An annotator's login reads its own judgments (grades and notes) only; the owner (the tables'
owner, whom row-level security passes by), adjudicators' logins and other logins read all. The
view, the owner's, says who judged which item without the grade."""


def study_sql(schema: str) -> str:
    """The store's side of the logins, made or brought up to date (no role made): the mapping
    table, the checking trigger on every table an annotator writes, the reading policy."""
    s = quote_name(schema)
    triggers = "".join(
        _TRIGGER.format(table=table, s=s, column=column, stamp=STAMPS[table])
        for table, column in OWN_ROWS.items()
    )
    return (
        f"CREATE TABLE IF NOT EXISTS {s}.{LOGINS_TABLE} (login TEXT PRIMARY KEY,\n"
        "    annotator TEXT NOT NULL, role TEXT NOT NULL);\n"
        # every login reading judgments reads the mapping (the reading policy asks it)
        f"GRANT SELECT ON {s}.{LOGINS_TABLE} TO PUBLIC;\n"
        + _CHECK_FUNCTION.format(
            s=s,
            lag=STAMP_LAG_S,
            skew=CLOCK_SKEW_S,
            elapsed_slack=ELAPSED_SLACK_MS,
            pooled=POOLED_ITEM.format(item="new_row", pool=f"{s}.pool", aliases=f"{s}.aliases"),
        )
        + triggers
        + _READS.format(s=s)
    )


def grants_sql(schema: str, login: Login) -> str:
    """The mapping row and the grants of one login (its role exists)."""
    s, role = quote_name(schema), quote_name(login.login)
    return (
        f"INSERT INTO {s}.{LOGINS_TABLE} VALUES ({quote_text(login.login)},"
        f" {quote_text(login.annotator)}, {quote_text(login.role)})\n"
        "    ON CONFLICT (login) DO UPDATE SET annotator = excluded.annotator,"
        " role = excluded.role;\n"
        f"GRANT USAGE ON SCHEMA {s} TO {role};\n"
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {role};\n"
        f"GRANT INSERT ON {s}.judgments, {s}.annotators, {s}.draws TO {role};\n"
        f"GRANT INSERT, UPDATE, DELETE ON {s}.claims TO {role};\n"
        f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {s} TO {role};\n"
    )


def role_sql(login: str, verifier: str | None) -> str:
    """Make the role, or keep it: its password set to `verifier` when given, else unchanged."""
    name, text = quote_name(login), quote_text(login)
    password = f" PASSWORD {quote_text(verifier)}" if verifier else ""
    alter = f"ALTER ROLE {name} LOGIN{password};" if verifier else "NULL;"
    return (
        "DO $wb$ BEGIN\n"
        f"    IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = {text}) THEN {alter}\n"
        f"    ELSE CREATE ROLE {name} LOGIN{password}; END IF;\n"
        "END $wb$;\n"
    )


_STORE_FIRST = """\
DO $wb$ BEGIN
    IF to_regclass({meta}) IS NULL THEN
        RAISE EXCEPTION 'no workbench store in schema %: run `workbench pool --db URL` first, '
            'then this script', {schema};
    END IF;
END $wb$;
"""


def own_login_script(schema: str, login: Login, verifier: str | None) -> str:
    """The whole script `role-sql --annotator` prints: one transaction, safe to run again."""
    meta = quote_text(f"{quote_name(schema)}.meta")
    role = "an adjudicator's" if login.role == Role.ADJUDICATOR else "a human annotator's"
    return (
        f"-- {login.login}: the own login of {login.annotator}, writing {role} rows under that\n"
        "-- name only, of pooled items, grades of the study's scale and the server's time;\n"
        "-- reading its own judgments only (an adjudicator's login reads all). Run as the\n"
        "-- store's owner, in the store's database, after `workbench pool`; running it again\n"
        "-- changes nothing but a password given anew.\n"
        "BEGIN;\n"
        "SET LOCAL client_min_messages TO warning;  -- not each 'does not exist, skipping'\n"
        + _STORE_FIRST.format(meta=meta, schema=quote_text(schema))
        + role_sql(login.login, verifier)
        + study_sql(schema)
        + grants_sql(schema, login)
        + "COMMIT;\n"
    )
