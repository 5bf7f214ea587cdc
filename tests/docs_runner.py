"""Runs a documentation page's examples as a reader would: every block, in order, in a
fresh folder of its own, as written.

A page is Markdown. Its fenced blocks are named by their info string:

- ``sh``: shell commands, run by one bash for the whole page (``set -euo pipefail``), so a
  variable, an ``export`` or a service started with ``&`` lasts to the blocks after it;
- ``python``: run by one Python for the whole page, so a name lasts too; it sees what the
  shell exported so far (as a ``python3`` started from that shell would);
- a block whose info string names a file after its language (```` ```jsonl turns.jsonl ````)
  is that file: written into the folder as shown, for the commands after it to read;
- ``sh install``: commands that set up a machine (``pip install``, ``make``), shown and not
  run here: the suite runs inside the checkout they set up (``problems`` holds such a
  block to set-up commands only);
- ``json`` and ``text``: what something answers or holds, shown and not run.

A block with no info string is refused: every block says what it is, so no example
escapes the runner by accident.

What a page may not hard-wire on a shared machine is replaced, and only that: a port
46xx (4600 is ``make run``'s) by a free one, and ``postgresql://engram:secret@db:5432/
engram`` by a fresh database of the suite's own PostgreSQL. A page marked
``<!-- runs with: make run -->`` is run beside ``engram serve`` on its folder's
``./engram.db`` at what the page calls port 4600, as the reader is asked to start it.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import postgres_server

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN, SHOWN, SETUP = {"sh", "python"}, {"json", "text"}, "install"
MAKE_RUN = "<!-- runs with: make run -->"
POSTGRES = "postgresql://engram:secret@db:5432/engram"
PORT = re.compile(r"\b46(\d\d)\b")
DONE = "::docs-runner-done:: "
PATIENCE = 120.0  # a block's bound: the slowest here start a service and load a model


@dataclass(frozen=True)
class Block:
    language: str
    extra: str  # what the info string says after the language: a file name, `install`
    code: str
    line: int  # where the block's code starts in the page, from 1

    @property
    def runs(self) -> bool:
        return self.language in RUN and self.extra != SETUP


def blocks(text: str) -> list[Block]:
    """The page's fenced blocks, in order."""
    found: list[Block] = []
    info: str | None = None
    code: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if line.startswith("```"):
            if info is None:
                info, code, start = line[3:].strip(), [], number + 1
            else:
                language, _, extra = info.partition(" ")
                found.append(Block(language, extra.strip(), "".join(code), start))
                info = None
        elif info is not None:
            code.append(line)
    if info is not None:
        raise ValueError(f"a block opened at line {start - 1} is never closed")
    return found


def problems(page: Path) -> list[str]:
    """What keeps a page's blocks from being run or shown as the runner reads them."""
    said = []
    for block in blocks(page.read_text()):
        where = f"{page.name}:{block.line - 1}"
        if not block.language:
            said.append(f"{where}: a block without a language")
        elif block.language not in RUN | SHOWN and not block.extra:
            said.append(f"{where}: {block.language!r} is neither run nor shown")
        elif block.extra == SETUP and block.language != "sh":
            said.append(f"{where}: only shell sets a machine up")
        elif block.extra == SETUP:
            lines = [ln.strip() for ln in block.code.splitlines() if ln.strip()]
            bad = [ln for ln in lines if not ln.startswith(("pip ", "make "))]
            said.extend(f"{where}: {ln!r} is not a set-up command" for ln in bad)
    return said


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Places:
    """What a page's hard-wired places become here."""

    ports: dict[str, int] = field(default_factory=dict)
    postgres: Callable[[], str] | None = None
    database: str = ""

    def __call__(self, code: str) -> str:
        def port(found: re.Match[str]) -> str:
            return str(self.ports.setdefault(found[0], free_port()))

        code = PORT.sub(port, code)
        if POSTGRES in code:
            if not self.database:
                assert self.postgres is not None, "this page needs PostgreSQL"
                self.database = self.postgres()
            code = code.replace(POSTGRES, self.database)
        return code


class Failed(AssertionError):
    pass


_WORKER = r"""
import json, os, sys, traceback
namespace = {"__name__": "__main__"}
env_file = sys.argv[1]
for request in sys.stdin:
    asked = json.loads(request)
    if os.path.exists(env_file):
        with open(env_file, "rb") as f:
            pairs = [p.split(b"=", 1) for p in f.read().split(b"\0") if b"=" in p]
        os.environ.update({k.decode(): v.decode() for k, v in pairs})
    failed = None
    try:
        exec(compile(asked["code"], asked["where"], "exec"), namespace)
    except BaseException:
        failed = traceback.format_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    print("::docs-runner-done:: " + json.dumps(failed), flush=True)
"""


class _Process:
    """A process that takes one block at a time and says when it is done."""

    def __init__(self, args: list[str], folder: Path, env: dict[str, str], errors: Path) -> None:
        self._errors = errors.open("w+b")
        self.proc = subprocess.Popen(
            args,
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            text=True,
            start_new_session=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def errors(self) -> str:
        self._errors.flush()
        return os.pread(self._errors.fileno(), 1 << 16, 0).decode(errors="replace")

    def send(self, text: str) -> tuple[str, str | None]:
        """What the block printed, and the status line's word after DONE (None at exit)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()
        printed = []
        deadline = time.monotonic() + PATIENCE
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise Failed(f"no answer within {PATIENCE:.0f} s:\n{''.join(printed)}") from None
            if line is None:
                return "".join(printed), None
            before, done, status = line.partition(DONE)  # after output with no newline too
            printed.append(before)
            if done:
                return "".join(printed), status.rstrip("\n")

    def stop(self) -> None:
        with suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._errors.close()


@dataclass
class Run:
    """One page's run: its folder, its shell, its Python and what they printed."""

    page: Path
    folder: Path
    env: dict[str, str]
    places: Places
    printed: list[str] = field(default_factory=list)
    _shell: _Process | None = None
    _python: _Process | None = None

    @property
    def _own(self) -> Path:
        return self.folder.parent / ".docs-runner"

    def block(self, block: Block) -> None:
        where = f"{self.page.name}:{block.line}"
        code = self.places(block.code)
        if block.extra and block.extra != SETUP:
            (self.folder / block.extra).write_text(code)
        elif not block.runs:
            return
        elif block.language == "sh":
            self._sh(code, where)
        else:  # padded so that a traceback names the page's own line
            self._py("\n" * (block.line - 1) + code, where)

    def _sh(self, code: str, where: str) -> None:
        if self._shell is None:
            self._shell = _Process(
                ["bash", "--noprofile", "--norc", "-s"],
                self.folder,
                self.env,
                self._own / "shell.err",
            )
            self._shell.send(f"set -euo pipefail\nprintf '{DONE}\\n'\n")
        script = self._own / f"block-{len(self.printed)}.sh"
        script.write_text(code)
        printed, status = self._shell.send(
            f"source {script} </dev/null\nenv -0 > {self._own / 'env'}\nprintf '{DONE}\\n'\n"
        )
        self.printed.append(printed)
        if status is None:
            raise Failed(f"{where}: the shell stopped:\n{printed}\n{self._shell.errors()}")

    def _py(self, code: str, where: str) -> None:
        if self._python is None:
            args = [sys.executable, "-u", "-c", _WORKER, str(self._own / "env")]
            self._python = _Process(args, self.folder, self.env, self._own / "python.err")
        request = json.dumps({"code": code, "where": self.page.name})
        printed, status = self._python.send(request + "\n")
        self.printed.append(printed)
        if status is None:
            raise Failed(f"{where}: Python stopped:\n{printed}\n{self._python.errors()}")
        if (failed := json.loads(status)) is not None:
            raise Failed(f"{where}:\n{failed}")

    def stop(self) -> None:
        for process in (self._shell, self._python):
            if process is not None:
                process.stop()
        _stop_everything_in(self.folder)


def _stop_everything_in(folder: Path) -> None:
    """Stops what the page started and left running (a service sent to the background)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with suppress(OSError):
            if Path(os.readlink(proc / "cwd")).is_relative_to(folder):
                os.kill(int(proc.name), signal.SIGKILL)


@contextmanager
def running(page: Path, tmp: Path, postgres: Callable[[], str] | None = None) -> Iterator[Run]:
    """A run of ``page`` in ``tmp/page``, stopped afterwards (with all it started)."""
    folder = tmp / "page"
    folder.mkdir()
    (tmp / ".docs-runner").mkdir()
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "PYTEST"))},
        # the checkout's engram, and the client programs of the suite's PostgreSQL
        "PATH": f"{bin_dir}:{postgres_server.bin_dir()}:{os.environ['PATH']}",
        "HOME": str(tmp),
    }
    run = Run(page, folder, env, Places(postgres=postgres))
    try:
        if MAKE_RUN in page.read_text():
            _make_run(run)
        yield run
    finally:
        run.stop()


def _make_run(run: Run) -> None:
    """What ``make run`` serves, at what the page calls port 4600, once it answers."""
    port = run.places("4600")
    log = (run._own / "service.log").open("wb")
    subprocess.Popen(
        [str(Path(sys.executable).parent / "engram"), "--db", "./engram.db", "serve"],
        cwd=run.folder,
        env={**run.env, "ENGRAM_PORT": port},
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    import httpx

    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        with suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                return
        time.sleep(0.05)
    raise Failed(f"make run's service did not answer:\n{(run._own / 'service.log').read_text()}")


def run_page(page: Path, tmp: Path, postgres: Callable[[], str] | None = None) -> str:
    """Runs every block of ``page``; answers all they printed. Raises Failed at the first
    block that fails, naming its line."""
    with running(page, tmp, postgres) as run:
        for block in blocks(page.read_text()):
            run.block(block)
        return "".join(run.printed)
