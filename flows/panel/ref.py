"""A panel named by a string, as a deployment's `panel` parameter names it: a path, a `file://`
or `s3://` URI, or `bundled:NAME` for a panel that ships with roadeval (`bundled:demo`).

A deployment's runs start on a worker or a serving process, not where it was registered, so a
relative path is made absolute when the deployment is made (`absolute_panel_ref`).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from urllib.parse import urlparse

from roadeval.flows.panel.file import Panel, PanelError, load_panel, panel_from_dict
from roadeval.flows.panel.reading import parse_panel

BUNDLED = "bundled:"


def bundled_names() -> list[str]:
    """The panels that ship with roadeval (`flows/panel/bundled/NAME.yaml`)."""
    folder = files("roadeval.flows.panel").joinpath("bundled")
    names = (p.name for p in folder.iterdir())
    return sorted(name.removesuffix(".yaml") for name in names if name.endswith(".yaml"))


def bundled_path(name: str) -> Path:
    if name not in bundled_names():
        raise PanelError(
            f"{BUNDLED}{name}: no such bundled panel (there are: {', '.join(bundled_names())})"
        )
    return Path(str(files("roadeval.flows.panel").joinpath(f"bundled/{name}.yaml")))


def _local_path(ref: str) -> Path | None:
    """The file a reference names on this machine (None for an S3 URI)."""
    if ref.startswith(BUNDLED):
        return bundled_path(ref.removeprefix(BUNDLED))
    if ref.startswith("s3://"):
        return None
    if ref.startswith("file://"):
        return Path(urlparse(ref).path)
    if "://" in ref:
        raise PanelError(
            f"{ref}: a panel is a path, a file:// or s3:// URI, or {BUNDLED}NAME; not this scheme"
        )
    return Path(ref).expanduser()


def absolute_panel_ref(ref: str) -> str:
    """`ref` as a worker elsewhere resolves it the same way: a local path made absolute."""
    if not ref.strip():
        raise PanelError("the panel is empty: give a path, a file:// or s3:// URI, or bundled:NAME")
    path = _local_path(ref)
    if path is None or ref.startswith(BUNDLED):
        return ref
    return str(path.resolve())


def load_panel_ref(ref: str) -> Panel:
    """The panel `ref` names, read and checked; a PanelError names the reference and field.
    An S3 panel's relative `source` paths resolve against the working directory."""
    if not ref.strip():
        raise PanelError("the panel is empty: give a path, a file:// or s3:// URI, or bundled:NAME")
    path = _local_path(ref)
    if path is not None:
        return load_panel(path)
    return _load_s3(ref)


def _load_s3(ref: str) -> Panel:
    from botocore.exceptions import BotoCoreError, ClientError

    from roadeval.storage.store import StoreError, open_store

    parent, _, name = ref.rstrip("/").rpartition("/")
    if not name or parent in ("s3:/", "s3:"):
        raise PanelError(f"{ref}: an S3 panel is s3://bucket/path/to/panel.yaml")
    try:
        raw = open_store(parent).get(name)
    except FileNotFoundError:
        raise PanelError(f"{ref}: no such panel file") from None
    except (StoreError, OSError, ValueError, BotoCoreError, ClientError) as exc:
        raise PanelError(f"{ref}: cannot read: {exc}") from None
    return panel_from_dict(parse_panel(raw, ref), source=ref, base_dir=Path.cwd())
