"""Fetching a URL to ingest with httpx, behind the guard of :mod:`engram.core.documents.urls`.

Each hop (the first request and each of at most five redirects) resolves its host once,
checks every address, and connects to the first of them: the request goes to that
address, with the host name in the ``Host`` header and, for https, as the TLS server
name (so the certificate is checked against the name). A second resolution that could
answer differently (DNS rebinding) is never made. Proxies from the environment are not
used, since a proxy would connect to addresses of its own choosing. The body streams,
and is refused as soon as it passes ``max_bytes`` (decompressed bytes count), or when
the whole fetch outlasts ``deadline`` seconds.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from engram.core.documents import urls
from engram.core.errors import InvalidInput, TooLarge, UpstreamFailure

if TYPE_CHECKING:  # imported when a URL is fetched: a command that fetches none is quicker
    import httpx

Resolver = Callable[[str, int], list[urls.Address]]
USER_AGENT = "engram-ingest"


def resolve(host: str, port: int) -> list[urls.Address]:
    """Every address ``host`` has (an address itself: that one); UpstreamFailure when
    the name does not resolve."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UpstreamFailure(f"{host} does not resolve") from exc
    found = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    return list(dict.fromkeys(found))


class HttpFetcher:
    """:class:`engram.core.documents.urls.Fetcher` over httpx. ``trusted`` networks
    (e.g. ``"10.1.2.0/24"``) are fetched from even when private addresses are not
    allowed; ``timeout`` bounds each connect and read, ``deadline`` the whole fetch;
    ``verify`` is the TLS context that checks certificates (default: the system's);
    ``resolver`` gives a host's addresses (default: the system's)."""

    def __init__(
        self,
        *,
        timeout: float = 10.0,
        deadline: float = 120.0,
        trusted: Sequence[str] = (),
        verify: ssl.SSLContext | bool = True,
        resolver: Resolver = resolve,
    ) -> None:
        self._timeout, self._deadline, self._resolve = timeout, deadline, resolver
        self._verify = verify
        self._trusted = tuple(ipaddress.ip_network(n) for n in trusted)

    def fetch(self, url: str, *, max_bytes: int, allow_private: bool) -> urls.Fetched:
        import httpx

        current = urls.check_url(url)
        ends = time.monotonic() + self._deadline
        for _ in range(urls.MAX_REDIRECTS + 1):
            # A client per hop: a connection made for one host name is never reused for
            # another that has the same address.
            with httpx.Client(
                trust_env=False, timeout=self._timeout, verify=self._verify
            ) as client:
                request = self._request(client, current, allow_private)
                try:
                    response = client.send(request, stream=True)
                except httpx.HTTPError as exc:
                    raise UpstreamFailure(f"fetching {current} failed: {_why(exc)}") from exc
                try:
                    if response.is_redirect and "location" in response.headers:
                        current = urls.check_url(urljoin(current, response.headers["location"]))
                        continue
                    if not response.is_success:
                        raise UpstreamFailure(f"{current} answered {response.status_code}")
                    data = _body(response, current, max_bytes, ends)
                finally:
                    response.close()
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            return urls.Fetched(current, kind or None, data)
        raise UpstreamFailure(f"{url} redirects more than {urls.MAX_REDIRECTS} times")

    def _request(self, client: httpx.Client, url: str, allow_private: bool) -> httpx.Request:
        import httpx

        try:
            target = httpx.URL(url)
        except httpx.InvalidURL as exc:  # what the core's check lets by and httpx refuses
            raise InvalidInput(f"{url[:200]!r} cannot be fetched: {exc}") from exc
        host = target.host
        port = target.port or (443 if target.scheme == "https" else 80)
        addresses = self._resolve(host, port)
        if not addresses:
            raise UpstreamFailure(f"{host} does not resolve")
        for address in addresses:
            if not any(address in network for network in self._trusted):
                urls.check_address(host, address, allow_private)
        extensions = {"sni_hostname": host} if target.scheme == "https" else {}
        return client.build_request(
            "GET",
            target.copy_with(host=str(addresses[0])),
            headers={"Host": target.netloc.decode("ascii"), "User-Agent": USER_AGENT},
            extensions=extensions,
        )


def _body(response: httpx.Response, url: str, max_bytes: int, ends: float) -> bytes:
    import httpx

    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise TooLarge(f"{url} is {declared} bytes; the limit is max_bytes={max_bytes}")
    parts, held = [], 0
    try:
        for part in response.iter_bytes():
            held += len(part)
            if held > max_bytes:
                raise TooLarge(f"{url} is over max_bytes={max_bytes} bytes")
            if time.monotonic() > ends:
                raise UpstreamFailure(f"fetching {url} took too long")
            parts.append(part)
    except httpx.HTTPError as exc:
        raise UpstreamFailure(f"fetching {url} failed: {_why(exc)}") from exc
    return b"".join(parts)


def _why(exc: httpx.HTTPError) -> str:
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return "its TLS certificate was refused"
        return "could not connect"
    return type(exc).__name__
