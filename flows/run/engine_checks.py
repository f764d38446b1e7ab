"""Before a run starts anything: the services it was given by address answer there.

An S3 store (its endpoint, the credentials, the bucket), a Dask scheduler or Ray cluster given by
address, and a configured Prefect API each fail here in seconds, with one line naming what and
where, before any model is called; otherwise a dead Dask address cost a run 30 s of connection
retries, and a dead Ray address the models' calls made before scoring reached for it.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from typing import Any

from roadeval.flows.panel.file import Panel
from roadeval.flows.stages.orchestration import configured_api_url
from roadeval.storage.store import LocalStore, S3Store, Store
from roadeval.tasks.render.cluster import RenderEngine
from roadeval.tasks.shard.answering_config import ANSWERING_SETTING
from roadeval.tasks.shard.remote_scoring import RAY_CLIENT_SCHEME, ScoringEngine

# How long a service may take to answer a check.
TIMEOUT_S = 3.0
PREFECT_TIMEOUT_S = 5.0


class EngineUnreachable(ValueError):
    """A service the run was given does not answer, or refuses it; the message names it."""


def check_engines(panel: Panel, store: Store) -> None:
    """Raise EngineUnreachable unless the Dask scheduler and Ray cluster given by address and
    the configured Prefect API answer (the store's S3 endpoint is `check_s3`'s)."""
    render = panel.render
    if render.engine is RenderEngine.DASK and render.address is not None:
        check_dask_scheduler(render.address, "render.address, --dask-address")
    scoring = panel.scoring
    if scoring.engine is not ScoringEngine.LOCAL and scoring.address is not None:
        address = scoring.address
        if address.startswith(RAY_CLIENT_SCHEME) and isinstance(store, LocalStore):
            raise EngineUnreachable(
                f"Ray cluster {address} (scoring.address, --ray-address): through Ray Client "
                f"the cluster cannot reach the store, a folder here ({store.uri}): use an "
                "s3:// store, or the head's host:port from a node of the cluster"
            )
        host, port = host_and_port(address.removeprefix(RAY_CLIENT_SCHEME))
        listening("Ray cluster", address, "scoring.address, --ray-address", host, port)
    check_answering_cluster(panel, store)
    url = configured_api_url()
    if url:
        check_prefect_api(url)


def check_answering_cluster(panel: Panel, store: Store) -> None:
    """Raise EngineUnreachable unless the Ray cluster answering the shards can land them: its
    nodes write the store, which a folder here is not to them, and its head listens."""
    answering = panel.answering
    if not answering.on_cluster:
        return
    address = answering.address
    assert address is not None
    if isinstance(store, LocalStore):
        raise EngineUnreachable(
            f"Ray cluster {address} ({ANSWERING_SETTING}): its nodes land the answers in the "
            f"store, and a folder on this machine ({store.uri}) is not theirs to write: use an "
            "s3:// store the nodes reach (--store s3://bucket/prefix)"
        )
    host, port = host_and_port(address.removeprefix(RAY_CLIENT_SCHEME))
    listening("Ray cluster", address, ANSWERING_SETTING, host, port)


def check_dask_scheduler(address: str, setting: str) -> None:
    """Raise EngineUnreachable unless something listens at the Dask scheduler's `address`
    (checked well-formed already), given by `setting`."""
    host, port = host_and_port(address.rpartition("://")[2])
    listening("Dask scheduler", address, setting, host, port)


def host_and_port(address: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`) split; the addresses were checked when the panel loaded."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def listening(what: str, address: str, setting: str, host: str, port: int) -> None:
    """Raise EngineUnreachable unless something accepts connections at host:port."""
    try:
        with socket.create_connection((host, port), timeout=TIMEOUT_S):
            return
    except socket.gaierror as exc:
        reason = f"unknown host {host!r} ({exc.strerror or exc})"
    except ConnectionRefusedError:
        reason = "nobody listens there (connection refused)"
    except TimeoutError:
        reason = f"no answer in {TIMEOUT_S:g} s"
    except OSError as exc:
        reason = f"cannot connect ({exc.strerror or exc})"
    raise EngineUnreachable(f"{what} {address} ({setting}): {reason}; start it or fix the address")


def check_prefect_api(url: str) -> None:
    """Raise EngineUnreachable unless the Prefect API at `url` answers its health check."""
    setting = "PREFECT_API_URL" if os.environ.get("PREFECT_API_URL") else "the Prefect profile"
    where = f"Prefect API {url} ({setting})"
    request = urllib.request.Request(f"{url.rstrip('/')}/health", headers=_prefect_auth())
    try:
        with urllib.request.urlopen(request, timeout=PREFECT_TIMEOUT_S) as response:
            body = response.read(200)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise EngineUnreachable(
                f"{where}: refused the credentials (HTTP {exc.code}): check PREFECT_API_KEY "
                "or PREFECT_API_AUTH_STRING"
            ) from None
        raise EngineUnreachable(
            f"{where}: GET /health answered HTTP {exc.code}: not a Prefect API? (the URL ends "
            "in /api, e.g. http://127.0.0.1:4200/api)"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ConnectionRefusedError):
            text = "nobody listens there (connection refused)"
        elif isinstance(reason, TimeoutError):
            text = f"no answer in {PREFECT_TIMEOUT_S:g} s"
        else:
            text = f"no answer ({getattr(reason, 'strerror', None) or reason})"
        raise EngineUnreachable(
            f"{where}: {text}; start the server (prefect server start) or unset it"
        ) from None
    if _json(body) is not True:
        raise EngineUnreachable(
            f"{where}: GET /health did not answer as a Prefect API does ({body[:60]!r}); the "
            "URL ends in /api, e.g. http://127.0.0.1:4200/api"
        )


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _prefect_auth() -> dict[str, str]:
    # The headers Prefect's own client sends: Prefect Cloud's key, or a server's auth string.
    key = os.environ.get("PREFECT_API_KEY")
    if key:
        return {"Authorization": f"Bearer {key}"}
    auth = os.environ.get("PREFECT_API_AUTH_STRING")
    if auth:
        import base64

        return {"Authorization": f"Basic {base64.b64encode(auth.encode()).decode()}"}
    return {}


# S3 error codes that mean the credentials themselves were refused.
_REFUSED_CREDENTIALS = frozenset(
    {
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "InvalidToken",
        "ExpiredToken",
        "InvalidClientTokenId",
        "AuthorizationHeaderMalformed",
    }
)


def check_s3(store: S3Store) -> None:
    """Raise EngineUnreachable unless the store's endpoint answers, takes the credentials and
    holds the bucket: one quick listing, one attempt."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    config = Config(connect_timeout=TIMEOUT_S, read_timeout=10, retries={"max_attempts": 1})
    # A session of its own: boto3's default one keeps the credentials it first read, and the
    # check is of those the environment gives now.
    client = boto3.session.Session().client(
        "s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None, config=config
    )
    endpoint = client.meta.endpoint_url
    named = " (AWS_ENDPOINT_URL)" if os.environ.get("AWS_ENDPOINT_URL") else ""
    where = f"store {store.uri} at {endpoint}{named}"
    prefix = f"{store.prefix}/" if store.prefix else ""
    try:
        client.list_objects_v2(Bucket=store.bucket, Prefix=prefix, MaxKeys=1)
    except NoCredentialsError:
        raise EngineUnreachable(
            f"{where}: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
            "AWS_PROFILE)"
        ) from None
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        said = f"{code}: {error.get('Message') or code}"
        if code in _REFUSED_CREDENTIALS:
            message = (
                f"the endpoint refused the credentials ({said}): check AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY"
            )
        elif code == "NoSuchBucket":
            message = f"no bucket {store.bucket!r} there: create it, or fix the store URI"
        elif code in ("AccessDenied", "403"):
            message = f"the credentials may not list the bucket {store.bucket!r} ({said})"
        else:
            message = f"cannot list the bucket {store.bucket!r} ({said})"
        raise EngineUnreachable(f"{where}: {message}") from None
    except BotoCoreError as exc:
        reason = getattr(exc, "kwargs", {}).get("error") or exc
        if "refused" in str(reason).lower():
            text = "nobody listens there (connection refused)"
        else:
            text = f"cannot reach the endpoint ({type(exc).__name__}: {reason})"
        raise EngineUnreachable(f"{where}: {text}") from None
