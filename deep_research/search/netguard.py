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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

from deep_research.context import Endpoints

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance-metadata services hand out credentials: refused even with
# FETCH_ALLOW_PRIVATE, unless a host is named in FETCH_ALLOWED_HOSTS.
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
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
ALLOWED_SCHEMES = ("http", "https")


class BlockedAddress(httpx.RequestError):
    """A URL or address that page fetching refuses; the message says which and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass(frozen=True)
class AddressPolicy:
    """Public internet only, unless the environment opts in (FETCH_ALLOW_PRIVATE/_HOSTS)."""

    allow_private: bool = False
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_env(cls) -> AddressPolicy:
        endpoints = Endpoints()
        hosts = (h.strip().lower().strip("[]") for h in endpoints.fetch_allowed_hosts.split(","))
        return cls(endpoints.fetch_allow_private, frozenset(h for h in hosts if h))

    def check_url(self, url: httpx.URL) -> None:
        """Refuse what can be refused before connecting: the scheme and well-known names."""
        if url.scheme not in ALLOWED_SCHEMES:
            raise BlockedAddress(f"scheme {url.scheme!r} is not fetched (only http and https)")
        host = url.host.lower().rstrip(".")
        if not host:
            raise BlockedAddress(f"{url} has no host")
        if host in METADATA_HOSTS and host not in self.allowed_hosts:
            raise BlockedAddress(f"{host} is a cloud metadata service")

    def check_address(self, host: str, address: IPAddress) -> None:
        """Refuse `address` (which `host` resolved to) unless it is public or opted in."""
        if host.lower().rstrip(".") in self.allowed_hosts or str(address) in self.allowed_hosts:
            return
        reason = _why_not_public(address)
        if reason is None:
            return
        if reason == "cloud metadata":
            raise BlockedAddress(f"{host} resolves to {address}, a cloud metadata address")
        if not self.allow_private:
            raise BlockedAddress(
                f"{host} resolves to {address}, a {reason} address "
                "(set FETCH_ALLOW_PRIVATE or FETCH_ALLOWED_HOSTS to allow it)"
            )


def _why_not_public(address: IPAddress) -> str | None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    for reason, test in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("private", address.is_private),
    ):
        if test:
            return reason
    # Whatever else is not globally routable: CGNAT (100.64/10), reserved, documentation.
    return None if address.is_global else "non-public"


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


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport, with its connection pool opening sockets via `GuardedBackend`."""

    def __init__(self, policy: AddressPolicy, max_connections: int = 20) -> None:
        super().__init__(trust_env=False)  # a proxy would be checked instead of the target
        # httpx has no public hook for the network backend; its pool accepts one, so the
        # pool is rebuilt with it (tests/test_netguard.py fails loudly if this stops working).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            network_backend=GuardedBackend(policy),
        )
