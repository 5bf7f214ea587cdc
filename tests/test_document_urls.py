"""Ingesting a URL against a real HTTP server on loopback: refused by default (loopback is
private) without a request made, fetched when private addresses are allowed, every
redirect checked again, the size limit held while the body streams, a failed fetch a 502
that stores nothing, schemes other than http(s) refused, and the CLI reading
ENGRAM_INGEST_ALLOW_PRIVATE."""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import engram
from engram import HttpFetcher, InvalidInput, ResourceRef, TooLarge, UpstreamFailure
from engram.cli.main import main
from engram.core.documents import urls
from engram.core.documents.urls import check_url, refused
from stores import rows
from web_server import Served, certificate, serving

REF = ResourceRef("reader")


@pytest.fixture(scope="module")
def web() -> Iterator[Served]:
    with serving() as served:
        yield served


@pytest.fixture
def mem(db_path: Path) -> Iterator[engram.Memory]:
    # Loopback trusted as if it were a public host, so that redirects onwards are what
    # the guard decides on.
    fetcher = HttpFetcher(trusted=["127.0.0.1/32"], timeout=5)
    with engram.open(db_path, embedder=engram.HashingEmbedder(32), fetcher=fetcher) as memory:
        yield memory


def nothing_stored(db_path: Path) -> bool:
    return rows(db_path, "SELECT count(*) FROM documents") == [(0,)] and rows(
        db_path, "SELECT count(*) FROM facts"
    ) == [(0,)]


def test_loopback_is_refused_by_default_and_never_asked(web: Served, db_path: Path) -> None:
    before = len(web.paths)
    with engram.open(db_path, embedder=engram.HashingEmbedder(32)) as mem:
        with pytest.raises(InvalidInput, match="loopback"):
            mem.ingest(REF, f"{web.base}/tides.html")
        report = mem.ingest(REF, f"{web.base.upper()}/tides.html#top", allow_private=True)
    assert len(web.paths) == before + 1  # only the allowed fetch reached the server
    (one,) = report.reports
    assert one.status == "created" and one.source == f"{web.base}/tides.html"


def test_a_page_is_fetched_as_html_and_a_pdf_by_sniffing(mem: engram.Memory, web: Served) -> None:
    page = mem.ingest(REF, f"{web.base}/moved").reports[0]
    chart = mem.ingest(REF, f"{web.base}/chart").reports[0]
    docs = {d.source: d for d in mem.documents(REF)}
    assert docs[page.source].media_type == "text/html" and page.source.endswith("/moved")
    assert docs[chart.source].media_type == "application/pdf" and chart.chunks == 2
    words = [
        mem.fact(REF, c.fact_id).content
        for c in mem.document(REF, page.document_id or "").chunks
        if c.fact_id
    ]
    assert any("Spring tides" in w for w in words)
    assert not any("gift shop" in w or "Copyright" in w for w in words)
    again = mem.ingest(REF, f"{web.base}/chart", dry_run=True).reports[0]
    assert again.status == "unchanged"


@pytest.mark.parametrize(
    ("path", "error", "match"),
    [
        ("/to-metadata", InvalidInput, "169.254.169.254, a link-local address"),
        ("/to-ipv6-loopback", InvalidInput, "::1, a loopback address"),
        ("/to-file", InvalidInput, "only http and https"),
        ("/to-6to4-loopback", InvalidInput, r"carries 127\.0\.0\.1 \(6to4\), a loopback"),
        ("/loop", UpstreamFailure, "redirects more than 5 times"),
        ("/missing", UpstreamFailure, "answered 404"),
        ("/big", TooLarge, "max_bytes=4096"),
        ("/large", TooLarge, "5000 bytes"),
    ],
)
def test_refused_and_failed_fetches_store_nothing(
    mem: engram.Memory, web: Served, db_path: Path, path: str, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        mem.ingest(REF, f"{web.base}{path}", max_bytes=4096)
    assert nothing_stored(db_path)


def test_https_goes_to_the_address_checked_and_checks_the_name(tmp_path: Path) -> None:
    """The request is sent to the address the guard checked, never resolved again; the
    host name travels as the Host header and the TLS server name, and the certificate
    must be for that name."""
    server_tls, client_tls = certificate("docs.test", tmp_path)
    names = {"docs.test": "127.0.0.1", "other.test": "127.0.0.1"}
    fetcher = HttpFetcher(
        trusted=["127.0.0.1/32"],
        verify=client_tls,
        resolver=lambda host, port: [ipaddress.ip_address(names[host])],
        timeout=5,
    )
    with serving(server_tls) as served:
        port = served.base.rsplit(":", 1)[1]
        fetched = fetcher.fetch(
            f"https://docs.test:{port}/tides.html", max_bytes=100_000, allow_private=False
        )
        assert fetched.media_type == "text/html" and b"Spring tides" in fetched.data
        assert served.hosts == [f"docs.test:{port}"]
        with pytest.raises(UpstreamFailure, match="certificate"):
            fetcher.fetch(f"https://other.test:{port}/", max_bytes=100, allow_private=False)


def test_a_silent_server_times_out(web: Served, db_path: Path) -> None:
    fetcher = HttpFetcher(trusted=["127.0.0.1/32"], timeout=0.3)
    with (
        engram.open(db_path, embedder=engram.HashingEmbedder(32), fetcher=fetcher) as mem,
        pytest.raises(UpstreamFailure, match="timed out"),
    ):
        mem.ingest(REF, f"{web.base}/stall")
    web.release.set()
    assert nothing_stored(db_path)


def test_a_closed_port_is_an_upstream_failure(mem: engram.Memory, db_path: Path) -> None:
    with pytest.raises(UpstreamFailure, match="could not connect"):
        mem.ingest(REF, "http://127.0.0.1:9/nothing-listens")
    assert nothing_stored(db_path)


@pytest.mark.parametrize(
    "source", ["ftp://example.com/a.md", "file:///etc/passwd", "gopher:example", "javascript:x"]
)
def test_other_schemes_are_invalid(mem: engram.Memory, source: str) -> None:
    with pytest.raises(InvalidInput, match="only http and https"):
        mem.ingest(REF, source)


def test_urls_are_normalised_and_checked() -> None:
    assert check_url("HTTPS://Example.COM:443") == "https://example.com/"
    assert check_url("http://example.com:8080/a?b=1#c") == "http://example.com:8080/a?b=1"
    for bad in ("http://user:pw@example.com/", "http:///nohost", "http://example.com:99999/"):
        with pytest.raises(InvalidInput):
            check_url(bad)
    kinds = {
        a: refused(ipaddress.ip_address(a))
        for a in ("10.0.0.1", "::ffff:127.0.0.1", "224.0.0.1", "0.0.0.0", "fe80::1", "8.8.8.8")
    }
    assert kinds == {
        "10.0.0.1": "private",
        "::ffff:127.0.0.1": "loopback",
        "224.0.0.1": "multicast",
        "0.0.0.0": "unspecified",
        "fe80::1": "link-local",
        "8.8.8.8": None,
    }


@pytest.mark.parametrize(
    ("url", "match"),
    [
        ("http://0177.0.0.1/", "'0177.0.0.1' is not an IPv4 address as four decimal numbers"),
        ("http://\uff11\uff12\uff17.0.0.1/", "is not an IPv4 address"),  # full-width digits
        ("http://127.1/", "'127.1' is not an IPv4 address"),
        ("http://0x7f.0.0.1/", "'0x7f.0.0.1' is not an IPv4 address"),
        ("http://\uff45\uff58.com/", "cannot be fetched: Invalid IDNA hostname"),  # httpx's
    ],
)
def test_a_url_whose_host_is_no_address_or_name_is_invalid_and_never_fetched(
    db_path: Path, url: str, match: str
) -> None:
    def resolver(host: str, port: int) -> list[urls.Address]:
        raise AssertionError(f"{host} was resolved")

    fetcher = HttpFetcher(resolver=resolver, timeout=5)
    with (
        engram.open(db_path, embedder=engram.HashingEmbedder(32), fetcher=fetcher) as mem,
        pytest.raises(InvalidInput, match=match),
    ):
        mem.ingest(REF, url, allow_private=True)
    assert nothing_stored(db_path)


@pytest.mark.parametrize(
    ("address", "carried", "kind"),
    [
        ("2002:7f00:1::", "127.0.0.1 (6to4)", "loopback"),
        ("2002:a00:1::", "10.0.0.1 (6to4)", "private"),
        ("2002:a9fe:a9fe::1", "169.254.169.254 (6to4)", "link-local"),
        ("64:ff9b::7f00:1", "127.0.0.1 (NAT64)", "loopback"),
        ("64:ff9b::c0a8:101", "192.168.1.1 (NAT64)", "private"),
        ("::ffff:10.0.0.1", "10.0.0.1 (IPv4-mapped)", "private"),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1 (Teredo)", "loopback"),
        ("2001:0:4136:e378:8000:63bf:f5ff:f7f7", "10.0.8.8 (Teredo)", "private"),
    ],
)
def test_an_ipv6_address_carrying_a_non_public_ipv4_one_is_refused_naming_it(
    db_path: Path, address: str, carried: str, kind: str
) -> None:
    found = ipaddress.ip_address(address)
    assert refused(found) == kind
    fetcher = HttpFetcher(resolver=lambda host, port: [found], timeout=5)
    with (
        engram.open(db_path, embedder=engram.HashingEmbedder(32), fetcher=fetcher) as mem,
        pytest.raises(InvalidInput, match=re.escape(f"carries {carried}, a {kind} address")),
    ):
        mem.ingest(REF, "http://docs.example/")
    assert nothing_stored(db_path)
    assert refused(ipaddress.ip_address("::ffff:8.8.8.8")) is None  # a public one's own


def test_the_cli_fetches_private_urls_only_when_the_setting_allows(
    web: Served, db_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["--json", "ingest", f"{web.base}/tides.html", "--db", str(db_path)]
    args += ["--resource", "user-42"]
    assert main([*args]) == 2
    assert "loopback" in capsys.readouterr().err
    monkeypatch.setenv("ENGRAM_INGEST_ALLOW_PRIVATE", "true")
    assert main([*args, "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"][0]["status"] == "created"
    assert nothing_stored(db_path)
