"""The schema as numbered, append-only migrations; ``PRAGMA user_version`` is the version.

Never edit a migration that has shipped: append a new one. ``PRAGMA application_id`` marks
a file as an engram store, so another application's SQLite file is refused before
anything writes to it (``check_ours``).
"""

from __future__ import annotations

from engram.core.errors import StorageFailure
from engram.storage.rows import stored_digest
from engram.storage.sql.dialect import sqlite_vector
from engram.storage.sqlite import forgetting, freespace
from engram.storage.sqlite.driver import sqlite3

MIGRATIONS: tuple[str, ...] = (
    # 1: working memory, facts with their vectors, full-text index, per-scope change counters.
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

    CREATE TABLE working (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        version INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        expires_at INTEGER,
        PRIMARY KEY (scope, key)
    ) WITHOUT ROWID;

    CREATE TABLE facts (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL,
        scope_token TEXT NOT NULL,
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        context TEXT,
        source_sandbox TEXT,
        source_entry INTEGER,
        type TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        corrected_by TEXT,
        corrected_at INTEGER,
        UNIQUE (scope, content_hash)
    );
    CREATE INDEX facts_by_age ON facts (scope, created_at, seq);
    CREATE INDEX facts_by_seq ON facts (scope, seq);

    -- Vectors live apart from the rows, so scans and joins over facts stay narrow.
    CREATE TABLE fact_vectors (
        fact INTEGER PRIMARY KEY,
        vector BLOB NOT NULL
    );

    CREATE TABLE fact_tags (
        fact INTEGER NOT NULL,
        scope TEXT NOT NULL,
        tag TEXT NOT NULL,
        PRIMARY KEY (fact, tag)
    ) WITHOUT ROWID;
    CREATE INDEX fact_tags_by_scope ON fact_tags (scope, tag, fact);

    -- version grows on every change of a scope's facts, epoch on every change that is
    -- not an append; the in-process vector index reloads from them. facts counts them.
    CREATE TABLE scope_state (
        scope TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        epoch INTEGER NOT NULL,
        facts INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;

    CREATE VIRTUAL TABLE facts_fts USING fts5(
        content, scope_token, context, content='facts', content_rowid='seq',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
        INSERT INTO facts_fts (rowid, content, scope_token, context)
        VALUES (new.seq, new.content, new.scope_token, new.context);
    END;
    CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, content, scope_token, context)
        VALUES ('delete', old.seq, old.content, old.scope_token, old.context);
        DELETE FROM fact_tags WHERE fact = old.seq;
        DELETE FROM fact_vectors WHERE fact = old.seq;
    END;
    CREATE TRIGGER facts_au AFTER UPDATE OF content, context ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, content, scope_token, context)
        VALUES ('delete', old.seq, old.content, old.scope_token, old.context);
        INSERT INTO facts_fts (rowid, content, scope_token, context)
        VALUES (new.seq, new.content, new.scope_token, new.context);
    END;
    """,
    # 2: agents, whose persisted spec resolves the scope of their memory routes.
    """
    CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        scope TEXT NOT NULL,
        parent_id TEXT,
        created_at INTEGER NOT NULL,
        ended_at INTEGER
    ) WITHOUT ROWID;
    """,
    # 3: a person's allowances between applications.
    """
    CREATE TABLE shares (
        person TEXT NOT NULL,
        source TEXT NOT NULL,
        reader TEXT NOT NULL,
        allowed_at INTEGER NOT NULL,
        PRIMARY KEY (person, source, reader)
    ) WITHOUT ROWID;
    CREATE INDEX shares_by_reader ON shares (person, reader, source);
    """,
    # 4: grows when a scope's vectors are replaced in place (re-embedding), which leaves
    # every content hash as it was: in-memory vector copies reload the scope on it.
    """
    ALTER TABLE scope_state ADD COLUMN rewritten INTEGER NOT NULL DEFAULT 0;
    """,
    # 5: which facts were deleted or rewritten, in order, so an in-memory copy of a scope
    # revises itself by the facts that changed instead of comparing every fact's hash.
    # A scope's log holds every change after scope_state.changes_from (ids, which
    # AUTOINCREMENT never reuses); logged counts its rows, and past half the scope (or
    # when the scope empties) the log is cleared: a copy from before that is rebuilt.
    """
    CREATE TABLE fact_changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        scope TEXT NOT NULL,
        seq INTEGER NOT NULL
    );
    CREATE INDEX fact_changes_by_scope ON fact_changes (scope, id);
    ALTER TABLE scope_state ADD COLUMN changes_from INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE scope_state ADD COLUMN logged INTEGER NOT NULL DEFAULT 0;
    CREATE TRIGGER facts_ad_log AFTER DELETE ON facts BEGIN
        INSERT INTO fact_changes (scope, seq) VALUES (old.scope, old.seq);
    END;
    CREATE TRIGGER facts_au_log AFTER UPDATE OF content, context ON facts BEGIN
        INSERT INTO fact_changes (scope, seq) VALUES (old.scope, old.seq);
    END;
    """,
    # 6: the database keeps scope_state itself, so no write path can leave the
    # in-process copies behind: an append moves version (and the count), anything else
    # also moves epoch and goes into the change log (a replaced vector too: the copies
    # read it again), and a log past half its scope (LOG_FLOOR at least) or of an
    # emptied scope is cleared, so copies that had not read it all are rebuilt
    # (sqlite_sequence is not current inside a trigger: the log's own ids say how far).
    """
    DROP TRIGGER facts_ad_log;
    DROP TRIGGER facts_au_log;
    CREATE TRIGGER facts_ai_state AFTER INSERT ON facts BEGIN
        INSERT INTO scope_state (scope, version, epoch, facts) VALUES (new.scope, 1, 0, 1)
        ON CONFLICT (scope) DO UPDATE SET version = version + 1, facts = facts + 1;
    END;
    CREATE TRIGGER facts_ad_state AFTER DELETE ON facts BEGIN
        INSERT INTO fact_changes (scope, seq) VALUES (old.scope, old.seq);
        UPDATE scope_state SET version = version + 1, epoch = epoch + 1, facts = facts - 1,
            logged = logged + 1 WHERE scope = old.scope;
    END;
    CREATE TRIGGER facts_au_state AFTER UPDATE OF content, context ON facts BEGIN
        INSERT INTO fact_changes (scope, seq) VALUES (old.scope, old.seq);
        UPDATE scope_state SET version = version + 1, epoch = epoch + 1,
            logged = logged + 1 WHERE scope = old.scope;
    END;
    CREATE TRIGGER fact_vectors_au_state AFTER UPDATE OF vector ON fact_vectors BEGIN
        INSERT INTO fact_changes (scope, seq) SELECT scope, seq FROM facts WHERE seq = new.fact;
        UPDATE scope_state SET version = version + 1, epoch = epoch + 1,
            logged = logged + 1 WHERE scope = (SELECT scope FROM facts WHERE seq = new.fact);
    END;
    CREATE TRIGGER scope_state_log_full AFTER UPDATE OF logged ON scope_state
    WHEN new.logged > 0 AND (new.facts = 0 OR new.logged > max(256, new.facts / 2)) BEGIN
        UPDATE scope_state SET logged = 0, changes_from = (
            SELECT max(id) FROM fact_changes WHERE scope = new.scope)
        WHERE scope = new.scope;
        DELETE FROM fact_changes WHERE scope = new.scope;
    END;
    """,
    # 7: a fact's strength (0 to 10; 1.0 is neutral): recall filters by it and
    # multiplies a fact's score by it.
    """
    ALTER TABLE facts ADD COLUMN strength REAL NOT NULL DEFAULT 1.0;
    """,
    # 8: history. Every write is an entry of the ledger with one item per object it
    # changed (the object's state before, and the token of the state it left); a soft
    # forget moves the row to fact_trash (no retriever can miss a flag: the row is gone
    # from facts, its full text and vectors with it); turn_user names the second user
    # a write on another's turn was for. A trash row deleted for good moves the change
    # log's mark (seq 0 names no fact), so the file and its log are purged after it.
    """
    ALTER TABLE facts ADD COLUMN turn_user TEXT;
    CREATE INDEX facts_by_turn_user ON facts (scope, turn_user) WHERE turn_user IS NOT NULL;

    CREATE TABLE fact_trash (
        id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL,
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        context TEXT,
        source_sandbox TEXT,
        source_entry INTEGER,
        type TEXT,
        tags TEXT NOT NULL,
        metadata TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        corrected_by TEXT,
        corrected_at INTEGER,
        strength REAL NOT NULL,
        turn_user TEXT,
        vector BLOB,
        deleted_at INTEGER NOT NULL
    );
    CREATE INDEX fact_trash_by_scope ON fact_trash (scope, deleted_at, id);
    CREATE TRIGGER fact_trash_ad AFTER DELETE ON fact_trash BEGIN
        INSERT INTO fact_changes (scope, seq) VALUES (old.scope, 0);
    END;

    CREATE TABLE ledger (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        scope TEXT NOT NULL,
        op TEXT NOT NULL,
        at INTEGER NOT NULL,
        actor TEXT NOT NULL,
        via TEXT NOT NULL,
        turn_user TEXT,
        request_id TEXT,
        reverts INTEGER,
        reverted_by INTEGER,
        scrubbed INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX ledger_by_scope ON ledger (scope, seq);
    CREATE INDEX ledger_by_age ON ledger (at);

    CREATE TABLE ledger_items (
        entry INTEGER NOT NULL,
        kind TEXT NOT NULL,
        object_id TEXT NOT NULL,
        action TEXT NOT NULL,
        token INTEGER,
        before TEXT,
        PRIMARY KEY (entry, kind, object_id)
    ) WITHOUT ROWID;
    CREATE INDEX ledger_items_by_object ON ledger_items (kind, object_id, entry);
    """,
    # 9: episodic sessions, append-only entries numbered from 0, each session perhaps
    # forked from an entry of an earlier one (parent_id, fork_entry; depth from the root).
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        parent_id TEXT,
        fork_entry INTEGER,
        depth INTEGER NOT NULL,
        name TEXT,
        created_at INTEGER NOT NULL,
        next_index INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX sessions_by_scope ON sessions (scope, created_at, id);
    CREATE INDEX sessions_by_parent ON sessions (parent_id);

    CREATE TABLE session_entries (
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        role TEXT,
        content TEXT NOT NULL,
        data TEXT,
        PRIMARY KEY (session_id, idx)
    );
    """,
    # 10: a fact by the session entry it came from (a conversation's turns find the
    # facts of the turns before them).
    """
    CREATE INDEX facts_by_source ON facts (source_sandbox, source_entry)
        WHERE source_sandbox IS NOT NULL;
    """,
    # 11: the knowledge graph. Entities (unique per scope by normalised name, with
    # aliases), relations with the time they held in the world (valid_at, invalid_at)
    # and the time engram knew them (created_at, expired_at), relation types, and what
    # ties them to facts: mentions (spans of a fact's words naming an entity), groundings
    # (the names a fact's words give, by the rules or by a model, which keep an extracted
    # entity alive) and support; graph_reads marks the facts a model extractor has read,
    # for the words it read. The database keeps the graph with its facts, whatever path
    # writes them: a fact written or given new words is queued (graph_dirty) for the core
    # to read before the write commits; a fact given new words loses its groundings, its
    # support of extracted relations and its reads; a fact leaving takes its mentions,
    # groundings, support and reads; an entity that goes queues the facts that mentioned
    # or grounded it (an extracted one goes when left with no grounding); an extracted
    # relation left with no support goes.
    """
    CREATE TABLE entities (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL,
        name TEXT NOT NULL,
        norm TEXT NOT NULL,
        type TEXT,
        summary TEXT,
        attributes TEXT NOT NULL,
        origin TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (scope, norm)
    );

    CREATE TABLE entity_aliases (
        scope TEXT NOT NULL,
        norm TEXT NOT NULL,
        name TEXT NOT NULL,
        entity TEXT NOT NULL,
        PRIMARY KEY (scope, norm)
    ) WITHOUT ROWID;
    CREATE INDEX entity_aliases_by_entity ON entity_aliases (entity);

    CREATE TABLE mentions (
        fact_id TEXT NOT NULL,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        entity TEXT NOT NULL,
        scope TEXT NOT NULL,
        PRIMARY KEY (fact_id, start)
    ) WITHOUT ROWID;
    CREATE INDEX mentions_by_entity ON mentions (entity);

    CREATE TABLE groundings (
        fact_id TEXT NOT NULL,
        entity TEXT NOT NULL,
        extractor TEXT NOT NULL,
        PRIMARY KEY (fact_id, entity, extractor)
    ) WITHOUT ROWID;
    CREATE INDEX groundings_by_entity ON groundings (entity);

    CREATE TABLE graph_reads (
        fact_id TEXT NOT NULL,
        extractor TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        PRIMARY KEY (fact_id, extractor)
    ) WITHOUT ROWID;

    CREATE TABLE graph_dirty (
        scope TEXT NOT NULL,
        fact_id TEXT NOT NULL,
        PRIMARY KEY (scope, fact_id)
    ) WITHOUT ROWID;

    CREATE TABLE relations (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL,
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        type TEXT NOT NULL,
        attributes TEXT NOT NULL,
        origin TEXT NOT NULL,
        valid_at INTEGER,
        invalid_at INTEGER,
        created_at INTEGER NOT NULL,
        expired_at INTEGER
    );
    CREATE INDEX relations_by_source ON relations (scope, source, type);
    CREATE INDEX relations_by_target ON relations (scope, target, type);

    CREATE TABLE relation_support (
        relation TEXT NOT NULL,
        fact_id TEXT NOT NULL,
        PRIMARY KEY (relation, fact_id)
    ) WITHOUT ROWID;
    CREATE INDEX relation_support_by_fact ON relation_support (fact_id);

    CREATE TABLE relation_types (
        scope TEXT NOT NULL,
        type TEXT NOT NULL,
        single_valued INTEGER NOT NULL,
        PRIMARY KEY (scope, type)
    ) WITHOUT ROWID;

    CREATE TRIGGER facts_ai_graph AFTER INSERT ON facts BEGIN
        INSERT OR IGNORE INTO graph_dirty (scope, fact_id) VALUES (new.scope, new.id);
    END;
    CREATE TRIGGER facts_au_graph AFTER UPDATE OF content ON facts
        WHEN new.content IS NOT old.content BEGIN
        DELETE FROM mentions WHERE fact_id = old.id;
        DELETE FROM groundings WHERE fact_id = old.id;
        DELETE FROM relation_support WHERE fact_id = old.id
            AND relation IN (SELECT id FROM relations WHERE origin = 'extracted');
        DELETE FROM graph_reads WHERE fact_id = old.id;
        INSERT OR IGNORE INTO graph_dirty (scope, fact_id) VALUES (new.scope, new.id);
    END;
    CREATE TRIGGER facts_ad_graph AFTER DELETE ON facts BEGIN
        DELETE FROM mentions WHERE fact_id = old.id;
        DELETE FROM groundings WHERE fact_id = old.id;
        DELETE FROM relation_support WHERE fact_id = old.id;
        DELETE FROM graph_reads WHERE fact_id = old.id;
        DELETE FROM graph_dirty WHERE scope = old.scope AND fact_id = old.id;
    END;
    CREATE TRIGGER groundings_ad_graph AFTER DELETE ON groundings BEGIN
        DELETE FROM entities WHERE id = old.entity AND origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM groundings WHERE entity = old.entity);
    END;
    CREATE TRIGGER entities_ad_graph AFTER DELETE ON entities BEGIN
        INSERT OR IGNORE INTO graph_dirty (scope, fact_id)
            SELECT scope, fact_id FROM mentions WHERE entity = old.id;
        INSERT OR IGNORE INTO graph_dirty (scope, fact_id)
            SELECT old.scope, fact_id FROM groundings WHERE entity = old.id;
        DELETE FROM entity_aliases WHERE entity = old.id;
        DELETE FROM mentions WHERE entity = old.id;
        DELETE FROM groundings WHERE entity = old.id;
        DELETE FROM relations WHERE source = old.id OR target = old.id;
    END;
    CREATE TRIGGER relation_support_ad_graph AFTER DELETE ON relation_support BEGIN
        DELETE FROM relations WHERE id = old.relation AND origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM relation_support WHERE relation = old.relation);
    END;
    CREATE TRIGGER relations_ad_graph AFTER DELETE ON relations BEGIN
        DELETE FROM relation_support WHERE relation = old.id;
    END;
    """,
    # 12: retrieval feedback, whether a response used or ignored an injected fact, with
    # the rule that said so (core/usage.py). A fact's signals outlive its soft forget
    # (it may come back) and go with its deletion for good: when it leaves facts with no
    # trash row (a soft forget writes the trash row first), or leaves the trash with no
    # live row (a restore writes the live row first).
    """
    CREATE TABLE retrieval_feedback (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL,
        fact_id TEXT NOT NULL,
        signal TEXT NOT NULL,
        reason TEXT,
        score REAL,
        query TEXT,
        at INTEGER NOT NULL
    );
    CREATE INDEX retrieval_feedback_by_fact ON retrieval_feedback (fact_id, at);

    CREATE TRIGGER facts_ad_feedback AFTER DELETE ON facts
        WHEN NOT EXISTS (SELECT 1 FROM fact_trash WHERE id = old.id) BEGIN
        DELETE FROM retrieval_feedback WHERE fact_id = old.id;
    END;
    CREATE TRIGGER fact_trash_ad_feedback AFTER DELETE ON fact_trash
        WHEN NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN
        DELETE FROM retrieval_feedback WHERE fact_id = old.id;
    END;
    """,
    # 13: documents and their chunks; each chunk names the fact holding its words (NULL
    # once that fact is deleted for good, which the trigger sees to).
    """
    CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        source TEXT NOT NULL,
        media_type TEXT NOT NULL,
        title TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        chunker TEXT NOT NULL,
        metadata TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (scope, source)
    );
    CREATE TABLE document_chunks (
        document TEXT NOT NULL,
        idx INTEGER NOT NULL,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        heading TEXT NOT NULL,
        fact_id TEXT,
        PRIMARY KEY (document, idx)
    ) WITHOUT ROWID;
    CREATE INDEX document_chunks_fact ON document_chunks (fact_id);
    CREATE TRIGGER facts_ad_documents AFTER DELETE ON facts BEGIN
        UPDATE document_chunks SET fact_id = NULL WHERE fact_id = old.id;
    END;
    """,
    # 14: whether consolidation has applied a feedback signal to its fact's strength
    # (0 until it has; a revert of that step sets it back).
    """
    ALTER TABLE retrieval_feedback ADD COLUMN applied INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX retrieval_feedback_pending ON retrieval_feedback (scope, seq)
        WHERE applied = 0;
    """,
    # 15: the page of a PDF a chunk was cut from (NULL for other documents).
    """
    ALTER TABLE document_chunks ADD COLUMN page INTEGER;
    """,
    # 16: copies follow their source (core/derived.py). A session entry that facts
    # were remembered from is hidden while they are all in the trash and deleted with the
    # last of them; a turn's entry keeps the width of its fact's context, to build it
    # again; a wiki page listing a fact goes with it. The triggers queue a fact that
    # leaves, comes back from the trash or is reworded, when something is derived from
    # it (it points at an entry, or its scope has a wiki); every write reads the queue
    # before it commits.
    """
    ALTER TABLE session_entries ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE session_entries ADD COLUMN width INTEGER;
    -- A turn whose words were stored already (as another turn, or a fact) repeats that
    -- fact: its entry shows, hides and goes with it.
    ALTER TABLE session_entries ADD COLUMN repeats TEXT;
    CREATE INDEX session_entries_repeats ON session_entries (repeats) WHERE repeats IS NOT NULL;
    -- The graph reads no wiki page (its names are the folded facts'): each is read again.
    INSERT OR IGNORE INTO graph_dirty (scope, fact_id) SELECT scope, id FROM facts
        WHERE type = 'wiki';
    CREATE INDEX fact_trash_by_source ON fact_trash (source_sandbox, source_entry)
        WHERE source_sandbox IS NOT NULL;
    CREATE INDEX fact_trash_wiki ON fact_trash (scope) WHERE type = 'wiki';
    CREATE INDEX facts_wiki ON facts (scope) WHERE type = 'wiki';
    CREATE TABLE derived_dirty (
        scope TEXT NOT NULL,
        fact_id TEXT NOT NULL,
        session_id TEXT,
        idx INTEGER,
        PRIMARY KEY (scope, fact_id)
    ) WITHOUT ROWID;
    -- A chunk's fact that leaves is queued too: its neighbours' context holds its words.
    -- The chunk keeps naming it while it is in the trash (a document deleted for good
    -- then deletes it there too); settling the queue stops it once deleted for good.
    DROP TRIGGER facts_ad_documents;
    CREATE TRIGGER facts_ad_documents AFTER DELETE ON facts
        WHEN EXISTS (SELECT 1 FROM document_chunks WHERE fact_id = old.id) BEGIN
        INSERT OR IGNORE INTO derived_dirty (scope, fact_id, session_id, idx)
            VALUES (old.scope, old.id, old.source_sandbox, old.source_entry);
    END;
    CREATE TRIGGER fact_trash_ad_documents AFTER DELETE ON fact_trash
        WHEN NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id)
        AND EXISTS (SELECT 1 FROM document_chunks WHERE fact_id = old.id) BEGIN
        INSERT OR IGNORE INTO derived_dirty (scope, fact_id, session_id, idx)
            VALUES (old.scope, old.id, old.source_sandbox, old.source_entry);
    END;
    CREATE TRIGGER facts_ad_derived AFTER DELETE ON facts
        WHEN old.type IS NOT 'wiki' AND (old.source_sandbox IS NOT NULL
        OR EXISTS (SELECT 1 FROM session_entries WHERE repeats = old.id) OR EXISTS (
            SELECT 1 FROM documents WHERE scope = old.scope
            AND source >= 'wiki:' AND source < 'wiki;')
        OR EXISTS (SELECT 1 FROM fact_trash WHERE scope = old.scope AND type = 'wiki')) BEGIN
        INSERT OR IGNORE INTO derived_dirty (scope, fact_id, session_id, idx)
            VALUES (old.scope, old.id, old.source_sandbox, old.source_entry);
    END;
    -- A restore writes the live row, then deletes the trash row.
    CREATE TRIGGER fact_trash_ad_restored AFTER DELETE ON fact_trash
        WHEN EXISTS (SELECT 1 FROM facts WHERE id = old.id)
        AND (old.source_sandbox IS NOT NULL
            OR EXISTS (SELECT 1 FROM document_chunks WHERE fact_id = old.id)
            OR EXISTS (SELECT 1 FROM session_entries WHERE repeats = old.id)
            OR old.type IS NOT 'wiki' AND (EXISTS (
                SELECT 1 FROM documents WHERE scope = old.scope
                AND source >= 'wiki:' AND source < 'wiki;')
            OR EXISTS (SELECT 1 FROM fact_trash WHERE scope = old.scope AND type = 'wiki')))
        BEGIN
        INSERT OR IGNORE INTO derived_dirty (scope, fact_id, session_id, idx)
            VALUES (old.scope, old.id, old.source_sandbox, old.source_entry);
    END;
    CREATE TRIGGER facts_au_derived AFTER UPDATE OF content ON facts
        WHEN new.content IS NOT old.content AND new.type IS NOT 'wiki'
        AND (new.source_sandbox IS NOT NULL
        OR EXISTS (SELECT 1 FROM document_chunks WHERE fact_id = new.id)
        OR EXISTS (SELECT 1 FROM session_entries WHERE repeats = new.id) OR EXISTS (
            SELECT 1 FROM documents WHERE scope = new.scope
            AND source >= 'wiki:' AND source < 'wiki;')
        OR EXISTS (SELECT 1 FROM fact_trash WHERE scope = new.scope AND type = 'wiki')) BEGIN
        INSERT OR IGNORE INTO derived_dirty (scope, fact_id, session_id, idx)
            VALUES (new.scope, new.id, new.source_sandbox, new.source_entry);
    END;
    -- A name that leaves the scope changes how the facts holding its words read (a
    -- known name is also found where it opens a sentence): the graph reads them again.
    CREATE TABLE graph_gone (
        scope TEXT NOT NULL,
        norm TEXT NOT NULL,
        PRIMARY KEY (scope, norm)
    ) WITHOUT ROWID;
    DROP TRIGGER entities_ad_graph;
    CREATE TRIGGER entities_ad_graph AFTER DELETE ON entities BEGIN
        INSERT OR IGNORE INTO graph_gone (scope, norm) VALUES (old.scope, old.norm);
        INSERT OR IGNORE INTO graph_gone (scope, norm)
            SELECT old.scope, norm FROM entity_aliases WHERE entity = old.id;
        INSERT OR IGNORE INTO graph_dirty (scope, fact_id)
            SELECT scope, fact_id FROM mentions WHERE entity = old.id;
        INSERT OR IGNORE INTO graph_dirty (scope, fact_id)
            SELECT old.scope, fact_id FROM groundings WHERE entity = old.id;
        DELETE FROM entity_aliases WHERE entity = old.id;
        DELETE FROM mentions WHERE entity = old.id;
        DELETE FROM groundings WHERE entity = old.id;
        DELETE FROM relations WHERE source = old.id OR target = old.id;
    END;
    CREATE TRIGGER fact_trash_ad_derived AFTER DELETE ON fact_trash
        WHEN old.type IS NOT 'wiki'
        AND NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id)
        AND (old.source_sandbox IS NOT NULL
        OR EXISTS (SELECT 1 FROM session_entries WHERE repeats = old.id) OR EXISTS (
            SELECT 1 FROM documents WHERE scope = old.scope
            AND source >= 'wiki:' AND source < 'wiki;')
        OR EXISTS (SELECT 1 FROM fact_trash WHERE scope = old.scope AND type = 'wiki')) BEGIN
        INSERT OR IGNORE INTO derived_dirty (scope, fact_id, session_id, idx)
            VALUES (old.scope, old.id, old.source_sandbox, old.source_entry);
    END;
    """,
    """
    -- 17: a fact may expire (expires_at, microseconds since the epoch; NULL: never).
    -- An expired fact is no longer recalled or listed; consolidation then trashes it.
    ALTER TABLE facts ADD COLUMN expires_at INTEGER;
    ALTER TABLE fact_trash ADD COLUMN expires_at INTEGER;
    CREATE INDEX facts_by_expiry ON facts (scope, expires_at) WHERE expires_at IS NOT NULL;
    """,
    # 18: a large scope's approximate vector index, a file beside the database
    # (storage/sqlite/index/approximate.py), named here once built: what it holds is the
    # scope's rows up to last_seq as of change-log mark ``mark``. A fact it holds whose
    # words leave the store for good (erased, not trashed; purged from the trash; its
    # words or vector rewritten) takes the row with it, so no search reads the file again
    # and the commit deletes it; ``erasures`` counts such changes per scope, so a build
    # that overlapped one is not installed.
    """
    CREATE TABLE vector_indexes (
        scope TEXT PRIMARY KEY,
        file TEXT NOT NULL UNIQUE,
        mark INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        size INTEGER NOT NULL,
        dimension INTEGER NOT NULL
    ) WITHOUT ROWID;
    ALTER TABLE scope_state ADD COLUMN erasures INTEGER NOT NULL DEFAULT 0;
    CREATE TRIGGER facts_ad_erased AFTER DELETE ON facts
    WHEN NOT EXISTS (SELECT 1 FROM fact_trash WHERE id = old.id) BEGIN
        UPDATE scope_state SET erasures = erasures + 1 WHERE scope = old.scope;
        DELETE FROM vector_indexes WHERE scope = old.scope AND last_seq >= old.seq;
    END;
    CREATE TRIGGER facts_au_erased AFTER UPDATE OF content, context ON facts BEGIN
        UPDATE scope_state SET erasures = erasures + 1 WHERE scope = old.scope;
        DELETE FROM vector_indexes WHERE scope = old.scope AND last_seq >= old.seq;
    END;
    CREATE TRIGGER fact_vectors_au_erased AFTER UPDATE OF vector ON fact_vectors BEGIN
        UPDATE scope_state SET erasures = erasures + 1
        WHERE scope = (SELECT scope FROM facts WHERE seq = new.fact);
        DELETE FROM vector_indexes
        WHERE scope = (SELECT scope FROM facts WHERE seq = new.fact) AND last_seq >= new.fact;
    END;
    CREATE TRIGGER fact_trash_ad_erased AFTER DELETE ON fact_trash
    WHEN NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN
        UPDATE scope_state SET erasures = erasures + 1 WHERE scope = old.scope;
        DELETE FROM vector_indexes WHERE scope = old.scope;
    END;
    """,
    # 19: vectors stored as float16 (storage/sql/dialect.py, SQLITE_VECTOR), half their
    # bytes. Rewritten as REPLACE, not UPDATE: the values are the same vectors, so no
    # change is logged and no index file is dropped (an index re-scores its candidates
    # from the rows). engram_half is the migration's own function (``migrate``).
    """
    REPLACE INTO fact_vectors (fact, vector) SELECT fact, engram_half(vector) FROM fact_vectors;
    UPDATE fact_trash SET vector = engram_half(vector) WHERE vector IS NOT NULL;
    UPDATE scope_state SET version = version + 1, epoch = epoch + 1;
    """,
    # 20: a content hash kept as its first 128 bits in base64url (storage/rows.py,
    # stored_digest), 42 characters less in the row and in the scope's unique index.
    """
    UPDATE facts SET content_hash = engram_digest(content_hash);
    UPDATE fact_trash SET content_hash = engram_digest(content_hash);
    UPDATE graph_reads SET content_hash = engram_digest(content_hash);
    """,
    # 21: what a vector index file's graph was built exploring (approximate.py,
    # EXPANSION_ADD): files from before were built exploring 128, and a query must explore
    # more of such a graph to find as much.
    """
    ALTER TABLE vector_indexes ADD COLUMN built_with INTEGER NOT NULL DEFAULT 128;
    """,
    # 22: the type the rules read a mention with (core/graph/entity_types.py); an
    # extracted entity with no type of its own takes its mentions' most frequent one.
    # Mentions from before have none until their facts are read again
    # (mem.graph.extract(ref)).
    """
    ALTER TABLE mentions ADD COLUMN type TEXT;
    """,
    # 23: which extractor read an extracted relation: the rules' follow their facts'
    # words (core/graph/indexing.py), the llm's are the backlog's (core/graph/llm.py);
    # every extracted relation before this one was the llm's. The rules' relations of
    # facts written before come when those facts are read again (mem.graph.extract(ref)).
    """
    ALTER TABLE relations ADD COLUMN extractor TEXT;
    UPDATE relations SET extractor = 'llm' WHERE origin = 'extracted';
    """,
    # 24: the rules' groundings are flags on the mentions that carry them (``grounds``),
    # not rows of their own: a fact's reading grounds the entities its words name, and a
    # row repeating each mention's fact and entity with its own index cost 146 bytes a
    # fact (bench/scale.py's corpus). A rules grounding no mention carries stays a row, as
    # every model's does. An extracted entity goes when neither grounds it any longer.
    # Rows written before stay until their facts are read again.
    """
    ALTER TABLE mentions ADD COLUMN grounds INTEGER NOT NULL DEFAULT 0;
    DROP TRIGGER groundings_ad_graph;
    CREATE TRIGGER groundings_ad_graph AFTER DELETE ON groundings BEGIN
        DELETE FROM entities WHERE id = old.entity AND origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM groundings WHERE entity = old.entity)
            AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity = old.entity AND grounds = 1);
    END;
    CREATE TRIGGER mentions_ad_graph AFTER DELETE ON mentions WHEN old.grounds = 1 BEGIN
        DELETE FROM entities WHERE id = old.entity AND origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM groundings WHERE entity = old.entity)
            AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity = old.entity AND grounds = 1);
    END;
    CREATE TRIGGER mentions_au_graph AFTER UPDATE OF entity, grounds ON mentions
        WHEN old.grounds = 1 AND (new.grounds = 0 OR new.entity IS NOT old.entity) BEGIN
        DELETE FROM entities WHERE id = old.entity AND origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM groundings WHERE entity = old.entity)
            AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity = old.entity AND grounds = 1);
    END;
    """,
    # 25: a live fact's vector that leaves for good (erased, its words or vector
    # rewritten) is overwritten in the index file that holds it, after the commit
    # (approximate.py, ``scrub``), instead of the file going with it: at 1M facts one
    # correction had made every search exact (the scope's vectors read into memory) until
    # a new graph was built, 15 minutes later. ``vector_scrubs`` names each such file and
    # row until it is overwritten (rows naming a file no index names are dropped then). A
    # fact purged from the trash still drops its scope's file: the trash does not keep
    # the row it had.
    """
    CREATE TABLE vector_scrubs (
        file TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (file, seq)
    ) WITHOUT ROWID;
    DROP TRIGGER facts_ad_erased;
    DROP TRIGGER facts_au_erased;
    DROP TRIGGER fact_vectors_au_erased;
    CREATE TRIGGER facts_ad_erased AFTER DELETE ON facts
    WHEN NOT EXISTS (SELECT 1 FROM fact_trash WHERE id = old.id) BEGIN
        UPDATE scope_state SET erasures = erasures + 1 WHERE scope = old.scope;
        INSERT OR IGNORE INTO vector_scrubs (file, seq)
        SELECT file, old.seq FROM vector_indexes WHERE scope = old.scope AND last_seq >= old.seq;
    END;
    CREATE TRIGGER facts_au_erased AFTER UPDATE OF content, context ON facts BEGIN
        UPDATE scope_state SET erasures = erasures + 1 WHERE scope = old.scope;
        INSERT OR IGNORE INTO vector_scrubs (file, seq)
        SELECT file, old.seq FROM vector_indexes WHERE scope = old.scope AND last_seq >= old.seq;
    END;
    CREATE TRIGGER fact_vectors_au_erased AFTER UPDATE OF vector ON fact_vectors BEGIN
        UPDATE scope_state SET erasures = erasures + 1
        WHERE scope = (SELECT scope FROM facts WHERE seq = new.fact);
        INSERT OR IGNORE INTO vector_scrubs (file, seq)
        SELECT file, new.fact FROM vector_indexes
        WHERE scope = (SELECT scope FROM facts WHERE seq = new.fact) AND last_seq >= new.fact;
    END;
    """,
    # 26: a fact moved to the trash has its vector overwritten in the index file as well
    # (the trash keeps its own copy, which a restore writes back as a new row), and counts
    # as an erasure for a build that read it: a purge from the trash then finds no copy in
    # any file and keeps the scope's file (a forget purges the trash's oldest, so at 1M
    # facts a forget a day had made searches exact for the 15 minutes of a new graph).
    # Facts in the trash before this migration may be in a file (``vector_trash_held``):
    # their purge drops it, as before.
    """
    CREATE TABLE vector_trash_held (id TEXT PRIMARY KEY) WITHOUT ROWID;
    INSERT INTO vector_trash_held (id) SELECT t.id FROM fact_trash t
    WHERE EXISTS (SELECT 1 FROM vector_indexes i WHERE i.scope = t.scope);
    DROP TRIGGER facts_ad_erased;
    CREATE TRIGGER facts_ad_vectors AFTER DELETE ON facts BEGIN
        UPDATE scope_state SET erasures = erasures + 1 WHERE scope = old.scope;
        INSERT OR IGNORE INTO vector_scrubs (file, seq)
        SELECT file, old.seq FROM vector_indexes WHERE scope = old.scope AND last_seq >= old.seq;
    END;
    DROP TRIGGER fact_trash_ad_erased;
    CREATE TRIGGER fact_trash_ad_erased AFTER DELETE ON fact_trash
    WHEN NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN
        UPDATE scope_state SET erasures = erasures + 1 WHERE scope = old.scope;
        DELETE FROM vector_indexes WHERE scope = old.scope
            AND EXISTS (SELECT 1 FROM vector_trash_held WHERE id = old.id);
        DELETE FROM vector_trash_held WHERE id = old.id;
    END;
    CREATE TRIGGER fact_trash_ad_vector_held AFTER DELETE ON fact_trash
    WHEN EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN
        DELETE FROM vector_trash_held WHERE id = old.id;
    END;
    """,
    # 27: the facts in the trash since before 26 have their vectors overwritten in the
    # index files too, so that no purge drops a file (nor a merge copies their bytes into
    # the next). A file holds such a fact only where its scope's change log names the
    # fact's seq after the file's mark (a build reads live rows): each seq so named, no
    # longer taken from the file, goes to ``vector_scrubs``, which the store overwrites as
    # it opens (one already zero is passed over). A file whose log was cleared past its
    # mark cannot tell which it holds: where its scope has such a fact, it is dropped (the
    # store deletes it as it opens, and a new one is built).
    """
    INSERT OR IGNORE INTO vector_scrubs (file, seq)
    SELECT i.file, c.seq FROM vector_indexes i
    JOIN fact_changes c ON c.scope = i.scope AND c.id > i.mark
    WHERE c.seq BETWEEN 1 AND i.last_seq AND EXISTS (
        SELECT 1 FROM vector_trash_held h JOIN fact_trash t ON t.id = h.id
        WHERE t.scope = i.scope);
    DELETE FROM vector_indexes
    WHERE mark < (SELECT changes_from FROM scope_state s WHERE s.scope = vector_indexes.scope)
        AND EXISTS (
            SELECT 1 FROM vector_trash_held h JOIN fact_trash t ON t.id = h.id
            WHERE t.scope = vector_indexes.scope);
    DROP TRIGGER fact_trash_ad_vector_held;
    DROP TRIGGER fact_trash_ad_erased;
    CREATE TRIGGER fact_trash_ad_erased AFTER DELETE ON fact_trash
    WHEN NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN
        UPDATE scope_state SET erasures = erasures + 1 WHERE scope = old.scope;
    END;
    DROP TABLE vector_trash_held;
    """,
    # 28: a large scope's common terms' postings saved as its text base
    # (storage/sqlite/index/textbase.py): ``text_bases`` names the build, the change-log
    # mark it was read at and the newest fact it holds; ``text_base_terms`` holds each
    # term's facts and its count in each. Words that leave the store for good take their
    # scope's base with them (the postings would still tell which common words a fact
    # held): each such change counts in ``scope_state.words_erased``, whose change drops
    # the base and refuses a build that read before it. They are a fact erased (not
    # trashed) or purged from the trash, a context rewritten, and a before-state erased
    # from the ledger or dropped by its retention (a corrected fact's old words stay
    # there, for a revert, until then).
    """
    CREATE TABLE text_bases (
        scope TEXT PRIMARY KEY,
        build INTEGER NOT NULL,
        mark INTEGER NOT NULL,
        last_seq INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE text_base_terms (
        scope TEXT NOT NULL,
        term TEXT NOT NULL,
        seqs BLOB NOT NULL,
        counts BLOB NOT NULL,
        PRIMARY KEY (scope, term)
    );
    ALTER TABLE scope_state ADD COLUMN words_erased INTEGER NOT NULL DEFAULT 0;
    CREATE TRIGGER scope_state_au_text_base AFTER UPDATE OF words_erased ON scope_state BEGIN
        DELETE FROM text_base_terms WHERE scope = new.scope;
        DELETE FROM text_bases WHERE scope = new.scope;
    END;
    CREATE TRIGGER facts_ad_text_base AFTER DELETE ON facts
    WHEN NOT EXISTS (SELECT 1 FROM fact_trash WHERE id = old.id) BEGIN
        UPDATE scope_state SET words_erased = words_erased + 1 WHERE scope = old.scope;
    END;
    CREATE TRIGGER facts_au_text_base AFTER UPDATE OF context ON facts BEGIN
        UPDATE scope_state SET words_erased = words_erased + 1 WHERE scope = old.scope;
    END;
    CREATE TRIGGER ledger_items_au_text_base AFTER UPDATE OF before ON ledger_items
    WHEN old.before IS NOT NULL AND old.before != '' AND new.before IS NULL BEGIN
        UPDATE scope_state SET words_erased = words_erased + 1
        WHERE scope = (SELECT scope FROM ledger WHERE seq = old.entry);
    END;
    CREATE TRIGGER ledger_items_ad_text_base AFTER DELETE ON ledger_items
    WHEN old.before IS NOT NULL AND old.before != '' BEGIN
        UPDATE scope_state SET words_erased = words_erased + 1
        WHERE scope = (SELECT scope FROM ledger WHERE seq = old.entry);
    END;
    CREATE TRIGGER fact_trash_ad_text_base AFTER DELETE ON fact_trash
    WHEN NOT EXISTS (SELECT 1 FROM facts WHERE id = old.id) BEGIN
        UPDATE scope_state SET words_erased = words_erased + 1 WHERE scope = old.scope;
    END;
    """,
    # 29: a write that erases words zeroes the unused space of the file's pages, where
    # rows moved while they lived left old copies (storage/sqlite/freespace.py); whether
    # a scrub is due is a row of ``meta``, due at once for a store from before (migrate).
    """
    INSERT INTO meta (key, value) VALUES ('scrub_due', '0') ON CONFLICT (key) DO NOTHING;
    """,
    # 30: a scope's text base follows its words leaving for good instead of going with
    # them: the change marks it ``strip_due``, and the erasing write's commit takes the
    # facts changed since the base's mark out of its postings (textbase.strip); until
    # then no search reads it (a write by another program: the next erasing write of a
    # store, or its next open, strips it).
    """
    ALTER TABLE text_bases ADD COLUMN strip_due INTEGER NOT NULL DEFAULT 0;
    DROP TRIGGER scope_state_au_text_base;
    CREATE TRIGGER scope_state_au_text_base AFTER UPDATE OF words_erased ON scope_state BEGIN
        UPDATE text_bases SET strip_due = 1 WHERE scope = new.scope AND strip_due = 0;
    END;
    """,
    # 31: an entity's mentions by entity with their types: an untyped extracted entity
    # reads its type as its mentions' most frequent (ENTITY_READ), counted in the index
    # alone instead of in every mention's row (30 entities of 29k mentions each: 1.7 s
    # to 0.1 s at a million facts).
    """
    DROP INDEX IF EXISTS mentions_by_entity;
    CREATE INDEX mentions_by_entity ON mentions (entity, type);
    """,
    # 32: a scope's facts of a type, and its verified facts (the filters a recall takes
    # that no index served): a filter no fact passes read every row of the scope to find
    # that out (130 ms at 1.15M facts). Partial, so an untyped or unverified fact costs
    # no byte (an entry's row number is its rowid).
    """
    CREATE INDEX facts_by_type ON facts (scope, type) WHERE type IS NOT NULL;
    CREATE INDEX facts_verified ON facts (scope) WHERE source_sandbox IS NOT NULL;
    """,
    # 33: a text base's postings packed, each seq as its gap from the one before and each
    # count in one byte (textbase.packed); the bases saved before, four bytes a seq and
    # two a count, are dropped, and a search of their scope builds them again.
    """
    DELETE FROM text_base_terms;
    DELETE FROM text_bases;
    """,
    # 34: a scope's facts of a strength other than the default, the only ones a strength
    # floor may drop: a floor read every row of the scope to count those it keeps (4 ms
    # at 100k facts, each recall under it). Partial, so a fact feedback never moved costs
    # no byte.
    """
    CREATE INDEX facts_by_strength ON facts (scope, strength) WHERE strength <> 1.0;
    """,
)
# The first schema whose erasures scrub the pages (migration 29).
PAGES_SCRUBBED = 29
# The scopes whose text base an erasure marked, to be stripped by the write (migration 30).
STRIP_DUE = "SELECT scope FROM text_bases WHERE strip_due = 1"


# A scope's change log may always hold this many rows, however small the scope
# (migration 6 spells it in its trigger).
LOG_FLOOR = 256
APPLICATION_ID = 0x656E6772  # "engr", in the file's header
ENGRAM_TABLES = frozenset({"meta", "working", "facts"})


# Each connection's own trigger (temporary, so no other program writing the file needs
# the function): the words of a scope that leave the store for good are counted in
# ``scope_state.words_erased`` (migration 28), and each count calls the connection's
# ``engram_words_left()``, which marks its transaction as erasing.
WORDS_LEFT = """
CREATE TEMP TRIGGER IF NOT EXISTS engram_words_left
AFTER UPDATE OF words_erased ON main.scope_state BEGIN SELECT engram_words_left(); END
"""


def scope_facts(conn: sqlite3.Connection, scope: str) -> int | None:
    """How many facts ``scope`` holds, as the triggers count them; None where it has never
    held one."""
    row = conn.execute("SELECT facts FROM scope_state WHERE scope = ?", (scope,)).fetchone()
    return None if row is None else int(row[0])


def change_mark(conn: sqlite3.Connection) -> int:
    """The newest change-log id ever given (0 before the first; ids are never reused): a
    copy read in the same transaction has seen every change up to it, and a write that
    moved it deleted or rewrote facts."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'fact_changes'").fetchone()
    return int(row[0]) if row else 0


def check_ours(conn: sqlite3.Connection, path: str) -> None:
    """Refuses (StorageFailure) a SQLite file that another application made; only reads.

    Ours carry engram's application_id, or, from before engram stamped it, engram's
    tables under a schema version. A file with no tables and no version is new: ours to
    create.
    """
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if application_id == APPLICATION_ID:
        return
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    empty = not tables and version == 0
    if application_id == 0 and (empty or (version >= 1 and tables >= ENGRAM_TABLES)):
        return
    raise StorageFailure(
        f"the file at {path} is another application's SQLite database, not an engram store; "
        "it was left as it was",
        hint="point engram at an engram store, or at a path where it may create one",
    )


def migrate(conn: sqlite3.Connection, path: str) -> int:
    """Brings the file to the newest schema, with FTS5's secure-delete where the driver
    has it (:func:`forgetting.secure_index`); refuses a file newer than this code.
    Returns the schema version."""
    functions(conn)
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StorageFailure(
                f"the store at {path} has schema version {version}, newer than this engram "
                f"knows ({len(MIGRATIONS)})",
                hint="upgrade engram",
            )
        for number in range(version, len(MIGRATIONS)):
            for statement in _statements(MIGRATIONS[number]):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        secured = forgetting.secure_index(conn, path)
        if 0 < version < PAGES_SCRUBBED:  # what its pages kept of rows moved goes too
            freespace.mark(conn, due=True)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if secured and version > 0:  # a store from before: what it forgot goes for good
        forgetting.rewrite(conn)
    return len(MIGRATIONS)


def functions(conn: sqlite3.Connection) -> None:
    """Gives ``conn`` the functions the migrations call."""
    conn.create_function("engram_half", 1, _half, deterministic=True)
    conn.create_function("engram_digest", 1, stored_digest, deterministic=True)


def _half(stored: bytes) -> bytes:
    """A vector stored as float32 (migrations 1-18) in the form stored now."""
    import numpy as np

    return sqlite_vector(np.frombuffer(stored, "<f4"))


def _statements(script: str) -> list[str]:
    """Splits a migration into statements, keeping trigger bodies whole."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements
