"""The SSRF guard on real httpx against a local page server: schemes, addresses, names,
redirects and rebinding refused; the opt-ins read from the environment; one TLS context."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpcore
import httpx
import pytest

from deep_research.config.names import ConfigError
from deep_research.config.settings import Context
from deep_research.runtime import http as http_clients
from deep_research.search import netguard
from deep_research.search.netguard import AddressPolicy, BlockedAddress
from tests.support.fakes.page_server import PageServer
from tests.support.fetching import Resolver, fetch, named
from tests.support.search import ALLOW_PAGES, PAGES_HOST


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.org/x", "gopher://example.org/", "data:,hi"]
)
async def test_non_http_schemes_are_refused(url: str) -> None:
    page = await fetch(url)
    assert page.skipped.startswith("refused: scheme") or "invalid URL" in page.skipped


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.10", "private"),
        ("100.64.0.7", "non-public"),  # CGNAT
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("fec0::1", "site-local"),
        # IPv6 forms that carry an IPv4 address are judged by the address inside.
        ("64:ff9b::7f00:1", "loopback"),  # NAT64
        ("64:ff9b::a00:5", "private"),
        ("64:ff9b:1::5db8:d822", "private"),  # local-use NAT64 is never public
        ("2002:c0a8:1::1", "private"),  # 6to4 of 192.168.0.1
        ("::7f00:1", "loopback"),  # IPv4-compatible
        ("::ffff:0:a00:1", "private"),  # IPv4-translated
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),  # Teredo, client 10.0.0.1
    ],
)
def test_address_policy_refuses_non_public_addresses(address: str, kind: str) -> None:
    with pytest.raises(BlockedAddress, match=kind):
        AddressPolicy().check_address("host", ipaddress.ip_address(address))
    AddressPolicy(allow_private=True).check_address("host", ipaddress.ip_address(address))
    for public in ("93.184.216.34", "64:ff9b::5db8:d822", "2002:5db8:d822::1"):
        AddressPolicy().check_address("host", ipaddress.ip_address(public))


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("169.254.169.254", "cloud metadata"),
        ("169.254.170.23", "cloud metadata"),  # EKS pod identity agent
        ("192.0.0.192", "cloud metadata"),  # Oracle Cloud
        ("fd00:ec2::254", "cloud metadata"),
        ("fd00:ec2::23", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("64:ff9b::a9fe:a9fe", "cloud metadata"),  # NAT64
        ("64:ff9b:1:a9fe:a9:fe00::", "cloud metadata"),  # local-use NAT64, /48 layout
        ("2002:a9fe:a9fe::1", "cloud metadata"),  # 6to4
        ("2001:0:4136:e378:8000:63bf:5601:5601", "cloud metadata"),  # Teredo client
        ("::a9fe:a9fe", "cloud metadata"),  # IPv4-compatible
    ],
)
def test_metadata_class_addresses_are_refused_even_with_private_allowed(
    address: str, kind: str
) -> None:
    for policy in (AddressPolicy(), AddressPolicy(allow_private=True)):
        with pytest.raises(BlockedAddress, match=kind):
            policy.check_address("host", ipaddress.ip_address(address))


async def test_ip_literal_to_loopback_is_refused_without_connecting(bare_pages: PageServer) -> None:
    page = await fetch(f"{bare_pages.url}/article/secret", policy=AddressPolicy())
    assert page.skipped.startswith("refused: the host resolves to 127.0.0.1, a loopback")
    assert bare_pages.requests == [], "no connection was made"


async def test_name_resolving_to_a_private_address_is_refused(resolver: Resolver) -> None:
    resolver({"intranet.test": ["10.0.0.5"], "mixed.test": ["93.184.216.34", "192.168.1.1"]})
    page = await fetch("http://intranet.test/wiki", policy=AddressPolicy())
    assert "the host resolves to 10.0.0.5, a private address" in page.skipped
    page = await fetch("https://mixed.test/", policy=AddressPolicy())
    assert "the host resolves to 192.168.1.1" in page.skipped


async def test_metadata_names_are_refused_before_any_lookup(resolver: Resolver) -> None:
    asked = resolver({})
    page = await fetch("http://metadata.google.internal/computeMetadata/v1/", AddressPolicy(True))
    assert "cloud metadata service" in page.skipped and asked == []


@pytest.mark.parametrize(
    ("target", "refusal"),
    [
        ("http://127.0.0.1:{port}/article/secret", "127.0.0.1, a loopback address"),
        ("http://169.254.169.254/latest/", "169.254.169.254, a cloud metadata address"),
    ],
)
async def test_redirect_into_private_space_is_refused(
    bare_pages: PageServer, resolver: Resolver, target: str, refusal: str
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    hop = target.format(port=bare_pages.port)
    page = await fetch(named(bare_pages, f"/redirect-to?target={hop}"))
    assert page.skipped.startswith("refused:") and refusal in page.skipped
    assert bare_pages.requests == [f"/redirect-to?target={hop}"], "the private hop was never made"


async def test_the_checked_address_is_the_one_connected_to(
    bare_pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the first answer is checked and used; no second lookup happens."""
    answers = iter([["127.0.0.1"], ["10.66.66.66"]])
    asked: list[str] = []

    async def rebinding(host: str, port: int) -> list[netguard.IPAddress]:
        asked.append(host)
        return [ipaddress.ip_address(a) for a in next(answers)]

    monkeypatch.setattr(netguard, "resolve", rebinding)
    policy = AddressPolicy(allowed_hosts=frozenset({"127.0.0.1"}))
    page = await fetch(f"http://rebind.test:{bare_pages.port}/article/x", policy=policy)
    # rebind.test exists nowhere else: a successful read proves the socket went to the
    # address the guard returned, and one lookup proves it was not asked twice.
    assert "# The truth about x" in page.text and asked == ["rebind.test"]


async def test_opt_ins_come_from_the_environment_only(
    bare_pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert AddressPolicy.from_env() == AddressPolicy()
    monkeypatch.setenv("FETCH_ALLOWED_HOSTS", " 127.0.0.1 , wiki.lan ")
    assert AddressPolicy.from_env().allowed_hosts == {"127.0.0.1", "wiki.lan"}
    assert (await fetch(f"{bare_pages.url}/article/a", AddressPolicy.from_env())).text
    monkeypatch.delenv("FETCH_ALLOWED_HOSTS")
    monkeypatch.setenv("FETCH_ALLOW_PRIVATE", "true")
    assert (await fetch(f"{bare_pages.url}/article/b", AddressPolicy.from_env())).text
    metadata = await fetch("http://169.254.169.254/latest/", AddressPolicy.from_env())
    assert "cloud metadata address" in metadata.skipped, "metadata stays refused"
    for field in ("fetch_allow_private", "fetch_allowed_hosts"):
        with pytest.raises(ConfigError, match="unknown setting"):
            Context(**{field: "true"})


def test_every_transport_shares_one_verifying_tls_context() -> None:
    first, second = netguard.GuardedTransport(ALLOW_PAGES), netguard.GuardedTransport(ALLOW_PAGES)
    contexts = {id(t._pool._ssl_context) for t in (first, second)}  # type: ignore[attr-defined]
    assert contexts == {id(http_clients.tls_context())}, "built once, not per search step"
    context = http_clients.tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def _ca_certificate(common_name: str) -> bytes:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


@pytest.fixture
def fresh_tls_context() -> Iterator[None]:
    http_clients._built_tls_context.cache_clear()
    yield
    # The next test's context reads its own environment.
    http_clients._built_tls_context.cache_clear()


@pytest.mark.usefixtures("fresh_tls_context")
def test_pages_are_verified_against_the_ca_bundle_named_by_ssl_cert_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A company's TLS-inspecting gateway: its CA is named by SSL_CERT_FILE, as for the
    # model and search clients (httpx reads it); page fetches trust the same bundle.
    bundle = tmp_path / "company-ca.pem"
    bundle.write_bytes(_ca_certificate("Company Gateway CA"))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    context = netguard.GuardedTransport(ALLOW_PAGES)._pool._ssl_context  # type: ignore[attr-defined]
    subjects = [dict(item[0] for item in ca["subject"]) for ca in context.get_ca_certs()]
    assert {"commonName": "Company Gateway CA"} in subjects
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_the_guarded_transport_raises_httpx_errors_and_lets_its_own_through() -> None:
    # Callers catch httpx's errors: httpcore's become the most specific httpx one.
    with pytest.raises(httpx.ReadTimeout, match="slow") as caught, netguard.httpx_errors():
        raise httpcore.ReadTimeout("slow")
    assert isinstance(caught.value.__cause__, httpcore.ReadTimeout)
    with pytest.raises(httpx.ConnectError), netguard.httpx_errors():
        raise httpcore.ConnectError("refused")
    with pytest.raises(netguard.BlockedAddress), netguard.httpx_errors():
        raise netguard.BlockedAddress("a loopback address")
