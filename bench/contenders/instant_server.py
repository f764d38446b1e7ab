"""The instant model server of the gateway contenders bench, in a process of its own (so its CPU
is no contender's), recording when each request arrives.

    python bench/contenders/instant_server.py TESTS_DIR [--count-keys] [--port N] [--latency-ms MS]

Prints one line, `API_BASE CONTROL_URL`, then serves until killed. The model `instant` answers
"A" at once, or after `--latency-ms` (a remote server's round trip, as a vLLM across a network).
`GET CONTROL_URL/arrivals?after=T` answers `{"count": n, "first": t0, "last": t1, "peak": p}`:
how many requests arrived at or after the epoch time T, when the first and the last of them did
(null if none), and the most that were being answered at once (each from its arrival until its
reply, timed here), which is how the bench measures a contender's time from launch to its first
model request, its rate of calls and how many requests it kept in flight.
With `--count-keys` it also counts each distinct request (model, messages and parameters, a
sha256 of the body): `GET CONTROL_URL/keys` answers `{"sent": n, "distinct": d, "counts": {times
sent: how many requests were sent that often}}`, for the resume bench.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


class Arrivals:
    """Arrival times (epoch seconds) of every model request, in order, and the most requests
    being answered at once since a time; thread-safe."""

    def __init__(self) -> None:
        self._times: list[float] = []
        self._lock = threading.Lock()
        self._answering = 0
        # (when, the most answered at once from then on): a new entry per `since` asked.
        self._peaks: list[tuple[float, int]] = []

    def add(self, when: float) -> None:
        with self._lock:
            # Handler threads may append slightly out of order; insort keeps the list sorted.
            bisect.insort(self._times, when)
            self._answering += 1
            for n, (start, peak) in enumerate(self._peaks):
                if self._answering > peak:
                    self._peaks[n] = (start, self._answering)

    def replied(self) -> None:
        with self._lock:
            self._answering -= 1

    def watch_from(self, when: float) -> None:
        """Count the peak in flight from `when` on (a contender's launch)."""
        with self._lock:
            self._peaks.append((when, self._answering))

    def since(self, after: float) -> dict[str, Any]:
        with self._lock:
            peak = max((p for start, p in self._peaks if start <= after), default=None)
            start = bisect.bisect_left(self._times, after)
            if start == len(self._times):
                return {"count": 0, "first": None, "last": None, "peak": peak}
            count = len(self._times) - start
            first, last = self._times[start], self._times[-1]
            return {"count": count, "first": first, "last": last, "peak": peak}


class KeyCounts:
    """How often each distinct request body arrived; thread-safe."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, body: dict[str, Any]) -> None:
        seen = {k: v for k, v in body.items() if not k.startswith("_")}
        digest = hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()
        with self._lock:
            self._counts[digest] += 1

    def summary(self) -> dict[str, Any]:
        with self._lock:
            often = Counter(self._counts.values())
            return {
                "sent": sum(self._counts.values()),
                "distinct": len(self._counts),
                "counts": {str(k): v for k, v in sorted(often.items())},
            }


def control_server(arrivals: Arrivals, keys: KeyCounts | None = None) -> ThreadingHTTPServer:
    """A second tiny server for the bench's questions, apart from the model's routes."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            url = urlparse(self.path)
            if url.path == "/keys" and keys is not None:
                data = json.dumps(keys.summary()).encode()
            elif url.path == "/arrivals":
                after = float(parse_qs(url.query).get("after", ["0"])[0])
                data = json.dumps(arrivals.since(after)).encode()
            elif url.path == "/watch":
                arrivals.watch_from(float(parse_qs(url.query).get("from", ["0"])[0]))
                data = b"{}"
            else:
                self.send_error(404, f"no route {url.path}")
                return
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    sys.path.insert(0, sys.argv[1])  # the tests folder, for support.model_server
    from support.model_server import ModelServer, Reply

    arrivals = Arrivals()
    keys = KeyCounts() if "--count-keys" in sys.argv[2:] else None

    # `--port N`: a fixed port, so a store's request keys (which name the endpoint) stay valid
    # for another server process.
    options = sys.argv[2:]
    port = int(options[options.index("--port") + 1]) if "--port" in options else 0
    latency_s = (
        float(options[options.index("--latency-ms") + 1]) / 1000
        if "--latency-ms" in options
        else 0.0
    )
    server = ModelServer().start(port)

    def instant(body: dict[str, Any], hit: int) -> Reply:
        arrivals.add(time.time())
        if keys is not None:
            keys.add(body)
        # The stock server keeps every request body and counts a model's earlier ones on each
        # hit: O(n) per request, which over 20,000-item rounds would make the server the
        # bottleneck. Nothing here reads them, so they are dropped as they come.
        server.hits.clear()
        if latency_s:
            time.sleep(latency_s)
        # Counted as answered here, its reply a few microseconds away.
        arrivals.replied()
        return Reply("A")

    # Every contender names the model `instant` (`openai/instant`, `openai-api/bench/instant`).
    server.rules["instant"] = instant
    control = control_server(arrivals, keys)
    print(f"{server.api_base} http://127.0.0.1:{control.server_address[1]}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
