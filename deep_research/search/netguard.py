"""Which network addresses page fetching may reach, checked where the socket is opened.

The check runs inside the HTTP client's connection step: the host name is resolved once,
every address it resolves to is checked, and the socket is opened to a checked address.
No second lookup happens between check and connect, so DNS rebinding cannot slip a
private address in, and every redirect hop opens its connection through the same step.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

from deep_research.config.endpoints import read_endpoints
from deep_research.errors import DeepResearchError
from deep_research.runtime.http import tls_context

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance-metadata services hand out credentials: their names and addresses are
# refused even with FETCH_ALLOW_PRIVATE, unless a host is named in FETCH_ALLOWED_HOSTS.
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.internal",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
# Addresses that hand out credentials are refused even with FETCH_ALLOW_PRIVATE (only
# FETCH_ALLOWED_HOSTS naming them lets them through): the instance-metadata services of
# AWS (IPv4, IPv6 and the ECS/EKS agents), Azure, GCP and Alibaba, Oracle's 192.0.0.192,
# and every link-local address, since providers put new metadata endpoints there.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "fd00:ec2::254",
        "fd00:ec2::23",
        "100.100.100.200",
        "192.0.0.192",
    )
)
LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
# IPv6 prefixes whose low 32 bits are an IPv4 address the packet ends up at.
IPV4_IN_LOW_BITS = (
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64, well-known prefix
    ipaddress.ip_network("::ffff:0:0:0/96"),  # IPv4-translated (SIIT)
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated, still routed by some stacks)
)
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # local-use NAT64, RFC 8215
ALLOWED_SCHEMES = ("http", "https")


class BlockedAddress(DeepResearchError, httpx.RequestError):
    """A URL or address that page fetching refuses; the message says which and why.

    Messages reach the model outside the fences that mark web data, so they hold fixed
    words and IP addresses only: never a host name or scheme, which a redirect can choose.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass(frozen=True)
class AddressPolicy:
    """Public internet only, unless the environment opts in (FETCH_ALLOW_PRIVATE/_HOSTS)."""

    allow_private: bool = False
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_env(cls) -> AddressPolicy:
        endpoints = read_endpoints()
        hosts = (h.strip().lower().strip("[]") for h in endpoints.fetch_allowed_hosts.split(","))
        return cls(endpoints.fetch_allow_private, frozenset(h for h in hosts if h))

    def check_url(self, url: httpx.URL) -> None:
        """Refuse what can be refused before connecting: the scheme and well-known names."""
        if url.scheme not in ALLOWED_SCHEMES:
            raise BlockedAddress("scheme not fetched (only http and https)")
        host = url.host.lower().rstrip(".")
        if not host:
            raise BlockedAddress("the URL has no host")
        if host in METADATA_HOSTS and host not in self.allowed_hosts:
            raise BlockedAddress("the host is a cloud metadata service")

    def check_address(self, host: str, address: IPAddress) -> None:
        """Refuse `address` (which `host` resolved to) unless it is public or opted in."""
        if host.lower().rstrip(".") in self.allowed_hosts or str(address) in self.allowed_hosts:
            return
        verdict = _why_not_public(address)
        if verdict is None:
            return
        reason, always_refused = verdict
        if always_refused:
            raise BlockedAddress(f"the host resolves to {address}, a {reason} address")
        if not self.allow_private:
            raise BlockedAddress(
                f"the host resolves to {address}, a {reason} address "
                "(set FETCH_ALLOW_PRIVATE or FETCH_ALLOWED_HOSTS to allow it)"
            )


def _why_not_public(address: IPAddress) -> tuple[str, bool] | None:
    """Why `address` is not a public one, and whether no opt-in may allow it; None if public.

    An IPv6 address that carries an IPv4 address (mapped, NAT64, 6to4, Teredo, ...) reaches
    that IPv4 host, so the IPv4 addresses inside are judged too, before the wrapper.
    """
    candidates = [*embedded_ipv4(address), address]
    for candidate in candidates:
        if candidate in METADATA_ADDRESSES:
            return "cloud metadata", True
        if any(candidate in network for network in LINK_LOCAL):
            return "link-local (cloud metadata range)", True
    if address in NAT64_LOCAL:  # an operator's own translator: never the public internet
        return "private", False
    for candidate in candidates:
        reason = _plain_reason(candidate)
        if reason is not None:
            return reason, False
    return None


def _plain_reason(address: IPAddress) -> str | None:
    for reason, test in (
        ("loopback", address.is_loopback),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("site-local", isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
        ("private", address.is_private),
    ):
        if test:
            return reason
    # Whatever else is not globally routable: CGNAT (100.64/10), reserved, documentation.
    return None if address.is_global else "non-public"


def embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (where its packets really go)."""
    if isinstance(address, ipaddress.IPv4Address):
        return []
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)  # the relay server and the client behind it
    packed = address.packed
    if any(address in network for network in IPV4_IN_LOW_BITS) and int(address) > 1:
        return [ipaddress.IPv4Address(packed[12:])]  # ::1 and :: are IPv6's own, not IPv4
    if address in NAT64_LOCAL:
        # The IPv4 address sits where the operator's prefix length (48 to 96) puts it,
        # skipping bits 64-71 (RFC 6052); every placement is judged.
        layouts = (packed[6:8] + packed[9:11], packed[7:8] + packed[9:12], packed[9:13])
        return [ipaddress.IPv4Address(b) for b in (*layouts, packed[12:])]
    return []


async def resolve(host: str, port: int) -> list[IPAddress]:
    """The addresses `host` resolves to (an IP literal resolves to itself)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise httpx.ConnectError(f"cannot resolve {host}: {error.strerror}") from error
    unique = dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos)
    return list(unique)


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Opens TCP connections only to addresses the policy allows, resolving each name once."""

    def __init__(self, policy: AddressPolicy) -> None:
        self._policy = policy
        self._sockets = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await resolve(host, port)
        # Every address must pass: a name that resolves to public and private alike is refused.
        for address in addresses:
            self._policy.check_address(host, address)
        error: Exception | None = None
        for address in addresses:
            try:
                return await self._sockets.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as failed:
                error = failed
        raise error or httpx.ConnectError(f"{host} resolved to no address")

    async def sleep(self, seconds: float) -> None:
        await self._sockets.sleep(seconds)


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore pool that opens sockets via `GuardedBackend`.

    httpx's own transport has no public hook for the network backend, so this is the one
    it would be, from public parts: httpx's request and response, httpcore's pool.
    """

    def __init__(self, policy: AddressPolicy, max_connections: int = 20) -> None:
        # No proxy: a proxy would be checked instead of the target. One TLS context for the
        # process: building one reads the CA bundle (about 30 ms), and each search step
        # makes a transport.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=tls_context(),
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            network_backend=GuardedBackend(policy),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        sent = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,  # type: ignore[arg-type]  # an async byte stream
            extensions=request.extensions,
        )
        with httpx_errors():
            got = await self._pool.handle_async_request(sent)
        assert isinstance(got.stream, AsyncIterable)
        return httpx.Response(
            status_code=got.status,
            headers=got.headers,
            stream=_ResponseStream(got.stream),
            extensions=got.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _ResponseStream(httpx.AsyncByteStream):
    """httpcore's response body as httpx's, its errors as httpx's."""

    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


@contextmanager
def httpx_errors() -> Iterator[None]:
    """httpcore's errors raised inside as httpx's of the same name, the most specific one
    (as httpx's own transport does): callers catch httpx's. Anything else (`BlockedAddress`,
    an `httpx.ConnectError` from `resolve`) passes through as it is."""
    try:
        yield
    except Exception as error:
        for kind in type(error).__mro__:
            if kind.__module__.startswith("httpcore") and hasattr(httpx, kind.__name__):
                raise getattr(httpx, kind.__name__)(str(error)) from error
        raise
