"""A real HTTP server on 127.0.0.1 that takes a panel's alarms as a webhook receiver would: it
keeps each POST's path and JSON body, and answers `status` (200, or an error to fail)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class WebhookReceiver:
    """Start with `start()`; `url(path)` is a webhook URL on it; `received` holds (path, body)
    per POST, in order; `stop()` when done."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.received: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{path}"

    def bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [body for _, body in self.received]

    def start(self) -> WebhookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with receiver._lock:
                    receiver.received.append((self.path, body))
                self.send_response(receiver.status)
                self.send_header("content-length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
