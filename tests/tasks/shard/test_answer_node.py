"""What a node of an answering cluster is checked for before the run's first call (it writes
the store, it hears the run's authority), and what a shard carries to it (every image's bytes:
the node has none of the run's files)."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime
from pathlib import Path

import pytest

from roadeval.benchmarks.messages import ImageRef, user_message
from roadeval.tasks.calls.authority import AuthorityAddress, AuthorityLink, AuthorityServer
from roadeval.tasks.calls.gateway import run_on_gateway
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.shard.answer_node import NodeContext, NodeUnfit, probe_node, shard_message

from support.clusters import free_port


def _context(store: str, authority: AuthorityAddress) -> NodeContext:
    return NodeContext(authority, store, {}, (), "run-1", datetime.now(UTC), False)


def test_a_node_that_hears_the_authority_and_writes_the_store_passes(tmp_path: Path) -> None:
    stop = StopSignal()
    server = AuthorityServer({}, stop)
    address = run_on_gateway(server.start())
    link = AuthorityLink(address, StopSignal(), node="n1")
    try:
        assert probe_node("n1", _context(str(tmp_path / "store"), address), link) == "n1"
    finally:
        run_on_gateway(link.close())
        run_on_gateway(server.close())


def test_a_node_that_cannot_reach_the_authority_is_named_with_where_it_looked(
    tmp_path: Path,
) -> None:
    port = free_port()
    address = AuthorityAddress("127.0.0.1", port, "token")
    link = AuthorityLink(address, StopSignal(), node="n1")
    with pytest.raises(
        NodeUnfit,
        match=rf"node n1 \(.*\) cannot reach the run's authority at "
        rf"127.0.0.1:{port}: .*refused",
    ):
        probe_node("n1", _context(str(tmp_path / "store"), address), link)


def test_a_node_with_a_wrong_token_is_refused_by_the_authority(tmp_path: Path) -> None:
    server = AuthorityServer({}, StopSignal())
    address = run_on_gateway(server.start())
    wrong = AuthorityAddress(address.host, address.port, "not-the-runs")
    link = AuthorityLink(wrong, StopSignal(), node="n1")
    try:
        with pytest.raises(NodeUnfit, match="the run's token was refused"):
            probe_node("n1", _context(str(tmp_path / "store"), wrong), link)
    finally:
        run_on_gateway(server.close())


def test_a_node_that_cannot_write_the_store_is_named_with_the_store(tmp_path: Path) -> None:
    server = AuthorityServer({}, StopSignal())
    address = run_on_gateway(server.start())
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    link = AuthorityLink(address, StopSignal(), node="n1")
    try:
        with pytest.raises(NodeUnfit, match=rf"node n1 \(.*\) cannot write the store {blocked}"):
            probe_node("n1", _context(str(blocked / "store"), address), link)
    finally:
        run_on_gateway(server.close())


def test_a_shard_carries_the_bytes_of_every_image_it_shows(tmp_path: Path) -> None:
    picture = tmp_path / "frame.png"
    picture.write_bytes(b"\x89PNG not really")
    image = ImageRef(str(picture), "abc")
    message = shard_message([user_message("what is shown?", [image])])
    picture.unlink()  # as on a node: the file is not there
    [sent] = pickle.loads(message)
    [shown] = [part["image_url"]["url"] for part in sent["content"] if part["type"] == "image_url"]
    assert shown == image and shown.read_bytes() == b"\x89PNG not really"
