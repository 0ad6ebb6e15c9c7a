"""`workbench store copy SRC DST`: every row of a store into another (SQLite -> PostgreSQL and
back), checksummed per table, annotators' own logins carried; `workbench store role-sql`: the
grants of a PostgreSQL login for annotators that can add judgments but never change one
(`--annotator NAME --db STORE`: one annotator's own login in that study, which the database
lets write checked rows of that annotator only, and read that annotator's judgments only)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from workbench.commands import add_store_option, say, store_location
from workbench.core.exit_codes import ExitCode
from workbench.core.names import annotator_name

if TYPE_CHECKING:
    from workbench.store.copy import StoreCopy


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    copy = sub.add_parser("copy", help="copy every row of SRC into DST (made when absent)")
    copy.add_argument("source", type=store_location, metavar="SRC", help="a store: file or URL")
    copy.add_argument("destination", type=store_location, metavar="DST", help="file or URL")
    copy.add_argument("--append", action="store_true", help="add to a DST that holds rows already")
    role = sub.add_parser(
        "role-sql",
        help="print SQL creating a PostgreSQL annotator login",
        description='Example: workbench store role-sql --db "$STORE" --annotator ann | psql'
        ' "$STORE" (the password goes to stderr, once)',
    )
    add_store_option(role, help="the study's store, as its owner connects (with --annotator)")
    role.add_argument("--schema", default="public", help="the store's schema (default public)")
    role.add_argument(
        "--annotator",
        type=annotator_name,
        metavar="NAME",
        help="one annotator's own login, which the database lets write only NAME's human rows"
        " and read only NAME's judgments (without it: one login shared by trusted annotators)",
    )
    role.add_argument(
        "--adjudicator",
        action="store_true",
        help="with --annotator: the login writes NAME's adjudicator rows (and no human ones)"
        " and reads every judgment",
    )
    role.add_argument(
        "--login",
        type=login_name,
        metavar="ROLE",
        help="with --annotator: the login's role name (default: wb_, the name and a hash of"
        " the study, so two studies on one server never share one)",
    )
    secret = role.add_mutually_exclusive_group()
    secret.add_argument(
        "--password-file",
        metavar="FILE",
        help="the password, the first line of FILE ('-': stdin); default: one generated and"
        " written to stderr once (the SQL holds only its SCRAM hash)",
    )
    secret.add_argument(
        "--new-password",
        action="store_true",
        help="with --annotator: a new generated password for a login that exists (else kept)",
    )


def login_name(value: str) -> str:
    """argparse type of `--login`: a plain lowercase PostgreSQL role name."""
    import re

    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a role name of lowercase ASCII letters, digits and '_' (at most 63)"
        )
    return value


def run(args: argparse.Namespace) -> int:
    if args.action == "role-sql":
        print(role_sql(args), end="")
        return ExitCode.OK
    from workbench.flows.store_copy import copy_between

    copied = copy_between(args.source, args.destination, args.append)
    say_copy(copied, args)
    return ExitCode.OK if copied.same else ExitCode.FAILED


def say_copy(copied: StoreCopy, args: argparse.Namespace) -> None:
    """Each table (rows, rows new to the destination, checksums), the logins, one summary."""
    from workbench.core.display import visible

    width = max(len(t.table) for t in copied.tables)
    for t in copied.tables:
        mark = "same" if t.same else "DIFFERS"
        new = f"  {t.added:>8} new" if args.append else ""
        say(f"  {t.table:<{width}}  {t.rows:>8} rows{new}  {t.source_sum}  {t.destination_sum}"
            f"  {mark}")  # fmt: skip
    source = visible(str(args.source), one_line=True)
    destination = visible(str(args.destination), one_line=True)
    if copied.logins:
        say(f"Own logins made {destination}'s too (mapping, checks, reading policy, grants): "
            + ", ".join(f"{x.login} ({x.annotator})" for x in copied.logins) + ".")  # fmt: skip
    if copied.roleless:
        say("Own logins whose role is not on the destination's server, not made: "
            + ", ".join(f"{x.login} ({x.annotator})" for x in copied.roleless)
            + "; make each with `workbench store role-sql --db DST --annotator NAME`.")  # fmt: skip
    if copied.left:
        say(f"Own logins not carried ({destination} is a SQLite file, which has none): "
            + ", ".join(f"{x.login} ({x.annotator})" for x in copied.left) + ".")  # fmt: skip
    total = sum(t.rows for t in copied.tables)
    if args.append:
        there = total - copied.added
        held = f"; the other {there} were there already" if there else ""
        head = f"Appended {copied.added} new rows of {source} into {destination}{held}"
    else:
        head = f"Copied {total} rows of {source} into {destination}"
    say(head + ("" if copied.same else "; some tables differ (see above)") + ".")


def role_sql(args: argparse.Namespace) -> str:
    """The SQL `store role-sql` prints; a password it generates is said on stderr, once."""
    from workbench.core.display import visible
    from workbench.core.errors import InputError
    from workbench.flows.store_logins import LoginAsk, login_sql

    if not args.schema.isidentifier():
        raise InputError([f"--schema: {visible(args.schema, one_line=True)} is not a name"])
    if (args.adjudicator or args.login or args.new_password) and not args.annotator:
        raise InputError(["--adjudicator, --login and --new-password name one annotator's"
                          " login; give --annotator NAME too"])  # fmt: skip
    password = _password_file(args.password_file) if args.password_file else None
    ask = LoginAsk(args.schema, args.annotator, args.adjudicator, args.login, args.new_password)
    return login_sql(args.db, ask, password, lambda line: say(line, file=sys.stderr))


def _password_file(path: str) -> str:
    """The first line of `path` ('-': stdin), which must hold a password."""
    from workbench.core.errors import InputError

    try:
        if path == "-":
            text = sys.stdin.readline()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.readline()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.__class__.__name__
        raise InputError([f"--password-file {path}: cannot read ({reason})"]) from None
    password = text.rstrip("\r\n")
    if not password:
        raise InputError([f"--password-file {path}: its first line is empty"])
    return password
