"""The one check of a store URI, wherever it comes from (`--store` on any command,
`ROADEVAL_STORE`, a panel's `store`, a caller of `open_store`), before anything opens it.

An S3 prefix is a plain path of non-empty segments: S3 takes keys literally, so a `.` or `..`
segment or a `//` would land keys under those very names (`s3://b/a/../b` under `a/../b/`), where
no reader finds them, and a `?query` or `#fragment` would be dropped by URL parsing without a word.
A bucket name follows S3's rules, so that a malformed one is one line here rather than botocore's
regular expression on the first request.
"""

from __future__ import annotations

import ipaddress
import re

from roadeval.names import describe_character, quoted, refused_character

DEFAULT_STORE = "./roadeval-data"
STORE_VARIABLE = "ROADEVAL_STORE"
S3_SCHEME = "s3://"

_BUCKET_CHARACTERS = re.compile(r"[a-z0-9.-]+")


def store_uri_problem(uri: str) -> str | None:
    """Why `uri` names no store (empty, a control character, an unknown scheme, no folder, or an
    S3 URI that `s3_uri_problem` refuses), or None."""
    if not uri.strip():
        return (
            "the store is empty: give a folder or s3://bucket/prefix (or leave it unset for "
            f"{STORE_VARIABLE}, else {DEFAULT_STORE})"
        )
    if (char := refused_character(uri)) is not None:
        return f"store URI {quoted(uri)} holds {describe_character(char)}, a control character"
    if uri.startswith(S3_SCHEME):
        return s3_uri_problem(uri)
    if "://" in uri and not uri.startswith("file://"):
        return f"store URI {quoted(uri)}: only a folder or s3://bucket/prefix is supported"
    if not uri.removeprefix("file://").strip():
        return f"store URI {quoted(uri)} names no folder"
    return None


def s3_uri_problem(uri: str) -> str | None:
    """Why `s3://bucket/prefix` cannot be a store, or None (see the module docstring); one
    trailing slash is allowed (`s3://bucket/prefix/`)."""
    rest = uri.removeprefix(S3_SCHEME)
    shown = quoted(uri)
    for mark, what in (("?", "a query string"), ("#", "a fragment")):
        if mark in rest:
            return (
                f"store URI {shown} has {what} ({mark!r}...): an S3 store is s3://bucket/prefix, "
                "a plain path"
            )
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        return f"store URI {shown} names no bucket"
    if (problem := bucket_problem(bucket)) is not None:
        return f"store URI {shown}: bucket {quoted(bucket)} {problem}"
    prefix = prefix.removesuffix("/")
    for segment in prefix.split("/") if prefix else ():
        if not segment:
            return (
                f"store URI {shown} has an empty segment ('//'): S3 would keep it literally, "
                "a prefix no other run finds"
            )
        if segment in (".", ".."):
            return (
                f"store URI {shown} has a {segment!r} segment: S3 keys are literal, so keys "
                f"would land under a folder named {segment!r}; write the prefix it means"
            )
    return None


def bucket_problem(bucket: str) -> str | None:
    """Why `bucket` is not an S3 bucket name, by S3's rules: 3 to 63 characters of lowercase
    letters, digits, dots and hyphens, beginning and ending with a letter or digit, no two dots
    in a row, not an IP address; or None."""
    if not 3 <= len(bucket) <= 63:
        return f"is {len(bucket)} characters long; a bucket name has 3 to 63"
    if not _BUCKET_CHARACTERS.fullmatch(bucket):
        return "may hold only lowercase letters, digits, dots and hyphens"
    if not (bucket[0].isalnum() and bucket[-1].isalnum()):
        return "must begin and end with a letter or a digit"
    if ".." in bucket:
        return "may not hold two dots in a row"
    try:
        ipaddress.IPv4Address(bucket)
    except ValueError:
        return None
    return "is an IP address, which S3 does not take as a bucket name"
