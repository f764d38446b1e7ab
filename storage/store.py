"""The object store: one interface over a local folder and S3, with atomic publishes."""

from __future__ import annotations

import os
import tempfile
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow.fs as pafs


def write_atomic(
    target: Path, data: bytes, publish: Callable[[str, Path], None] | None = None
) -> None:
    """Write to a temporary file beside `target`, then `publish` it there (os.replace unless
    told otherwise): readers see all or nothing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        (publish or os.replace)(tmp, target)
    finally:
        # After a rename nothing is left here; after a link (or a failure) the temporary goes.
        Path(tmp).unlink(missing_ok=True)


class StoreError(OSError):
    """The store cannot be used (missing, unwritable, full, unreachable); the message names it."""


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
        return self._path(key).read_bytes()

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


class S3Store(Store):
    """`s3://bucket/prefix` through boto3; endpoint and credentials from the standard AWS env."""

    def __init__(self, bucket: str, prefix: str) -> None:
        import boto3

        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.uri = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        from botocore.config import Config

        # Short connect timeouts and few retries: an unreachable endpoint must fail in seconds,
        # not after botocore's default minute of backoff.
        config = Config(
            connect_timeout=3, read_timeout=60, retries={"max_attempts": 3, "mode": "standard"}
        )
        # boto3 reads AWS_ENDPOINT_URL itself; passing it explicitly keeps older botocores working.
        self._client = boto3.client(
            "s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None, config=config
        )

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def put(self, key: str, data: bytes) -> None:
        # A single PUT is atomic in S3: readers see the old object or the whole new one.
        self._client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)

    def create(self, key: str, data: bytes) -> bool:
        from botocore.exceptions import ClientError

        try:
            # A conditional PUT (S3, MinIO and moto honour If-None-Match: *) is the atomic claim.
            self._client.put_object(
                Bucket=self.bucket, Key=self._key(key), Body=data, IfNoneMatch="*"
            )
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status in {409, 412}:
                return False
            raise
        return True

    def delete(self, key: str) -> None:
        self._client.delete_object(Bucket=self.bucket, Key=self._key(key))

    def get(self, key: str) -> bytes:
        from botocore.exceptions import ClientError

        try:
            response = self._client.get_object(Bucket=self.bucket, Key=self._key(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                # The same error a missing local file gives, so callers need not know the backend.
                raise FileNotFoundError(f"{self.location(key)}: no such key") from None
            raise
        return response["Body"].read()

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._client.head_object(Bucket=self.bucket, Key=self._key(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise
        return True

    def list(self, prefix: str) -> list[str]:
        keys: list[str] = []
        strip = len(self.prefix) + 1 if self.prefix else 0
        paginator = self._client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=self._key(prefix)):
            keys.extend(obj["Key"][strip:] for obj in page.get("Contents", []))
        return sorted(keys)

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
            page = self._client.list_objects_v2(Bucket=self.bucket, Prefix=prefix, MaxKeys=1)
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


DEFAULT_STORE = "./roadeval-data"
STORE_VARIABLE = "ROADEVAL_STORE"


def store_uri_problem(uri: str) -> str | None:
    """Why `uri` names no store (empty, no bucket, no path, an unknown scheme), or None. The
    one check of a store URI, wherever it comes from: `--store`, `ROADEVAL_STORE`, a panel's
    `store`, a caller of `open_store`."""
    if not uri.strip():
        return (
            "the store is empty: give a folder or s3://bucket/prefix (or leave it unset for "
            f"{STORE_VARIABLE}, else {DEFAULT_STORE})"
        )
    if "\x00" in uri:
        return f"store URI {uri!r} holds a NUL character"
    if uri.startswith("s3://"):
        if not urlparse(uri).netloc:
            return f"store URI {uri!r} names no bucket"
        return None
    if "://" in uri and not uri.startswith("file://"):
        return f"store URI {uri!r}: only a folder or s3://bucket/prefix is supported"
    if not uri.removeprefix("file://").strip():
        return f"store URI {uri!r} names no folder"
    return None


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
    if uri.startswith("s3://"):
        parsed = urlparse(uri)
        return S3Store(parsed.netloc, parsed.path)
    return LocalStore(Path(uri.removeprefix("file://")))
