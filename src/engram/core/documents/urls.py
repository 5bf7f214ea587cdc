"""The rules a URL to ingest must follow, whoever fetches it (:class:`Fetcher`).

A source is a URL when it starts with ``http://`` or ``https://``; another scheme
(``file:``, ``ftp:``, ``data:`` …) is refused, so a URL never reads a local file. A URL
keeps no user name or password. Every address its host resolves to is checked, at the
first request and at each redirect (at most MAX_REDIRECTS): loopback, private,
link-local, multicast, reserved and unspecified addresses (IPv4-mapped ones too) are
refused unless the caller allows private addresses (``ENGRAM_INGEST_ALLOW_PRIVATE``).
A document fetched from a URL is named by the URL as given, normalised: scheme and host
in lower case, the default port and the fragment dropped, an empty path made ``/``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from engram.core.errors import InvalidInput

MAX_REDIRECTS = 5
MAX_URL_CHARS = 1024
SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class Fetched:
    """What a URL answered: the URL it came from at last (after redirects), the media
    type its Content-Type names (None when it names none), the body."""

    url: str
    media_type: str | None
    data: bytes


class Fetcher(Protocol):
    """Fetches a URL for ingesting (``engram.fetching.HttpFetcher`` with httpx)."""

    def fetch(self, url: str, *, max_bytes: int, allow_private: bool) -> Fetched:
        """The body of ``url`` (checked by :func:`check_url`), following at most
        MAX_REDIRECTS redirects, each checked again, every address checked by
        :func:`check_address` before it is connected to. Raises InvalidInput (a refused
        address or scheme), TooLarge (a body over ``max_bytes``, counted while it
        streams) and UpstreamFailure (no answer, a timeout, a status other than 2xx)."""
        ...


def is_url(source: str) -> bool:
    return source[:8].lower().startswith(("http://", "https://"))


def has_scheme(source: str) -> bool:
    """Whether ``source`` names a scheme (``ftp:``, ``file:`` …); a drive letter is none."""
    return _SCHEME.match(source) is not None


def check_url(url: str) -> str:
    """``url`` normalised, or InvalidInput: not http(s), no host, a user name or password,
    a bad port, over MAX_URL_CHARS characters."""
    if len(url) > MAX_URL_CHARS:
        raise InvalidInput(f"the URL is over {MAX_URL_CHARS} characters")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise InvalidInput(f"{url!r} is not a valid URL: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise InvalidInput(f"only http and https URLs are fetched, got {scheme or url!r}:")
    if not parts.hostname:
        raise InvalidInput(f"the URL {url!r} names no host")
    if parts.username is not None or parts.password is not None:
        raise InvalidInput("a URL to ingest must not carry a user name or password")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    return urlunsplit((scheme, host, parts.path or "/", parts.query, ""))


def check_address(host: str, address: Address, allow_private: bool) -> None:
    """InvalidInput when ``address`` (one of ``host``'s) is not a public one and private
    addresses are not allowed."""
    if allow_private:
        return
    kind = refused(address)
    if kind is not None:
        raise InvalidInput(
            f"{host} resolves to {address}, a {kind} address: not fetched",
            hint="set ENGRAM_INGEST_ALLOW_PRIVATE=true to fetch from private networks",
        )


def refused(address: Address) -> str | None:
    """What kind of non-public address this is, or None for a public one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    for kind in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    if not address.is_global:
        return "non-global"
    return None
