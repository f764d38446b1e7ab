"""What went wrong with a request: LiteLLM's exceptions mapped to ErrorKinds, and Retry-After.

LiteLLM reports most transport failures as an InternalServerError whatever happened on the wire;
the exception's cause chain (aiohttp's or httpx's own errors) says which failure it really was.
"""

from __future__ import annotations

import re

from roadeval.tasks.calls.litellm_setup import ready_litellm
from roadeval.tasks.requests.request import ErrorKind

# Transport errors, by class name in the cause chain (aiohttp, httpx, the standard library).
_NO_CONNECTION = {
    "ClientConnectorError",
    "ClientConnectorDNSError",
    "ConnectionRefusedError",
    "ConnectError",
    "ConnectTimeout",
    "gaierror",
}
_CUT_SHORT = {
    "ContentLengthError",
    "ClientPayloadError",
    "TransferEncodingError",
    "IncompleteRead",
    "JSONDecodeError",
}
_HUNG_UP = {
    "ServerDisconnectedError",
    "RemoteProtocolError",
    "ConnectionResetError",
    "ReadError",
    "ClientOSError",
}

RETRYABLE = {
    ErrorKind.RATE_LIMIT,
    ErrorKind.SERVER,
    ErrorKind.CONNECTION,
    ErrorKind.DROPPED,
    ErrorKind.TRUNCATED,
    ErrorKind.TIMEOUT,
}
# Failures that say the endpoint may be gone, as opposed to busy (429) or broken (5xx).
TRANSPORT = {ErrorKind.CONNECTION, ErrorKind.DROPPED, ErrorKind.TRUNCATED, ErrorKind.TIMEOUT}

# Statuses that refuse the caller's credentials: 401 (no or a wrong key), 403 (not allowed).
_AUTH_STATUS = {401, 403}
# How providers word a refused key when their status says something else (a 400 from Gemini's
# "API key not valid", OpenAI's code "invalid_api_key", Anthropic's "invalid x-api-key", ...).
_SEP = r"[\s_-]*"
_INVALID_KEY = re.compile(
    rf"(invalid|incorrect|wrong|revoked|expired|unknown){_SEP}(x-)?api{_SEP}key"
    rf"|api{_SEP}key{_SEP}(is{_SEP})?(not{_SEP}valid|invalid|revoked|expired)"
    rf"|no{_SEP}api{_SEP}key{_SEP}provided"
    rf"|invalid{_SEP}(authentication|auth{_SEP}token|access{_SEP}token|bearer{_SEP}token)",
    re.IGNORECASE,
)


def _chain(exc: BaseException) -> list[str]:
    names: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(names) < 20:
        names.append(type(seen).__name__)
        seen = seen.__cause__ or seen.__context__
    return names


def _transport_kind(exc: BaseException) -> str | None:
    # The innermost recognisable error is what happened; outer ones are wrappers.
    for name in reversed(_chain(exc)):
        if name in _NO_CONNECTION:
            return ErrorKind.CONNECTION
        if name in _CUT_SHORT:
            return ErrorKind.TRUNCATED
        if name in _HUNG_UP:
            return ErrorKind.DROPPED
    return None


def classify(exc: BaseException) -> str:
    """Map an exception raised by `litellm.acompletion` to an ErrorKind."""
    # Imported by whoever raised `exc`: only the setup's look-up here, no import.
    litellm = ready_litellm()
    if isinstance(exc, litellm.RateLimitError):
        return ErrorKind.RATE_LIMIT
    if isinstance(exc, litellm.Timeout):
        return ErrorKind.TIMEOUT
    # A status the server sent wins over whatever failed while its error body was read.
    if _refuses_key(exc):
        return ErrorKind.AUTH
    if isinstance(exc, litellm.BadRequestError | litellm.NotFoundError):
        return ErrorKind.BAD_REQUEST
    transport = _transport_kind(exc)
    if transport is not None:
        return transport
    if isinstance(exc, litellm.APIConnectionError):
        return ErrorKind.DROPPED
    if isinstance(
        exc, litellm.InternalServerError | litellm.ServiceUnavailableError | litellm.APIError
    ):
        status = getattr(exc, "status_code", None)
        return ErrorKind.SERVER if status is None or status >= 500 else ErrorKind.OTHER
    return ErrorKind.OTHER


def _refuses_key(exc: BaseException) -> bool:
    """Whether the provider refused the request's credentials: LiteLLM's own verdict (its
    AuthenticationError, PermissionDeniedError), a 401 or 403 under any other class, or a
    client error (not a 5xx, not the transport) in the words providers use for a bad key."""
    litellm = ready_litellm()
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return True
    status = getattr(exc, "status_code", None)
    if status in _AUTH_STATUS:
        return True
    if isinstance(status, int) and status >= 500:
        return False
    if isinstance(exc, litellm.APIConnectionError) or _transport_kind(exc) is not None:
        return False
    return _INVALID_KEY.search(str(exc)) is not None


def retry_after_s(exc: BaseException) -> float | None:
    """The server's Retry-After, in seconds, when it sent one."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
