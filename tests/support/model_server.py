"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, answering each model by a rule."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 10
    completion_tokens: int = 1


Rule = Callable[
    [dict[str, Any], int], Reply
]  # (request body, this model's hit number from 1) -> reply


def prompt_text(body: dict[str, Any]) -> str:
    """All text parts of the request's messages, joined."""
    chunks = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            chunks.append(content)
        elif isinstance(content, list):
            chunks.extend(p.get("text", "") for p in content if p.get("type") == "text")
    return "\n".join(chunks)


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (a timeout test) closes its socket mid-reply; that is expected."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ModelServer:
    """Start with `start()`, point LiteLLM at `api_base`, inspect `hits`; `stop()` when done."""

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}
        self.hits: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def api_base(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def hits_for(self, model: str) -> list[dict[str, Any]]:
        with self._lock:
            return [h for h in self.hits if h.get("model") == model]

    def reset(self) -> None:
        with self._lock:
            self.hits.clear()
            self.rules.clear()

    def _handle(self, body: dict[str, Any]) -> Reply:
        model = body.get("model", "")
        with self._lock:
            self.hits.append(body)
            number = sum(1 for h in self.hits if h.get("model") == model)
            rule = self.rules.get(model)
        if rule is None:
            return Reply(status=404, text=f"no rule for model {model!r}")
        return rule(body, number)

    def start(self) -> ModelServer:
        server_ref = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                reply = server_ref._handle(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    error = {
                        "error": {"message": reply.text or f"status {reply.status}", "type": "test"}
                    }
                    self._send(reply.status, error, reply.headers)
                    return
                payload = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": reply.prompt_tokens,
                        "completion_tokens": reply.completion_tokens,
                        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                    },
                }
                self._send(200, payload, reply.headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
