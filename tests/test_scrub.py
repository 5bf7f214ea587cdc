"""``engram scrub``: words erased for good, out of the store's files now, on both backends
(storage/postgres/scrub.py, storage/sqlite/scrub.py)."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

import engram
import postgres_server
from engram import ResourceRef, StorageFailure
from engram.backends import backend_for
from engram.cli.main import main
from engram.storage.postgres import scrub
from engram.storage.sqlite import freespace
from traces import on_disk, planted_in, planted_word

REF = ResourceRef("user-42")
EMBEDDER = engram.HashingEmbedder(16)


def _erased(
    mem: engram.Memory, rounds: int = 8, gone: list[str] | None = None, analysed: str = ""
) -> set[str]:
    """Facts remembered and erased in turn, forgotten for good and purged from the trash:
    the words erased that no fact left holds (and in ``gone`` the facts' words). With
    ``analysed`` (a PostgreSQL URL), its tables are sampled for the planner before each
    round's erasures, as autovacuum would."""
    rng = random.Random(3)
    erased: set[str] = set()
    live: list[engram.Fact] = []
    for turn in range(rounds):
        said = [" ".join(planted_word(rng) for _ in range(5)) for _ in range(20)]
        live += mem.remember_many(REF, said)
        if analysed:
            with psycopg.connect(analysed, autocommit=True) as conn:
                conn.execute("ANALYZE")
        for n, fact in enumerate(rng.sample(live, 6)):
            live.remove(fact)
            if (turn + n) % 2:
                assert mem.forget(REF, fact.id, hard=True)
            else:
                assert mem.forget(REF, fact.id)
                assert mem.delete_traces(REF, [fact.id]).trashed == 1
            erased.update(fact.content.split())
            if gone is not None:
                gone.append(fact.content)
    return erased - {w for fact in live for w in fact.content.split()}


def _held(files: Iterator[Path], words: set[str]) -> dict[str, int]:
    """Of ``words``, how many each file holds (files holding none left out)."""
    found = {}
    for path in files:
        held = planted_in(path.read_bytes()) & words
        if held:
            found[path.name] = len(held)
    return found


def _due(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute(scrub.DUE).fetchone()
    return bool(row and row[0])


def _vectors(files: Iterator[Path], texts: list[str]) -> int:
    """How many of ``texts``' vectors (as the store keeps them, at half precision) some
    file holds."""
    needles = [v.astype("<f2").tobytes() for v in EMBEDDER.embed(texts, "passage")]
    held = [path.read_bytes() for path in files]
    return sum(any(needle in data for data in held) for needle in needles)


def _graph(url: str) -> str | None:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT ann_index FROM scope_state WHERE scope = %s", (REF.key,))
        found = row.fetchone()
    return None if found is None else found[0]


def test_a_scrub_takes_erased_words_out_of_the_database_files_and_its_wal() -> None:
    """A server of its own that removes its WAL files rather than recycle them, so that
    none of the words may stay anywhere in its folder; the erased facts' vectors stay in
    their table's pages, and in its graph, until it is written anew too."""
    with postgres_server.running_server(("wal_recycle=off",)) as admin:
        url = postgres_server.create_database(admin)
        with engram.open(url, embedder=EMBEDDER, vector_index_above=50) as mem:
            kept = ["a fact no write erases"]
            mem.remember(REF, kept[0])
            assert not _due(url)  # a write that erases nothing records no erasure
            gone: list[str] = []
            erased = _erased(mem, gone=gone, analysed=url)
            assert _due(url)
            deadline = time.monotonic() + 60
            while _graph(url) is None:  # the scope's graph, built after the commit
                assert time.monotonic() < deadline, "no graph was built"
                time.sleep(0.05)
            data, folder = on_disk(url)

            def relations() -> Iterator[Path]:
                return (p for p in folder.iterdir() if p.is_file())

            def wal() -> Iterator[Path]:
                return (p for p in (data / "pg_wal").iterdir() if p.is_file())

            assert _held(relations(), erased)  # a forget's words stay in the pages
            assert _vectors(relations(), kept) == 1  # the vectors are read as stored
            done = backend_for(url).scrub(url)
            assert (done.was_due, done.still_due) == (True, False)
            assert done.left == (scrub.VECTORS_LEFT,)
            assert "facts" in done.rewritten and "fact_vectors" not in done.rewritten
            assert _held(relations(), erased) == {}
            assert _held(wal(), erased) == {}
            assert not _due(url)
            assert _vectors(relations(), gone)  # the table and its graph keep them
            done = backend_for(url).scrub(url, vectors=True)
            assert "fact_vectors" in done.rewritten and done.left == ()
            on_disk(url)
            assert _vectors(relations(), gone) == 0 and _vectors(wal(), gone) == 0
            assert _vectors(relations(), kept) == 1
            assert _graph(url) is not None
            assert mem.recall(REF, kept[0], mode="vector")[0].fact.content == kept[0]
            # the store reads as before, and the words are no answer
            assert mem.recall(REF, "a fact no write erases", mode="text")[0].fact.content == (
                "a fact no write erases"
            )
            assert not mem.recall(REF, sorted(erased)[0], mode="text")
            assert backend_for(url).scrub(url).was_due is False


def test_engram_scrub_says_what_it_did_and_what_the_server_keeps(
    postgres_store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The suite's server recycles its WAL files (its default): the report says so."""
    with engram.open(postgres_store_url, embedder=engram.HashingEmbedder(16)) as mem:
        fact = mem.remember(REF, "zqbcdfghjkmn is a word to forget")
        mem.forget(REF, fact.id)  # to the trash: nothing erased yet
        assert not _due(postgres_store_url)
        assert mem.delete_traces(REF, [fact.id]).trashed == 1
        assert _due(postgres_store_url)
    assert main(["--db", postgres_store_url, "--json", "scrub"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert (said["was_due"], said["still_due"]) == (True, False)
    assert "erasures" in said["rewritten"] and "fact_vectors" not in said["rewritten"]
    assert any("wal_recycle is on" in left for left in said["left"])
    assert not _due(postgres_store_url)


def test_engram_scrub_runs_a_sqlite_scrub_that_did_not_run(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An erasing write's own scrub did not run (a reader held the log, the process
    ended): ``engram scrub`` runs it."""
    with monkeypatch.context() as skipped:
        skipped.setattr(freespace, "scrub", lambda path, busy_ms: None)
        with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as mem:
            erased = _erased(mem)
    assert freespace.dirty_pages(str(db_path))  # what the pages' unused space holds
    assert main(["--db", str(db_path), "--json", "scrub"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert (said["was_due"], said["still_due"], said["rewritten"]) == (True, False, [])
    assert freespace.dirty_pages(str(db_path)) == []
    assert _held(iter([db_path]), erased) == {}
    assert main(["--db", str(db_path), "--json", "scrub"]) == 0
    assert json.loads(capsys.readouterr().out)["was_due"] is False


def test_engram_scrub_creates_no_store_and_refuses_another_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(tmp_path / "none.db"), "scrub"]) == 3
    assert "error[not_found]: no store at" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()
    other = tmp_path / "notes.db"
    other.write_text("not a database")
    assert main(["--db", str(other), "scrub"]) == 7
    assert "error[storage_failure]: cannot open the store at" in capsys.readouterr().err
    assert other.read_text() == "not a database"


def test_a_role_that_does_not_own_the_tables_is_refused_before_any_is_written(
    postgres_store_url: str,
) -> None:
    """VACUUM FULL passes over a table its role may not write anew with a warning only,
    which would leave that table's bytes and say the scrub was done."""
    role = f"reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_store_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for grant in (  # what a service's role may be given: every row, not the tables
            "GRANT CREATE, USAGE ON SCHEMA public TO {}",
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {}",
        ):
            conn.execute(sql.SQL(grant).format(sql.Identifier(role)))
    try:
        as_reader = postgres_store_url.replace("postgres@", f"{role}@", 1)
        with pytest.raises(StorageFailure, match="may not write anew its tables") as refused:
            backend_for(as_reader).scrub(as_reader)
        assert "facts" in refused.value.message and refused.value.hint
    finally:
        with psycopg.connect(postgres_store_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_writes_meanwhile_wait_for_the_scrub_and_each_lands(postgres_store_url: str) -> None:
    """A service's writes while ``engram scrub`` writes the tables anew: each waits for
    the table it needs and lands, and the scrub ends."""
    with engram.open(postgres_store_url, embedder=EMBEDDER) as mem:
        mem.remember_many(REF, [f"fact {n} of the scope before the scrub" for n in range(300)])
        written: list[str] = []
        writes = [0]  # how many the writer has made, forgets included
        failed: list[BaseException] = []
        scrubbing = threading.Event()
        done = threading.Event()

        def write() -> None:
            try:
                n = 0
                while not done.is_set() or not written:
                    fact = mem.remember(REF, f"written while the scrub ran, number {n}")
                    written.append(fact.id)
                    if scrubbing.is_set() and n % 5 == 0:
                        assert mem.forget(REF, fact.id, hard=True)
                        written.pop()
                    n += 1
                    writes[0] = n
            except BaseException as exc:
                failed.append(exc)

        writer = threading.Thread(target=write)
        writer.start()
        try:
            scrubbing.set()
            before = writes[0]
            done_scrub = backend_for(postgres_store_url).scrub(postgres_store_url)
            during = writes[0] - before
        finally:
            done.set()
            writer.join()
        assert failed == [] and during > 0
        assert "facts" in done_scrub.rewritten
        listed = {f.id for f in mem.facts(REF, limit=1000).facts}
        assert set(written) <= listed and len(listed) == 300 + len(written)
