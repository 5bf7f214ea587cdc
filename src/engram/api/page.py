"""The person's page, ``GET /ui/``: static files from ``engram/api/ui/``, no build step.

The page uses only the people routes (people.py) with the person's own bearer token, so
it can do nothing the token could not do without it. Its answers carry a CSP that allows
scripts, styles and requests from this origin only and no inline script or style: a
memory that holds markup can only ever be shown as text (the page also sets text through
``textContent`` alone). The files are read once, when the service starts.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter, Response
from fastapi.responses import RedirectResponse

from engram.core.errors import NotFound

HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
TYPES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",  # without one the browser asks for /favicon.ico: a 404
}


def router() -> APIRouter:
    """``GET /ui/`` and its files; not in the OpenAPI schema (they are not an API)."""
    folder = resources.files("engram.api") / "ui"
    files = {name: (folder / name).read_bytes() for name in TYPES}
    pages = APIRouter(include_in_schema=False)

    @pages.get("/ui/")
    def index() -> Response:
        return _file(files, "index.html")

    @pages.get("/ui")
    def to_index() -> Response:  # the app follows no trailing slash of its own accord
        return RedirectResponse("/ui/", status_code=308)

    @pages.get("/ui/{name}")
    def asset(name: str) -> Response:
        if name == "index.html" or name not in files:
            raise NotFound(f"the page has no file {name!r}")
        return _file(files, name)

    return pages


def _file(files: dict[str, bytes], name: str) -> Response:
    return Response(files[name], media_type=TYPES[name], headers=HEADERS)
