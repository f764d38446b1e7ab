"""The one check of a store URI (`open_store`, `store_uri_problem`): an empty store is refused
wherever it comes from, never read as the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from roadeval.storage.store import LocalStore, open_store, store_uri_problem


@pytest.mark.parametrize("uri", ["", "  ", "file://", "s3://", "s3:///x", "gs://b/x", "a\x00b"])
def test_uris_that_name_no_store_are_refused(uri: str) -> None:
    problem = store_uri_problem(uri)
    assert problem is not None
    with pytest.raises(ValueError, match="store"):
        open_store(uri)


def test_an_empty_roadeval_store_is_refused_and_an_unset_one_is_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ROADEVAL_STORE", "")
    with pytest.raises(ValueError, match=r"^ROADEVAL_STORE: the store is empty"):
        open_store()
    monkeypatch.setenv("ROADEVAL_STORE", str(tmp_path / "env"))
    assert open_store().uri == str(tmp_path / "env")
    monkeypatch.delenv("ROADEVAL_STORE")
    store = open_store()
    assert isinstance(store, LocalStore) and store.uri == str(tmp_path / "roadeval-data")
    assert open_store(f"file://{tmp_path / 'f'}").uri == str(tmp_path / "f")
