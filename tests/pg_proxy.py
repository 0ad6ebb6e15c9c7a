"""A TCP relay on 127.0.0.1 in front of the PostgreSQL server that a test can cut and restore:
to the app behind it, exactly a server that went away and came back (connections reset, then
refused), without touching the server other tests use."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading

LINGER_RESET = struct.pack("ii", 1, 0)
"""Close with a reset, as a dying server's kernel does."""


class CuttableProxy:
    def __init__(self, target: tuple[str, int]):
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._acceptor = self._start(self._listener)

    def _start(self, listener: socket.socket) -> threading.Thread:
        thread = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        thread.start()
        return thread

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Reset every connection and refuse new ones (the server is gone)."""
        with self._lock:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            self._listener.close()
            self._acceptor.join(5)
            for s in self._sockets:
                with contextlib.suppress(OSError):
                    s.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    s.close()
            self._sockets.clear()

    def restore(self) -> None:
        """Accept connections again, on the same port (the server is back)."""
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._acceptor = self._start(self._listener)

    def close(self) -> None:
        self.cut()
