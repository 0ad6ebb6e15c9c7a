"""`workbench store copy SRC DST`: every row of a store into another (SQLite -> PostgreSQL and
back), checksummed per table; `workbench store role-sql`: the grants of a PostgreSQL login for
annotators that can add judgments but never change one (`--annotator NAME`: one annotator's
own login, which the database lets write that annotator's rows only)."""

from __future__ import annotations

import argparse
import contextlib
import os

from workbench.commands import store_location
from workbench.core.exit_codes import ExitCode
from workbench.core.names import annotator_name


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    copy = sub.add_parser("copy", help="copy every row of SRC into DST (made when absent)")
    copy.add_argument("source", type=store_location, metavar="SRC", help="a store: file or URL")
    copy.add_argument("destination", type=store_location, metavar="DST", help="file or URL")
    copy.add_argument("--append", action="store_true", help="add to a DST that holds rows already")
    role = sub.add_parser("role-sql", help="print SQL creating a PostgreSQL annotator login")
    role.add_argument("--schema", default="public", help="the store's schema (default public)")
    role.add_argument(
        "--annotator",
        type=annotator_name,
        metavar="NAME",
        help="one annotator's own login, which the database lets write only NAME's human rows"
        " (without it: one login shared by trusted annotators)",
    )
    role.add_argument(
        "--adjudicator",
        action="store_true",
        help="with --annotator: the login writes NAME's adjudicator rows (and no human ones)",
    )


def run(args: argparse.Namespace) -> int:
    from workbench.commands import say
    from workbench.core.display import visible
    from workbench.core.errors import InputError

    if args.action == "role-sql":
        from workbench.core.model import Role
        from workbench.store.pg_schema import ANNOTATOR_ROLE_SQL, own_login_sql

        if not args.schema.isidentifier():
            raise InputError([f"--schema: {visible(args.schema, one_line=True)} is not a name"])
        if args.adjudicator and not args.annotator:
            raise InputError(["--adjudicator: names the role of one annotator's login; give"
                              " --annotator NAME too"])  # fmt: skip
        if args.annotator:
            role = Role.ADJUDICATOR if args.adjudicator else Role.HUMAN
            print(own_login_sql(args.schema, args.annotator, role), end="")
        else:
            print(ANNOTATOR_ROLE_SQL.format(schema=f'"{args.schema}"'), end="")
        return ExitCode.OK
    from workbench.core.store_url import plain
    from workbench.formats.atomic import same_file
    from workbench.store import open_store
    from workbench.store.copy import copy_store

    files = not args.source.is_url and not args.destination.is_url
    if plain(args.source) == plain(args.destination) or (
        files and same_file(plain(args.source), plain(args.destination))
    ):
        raise InputError([f"{args.destination}: is the source; copy into another store"])
    made = not args.destination.is_url and not os.path.lexists(plain(args.destination))
    try:
        with (
            open_store(args.source, read_only=True) as source,
            open_store(args.destination, create=True) as dest,
        ):
            tables = copy_store(source, dest, append=args.append)
    except BaseException:
        if made:  # a destination this copy made holds nothing of use: leave none behind
            from pathlib import Path

            from workbench.store.schema import remove_store_files

            with contextlib.suppress(OSError):
                remove_store_files(Path(plain(args.destination)))
        raise
    width = max(len(t.table) for t in tables)
    for t in tables:
        mark = "same" if t.same else "DIFFERS"
        say(f"  {t.table:<{width}}  {t.rows:>8} rows  {t.source_sum}  {t.destination_sum}  {mark}")
    verb = "Appended" if args.append else "Copied"
    say(
        f"{verb} {sum(t.rows for t in tables)} rows of {visible(str(args.source), one_line=True)}"
        f" into {visible(str(args.destination), one_line=True)}"
        + ("" if all(t.same for t in tables) else "; some tables differ (see above)")
        + "."
    )
    return ExitCode.OK if all(t.same for t in tables) else ExitCode.FAILED
