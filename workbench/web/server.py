"""The server of `workbench serve`: one page, one token check, one app process per browser
connection (textual-serve's `AppService`, the same `JudgeApp` as `workbench judge`).

The token never leaves the page's POST body: the page posts it (from the URL's fragment), the
server checks its hash against the store and answers a one-time ticket, and the websocket opened
with that ticket starts the app for the token's annotator. The app process gets the annotator's
name and the store's location through its environment (readable by this user only), never its
argv, and never the token. No request line holds a token, and nothing here logs one."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from workbench.core.display import visible
from workbench.core.serve_tokens import LEAD, TokenHolder, looks_like_token, token_hash
from workbench.core.store_url import StoreLocation, with_session_role
from workbench.store import JudgmentStore

PAGE = (Path(__file__).parent / "page.html").read_text(encoding="utf-8")
STATIC = Path(textual_serve.__file__).parent / "static"
"""textual-serve's own page scripts, styles and fonts: nothing is fetched from elsewhere."""
TICKET_TTL_S = 30.0
"""A ticket not used by a websocket within this long is void (the page uses it at once)."""
REVOKE_POLL_S = 2.0
"""How often an open session's token is checked again: a revoked or rotated one closes it."""
MAX_TOKEN_BODY = 256
SERVED_ENV = {
    "db": "WORKBENCH_SERVED_DB",
    "annotator": "WORKBENCH_SERVED_ANNOTATOR",
    "role": "WORKBENCH_SERVED_ROLE",
    "rel_threshold": "WORKBENCH_SERVED_REL_THRESHOLD",
}
"""The environment variables the app process (`workbench.served_app`) is started with."""
TEXTUAL_FPS = "120"
"""As `workbench judge`: at Textual's default 60 a grade waits up to 17 ms for its paint."""


@dataclass(frozen=True)
class ServeConfig:
    location: StoreLocation
    host: str
    port: int
    url: str
    ssl: Any
    rel_threshold: int
    python: str
    workbench_path: str


@dataclass
class Ticket:
    holder: TokenHolder
    hashed: str
    expires: float


@dataclass
class Sessions:
    """Who is connected now (for the log lines), and the tickets not used yet."""

    tickets: dict[str, Ticket] = field(default_factory=dict)
    open: dict[int, TokenHolder] = field(default_factory=dict)
    services: set[AppService] = field(default_factory=set)


def log(message: str) -> None:
    """One line on stderr, stamped; data in it made visible (never a token: none reaches here)."""
    print(f"{time.strftime('%H:%M:%S')} {visible(message, one_line=True)}", file=sys.stderr,
          flush=True)  # fmt: skip


class ServedApp(AppService):
    """textual-serve's app service, started as `python -m workbench.served_app` with the
    annotator in its environment (not a shell command line)."""

    def __init__(self, config: ServeConfig, env: dict[str, str], **kwargs: Any) -> None:
        super().__init__("workbench.served_app", **kwargs)
        self._config = config
        self._served_env = env

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment.update(self._served_env)
        environment["TEXTUAL_FPS"] = TEXTUAL_FPS
        path = environment.get("PYTHONPATH", "")
        environment["PYTHONPATH"] = os.pathsep.join(
            p for p in (self._config.workbench_path, path) if p
        )
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            self._config.python,
            "-m",
            "workbench.served_app",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        """As textual-serve's, and the page is told when the app process ends (a crash too)."""
        await super().run()
        await self.remote_close()


class JudgingServer:
    """The routes: the page, its static files, the token check, the app's websocket."""

    def __init__(self, config: ServeConfig, store: JudgmentStore) -> None:
        self.config = config
        self.store = store
        self.sessions = Sessions()
        self.downloads = DownloadManager()

    def app(self) -> web.Application:
        application = web.Application(client_max_size=64 * 1024)
        application.add_routes(
            [
                web.get("/", self.page),
                web.post("/session", self.session),
                web.get("/ws/{ticket}", self.websocket),
                web.static("/static", STATIC),
            ]
        )
        application.on_shutdown.append(self.shutdown)
        return application

    async def page(self, request: web.Request) -> web.Response:
        return web.Response(
            text=PAGE,
            content_type="text/html",
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )

    async def _holder(self, key: str) -> tuple[TokenHolder, str] | None:
        if not looks_like_token(key):
            return None
        hashed = token_hash(key)
        holder = await asyncio.to_thread(self.store.serve_token_holder, hashed)
        return (holder, hashed) if holder is not None else None

    async def session(self, request: web.Request) -> web.Response:
        """The page's token, checked: a one-time ticket for the app (or the lead's page)."""
        body = await request.content.read(MAX_TOKEN_BODY + 1)
        found = None
        if len(body) <= MAX_TOKEN_BODY:
            found = await self._holder(body.decode("utf-8", "replace").strip())
        if found is None:
            log(f"refused a page from {request.remote}: no live key (unknown, revoked or rotated)")
            return web.json_response(
                {"message": "This link is not (or no longer) valid: it was revoked, or replaced"
                 " by a newer one. Ask your study's lead for your current link."},
                status=403,
            )  # fmt: skip
        holder, hashed = found
        title = f"{self.store.title} · {holder.annotator} — workbench"
        if holder.role == LEAD:
            from workbench.web.lead import lead_page

            page = await asyncio.to_thread(lead_page, self.store, self.config.rel_threshold)
            log(f"{holder.annotator} opened the lead's page")
            return web.json_response({"role": LEAD, "title": title, "page": page})
        now = time.monotonic()
        self.sessions.tickets = {k: t for k, t in self.sessions.tickets.items() if t.expires > now}
        ticket = secrets.token_urlsafe(24)
        self.sessions.tickets[ticket] = Ticket(holder, hashed, now + TICKET_TTL_S)
        return web.json_response({"role": holder.role, "title": title, "ticket": ticket})

    async def _app_env(self, holder: TokenHolder) -> dict[str, str]:
        """What the app process is told: the store (through the annotator's own PostgreSQL
        login when there is one), the annotator and role, the relevance threshold."""
        location = self.config.location.secret_text()
        logins = await asyncio.to_thread(self.store.logins)
        own = next((x for x in logins if x.annotator == holder.annotator), None)
        if own is not None:
            location = with_session_role(location, own.login)
        return {
            SERVED_ENV["db"]: location,
            SERVED_ENV["annotator"]: holder.annotator,
            SERVED_ENV["role"]: holder.role,
            SERVED_ENV["rel_threshold"]: str(self.config.rel_threshold),
        }

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        """Run the app for the ticket's annotator while the page stays connected."""
        ticket = self.sessions.tickets.pop(request.match_info["ticket"], None)
        socket = web.WebSocketResponse(heartbeat=15)
        await socket.prepare(request)
        if ticket is None or ticket.expires < time.monotonic():
            await socket.close(code=4003, message=b"no valid ticket")
            return socket
        holder = ticket.holder
        width = _size(request.query.get("width"), 80)
        height = _size(request.query.get("height"), 24)
        service = ServedApp(
            self.config,
            await self._app_env(holder),
            write_bytes=socket.send_bytes,
            write_str=socket.send_str,
            close=socket.close,
            download_manager=self.downloads,
        )
        self.sessions.services.add(service)
        self.sessions.open[id(service)] = holder
        log(f"{holder.annotator} ({holder.role}) connected; {self._count()}")
        watcher = asyncio.create_task(self._watch_token(ticket, socket))
        try:
            await service.start(width, height)
            await self._relay(socket, service)
        finally:
            watcher.cancel()
            await service.stop()
            self.sessions.services.discard(service)
            self.sessions.open.pop(id(service), None)
            log(f"{holder.annotator} left; {self._count()}")
        return socket

    async def _relay(self, socket: web.WebSocketResponse, service: AppService) -> None:
        """The page's keys, sizes and focus to the app (textual-serve's protocol)."""
        async for message in socket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                kind, data = json.loads(message.data)
            except (ValueError, TypeError):
                continue
            if kind == "stdin" and isinstance(data, str):
                await service.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                await service.set_terminal_size(
                    _size(data.get("width"), 80), _size(data.get("height"), 24)
                )
            elif kind == "ping":
                await socket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    async def _watch_token(self, ticket: Ticket, socket: web.WebSocketResponse) -> None:
        """Close the session once its token is revoked or rotated (the app saves and quits)."""
        while True:
            await asyncio.sleep(REVOKE_POLL_S)
            try:
                holder = await asyncio.to_thread(self.store.serve_token_holder, ticket.hashed)
            except Exception:  # noqa: BLE001 - the store unreachable: keep the session
                continue
            if holder != ticket.holder:
                log(f"{ticket.holder.annotator}'s key was revoked or replaced: session closed")
                await socket.close(code=4001, message=b"key revoked")
                return

    def _count(self) -> str:
        names = sorted(h.annotator for h in self.sessions.open.values())
        return f"{len(names)} open" + (f" ({', '.join(names)})" if names else "")

    async def shutdown(self, application: web.Application) -> None:
        """Each app saves and quits before the server goes."""
        await asyncio.gather(
            *(s.stop() for s in list(self.sessions.services)), return_exceptions=True
        )


def _size(value: object, default: int) -> int:
    """A terminal size from the page: a whole number of cells, 1-1000."""
    try:
        number = int(str(value))
    except ValueError:
        return default
    return number if 1 <= number <= 1000 else default


def run_server(config: ServeConfig, store: JudgmentStore) -> int:
    """Serve until Ctrl+C or SIGTERM; 0."""
    server = JudgingServer(config, store)
    log(
        f"serving {store.title} ({config.location}) on {config.url} -- each annotator opens"
        " their own URL (workbench serve token --db STORE --annotator NAME); Ctrl+C stops"
    )
    try:
        web.run_app(
            server.app(),
            host=config.host,
            port=config.port,
            ssl_context=config.ssl,
            access_log=None,
            print=None,
            handle_signals=True,
            shutdown_timeout=5.0,
        )
    except OSError as exc:
        from workbench.core.errors import InputError

        raise InputError(
            [f"--host {config.host} --port {config.port}: cannot listen there "
             f"({exc.strerror or exc}); is another server on that port? (--port N)"]
        ) from None  # fmt: skip
    log("stopped; every grade shown as saved is in the store")
    return 0
