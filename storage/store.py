"""The object store: one interface over a local folder and S3, with atomic publishes."""

from __future__ import annotations

import contextlib
import itertools
import mimetypes
import os
import tempfile
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow.fs as pafs

from roadeval.storage.listing import Entry, Listing, keys_after, list_local, list_s3
from roadeval.storage.s3_slots import S3Slots
from roadeval.storage.store_uri import (
    DEFAULT_STORE,
    S3_SCHEME,
    STORE_VARIABLE,
    store_uri_problem,
)

# A listing's types, here where the stores that make them are; the store URI's one check, here
# where `open_store` applies it.
__all__ = ["DEFAULT_STORE", "STORE_VARIABLE", "Entry", "Listing", "store_uri_problem"]


# Temporary names: this process's random tag and a count, made with O_EXCL as mkstemp makes
# them (a clash, however unlikely, takes the next count), without mkstemp's random draw per file.
_TEMP_COUNT = itertools.count()
_TEMP_TAG: tuple[int, str] = (0, "")
_EXCL = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def _temp_tag() -> str:
    global _TEMP_TAG
    pid = os.getpid()
    if _TEMP_TAG[0] != pid:  # a forked child draws its own
        _TEMP_TAG = (pid, f"{pid:x}-{uuid.uuid4().hex[:8]}")
    return _TEMP_TAG[1]


def _open_temp(folder: str) -> tuple[int, str]:
    while True:
        tmp = f"{folder}/.part-{_temp_tag()}-{next(_TEMP_COUNT)}"
        try:
            return os.open(tmp, _EXCL, 0o600), tmp
        except FileExistsError:
            continue


def write_atomic(
    target: Path | str, data: bytes, publish: Callable[[str, Path | str], None] | None = None
) -> None:
    """Write to a temporary file beside `target`, then `publish` it there (os.replace unless
    told otherwise): readers see all or nothing. The folder is made only when it is missing
    (a response cache writes thousands of files into a few hundred folders)."""
    folder = os.path.dirname(os.fspath(target))
    try:
        fd, tmp = _open_temp(folder)
    except FileNotFoundError:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = _open_temp(folder)
    published = False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        (publish or os.replace)(tmp, target)
        published = publish is None  # a rename leaves nothing behind; a link leaves the temp
    finally:
        if not published:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


class StoreError(OSError):
    """The store cannot be used (missing, unwritable, full, unreachable); the message names it."""


class ConditionalWritesUnsupported(StoreError):
    """The store's endpoint refuses `If-None-Match: *` (a create cannot fail for an existing
    key there)."""


class Store(ABC):
    """Keys are '/'-separated paths below the store's root. A put is all-or-nothing."""

    uri: str
    # Whether a caller on an event loop runs this store's operations right there: a local
    # folder's are syscalls of microseconds, cheaper than the thread hop that would move them
    # off the loop (bench/gateway_layers.py); a remote store's wait on the network, in a thread.
    runs_inline: bool = False

    @abstractmethod
    def put(self, key: str, data: bytes) -> None: ...

    @abstractmethod
    def create(self, key: str, data: bytes) -> bool:
        """Write `key` only if it does not exist yet (atomically); False when it already did."""

    @abstractmethod
    def delete(self, key: str) -> None:
        """Remove `key`; removing a key that is not there is not an error."""

    @abstractmethod
    def get(self, key: str) -> bytes:
        """The bytes under `key`; FileNotFoundError when there are none, on every backend."""

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def list(self, prefix: str) -> list[str]:
        """Keys under `prefix`, sorted."""

    @abstractmethod
    def list_entries(
        self, prefix: str, start_after: str | None = None, limit: int | None = None
    ) -> Listing:
        """Keys under `prefix` sorting after `start_after` (a key), at most `limit` of them,
        with their tags and write times."""

    def delete_many(self, keys: Iterable[str]) -> None:
        """Remove every key of `keys` (missing ones are not an error)."""
        for key in keys:
            self.delete(key)

    def executor(self) -> Executor | None:
        """Where a caller on an event loop runs this store's operations (None: the loop's
        default executor)."""
        return None

    @abstractmethod
    def arrow(self) -> tuple[pafs.FileSystem, str]:
        """A pyarrow filesystem and the root path in it, for reading Parquet in place."""

    @abstractmethod
    def probe_writable(self) -> None:
        """Raise StoreError unless a write here would succeed; leaves nothing behind."""

    @abstractmethod
    def is_present(self) -> bool:
        """Whether anything has been stored here yet (a query on nothing is a mistake)."""

    def location(self, key: str) -> str:
        return f"{self.uri.rstrip('/')}/{key}"

    def link(self, key: str, expires_s: int, content_type: str) -> str | None:
        """An http(s) address a browser can open `key` at for `expires_s` seconds, served as
        `content_type`; None where the store has none to give (a local folder)."""
        return None

    def holds_file(self, path: Path) -> bool:
        """Whether writing the local file `path` would write inside this store (a bucket's
        store holds no local file)."""
        return False

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # A store travels (to a Ray worker) as its URI, and opens there anew: clients and
        # connections do not pickle.
        return (open_store, (self.uri,))


# Temporary files of atomic writes and write probes: never keys.
_HIDDEN = (".part-", ".roadeval-probe-")


def _files_below(folder: Path, key: str) -> list[str]:
    found: list[str] = []
    for parent, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(_HIDDEN)]
        below = key + parent[len(str(folder)) :].replace(os.sep, "/")
        found.extend(f"{below}/{name}" for name in files if not name.startswith(_HIDDEN))
    return found


class LocalStore(Store):
    """A folder. Writes go to a temporary file beside the target and are renamed into place."""

    runs_inline = True

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.uri = str(self.root)

    def _path(self, key: str) -> Path:
        return self.root / key

    def put(self, key: str, data: bytes) -> None:
        write_atomic(self._path(key), data)

    def create(self, key: str, data: bytes) -> bool:
        try:
            # link() fails if the target exists, and the target appears whole: an atomic claim.
            write_atomic(self._path(key), data, publish=os.link)
        except FileExistsError:
            return False
        return True

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def get(self, key: str) -> bytes:
        # By a string path, not a Path: a plan looks up each request it may send, most of them
        # missing, and pathlib's parsing was most of a miss (about 18 us of 22).
        with open(f"{self.uri}/{key}", "rb") as handle:
            return handle.read()

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list(self, prefix: str) -> list[str]:
        # As on S3, a prefix need not end at a folder: "a/b" lists a/b/..., a/bc, a/b.1, ...
        folder, _, start = prefix.rpartition("/")
        base = self.root / folder if folder else self.root
        if not base.is_dir():
            return []
        keys: list[str] = []
        with os.scandir(base) as entries:
            for entry in entries:
                if not entry.name.startswith(start) or entry.name.startswith(_HIDDEN):
                    continue
                key = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir(follow_symlinks=False):
                    keys.extend(_files_below(Path(entry.path), key))
                elif entry.is_file():
                    keys.append(key)
        return sorted(keys)

    def list_entries(
        self, prefix: str, start_after: str | None = None, limit: int | None = None
    ) -> Listing:
        keys = (
            self.list(prefix)
            if start_after is None or not prefix.endswith("/")
            else keys_after(self.root, prefix, start_after, _HIDDEN)
        )
        return list_local(self.root, keys, start_after, limit)

    def arrow(self) -> tuple[pafs.FileSystem, str]:
        return pafs.LocalFileSystem(), str(self.root)

    def probe_writable(self) -> None:
        # The root may not exist yet: probe its nearest existing ancestor without creating it.
        existing = self.root
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            what = "the store" if existing == self.root else f"{existing}, on the store's path,"
            raise StoreError(f"store {self.uri}: {what} is a file, not a folder")
        try:
            probe = Path(tempfile.mkdtemp(dir=existing, prefix=".roadeval-probe-"))
            try:
                (probe / "probe").write_bytes(b"x" * 4096)
            finally:
                for child in probe.iterdir():
                    child.unlink()
                probe.rmdir()
        except OSError as exc:
            raise StoreError(f"store {self.uri}: cannot write there: {_reason(exc)}") from None

    def is_present(self) -> bool:
        return self.root.is_dir() and any(self.root.iterdir())

    def holds_file(self, path: Path) -> bool:
        # Where the system would write it: relative to the working directory, through every
        # symlink, `..` taken after the link it follows.
        try:
            where = path.resolve()
        except (OSError, RuntimeError):
            return False  # a symlink loop: nothing can be written there
        return where == self.root or self.root in where.parents


def _content_type(key: str) -> dict[str, str]:
    """The Content-Type a page or text object is served with (`.html`: text/html, UTF-8 as
    roadeval writes it), so that a browser opening it from the bucket (a presigned link, a
    static site) shows it rather than downloads it; nothing for other keys (S3's default)."""
    kind, _ = mimetypes.guess_type(key)
    if kind is None or not kind.startswith("text/"):
        return {}
    return {"ContentType": f"{kind}; charset=utf-8"}


class S3Store(Store):
    """`s3://bucket/prefix` through boto3; endpoint and credentials from the standard AWS env.

    The store has a concurrency: its requests in flight at once, however many threads call it.
    The client's connection pool is that size and callers beyond it wait for a slot, so no
    connection is ever opened past the pool and discarded ("Connection pool is full")."""

    def __init__(self, bucket: str, prefix: str) -> None:
        import boto3

        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.uri = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        from botocore.config import Config

        self._slots = S3Slots()
        self.concurrency = self._slots.concurrency
        # Short connect timeouts and few retries: an unreachable endpoint must fail in seconds,
        # not after botocore's default minute of backoff.
        config = Config(
            connect_timeout=3,
            read_timeout=60,
            retries={"max_attempts": 3, "mode": "standard"},
            max_pool_connections=self.concurrency,
        )
        # boto3 reads AWS_ENDPOINT_URL itself; passing it explicitly keeps older botocores working.
        self._client = boto3.client(
            "s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None, config=config
        )

    def _call(self, operation: str, **kwargs: Any) -> Any:
        """One request to S3, in one of the store's slots."""
        with self._slots:
            return getattr(self._client, operation)(Bucket=self.bucket, **kwargs)

    def executor(self) -> Executor:
        return self._slots.executor()

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def put(self, key: str, data: bytes) -> None:
        # A single PUT is atomic in S3: readers see the old object or the whole new one.
        self._call("put_object", Key=self._key(key), Body=data, **_content_type(key))

    def create(self, key: str, data: bytes) -> bool:
        from botocore.exceptions import ClientError

        try:
            # A conditional PUT (S3, MinIO and moto honour If-None-Match: *) creates or fails.
            self._call("put_object", Key=self._key(key), Body=data, IfNoneMatch="*")
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status in {409, 412}:
                return False
            if status == 501 or exc.response.get("Error", {}).get("Code") == "NotImplemented":
                raise ConditionalWritesUnsupported(
                    f"store {self.uri}: the endpoint does not take conditional writes "
                    "(If-None-Match: *)"
                ) from None
            raise
        return True

    def delete(self, key: str) -> None:
        self._call("delete_object", Key=self._key(key))

    def delete_many(self, keys: Iterable[str]) -> None:
        batch = [{"Key": self._key(key)} for key in keys]
        # DeleteObjects takes up to 1,000 keys a request.
        for start in range(0, len(batch), 1000):
            reply = self._call(
                "delete_objects", Delete={"Objects": batch[start : start + 1000], "Quiet": True}
            )
            errors = reply.get("Errors") or []
            if errors:
                first = errors[0]
                raise StoreError(
                    f"store {self.uri}: cannot delete {first.get('Key')}: "
                    f"{first.get('Message') or first.get('Code')}"
                )

    def get(self, key: str) -> bytes:
        from botocore.exceptions import ClientError

        try:
            with self._slots:
                response = self._client.get_object(Bucket=self.bucket, Key=self._key(key))
                # The body is read in the slot: its connection is in use until then.
                return bytes(response["Body"].read())
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                # The same error a missing local file gives, so callers need not know the backend.
                raise FileNotFoundError(f"{self.location(key)}: no such key") from None
            raise

    def link(self, key: str, expires_s: int, content_type: str) -> str | None:
        """A presigned GET URL (signed here, no request sent): it opens the object in a browser
        until it expires, or until the credentials that signed it do (temporary ones). Signed
        with Signature Version 4, which every region and S3-compatible server takes (botocore
        may sign with version 2 otherwise, which newer regions refuse)."""
        import boto3
        from botocore.config import Config

        signer = boto3.client(
            "s3",
            endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None,
            config=Config(signature_version="s3v4"),
        )
        url: str = signer.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": self._key(key),
                # Objects are put without a type: a browser would download, not show, the page.
                "ResponseContentType": content_type,
            },
            ExpiresIn=expires_s,
        )
        return url

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._call("head_object", Key=self._key(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise
        return True

    def list(self, prefix: str) -> list[str]:
        return sorted(entry.key for entry in self.list_entries(prefix).entries)

    def list_entries(
        self, prefix: str, start_after: str | None = None, limit: int | None = None
    ) -> Listing:
        after = None if start_after is None else self._key(start_after)
        listed = list_s3(self._call, self._key(prefix), after, limit)
        strip = len(self.prefix) + 1 if self.prefix else 0
        entries = [Entry(e.key[strip:], e.etag, e.modified) for e in listed.entries]
        return Listing(entries, listed.now, listed.truncated)

    def arrow(self) -> tuple[pafs.FileSystem, str]:
        endpoint = os.environ.get("AWS_ENDPOINT_URL")
        options: dict[str, object] = {}
        if endpoint:
            parsed = urlparse(endpoint)
            options["endpoint_override"] = parsed.netloc
            options["scheme"] = parsed.scheme or "https"
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if region:
            options["region"] = region
        root = f"{self.bucket}/{self.prefix}" if self.prefix else self.bucket
        return pafs.S3FileSystem(**options), root

    def probe_writable(self) -> None:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, ClientError

        # One quick attempt: the probe says whether the endpoint answers at all.
        config = Config(connect_timeout=3, read_timeout=10, retries={"max_attempts": 1})
        client = boto3.client(
            "s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None, config=config
        )
        key = self._key(f".roadeval-probe-{uuid.uuid4().hex}")
        try:
            client.put_object(Bucket=self.bucket, Key=key, Body=b"x")
            client.delete_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            message = exc.response.get("Error", {}).get("Message", "") or code
            raise StoreError(f"store {self.uri}: cannot write there: {message}") from None
        except BotoCoreError as exc:
            raise StoreError(f"store {self.uri}: cannot reach it: {exc}") from None

    def is_present(self) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        prefix = f"{self.prefix}/" if self.prefix else ""
        try:
            page = self._call("list_objects_v2", Prefix=prefix, MaxKeys=1)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "NoSuchBucket":
                return False
            raise StoreError(describe_store_error(self.uri, exc)) from None
        except BotoCoreError as exc:
            raise StoreError(f"store {self.uri}: cannot reach it: {exc}") from None
        return bool(page.get("Contents"))


def _reason(exc: OSError) -> str:
    """An OSError as its plain reason ("No space left on device"), without the errno noise."""
    return exc.strerror or str(exc)


def describe_store_error(uri: str, exc: BaseException) -> str:
    """One line for any failure to use the store at `uri`, naming it and the reason."""
    if isinstance(exc, StoreError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"store {uri}: {_reason(exc)}"
    return f"store {uri}: {type(exc).__name__}: {exc}"


def open_store(uri: str | None = None) -> Store:
    """`s3://bucket/prefix` or a folder path; None: `ROADEVAL_STORE`, else ./roadeval-data.

    An empty store (`--store ''`, `ROADEVAL_STORE=''`, a panel's `store: ''`) is a ValueError,
    never the default in disguise."""
    if uri is None:
        configured = os.environ.get(STORE_VARIABLE)
        if configured is not None and (problem := store_uri_problem(configured)):
            raise ValueError(f"{STORE_VARIABLE}: {problem}")
        uri = DEFAULT_STORE if configured is None else configured
    if (problem := store_uri_problem(uri)) is not None:
        raise ValueError(problem)
    if uri.startswith(S3_SCHEME):
        bucket, _, prefix = uri.removeprefix(S3_SCHEME).partition("/")
        return S3Store(bucket, prefix)
    return LocalStore(Path(uri.removeprefix("file://")))
