"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, answering each model by a rule.

A rule can also make the server misbehave the ways real endpoints do: slow replies, error statuses,
dropped connections, truncated bodies and bodies trickled out a few bytes at a time.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Fault(StrEnum):
    """How a reply goes wrong on the wire."""

    DROP = "drop"  # close the connection without sending anything
    TRUNCATE = "truncate"  # announce the whole body, send half of it, close
    TRICKLE = "trickle"  # send the body a few bytes at a time, `trickle_s` apart


@dataclass(frozen=True)
class Reply:
    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 10
    completion_tokens: int = 1
    fault: Fault | None = None
    trickle_s: float = 0.05
    # Per output token: (token, logprob, [(alternative, logprob), ...]), sent as OpenAI does.
    logprobs: list[tuple[str, float, list[tuple[str, float]]]] | None = None


# (request body, this model's hit number from 1) -> reply. The body carries two extra keys:
# "_path" (the request path, which tells endpoints apart) and "_headers" (lower-cased names).
Rule = Callable[[dict[str, Any], int], Reply]


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

    # socketserver's default backlog of 5 drops connections under a burst of concurrent calls,
    # which the client then retries a second later: a real server's backlog is far larger.
    request_queue_size = 256

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
    def root(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def api_base(self) -> str:
        return f"{self.root}/v1"

    def api_base_at(self, prefix: str) -> str:
        """Another endpoint on the same server (e.g. a fine-tuned model's); see `hits_for`."""
        return f"{self.root}/{prefix}/v1"

    def hits_for(self, model: str, prefix: str | None = None) -> list[dict[str, Any]]:
        """Requests for `model`; with `prefix`, only those sent to `api_base_at(prefix)`."""
        with self._lock:
            return [
                h
                for h in self.hits
                if h.get("model") == model
                and (prefix is None or h["_path"].startswith(f"/{prefix}/"))
            ]

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
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, Reply())
                    return
                body["_path"] = self.path
                body["_headers"] = {k.lower(): v for k, v in self.headers.items()}
                reply = server_ref._handle(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.fault is Fault.DROP:
                    self.close_connection = True
                    return
                if reply.status != 200:
                    error = {
                        "error": {"message": reply.text or f"status {reply.status}", "type": "test"}
                    }
                    self._send(reply.status, error, reply)
                    return
                choice: dict[str, Any] = {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
                if reply.logprobs is not None:
                    choice["logprobs"] = {
                        "content": [
                            {
                                "token": token,
                                "logprob": logprob,
                                "bytes": None,
                                "top_logprobs": [
                                    {"token": t, "logprob": lp, "bytes": None} for t, lp in top
                                ],
                            }
                            for token, logprob, top in reply.logprobs
                        ]
                    }
                payload = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [choice],
                    "usage": {
                        "prompt_tokens": reply.prompt_tokens,
                        "completion_tokens": reply.completion_tokens,
                        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                    },
                }
                self._send(200, payload, reply)

            def _send(self, status: int, payload: dict[str, Any], reply: Reply) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if reply.fault is Fault.TRUNCATE:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                elif reply.fault is Fault.TRICKLE:
                    for start in range(0, len(data), 4):
                        self.wfile.write(data[start : start + 4])
                        self.wfile.flush()
                        time.sleep(reply.trickle_s)
                else:
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
