"""A small HTTP server on loopback for the URL tests: a page, a PDF, redirects (to a
private address, to IPv6 loopback, round in a loop), a body too big, a 404. It records
each path asked for, so a test can tell a refused URL was never fetched."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pdfs import pdf

PAGE = b"""<!doctype html><html><head><title>Tides</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Visit the gift shop</a></nav>
<article><h1>Tides</h1><p>Tides are caused by the gravity of the moon and the sun,
and they rise and fall twice a day on most coasts.</p>
<h2>Spring tides</h2><p>Spring tides follow a full or a new moon, when the sun and the
moon pull in a line and the range between high and low water is widest.</p></article>
<footer>Copyright 2026 Example Harbour Board. All rights reserved.</footer>
</body></html>"""
PDF = pdf([["A harbour chart, page one."], ["Depths in metres, page two."]])


@dataclass
class Served:
    base: str
    paths: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


@contextmanager
def serving(tls: ssl.SSLContext | None = None) -> Iterator[Served]:
    """The server on 127.0.0.1 (a free port), answering in threads until the block ends;
    over TLS with ``tls``."""
    served = Served("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.paths.append(self.path)
            served.hosts.append(self.headers.get("Host", ""))
            route = ROUTES.get(self.path.split("?")[0])
            if route is None:
                self._answer(404, "text/plain", b"no such page")
                return
            route(self, served)

        def _answer(self, status: int, kind: str, body: bytes, **headers: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    served.base = f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def _page(h: BaseHTTPRequestHandler, _: Served) -> None:
    h._answer(200, "text/html; charset=utf-8", PAGE)  # type: ignore[attr-defined]


def _pdf(h: BaseHTTPRequestHandler, _: Served) -> None:
    h._answer(200, "application/octet-stream", PDF)  # type: ignore[attr-defined]


def _redirect(to: str) -> object:
    def answer(h: BaseHTTPRequestHandler, served: Served) -> None:
        target = to.replace("{base}", served.base)
        h._answer(302, "text/plain", b"", Location=target)  # type: ignore[attr-defined]

    return answer


def _big(h: BaseHTTPRequestHandler, _: Served) -> None:
    """Streamed with no length given: the limit must hold while reading."""
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.send_header("Connection", "close")
    h.end_headers()
    for _ in range(64):
        h.wfile.write(b"x" * 1024 + b"\n")


def _large(h: BaseHTTPRequestHandler, _: Served) -> None:
    h._answer(200, "text/plain", b"y" * 5000)  # type: ignore[attr-defined]


def _stall(h: BaseHTTPRequestHandler, served: Served) -> None:
    """Answers nothing until the test lets it (or the server stops)."""
    served.release.wait(timeout=30)
    h._answer(200, "text/plain", b"late")  # type: ignore[attr-defined]


ROUTES = {
    "/stall": _stall,
    "/tides.html": _page,
    "/chart": _pdf,
    "/moved": _redirect("{base}/tides.html"),
    "/to-metadata": _redirect("http://169.254.169.254/latest/meta-data/"),
    "/to-ipv6-loopback": _redirect("http://[::1]:9/"),
    "/to-file": _redirect("file:///etc/passwd"),
    "/to-6to4-loopback": _redirect("http://[2002:7f00:1::]/"),
    "/loop": _redirect("{base}/loop"),
    "/big": _big,
    "/large": _large,
}


def certificate(name: str, folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed certificate for the host ``name``: the server's TLS context, and a
    client's that trusts only it."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    return server, ssl.create_default_context(cafile=str(cert_file))
