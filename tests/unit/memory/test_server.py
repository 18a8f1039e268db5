"""memory.server: every request to a Chroma server ends, whatever the server does."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from deep_research.memory import server
from deep_research.memory.server import BoundedTransport, ServerSilent, bounded_session
from tests.support.chroma_server import chroma_server
from tests.support.fakes.stalling_server import Mode, StallingServer

# Each case waits out a deadline of about a second against a server that never finishes.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("mode", ["silent", "trickle"])
def test_a_request_is_cut_off_at_its_deadline_at_any_byte_rate(mode: Mode) -> None:
    with StallingServer(mode) as stalling, bounded_session(1.0) as http:
        with pytest.raises(httpx.TimeoutException):
            http.get(f"http://127.0.0.1:{stalling.port}/api/v2/heartbeat")


def test_the_deadline_is_per_request_not_per_session() -> None:
    transport = BoundedTransport(1.0)
    with StallingServer("trickle") as stalling, httpx.Client(transport=transport) as http:
        for _ in range(2):  # a second request gets its own second, not what the first left
            with pytest.raises(httpx.TimeoutException):
                http.get(f"http://127.0.0.1:{stalling.port}/")
        assert stalling.connections == 2


@pytest.mark.parametrize("mode", ["silent", "trickle"])
def test_a_stalling_heartbeat_is_named_as_silence(
    mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server, "OPEN_SECONDS", 1.0)
    with StallingServer(mode) as stalling, pytest.raises(ServerSilent, match="did not answer"):
        server.check_heartbeat("127.0.0.1", stalling.port)


def test_a_real_server_is_used_through_the_bounded_session(tmp_path: Path) -> None:
    from chromadb.config import Settings

    with chroma_server(tmp_path / "data", tmp_path / "chroma.log") as port:
        client = server.bounded_client("127.0.0.1", port, Settings(anonymized_telemetry=False))
        session = client._server._session  # type: ignore[attr-defined]
        assert isinstance(session._transport, BoundedTransport)
        assert session.timeout.read == server.READ_SECONDS
        collection = client.get_or_create_collection("bounded")
        collection.add(ids=["a"], documents=["heat pumps"], embeddings=[[0.1, 0.2]])
        assert collection.get(ids=["a"])["documents"] == ["heat pumps"]
        assert "Chroma Python Client" in session.headers["User-Agent"]
