"""memory.server: every request to a Chroma server ends, whatever the server does."""

from __future__ import annotations

import ssl
import traceback
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
    with (
        StallingServer(mode) as stalling,
        bounded_session(1.0, f"http://127.0.0.1:{stalling.port}") as http,
    ):
        with pytest.raises(httpx.TimeoutException):
            http.get(f"http://127.0.0.1:{stalling.port}/api/v2/heartbeat")


def test_the_deadline_is_per_request_not_per_session() -> None:
    transport = BoundedTransport(1.0, server.tls_for("http://127.0.0.1"))
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


def test_a_plain_http_server_costs_no_read_of_the_ca_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each of our two sessions (the heartbeat's, the client's) read certifi's bundle twice,
    # 20 ms each, for a server asked over plain HTTP: four reads a store opened. (chromadb's
    # own session, which ours replaces, reads it too: not ours to change.)
    from chromadb.config import Settings

    ours: list[str] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(context: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        stack = traceback.extract_stack()
        if not any("chromadb" in f.filename for f in stack):  # its own session: not ours
            ours.extend(f.name for f in stack if f.filename == server.__file__)
        load(context, *args, **kwargs)  # type: ignore[arg-type]

    with chroma_server(tmp_path / "data", tmp_path / "chroma.log") as port:
        monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
        client = server.bounded_client("127.0.0.1", port, Settings(anonymized_telemetry=False))
        assert client.heartbeat() > 0
        monkeypatch.undo()
    assert ours == []


def test_tls_is_verified_for_an_https_server_and_refused_for_a_plain_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # httpx reads certifi's bundle, or the one these name (a directory's certificates are
    # loaded as they are needed, so none would be counted below).
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    # CHROMA_HOST may name a server over https: its sessions verify it as httpx does.
    secure = server.tls_for(server.api_url("https://chroma.example.com", 8000))
    assert secure.verify_mode == ssl.CERT_REQUIRED and secure.check_hostname
    assert secure.cert_store_stats()["x509_ca"] > 0  # the CA bundle, as httpx reads it
    # The plain server's context knows no authority: a TLS connection made with it fails.
    plain = server.tls_for(server.api_url("127.0.0.1", 8000))
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.cert_store_stats()["x509_ca"] == 0
