"""The rules a URL to ingest must follow, whoever fetches it (:class:`Fetcher`).

A source is a URL when it starts with ``http://`` or ``https://``; another scheme
(``file:``, ``ftp:``, ``data:`` …) is refused, so a URL never reads a local file. A URL
keeps no user name or password. Every address its host resolves to is checked, at the
first request and at each redirect (at most MAX_REDIRECTS): loopback, private,
link-local, multicast, reserved and unspecified addresses are refused unless the caller
allows private addresses (``ENGRAM_INGEST_ALLOW_PRIVATE``), and so is an IPv6 address
that carries such an IPv4 one (IPv4-mapped, NAT64's 64:ff9b::/96, 6to4's 2002::/16,
Teredo's 2001::/32 client): it reaches that IPv4 host. A host that ends in a number is
an IPv4 address and must be written as one, four decimal numbers in ASCII digits without
leading zeros: ``0177.0.0.1``, ``127.1``, ``0x7f.0.0.1`` or ``１２７.0.0.1`` mean 127.0.0.1
to some resolvers and are refused.
A document fetched from a URL is named by the URL as given, normalised: scheme and host
in lower case, the default port and the fragment dropped, an empty path made ``/``.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from engram.core.errors import InvalidInput

MAX_REDIRECTS = 5
MAX_URL_CHARS = 1024
SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")
_HEX = re.compile(r"0[xX][0-9A-Fa-f]*")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix


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
    _check_number(host)
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
        carried = embedded(address)
        inner = refused(carried[1]) if carried is not None else None
        what = f"a {kind} address"
        if carried is not None and inner is not None:
            what = f"which carries {carried[1]} ({carried[0]}), {what}"
        raise InvalidInput(
            f"{host} resolves to {address}, {what}: not fetched",
            hint="set ENGRAM_INGEST_ALLOW_PRIVATE=true to fetch from private networks",
        )


def refused(address: Address) -> str | None:
    """What kind of non-public address this is, or None for a public one. An IPv6
    address that carries an IPv4 one (:func:`embedded`) is that IPv4 address's kind when
    that is not public; an IPv4-mapped one is its IPv4 address."""
    carried = embedded(address)
    if carried is not None:
        how, inner = carried
        kind = _kind(inner)
        if kind is not None or how == "IPv4-mapped":
            return kind
    return _kind(address)


def embedded(address: Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 one carries, and how (``IPv4-mapped``, ``NAT64``,
    ``6to4``, ``Teredo``: its client's address, where packets go), or None."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address in NAT64:
        return "NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address.teredo is not None:
        return "Teredo", address.teredo[1]
    return None


def _kind(address: Address) -> str | None:
    for kind in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    if not address.is_global:
        return "non-global"
    return None


def _check_number(host: str) -> None:
    """InvalidInput for a host that ends in a number (so is an IPv4 address, to a URL
    parser) unless it is written as one: four decimal numbers, ASCII digits, no leading
    zeros. Read after NFKC, as IDNA reads a name, so other digits count as numbers."""
    if ":" in host:  # an IPv6 address, which urlsplit checked
        return
    name = unicodedata.normalize("NFKC", host)
    last = name.removesuffix(".").rsplit(".", 1)[-1]
    if not (last.isdigit() or _HEX.fullmatch(last)):
        return
    try:
        if str(ipaddress.IPv4Address(host)) == host:
            return
    except ValueError:
        pass
    raise InvalidInput(
        f"the URL's host {host[:80]!r} is not an IPv4 address as four decimal numbers "
        "(0-255, ASCII digits, no leading zeros), nor a host name",
        hint="write the address as 127.0.0.1 is written, or name the host",
    )
