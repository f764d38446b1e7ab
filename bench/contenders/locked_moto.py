"""moto_server's app, one request at a time, for bench/rerun.py's S3 store.

    python bench/contenders/locked_moto.py HOST PORT

moto 5.2's ListObjectsV2 walks the bucket's keys while other request threads delete keys (a
claim released): a key gone mid-walk is a KeyError, answered 500, and a big run's retries can run
out. Here the same app (`moto_server`'s DomainDispatcherApplication, served by werkzeug's threaded
`run_simple` with its access log on stderr, one line per request) runs each request under one
lock. moto holds the GIL for nearly all of a request anyway, so little is lost.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    os.environ.setdefault("MOTO_PORT", str(port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    app = DomainDispatcherApplication(create_backend_app)
    app.debug = True  # type: ignore[attr-defined]  # as moto_server sets it
    lock = threading.Lock()

    def locked(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with lock:
            return list(app(environ, start_response))

    run_simple(host, port, locked, threaded=True)


if __name__ == "__main__":
    main()
