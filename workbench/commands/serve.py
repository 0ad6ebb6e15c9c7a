"""`workbench serve`: the judging app in browsers, each connection the same app as `workbench
judge` for the annotator its URL names; `workbench serve token` makes (rotates, revokes) that
URL. The server itself is `workbench.web.server` (aiohttp and textual-serve load only here)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys
from pathlib import Path

from workbench.commands import add_rel_threshold_option, add_store_option, say
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode
from workbench.core.model import Role
from workbench.core.names import annotator_name
from workbench.core.serve_tokens import LEAD
from workbench.flows.serve_urls import DEFAULT_PORT

TOKEN_ONLY = ("annotator", "adjudicator", "lead", "revoke")


def port_number(text: str) -> int:
    """argparse `type=` of `--port`: 1-65535."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1-65535)")
    return int(text)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Serve the judging app to browsers: each annotator opens their own URL (made by "
        "`workbench serve token`) and judges the store's queue as in `workbench judge`."
    )
    parser.add_argument(
        "action",
        nargs="?",
        choices=("token",),
        help="token: print an annotator's URL (a new token; the old one stops working), or "
        "end it with --revoke, instead of serving",
    )
    add_store_option(parser, required=True)
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; another address "
        "serves the network, unencrypted unless --certfile/--keyfile or a TLS proxy)",
    )
    parser.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                        help=f"port to listen on (default {DEFAULT_PORT})")  # fmt: skip
    parser.add_argument("--certfile", type=Path, help="serve HTTPS with this certificate (PEM)")
    parser.add_argument("--keyfile", type=Path, help="the certificate's private key (PEM)")
    parser.add_argument(
        "--url",
        metavar="URL",
        help="the address annotators open (behind a proxy, the proxy's); serve records it and "
        "serve token prints URLs with it (default: the one serve listens on)",
    )
    add_rel_threshold_option(parser)
    parser.add_argument("--annotator", type=annotator_name,
                        help="serve token: whose URL (it judges as this name only)")  # fmt: skip
    role = parser.add_mutually_exclusive_group()
    role.add_argument("--adjudicator", action="store_true",
                      help="serve token: the URL opens the adjudication screen")  # fmt: skip
    role.add_argument(
        "--lead",
        action="store_true",
        help="serve token: the URL opens the lead's page (who judged what, how fast, agreement), "
        "not the app",
    )
    parser.add_argument("--revoke", action="store_true",
                        help="serve token: end the annotator's URL (open pages close)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.action == "token":
        return token(args)
    given = [f"--{name}" for name in TOKEN_ONLY if getattr(args, name)]
    if given:
        raise InputError([f"{', '.join(given)}: options of `workbench serve token`"])
    return serve(args)


def _url_problem(url: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "not a URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "expected http://HOST[:PORT][/PATH] or https://..."
    if parts.query or parts.fragment:
        return "give the address without ?query or #fragment"
    return None


def _checked_url(url: str | None) -> str | None:
    if url is None:
        return None
    problem = _url_problem(url)
    if problem:
        raise InputError([f"--url {url!r}: {problem}"])
    return url if url.endswith("/") else url + "/"


def token(args: argparse.Namespace) -> int:
    """Print the annotator's URL with a new token (the store keeps its hash), or revoke it."""
    from workbench.flows.serve_urls import issue_url, revoke_url

    if not args.annotator:
        raise InputError(["serve token: --annotator NAME is required (whose URL)"])
    for name in ("host", "certfile", "keyfile"):
        if getattr(args, name) not in (None, "127.0.0.1"):
            raise InputError([f"--{name}: an option of `workbench serve`, not of serve token"])
    if args.revoke:
        if revoke_url(args.db, args.annotator):
            say(f"{args.annotator}'s URL is revoked: it opens nothing now, and a page open"
                " with it closes within seconds (grades already saved stay).")  # fmt: skip
        else:
            say(f"{args.annotator} had no live URL in {args.db}: nothing to revoke.")
        return ExitCode.OK
    role = LEAD if args.lead else Role.ADJUDICATOR if args.adjudicator else Role.HUMAN
    print(issue_url(args.db, args.annotator, role, _checked_url(args.url)))
    what = {LEAD: "the lead's page", Role.ADJUDICATOR: "the adjudication screen"}.get(
        role, "the judging app"
    )
    say(
        f"{args.annotator}'s URL ({what}); any earlier one stops working. Hand it to"
        f" {args.annotator} alone: whoever holds it judges as {args.annotator}. The store keeps"
        f" only its hash. End it: workbench serve token --db {args.db} --annotator"
        f" {args.annotator} --revoke",
        file=sys.stderr,
    )
    return ExitCode.OK


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _tls(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The SSL context of --certfile/--keyfile (None without them); exit 2 naming the file."""
    if args.certfile is None and args.keyfile is None:
        return None
    if args.certfile is None or args.keyfile is None:
        raise InputError(["--certfile and --keyfile: give both (or neither)"])
    import ssl

    for name, path in (("--certfile", args.certfile), ("--keyfile", args.keyfile)):
        if not path.is_file():
            raise InputError([f"{name} {path}: no such file"])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(args.certfile, args.keyfile)
    except (ssl.SSLError, OSError) as exc:
        raise InputError(
            [f"--certfile {args.certfile} / --keyfile {args.keyfile}: not a certificate and its "
             f"key ({getattr(exc, 'reason', None) or exc.strerror or type(exc).__name__})"]
        ) from None  # fmt: skip
    return context


def serve(args: argparse.Namespace) -> int:
    """Listen until Ctrl+C; each browser connection with a live token runs the app."""
    from workbench.flows.serve_urls import record_serving_url
    from workbench.store import open_store

    tls = _tls(args)
    scheme = "https" if tls is not None else "http"
    shown_host = args.host if args.host not in ("0.0.0.0", "::", "") else socket.getfqdn()
    if ":" in shown_host:
        shown_host = f"[{shown_host}]"
    url = _checked_url(args.url) or f"{scheme}://{shown_host}:{args.port}/"
    store = open_store(args.db)
    try:
        record_serving_url(store, args.db, url)
        if not _is_loopback(args.host) and tls is None:
            say(
                f"warning: serving {args.host}, beyond this machine, over plain HTTP: the keys in"
                " annotators' URLs, the passages and the grades cross the network unencrypted."
                " Put a TLS proxy in front (docs: serving a team), or give --certfile/--keyfile.",
                file=sys.stderr,
            )
        from workbench.web.server import ServeConfig, run_server

        config = ServeConfig(
            location=args.db,
            host=args.host,
            port=args.port,
            url=url,
            ssl=tls,
            rel_threshold=args.rel_threshold,
            python=sys.executable,
            workbench_path=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        return run_server(config, store)
    finally:
        store.close()
