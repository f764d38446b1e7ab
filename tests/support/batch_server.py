"""A real OpenAI-style files + batches server on 127.0.0.1 for tests of `mode: batch`.

It implements what LiteLLM's batch API calls: `POST /v1/files` (multipart, purpose=batch),
`GET /v1/files/{id}`, `GET /v1/files/{id}/content`, `POST /v1/batches`, `GET /v1/batches` (newest
first, `limit` and `after` as OpenAI pages them), `GET /v1/batches/{id}` and
`POST /v1/batches/{id}/cancel`. `lose_create_replies = n` makes the next n creates make their
batch and then drop the connection unanswered (a reply lost on the way: the client cannot tell);
`pair_uploads_s = s` holds the first upload until a second one arrives (at most s seconds).
A batch stays `in_progress` until the test releases it (or for a set number of polls), then
answers each line by the model's rule (model_server's Reply and Rule) into an output file, and
the failed lines into an error file. It counts what it was asked.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from support.model_server import Reply, Rule


@dataclass
class Batch:
    """One batch as the server holds it; `final` forces how it ends (failed, expired, ...)."""

    id: str
    input_file_id: str
    endpoint: str
    created_at: int
    metadata: dict[str, Any] | None
    status: str = "in_progress"
    polls: int = 0
    released: bool = False
    final: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: {"total": 0, "completed": 0, "failed": 0}
    )


class BatchServer:
    """Start with `start()`, point LiteLLM at `api_base`; `release()` finishes pending batches."""

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}
        # Polls a batch stays in progress for before it finishes by itself; None: until released.
        self.polls_until_done: int | None = None
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.batches: dict[str, Batch] = {}
        self.files_created = 0
        self.batches_created = 0
        self.polls = 0
        self.lists = 0
        self.content_reads = 0
        self.lose_create_replies = 0
        # Set: the first file upload is held until a second arrives (or this many seconds
        # pass), so that two runs are surely submitting at the same time.
        self.pair_uploads_s: float | None = None
        self._second_upload = threading.Event()
        self._uploads_arrived = 0
        self.lines_seen: list[dict[str, Any]] = []
        self.auth_seen: list[str | None] = []
        self._ids = itertools.count(1)
        self._hits: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def api_base(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests_made(self) -> int:
        """Every files or batches request the server has seen."""
        with self._lock:
            return self.files_created + self.batches_created + self.polls + self.content_reads

    def pending(self) -> list[str]:
        with self._lock:
            return [b.id for b in self.batches.values() if b.status == "in_progress"]

    def release(self, final: str | None = None) -> None:
        """Let every pending batch finish at its next poll (`final`: end it that way instead)."""
        with self._lock:
            for batch in self.batches.values():
                if batch.status == "in_progress":
                    batch.released = True
                    batch.final = final

    def _pair_upload(self) -> None:
        if self.pair_uploads_s is None:
            return
        with self._lock:
            self._uploads_arrived += 1
            first = self._uploads_arrived == 1
        if first:
            self._second_upload.wait(self.pair_uploads_s)
        else:
            self._second_upload.set()

    def submitted_keys(self) -> list[str]:
        """The request key (custom_id) of every line of every batch created, in order."""
        with self._lock:
            keys = []
            for batch in self.batches.values():
                data = self.files[batch.input_file_id][1]
                keys.extend(
                    json.loads(raw)["custom_id"]
                    for raw in data.decode().splitlines()
                    if raw.strip()
                )
            return keys

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def _add_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = self._new_id("file")
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self.files[file_id] = (meta, data)
        return meta

    def _finish(self, batch: Batch) -> None:
        """(Under the lock.) Answer every line of the batch's input file by its model's rule."""
        if batch.final is not None:
            batch.status = batch.final
            return
        _, data = self.files[batch.input_file_id]
        out: list[str] = []
        errors: list[str] = []
        for raw in data.decode().splitlines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            self.lines_seen.append(line)
            body = line["body"]
            model = body.get("model", "")
            self._hits[model] = self._hits.get(model, 0) + 1
            rule = self.rules.get(model)
            reply = rule(body, self._hits[model]) if rule else Reply(f"no rule for {model}", 404)
            batch.counts["total"] += 1
            request_id = self._new_id("req")
            if reply.status != 200:
                batch.counts["failed"] += 1
                error = {"error": {"message": reply.text or f"status {reply.status}"}}
                response = {"status_code": reply.status, "request_id": request_id, "body": error}
                errors.append(json.dumps(_line(line["custom_id"], response)))
                continue
            batch.counts["completed"] += 1
            response = {
                "status_code": 200,
                "request_id": request_id,
                "body": _completion(body, reply),
            }
            out.append(json.dumps(_line(line["custom_id"], response)))
        if out:
            batch.output_file_id = self._add_file(
                ("\n".join(out) + "\n").encode(), f"{batch.id}_output.jsonl", "batch_output"
            )["id"]
        if errors:
            batch.error_file_id = self._add_file(
                ("\n".join(errors) + "\n").encode(), f"{batch.id}_error.jsonl", "batch_output"
            )["id"]
        batch.status = "completed"

    def _batch_json(self, batch: Batch) -> dict[str, Any]:
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "created_at": batch.created_at,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "metadata": batch.metadata,
            "request_counts": batch.counts,
        }

    def _list(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """A page of batches, newest first, as OpenAI's list answers."""
        limit = int(query.get("limit", ["20"])[0])
        after = query.get("after", [None])[0]
        with self._lock:
            self.lists += 1
            newest_first = list(reversed(self.batches.values()))
            if after is not None:
                ids = [b.id for b in newest_first]
                newest_first = newest_first[ids.index(after) + 1 :] if after in ids else []
            page = [self._batch_json(b) for b in newest_first[:limit]]
            has_more = len(newest_first) > limit
        return {
            "object": "list",
            "data": page,
            "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None,
            "has_more": has_more,
        }

    def _retrieve(self, batch_id: str) -> dict[str, Any] | None:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return None
            self.polls += 1
            batch.polls += 1
            done_by_polls = (
                self.polls_until_done is not None and batch.polls > self.polls_until_done
            )
            if batch.status == "in_progress" and (batch.released or done_by_polls):
                self._finish(batch)
            return self._batch_json(batch)

    def start(self) -> BatchServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("content-length", "0")))

            def _json(self, status: int, payload: Any) -> None:
                self._bytes(status, json.dumps(payload).encode(), "application/json")

            def _bytes(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _missing(self) -> None:
                self._json(404, {"error": {"message": f"no such object: {self.path}"}})

            def do_POST(self) -> None:
                body = self._body()
                with owner._lock:
                    owner.auth_seen.append(self.headers.get("authorization"))
                parts = self.path.rstrip("/").split("/")
                if self.path.rstrip("/") == "/v1/files":
                    owner._pair_upload()
                    fields = _multipart(self.headers.get("content-type", ""), body)
                    with owner._lock:
                        owner.files_created += 1
                        meta = owner._add_file(
                            fields["file"][1],
                            fields["file"][0] or "input.jsonl",
                            fields["purpose"][1].decode(),
                        )
                    self._json(200, meta)
                elif self.path.rstrip("/") == "/v1/batches":
                    request = json.loads(body)
                    with owner._lock:
                        if request["input_file_id"] not in owner.files:
                            self._json(400, {"error": {"message": "no such input file"}})
                            return
                        owner.batches_created += 1
                        batch = Batch(
                            owner._new_id("batch"),
                            request["input_file_id"],
                            request["endpoint"],
                            int(time.time()),
                            request.get("metadata"),
                        )
                        owner.batches[batch.id] = batch
                        payload = owner._batch_json(batch)
                        lose = owner.lose_create_replies > 0
                        owner.lose_create_replies -= int(lose)
                    if lose:
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    self._json(200, payload)
                elif len(parts) == 5 and parts[2] == "batches" and parts[4] == "cancel":
                    with owner._lock:
                        found = owner.batches.get(parts[3])
                        if found is not None:
                            found.status = "cancelled"
                        payload = owner._batch_json(found) if found else None
                    self._json(200, payload) if payload else self._missing()
                else:
                    self._missing()

            def do_GET(self) -> None:
                url = urlparse(self.path)
                parts = url.path.rstrip("/").split("/")
                if url.path.rstrip("/") == "/v1/batches":
                    self._json(200, owner._list(parse_qs(url.query)))
                elif len(parts) == 4 and parts[2] == "batches":
                    payload = owner._retrieve(parts[3])
                    self._json(200, payload) if payload else self._missing()
                elif len(parts) in (4, 5) and parts[2] == "files":
                    with owner._lock:
                        found = owner.files.get(parts[3])
                        if found is not None and len(parts) == 5:
                            owner.content_reads += 1
                    if found is None:
                        self._missing()
                    elif len(parts) == 5 and parts[4] == "content":
                        self._bytes(200, found[1], "application/octet-stream")
                    else:
                        self._json(200, found[0])
                else:
                    self._missing()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def _line(custom_id: str, response: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"line-{custom_id[:8]}",
        "custom_id": custom_id,
        "response": response,
        "error": None,
    }


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """A chat completion as OpenAI's batch output holds it."""
    return {
        "id": "chatcmpl-batch",
        "object": "chat.completion",
        "created": int(time.time()),
        **reply.served_by(body),
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


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a multipart/form-data body: name -> (filename, bytes)."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        fields[str(name)] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return fields
