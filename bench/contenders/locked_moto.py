"""moto_server's app, one request at a time and with prefix listings indexed, for
bench/rerun.py's S3 store.

    python bench/contenders/locked_moto.py HOST PORT

Two things in moto 5.2 make `moto_server` unfit for a 50,000-request run, and neither is S3's:
- ListObjectsV2 walks the bucket's keys while other request threads delete keys (a claim
  released): a key gone mid-walk is a KeyError, answered 500, and a big run's retries run out.
  Here each request runs under one lock (moto holds the GIL for nearly all of a request anyway).
- A listing copies and walks every key of the bucket, whatever its prefix: a run that lists a
  prefix per request is quadratic in the store's size (hours at full size). Here each bucket's key
  names are also kept sorted, and a listing with a prefix is handed only the keys under it; moto's
  own code does the rest (delimiters, delete markers, sorting, pagination), so the answers are
  moto's.
The app is moto_server's (DomainDispatcherApplication), served by werkzeug's threaded
`run_simple` with its access log on stderr, one line per request, as `moto_server` serves it.
"""

from __future__ import annotations

import bisect
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from moto.s3 import models
from moto.s3.utils import _VersionedKeyStore
from werkzeug.serving import run_simple


def _names(store: _VersionedKeyStore) -> list[str]:
    """The store's key names, sorted (built on first use, then kept up to date)."""
    names: list[str] | None = store.__dict__.get("_sorted_names")
    if names is None:
        names = sorted(dict.keys(store))
        store.__dict__["_sorted_names"] = names
    return names


def _added(store: _VersionedKeyStore, name: str) -> None:
    names = _names(store)
    at = bisect.bisect_left(names, name)
    if at == len(names) or names[at] != name:
        names.insert(at, name)


def _removed(store: _VersionedKeyStore, name: str) -> None:
    names = _names(store)
    at = bisect.bisect_left(names, name)
    if at < len(names) and names[at] == name:
        del names[at]


def index_listings() -> None:
    """Keeps every key store's names sorted and lists a prefix from them."""
    setitem, setlist, pop = (
        _VersionedKeyStore.__setitem__,
        _VersionedKeyStore.setlist,
        _VersionedKeyStore.pop,
    )

    def set_item(self: _VersionedKeyStore, key: str, value: Any) -> Any:
        setitem(self, key, value)
        _added(self, key)

    def set_list(self: _VersionedKeyStore, key: Any, list_: Any) -> Any:
        setlist(self, key, list_)
        _added(self, key)

    def pop_key(self: _VersionedKeyStore, key: str) -> None:
        pop(self, key)
        _removed(self, key)

    def del_item(self: _VersionedKeyStore, key: str) -> None:
        dict.__delitem__(self, key)
        _removed(self, key)

    _VersionedKeyStore.__setitem__ = set_item  # type: ignore[method-assign]
    _VersionedKeyStore.setlist = set_list  # type: ignore[method-assign]
    _VersionedKeyStore.pop = pop_key  # type: ignore[method-assign]
    _VersionedKeyStore.__delitem__ = del_item  # type: ignore[method-assign,assignment]

    list_objects = models.S3Backend.list_objects

    def listed(
        self: models.S3Backend,
        bucket: Any,
        prefix: str | None,
        delimiter: str | None,
        marker: str | None,
        max_keys: int | None,
    ) -> Any:
        if not prefix or isinstance(bucket, models.FakeTableStorageBucket):
            return list_objects(self, bucket, prefix, delimiter, marker, max_keys)
        names = _names(bucket.keys)
        under: dict[str, Any] = {}
        at = bisect.bisect_left(names, prefix)
        while at < len(names) and names[at].startswith(prefix):
            under[names[at]] = bucket.keys[names[at]]  # the latest version, as moto's walk
            at += 1
        view: Any = SimpleNamespace(keys=under)  # all that moto's listing reads of a bucket
        return list_objects(self, view, prefix, delimiter, marker, max_keys)

    models.S3Backend.list_objects = listed  # type: ignore[method-assign]


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    os.environ.setdefault("MOTO_PORT", str(port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    index_listings()
    app = DomainDispatcherApplication(create_backend_app)
    app.debug = True  # type: ignore[attr-defined]  # as moto_server sets it
    lock = threading.Lock()

    def locked(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with lock:
            return list(app(environ, start_response))

    run_simple(host, port, locked, threaded=True)


if __name__ == "__main__":
    main()
