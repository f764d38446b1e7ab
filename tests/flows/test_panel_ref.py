"""A deployment's `panel` parameter: a path (made absolute where the deployment is made), a
file:// URI, an s3:// URI (read through the store, against moto), or a bundled panel."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml

from roadeval.flows.panel.file import PanelError
from roadeval.flows.panel.ref import absolute_panel_ref, bundled_names, load_panel_ref

PANEL = {
    "name": "ref",
    "suites": [{"name": "trip", "demo": True}],
    "models": [{"name": "always-a", "model": "roadeval/always-a"}],
}


def test_paths_and_file_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(PANEL))
    monkeypatch.chdir(tmp_path)
    assert absolute_panel_ref("p.yaml") == str(tmp_path / "p.yaml")
    assert load_panel_ref("p.yaml").name == "ref"
    assert load_panel_ref(f"file://{tmp_path / 'p.yaml'}").name == "ref"
    assert absolute_panel_ref(f"file://{tmp_path}/p.yaml") == str(tmp_path / "p.yaml")
    # S3 URIs and bundled names stay as they are: a worker elsewhere reads them the same way.
    for ref in ("s3://bucket/p.yaml", "bundled:demo"):
        assert absolute_panel_ref(ref) == ref


def test_bundled_panels() -> None:
    assert "demo" in bundled_names()
    assert load_panel_ref("bundled:demo").name == "demo"
    with pytest.raises(PanelError, match=r"bundled:nope: no such bundled panel \(there are: "):
        load_panel_ref("bundled:nope")


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("", "the panel is empty"),
        ("ftp://host/p.yaml", "ftp://host/p.yaml: a panel is a path, a file:// or s3:// URI"),
        ("missing.yaml", "missing.yaml: no such panel file"),
        ("s3://bucket", "an S3 panel is s3://bucket/path/to/panel.yaml"),
    ],
)
def test_bad_references_name_themselves(ref: str, message: str) -> None:
    with pytest.raises(PanelError, match=message.replace("(", r"\(")):
        load_panel_ref(ref)


@pytest.mark.s3
def test_a_panel_on_s3(s3_endpoint: str) -> None:
    import boto3

    bucket = f"panels-{uuid.uuid4().hex[:8]}"
    client = boto3.client("s3", endpoint_url=s3_endpoint)
    client.create_bucket(Bucket=bucket)
    client.put_object(Bucket=bucket, Key="team/nightly.yaml", Body=yaml.safe_dump(PANEL).encode())
    client.put_object(Bucket=bucket, Key="team/list.yaml", Body=b"- a\n- b\n")
    assert load_panel_ref(f"s3://{bucket}/team/nightly.yaml").name == "ref"
    with pytest.raises(PanelError, match=f"s3://{bucket}/team/other.yaml: no such panel file"):
        load_panel_ref(f"s3://{bucket}/team/other.yaml")
    with pytest.raises(PanelError, match="a panel file is a mapping"):
        load_panel_ref(f"s3://{bucket}/team/list.yaml")
