"""``engram serve``: the HTTP service on the given settings.

The address is bound first, so a taken port is reported (exit 11) before the store opens
or the model loads, and nothing is announced that does not listen. Then the store opens
(a bad path fails here, before anything listens), then the service answers.
"""

from __future__ import annotations

import errno
import socket
import sys
from contextlib import suppress
from typing import Any

from engram.core.errors import EngramError, InvalidInput
from engram.opening import describe
from engram.settings import Settings


class PortTaken(EngramError):
    """Another process listens on the address ``engram serve`` was asked to use."""

    code = "port_taken"
    http_status = 500  # never an HTTP answer: the service is not running
    exit_code = 11


def serve(settings: Settings) -> None:
    """Serves until interrupted (Ctrl-C returns normally). Raises InvalidInput (exposure,
    a bad host), PortTaken, or the store's error when it cannot be opened; nothing
    listens in any of these cases."""
    import uvicorn

    from engram.api import create_app
    from engram.api.access_log import AccessLog, to_stderr

    settings.check_exposure()
    sockets = bind(settings.host, settings.port)
    try:
        app = create_app(settings)
        memory = app.state.memory
        embedder, reranker, chat = memory.embedder, memory.reranker, memory.chat
        recogniser = memory.recogniser
        port = sockets[0].getsockname()[1]
        host = f"[{settings.host}]" if ":" in settings.host else settings.host
        print(
            f"engram listening on http://{host}:{port} "
            f"(store {describe(settings.db_path)}, "
            f"embedder {embedder.model if embedder else 'none'}, "
            f"{f'reranker {reranker.model}, ' if reranker else ''}"
            f"{f'llm {chat.model}, ' if chat else ''}"
            f"{f'spacy {recogniser.model}, ' if recogniser else ''}"
            f"access log {'on' if settings.access_log else 'off'})",
            file=sys.stderr,
            flush=True,
        )
        if settings.access_log:
            to_stderr()
        served = AccessLog(app) if settings.access_log else app
        config = uvicorn.Config(served, log_level="warning", access_log=False)
        with suppress(KeyboardInterrupt):  # Ctrl-C is how a service is stopped: exit 0
            uvicorn.Server(config).run(sockets=sockets)
    finally:
        for sock in sockets:
            sock.close()


def bind(host: str, port: int) -> list[socket.socket]:
    """Sockets bound (not yet listening) to every address ``host`` names, as the event
    loop would bind them. Raises PortTaken when another process holds the port."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InvalidInput(f"cannot listen on {host}: {exc.strerror}") from exc
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            _bind(sock, address, host, port)
    except BaseException:
        for sock in bound:
            with suppress(OSError):
                sock.close()
        raise
    return bound


def _bind(sock: socket.socket, address: tuple[Any, ...], host: str, port: int) -> None:
    try:
        sock.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortTaken(
                f"port {port} on {host} is taken: another process is listening there",
                hint="stop it, or choose another port with --port or ENGRAM_PORT",
            ) from exc
        raise InvalidInput(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
