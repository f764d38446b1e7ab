"""The object store: one interface over a local folder and S3, with atomic publishes."""

from __future__ import annotations

import os
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.fs as pafs


def write_atomic(target: Path, data: bytes) -> None:
    """Write to a temporary file beside `target`, then rename: readers see all or nothing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Store(ABC):
    """Keys are '/'-separated paths below the store's root. A put is all-or-nothing."""

    uri: str

    @abstractmethod
    def put(self, key: str, data: bytes) -> None: ...

    @abstractmethod
    def get(self, key: str) -> bytes: ...

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def list(self, prefix: str) -> list[str]:
        """Keys under `prefix`, sorted."""

    @abstractmethod
    def arrow(self) -> tuple[pafs.FileSystem, str]:
        """A pyarrow filesystem and the root path in it, for reading Parquet in place."""

    def location(self, key: str) -> str:
        return f"{self.uri.rstrip('/')}/{key}"


class LocalStore(Store):
    """A folder. Writes go to a temporary file beside the target and are renamed into place."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.uri = str(self.root)

    def _path(self, key: str) -> Path:
        return self.root / key

    def put(self, key: str, data: bytes) -> None:
        write_atomic(self._path(key), data)

    def get(self, key: str) -> bytes:
        return self._path(key).read_bytes()

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list(self, prefix: str) -> list[str]:
        base = self._path(prefix)
        if not base.exists():
            return []
        return sorted(
            str(path.relative_to(self.root))
            for path in base.rglob("*")
            if path.is_file() and not path.name.startswith(".part-")
        )

    def arrow(self) -> tuple[pafs.FileSystem, str]:
        return pafs.LocalFileSystem(), str(self.root)


class S3Store(Store):
    """`s3://bucket/prefix` through boto3; endpoint and credentials from the standard AWS env."""

    def __init__(self, bucket: str, prefix: str) -> None:
        import boto3

        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.uri = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        # boto3 reads AWS_ENDPOINT_URL itself; passing it explicitly keeps older botocores working.
        self._client = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def put(self, key: str, data: bytes) -> None:
        # A single PUT is atomic in S3: readers see the old object or the whole new one.
        self._client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)

    def get(self, key: str) -> bytes:
        return self._client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()

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


DEFAULT_STORE = "./roadeval-data"


def open_store(uri: str | None = None) -> Store:
    """`s3://bucket/prefix` or a folder path; default `ROADEVAL_STORE`, else ./roadeval-data."""
    uri = uri or os.environ.get("ROADEVAL_STORE") or DEFAULT_STORE
    if uri.startswith("s3://"):
        parsed = urlparse(uri)
        if not parsed.netloc:
            raise ValueError(f"store URI {uri!r} names no bucket")
        return S3Store(parsed.netloc, parsed.path)
    if "://" in uri and not uri.startswith("file://"):
        raise ValueError(f"store URI {uri!r}: only a folder or s3://bucket/prefix is supported")
    return LocalStore(Path(uri.removeprefix("file://")))
