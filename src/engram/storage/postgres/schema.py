"""The PostgreSQL schema as numbered, append-only migrations, recorded in ``engram_schema``.

Never edit a migration that has shipped: append a new one. Migrations run under an
advisory lock, so several processes starting at once apply each one exactly once.
"""

from __future__ import annotations

from typing import Any

import psycopg

from engram.core.errors import StorageFailure

# Chosen once; every engram process takes this lock while it migrates.
MIGRATION_LOCK = 0x656E6772616D  # "engram"

MIGRATIONS: tuple[str, ...] = (
    # 1: the same tables as the SQLite store; full text as a generated tsvector, vectors
    # in their own table beside the scope (so a scope can have its own ANN index).
    """
    CREATE EXTENSION IF NOT EXISTS vector;

    CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);

    CREATE TABLE working (
        scope text NOT NULL,
        key text COLLATE "C" NOT NULL,
        value text NOT NULL,
        version bigint NOT NULL,
        updated_at bigint NOT NULL,
        expires_at bigint,
        PRIMARY KEY (scope, key)
    );

    CREATE TABLE facts (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        scope text NOT NULL,
        content text NOT NULL,
        content_hash text NOT NULL,
        context text,
        source_sandbox text,
        source_entry bigint,
        type text,
        tags text NOT NULL DEFAULT '[]',
        metadata text NOT NULL DEFAULT '{}',
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        corrected_by text,
        corrected_at bigint,
        words tsvector GENERATED ALWAYS AS
            (to_tsvector('english', content || ' ' || coalesce(context, ''))) STORED,
        UNIQUE (scope, content_hash)
    );
    CREATE INDEX facts_by_age ON facts (scope, created_at, seq);
    CREATE INDEX facts_words ON facts USING gin (words);

    CREATE TABLE fact_vectors (
        fact bigint PRIMARY KEY REFERENCES facts (seq) ON DELETE CASCADE,
        scope text NOT NULL,
        vector vector NOT NULL
    );
    CREATE INDEX fact_vectors_by_scope ON fact_vectors (scope);

    CREATE TABLE fact_tags (
        fact bigint NOT NULL REFERENCES facts (seq) ON DELETE CASCADE,
        scope text NOT NULL,
        tag text NOT NULL,
        PRIMARY KEY (fact, tag)
    );
    CREATE INDEX fact_tags_by_scope ON fact_tags (scope, tag, fact);

    -- facts counts a scope's facts (the vector search picks exact or ANN by it);
    -- ann_index names the scope's own HNSW index once it has one.
    CREATE TABLE scope_state (
        scope text PRIMARY KEY,
        facts bigint NOT NULL DEFAULT 0,
        ann_index text
    );

    CREATE TABLE agents (
        id text PRIMARY KEY,
        name text NOT NULL,
        scope text NOT NULL,
        parent_id text,
        created_at bigint NOT NULL,
        ended_at bigint
    );

    CREATE TABLE shares (
        person text NOT NULL,
        source text NOT NULL,
        reader text NOT NULL,
        allowed_at bigint NOT NULL,
        PRIMARY KEY (person, source, reader)
    );
    CREATE INDEX shares_by_reader ON shares (person, reader, source);
    """,
    # 2: the database counts each scope's facts itself, once per statement, so no write
    # path can leave the count (and the choice of exact or ANN search) behind.
    """
    CREATE FUNCTION engram_count_facts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO scope_state (scope, facts)
            SELECT scope, count(*) FROM added GROUP BY scope
            ON CONFLICT (scope) DO UPDATE SET facts = scope_state.facts + excluded.facts;
        ELSE
            UPDATE scope_state s SET facts = s.facts - d.n
            FROM (SELECT scope, count(*) AS n FROM removed GROUP BY scope) d
            WHERE s.scope = d.scope;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_counted_in AFTER INSERT ON facts REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION engram_count_facts();
    CREATE TRIGGER facts_counted_out AFTER DELETE ON facts REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION engram_count_facts();
    """,
    # 3: a fact's strength (0 to 10; 1.0 is neutral), as on SQLite.
    """
    ALTER TABLE facts ADD COLUMN strength double precision NOT NULL DEFAULT 1.0;
    """,
    # 4: history, as on SQLite: the ledger and its items, the trash, turn_user.
    """
    ALTER TABLE facts ADD COLUMN turn_user text;
    CREATE INDEX facts_by_turn_user ON facts (scope, turn_user) WHERE turn_user IS NOT NULL;

    CREATE TABLE fact_trash (
        id text PRIMARY KEY,
        scope text NOT NULL,
        content text NOT NULL,
        content_hash text NOT NULL,
        context text,
        source_sandbox text,
        source_entry bigint,
        type text,
        tags text NOT NULL,
        metadata text NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        corrected_by text,
        corrected_at bigint,
        strength double precision NOT NULL,
        turn_user text,
        vector vector,
        deleted_at bigint NOT NULL
    );
    CREATE INDEX fact_trash_by_scope ON fact_trash (scope, deleted_at, id);

    CREATE TABLE ledger (
        seq bigserial PRIMARY KEY,
        scope text NOT NULL,
        op text NOT NULL,
        at bigint NOT NULL,
        actor text NOT NULL,
        via text NOT NULL,
        turn_user text,
        request_id text,
        reverts bigint,
        reverted_by bigint,
        scrubbed integer NOT NULL DEFAULT 0
    );
    CREATE INDEX ledger_by_scope ON ledger (scope, seq);
    CREATE INDEX ledger_by_age ON ledger (at);

    CREATE TABLE ledger_items (
        entry bigint NOT NULL,
        kind text NOT NULL,
        object_id text NOT NULL,
        action text NOT NULL,
        token bigint,
        before text,
        PRIMARY KEY (entry, kind, object_id)
    );
    CREATE INDEX ledger_items_by_object ON ledger_items (kind, object_id, entry);
    """,
    # 5: episodic sessions and their append-only entries, as on SQLite.
    """
    CREATE TABLE sessions (
        id text PRIMARY KEY,
        scope text NOT NULL,
        parent_id text,
        fork_entry bigint,
        depth integer NOT NULL,
        name text,
        created_at bigint NOT NULL,
        next_index bigint NOT NULL
    );
    CREATE INDEX sessions_by_scope ON sessions (scope, created_at, id);
    CREATE INDEX sessions_by_parent ON sessions (parent_id);

    CREATE TABLE session_entries (
        session_id text NOT NULL,
        idx bigint NOT NULL,
        at bigint NOT NULL,
        kind text NOT NULL,
        role text,
        content text NOT NULL,
        data text,
        PRIMARY KEY (session_id, idx)
    );
    """,
    # 6: a fact by the session entry it came from, as on SQLite.
    """
    CREATE INDEX facts_by_source ON facts (source_sandbox, source_entry)
        WHERE source_sandbox IS NOT NULL;
    """,
    # 7: the knowledge graph, as on SQLite (migration 11), its triggers as functions.
    """
    CREATE TABLE entities (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        scope text NOT NULL,
        name text NOT NULL,
        norm text NOT NULL,
        type text,
        summary text,
        attributes text NOT NULL,
        origin text NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        UNIQUE (scope, norm)
    );

    CREATE TABLE entity_aliases (
        scope text NOT NULL,
        norm text NOT NULL,
        name text NOT NULL,
        entity text NOT NULL,
        PRIMARY KEY (scope, norm)
    );
    CREATE INDEX entity_aliases_by_entity ON entity_aliases (entity);

    CREATE TABLE mentions (
        fact_id text NOT NULL,
        start integer NOT NULL,
        "end" integer NOT NULL,
        entity text NOT NULL,
        scope text NOT NULL,
        PRIMARY KEY (fact_id, start)
    );
    CREATE INDEX mentions_by_entity ON mentions (entity);

    CREATE TABLE groundings (
        fact_id text NOT NULL,
        entity text NOT NULL,
        extractor text NOT NULL,
        PRIMARY KEY (fact_id, entity, extractor)
    );
    CREATE INDEX groundings_by_entity ON groundings (entity);

    CREATE TABLE graph_reads (
        fact_id text NOT NULL,
        extractor text NOT NULL,
        content_hash text NOT NULL,
        PRIMARY KEY (fact_id, extractor)
    );

    CREATE TABLE graph_dirty (
        scope text NOT NULL,
        fact_id text NOT NULL,
        PRIMARY KEY (scope, fact_id)
    );

    CREATE TABLE relations (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        scope text NOT NULL,
        source text NOT NULL,
        target text NOT NULL,
        type text NOT NULL,
        attributes text NOT NULL,
        origin text NOT NULL,
        valid_at bigint,
        invalid_at bigint,
        created_at bigint NOT NULL,
        expired_at bigint
    );
    CREATE INDEX relations_by_source ON relations (scope, source, type);
    CREATE INDEX relations_by_target ON relations (scope, target, type);

    CREATE TABLE relation_support (
        relation text NOT NULL,
        fact_id text NOT NULL,
        PRIMARY KEY (relation, fact_id)
    );
    CREATE INDEX relation_support_by_fact ON relation_support (fact_id);

    CREATE TABLE relation_types (
        scope text NOT NULL,
        type text NOT NULL,
        single_valued integer NOT NULL,
        PRIMARY KEY (scope, type)
    );

    CREATE FUNCTION engram_fact_came() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' THEN
            DELETE FROM mentions WHERE fact_id = OLD.id;
            DELETE FROM groundings WHERE fact_id = OLD.id;
            DELETE FROM relation_support WHERE fact_id = OLD.id
                AND relation IN (SELECT id FROM relations WHERE origin = 'extracted');
            DELETE FROM graph_reads WHERE fact_id = OLD.id;
        END IF;
        INSERT INTO graph_dirty (scope, fact_id) VALUES (NEW.scope, NEW.id)
            ON CONFLICT DO NOTHING;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_ai_graph AFTER INSERT ON facts
        FOR EACH ROW EXECUTE FUNCTION engram_fact_came();
    CREATE TRIGGER facts_au_graph AFTER UPDATE OF content ON facts
        FOR EACH ROW WHEN (NEW.content IS DISTINCT FROM OLD.content)
        EXECUTE FUNCTION engram_fact_came();

    CREATE FUNCTION engram_fact_left_graph() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM mentions WHERE fact_id = OLD.id;
        DELETE FROM groundings WHERE fact_id = OLD.id;
        DELETE FROM relation_support WHERE fact_id = OLD.id;
        DELETE FROM graph_reads WHERE fact_id = OLD.id;
        DELETE FROM graph_dirty WHERE scope = OLD.scope AND fact_id = OLD.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_ad_graph AFTER DELETE ON facts
        FOR EACH ROW EXECUTE FUNCTION engram_fact_left_graph();

    CREATE FUNCTION engram_grounding_left() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM entities WHERE id = OLD.entity AND origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM groundings WHERE entity = OLD.entity);
        RETURN NULL;
    END $$;
    CREATE TRIGGER groundings_ad_graph AFTER DELETE ON groundings
        FOR EACH ROW EXECUTE FUNCTION engram_grounding_left();

    CREATE FUNCTION engram_entity_left() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO graph_dirty (scope, fact_id)
            SELECT scope, fact_id FROM mentions WHERE entity = OLD.id
            ON CONFLICT DO NOTHING;
        INSERT INTO graph_dirty (scope, fact_id)
            SELECT OLD.scope, fact_id FROM groundings WHERE entity = OLD.id
            ON CONFLICT DO NOTHING;
        DELETE FROM entity_aliases WHERE entity = OLD.id;
        DELETE FROM mentions WHERE entity = OLD.id;
        DELETE FROM groundings WHERE entity = OLD.id;
        DELETE FROM relations WHERE source = OLD.id OR target = OLD.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER entities_ad_graph AFTER DELETE ON entities
        FOR EACH ROW EXECUTE FUNCTION engram_entity_left();

    CREATE FUNCTION engram_support_left() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM relations WHERE id = OLD.relation AND origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM relation_support WHERE relation = OLD.relation);
        RETURN NULL;
    END $$;
    CREATE TRIGGER relation_support_ad_graph AFTER DELETE ON relation_support
        FOR EACH ROW EXECUTE FUNCTION engram_support_left();

    CREATE FUNCTION engram_relation_left() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM relation_support WHERE relation = OLD.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER relations_ad_graph AFTER DELETE ON relations
        FOR EACH ROW EXECUTE FUNCTION engram_relation_left();
    """,
    # 8: retrieval feedback, as on SQLite (migration 12).
    """
    CREATE TABLE retrieval_feedback (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        scope text NOT NULL,
        fact_id text NOT NULL,
        signal text NOT NULL,
        reason text,
        score double precision,
        query text,
        at bigint NOT NULL
    );
    CREATE INDEX retrieval_feedback_by_fact ON retrieval_feedback (fact_id, at);

    CREATE FUNCTION engram_fact_left_feedback() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM facts WHERE id = OLD.id)
            AND NOT EXISTS (SELECT 1 FROM fact_trash WHERE id = OLD.id) THEN
            DELETE FROM retrieval_feedback WHERE fact_id = OLD.id;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_ad_feedback AFTER DELETE ON facts
        FOR EACH ROW EXECUTE FUNCTION engram_fact_left_feedback();
    CREATE TRIGGER fact_trash_ad_feedback AFTER DELETE ON fact_trash
        FOR EACH ROW EXECUTE FUNCTION engram_fact_left_feedback();
    """,
    # 9: documents and their chunks, as on SQLite (migration 13); each chunk names the
    # fact holding its words (NULL once that fact is deleted for good, which the trigger
    # sees to).
    """
    CREATE TABLE documents (
        id text PRIMARY KEY,
        scope text NOT NULL,
        source text NOT NULL,
        media_type text NOT NULL,
        title text NOT NULL,
        sha256 text NOT NULL,
        bytes bigint NOT NULL,
        chunker text NOT NULL,
        metadata text NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        UNIQUE (scope, source)
    );
    CREATE TABLE document_chunks (
        document text NOT NULL,
        idx integer NOT NULL,
        start bigint NOT NULL,
        "end" bigint NOT NULL,
        heading text NOT NULL,
        fact_id text,
        PRIMARY KEY (document, idx)
    );
    CREATE INDEX document_chunks_fact ON document_chunks (fact_id);
    CREATE FUNCTION engram_fact_left_documents() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE document_chunks SET fact_id = NULL WHERE fact_id = OLD.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_ad_documents AFTER DELETE ON facts
        FOR EACH ROW EXECUTE FUNCTION engram_fact_left_documents();
    """,
    # 10: whether consolidation applied a feedback signal, as on SQLite (migration 14).
    """
    ALTER TABLE retrieval_feedback ADD COLUMN applied integer NOT NULL DEFAULT 0;
    CREATE INDEX retrieval_feedback_pending ON retrieval_feedback (scope, seq)
        WHERE applied = 0;
    """,
    # 11: a chunk's PDF page, as on SQLite (migration 15).
    """
    ALTER TABLE document_chunks ADD COLUMN page integer;
    """,
    # 12: copies follow their source, as on SQLite (migration 16).
    """
    ALTER TABLE session_entries ADD COLUMN hidden integer NOT NULL DEFAULT 0;
    ALTER TABLE session_entries ADD COLUMN width integer;
    -- A turn whose words were stored already repeats that fact: its entry follows it.
    ALTER TABLE session_entries ADD COLUMN repeats text;
    CREATE INDEX session_entries_repeats ON session_entries (repeats) WHERE repeats IS NOT NULL;
    -- The graph reads no wiki page (its names are the folded facts'): each is read again.
    INSERT INTO graph_dirty (scope, fact_id) SELECT scope, id FROM facts WHERE type = 'wiki'
        ON CONFLICT DO NOTHING;
    CREATE INDEX fact_trash_by_source ON fact_trash (source_sandbox, source_entry)
        WHERE source_sandbox IS NOT NULL;
    CREATE INDEX fact_trash_wiki ON fact_trash (scope) WHERE type = 'wiki';
    CREATE INDEX facts_wiki ON facts (scope) WHERE type = 'wiki';
    CREATE TABLE derived_dirty (
        scope text NOT NULL,
        fact_id text NOT NULL,
        session_id text,
        idx bigint,
        PRIMARY KEY (scope, fact_id)
    );
    CREATE FUNCTION engram_has_wiki(scope_key text) RETURNS boolean LANGUAGE sql STABLE AS $$
        SELECT EXISTS (SELECT 1 FROM documents WHERE scope = scope_key
            AND starts_with(source, 'wiki:'))
        OR EXISTS (SELECT 1 FROM fact_trash WHERE scope = scope_key AND type = 'wiki')
    $$;
    CREATE FUNCTION engram_repeated(id text) RETURNS boolean LANGUAGE sql STABLE AS $$
        SELECT EXISTS (SELECT 1 FROM session_entries WHERE repeats = id)
    $$;
    CREATE FUNCTION engram_fact_derived() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            IF TG_TABLE_NAME = 'fact_trash' AND EXISTS (SELECT 1 FROM facts WHERE id = OLD.id)
            THEN  -- a restore (the live row first): what follows it comes back
                IF OLD.source_sandbox IS NULL
                    AND NOT EXISTS (SELECT 1 FROM document_chunks WHERE fact_id = OLD.id)
                    AND (OLD.type IS NOT DISTINCT FROM 'wiki' OR NOT engram_has_wiki(OLD.scope))
                    AND NOT engram_repeated(OLD.id)
                THEN
                    RETURN NULL;
                END IF;
            ELSIF OLD.type IS NOT DISTINCT FROM 'wiki'
                OR (OLD.source_sandbox IS NULL AND NOT engram_has_wiki(OLD.scope)
                    AND NOT engram_repeated(OLD.id)) THEN
                RETURN NULL;
            END IF;
            INSERT INTO derived_dirty (scope, fact_id, session_id, idx)
                VALUES (OLD.scope, OLD.id, OLD.source_sandbox, OLD.source_entry)
                ON CONFLICT DO NOTHING;
            RETURN NULL;
        END IF;
        IF NEW.type IS NOT DISTINCT FROM 'wiki'
            OR (NEW.source_sandbox IS NULL AND NOT engram_has_wiki(NEW.scope)
                AND NOT EXISTS (SELECT 1 FROM document_chunks WHERE fact_id = NEW.id)
                AND NOT engram_repeated(NEW.id)) THEN
            RETURN NULL;
        END IF;
        INSERT INTO derived_dirty (scope, fact_id, session_id, idx)
            VALUES (NEW.scope, NEW.id, NEW.source_sandbox, NEW.source_entry)
            ON CONFLICT DO NOTHING;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_ad_derived AFTER DELETE ON facts
        FOR EACH ROW EXECUTE FUNCTION engram_fact_derived();
    CREATE TRIGGER facts_au_derived AFTER UPDATE OF content ON facts
        FOR EACH ROW WHEN (NEW.content IS DISTINCT FROM OLD.content)
        EXECUTE FUNCTION engram_fact_derived();
    CREATE TRIGGER fact_trash_ad_derived AFTER DELETE ON fact_trash
        FOR EACH ROW EXECUTE FUNCTION engram_fact_derived();
    -- A chunk's fact that leaves is queued: its neighbours' context holds its words. The
    -- chunk keeps naming it while it is in the trash; settling stops it once it is gone.
    CREATE OR REPLACE FUNCTION engram_fact_left_documents() RETURNS trigger
        LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_TABLE_NAME = 'fact_trash' AND EXISTS (SELECT 1 FROM facts WHERE id = OLD.id)
            OR NOT EXISTS (SELECT 1 FROM document_chunks WHERE fact_id = OLD.id)
        THEN
            RETURN NULL;
        END IF;
        INSERT INTO derived_dirty (scope, fact_id, session_id, idx)
            VALUES (OLD.scope, OLD.id, OLD.source_sandbox, OLD.source_entry)
            ON CONFLICT DO NOTHING;
        RETURN NULL;
    END $$;
    CREATE TRIGGER fact_trash_ad_documents AFTER DELETE ON fact_trash
        FOR EACH ROW EXECUTE FUNCTION engram_fact_left_documents();
    -- A name that leaves the scope changes how the facts holding its words read.
    CREATE TABLE graph_gone (
        scope text NOT NULL,
        norm text NOT NULL,
        PRIMARY KEY (scope, norm)
    );
    CREATE OR REPLACE FUNCTION engram_entity_left() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO graph_gone (scope, norm) VALUES (OLD.scope, OLD.norm)
            ON CONFLICT DO NOTHING;
        INSERT INTO graph_gone (scope, norm)
            SELECT OLD.scope, norm FROM entity_aliases WHERE entity = OLD.id
            ON CONFLICT DO NOTHING;
        INSERT INTO graph_dirty (scope, fact_id)
            SELECT scope, fact_id FROM mentions WHERE entity = OLD.id
            ON CONFLICT DO NOTHING;
        INSERT INTO graph_dirty (scope, fact_id)
            SELECT OLD.scope, fact_id FROM groundings WHERE entity = OLD.id
            ON CONFLICT DO NOTHING;
        DELETE FROM entity_aliases WHERE entity = OLD.id;
        DELETE FROM mentions WHERE entity = OLD.id;
        DELETE FROM groundings WHERE entity = OLD.id;
        DELETE FROM relations WHERE source = OLD.id OR target = OLD.id;
        RETURN NULL;
    END $$;
    """,
    """
    -- 13: a fact may expire, as on SQLite (migration 17).
    ALTER TABLE facts ADD COLUMN expires_at bigint;
    ALTER TABLE fact_trash ADD COLUMN expires_at bigint;
    CREATE INDEX facts_by_expiry ON facts (scope, expires_at) WHERE expires_at IS NOT NULL;
    """,
    """
    -- 14: a content hash kept as its first 128 bits in base64url (storage/rows.py,
    -- stored_digest), as on SQLite (migration 20).
    UPDATE facts SET content_hash = rtrim(translate(encode(
        substring(decode(content_hash, 'hex') FROM 1 FOR 16), 'base64'), '+/', '-_'), '=');
    UPDATE fact_trash SET content_hash = rtrim(translate(encode(
        substring(decode(content_hash, 'hex') FROM 1 FOR 16), 'base64'), '+/', '-_'), '=');
    UPDATE graph_reads SET content_hash = rtrim(translate(encode(
        substring(decode(content_hash, 'hex') FROM 1 FOR 16), 'base64'), '+/', '-_'), '=');
    """,
    """
    -- 15: a scope's postings, each word's facts in the order of what the word weighs in
    -- each (its ts_rank there), and each word's count of facts: full text sums the query's
    -- words' postings (storage/postgres/fulltext.py), where it read and ranked every
    -- matching fact's words.
    CREATE FUNCTION engram_term_query(term text) RETURNS tsquery
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT ('''' || replace(replace(term, '\\', '\\\\'), '''', '''''') || '''')::tsquery
    $$;
    CREATE TABLE fact_terms (
        scope text NOT NULL,
        term text NOT NULL,
        impact real NOT NULL,
        fact bigint NOT NULL
    );
    CREATE INDEX fact_terms_by_impact ON fact_terms (scope, term, impact DESC, fact);
    CREATE TABLE scope_terms (
        scope text NOT NULL,
        term text NOT NULL,
        facts integer NOT NULL,
        PRIMARY KEY (scope, term)
    );
    CREATE FUNCTION engram_terms_in() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO fact_terms (scope, term, impact, fact)
            SELECT a.scope, u.lexeme, ts_rank(a.words, engram_term_query(u.lexeme), 1), a.seq
            FROM added a, unnest(a.words) u;
        INSERT INTO scope_terms (scope, term, facts)
            SELECT a.scope, u.lexeme, count(*) FROM added a, unnest(a.words) u GROUP BY 1, 2
            ON CONFLICT (scope, term) DO UPDATE SET facts = scope_terms.facts + excluded.facts;
        RETURN NULL;
    END $$;
    CREATE FUNCTION engram_terms_out() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        -- The impact is computed again, so each posting is found by its whole key.
        DELETE FROM fact_terms t USING removed r, unnest(r.words) u
            WHERE t.scope = r.scope AND t.term = u.lexeme
            AND t.impact = ts_rank(r.words, engram_term_query(u.lexeme), 1) AND t.fact = r.seq;
        UPDATE scope_terms s SET facts = s.facts - gone.n
            FROM (SELECT r.scope, u.lexeme, count(*) AS n
                FROM removed r, unnest(r.words) u GROUP BY 1, 2) AS gone
            WHERE s.scope = gone.scope AND s.term = gone.lexeme;
        DELETE FROM scope_terms s USING removed r, unnest(r.words) u
            WHERE s.scope = r.scope AND s.term = u.lexeme AND s.facts <= 0;
        RETURN NULL;
    END $$;
    CREATE FUNCTION engram_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM fact_terms t USING unnest(OLD.words) u
            WHERE t.scope = OLD.scope AND t.term = u.lexeme
            AND t.impact = ts_rank(OLD.words, engram_term_query(u.lexeme), 1)
            AND t.fact = OLD.seq;
        UPDATE scope_terms s SET facts = s.facts - 1 FROM unnest(OLD.words) u
            WHERE s.scope = OLD.scope AND s.term = u.lexeme;
        DELETE FROM scope_terms s USING unnest(OLD.words) u
            WHERE s.scope = OLD.scope AND s.term = u.lexeme AND s.facts <= 0;
        INSERT INTO fact_terms (scope, term, impact, fact)
            SELECT NEW.scope, u.lexeme, ts_rank(NEW.words, engram_term_query(u.lexeme), 1),
                NEW.seq
            FROM unnest(NEW.words) u;
        INSERT INTO scope_terms (scope, term, facts)
            SELECT NEW.scope, u.lexeme, 1 FROM unnest(NEW.words) u
            ON CONFLICT (scope, term) DO UPDATE SET facts = scope_terms.facts + 1;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_terms_in AFTER INSERT ON facts REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION engram_terms_in();
    CREATE TRIGGER facts_terms_out AFTER DELETE ON facts REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION engram_terms_out();
    CREATE TRIGGER facts_terms_changed AFTER UPDATE ON facts
        FOR EACH ROW WHEN (NEW.words IS DISTINCT FROM OLD.words
            OR NEW.scope IS DISTINCT FROM OLD.scope)
        EXECUTE FUNCTION engram_terms_changed();
    INSERT INTO fact_terms (scope, term, impact, fact)
        SELECT f.scope, u.lexeme, ts_rank(f.words, engram_term_query(u.lexeme), 1), f.seq
        FROM facts f, unnest(f.words) u;
    INSERT INTO scope_terms (scope, term, facts)
        SELECT f.scope, u.lexeme, count(*) FROM facts f, unnest(f.words) u GROUP BY 1, 2;
    """,
    """
    -- 16: a scope's HNSW index covers its vectors up to a fact (ann_through, ann_rows of
    -- them), built in the background; newer vectors are searched exactly until the next
    -- build covers them (storage/postgres/vectors.py). An index from before covers every
    -- row (ann_through NULL) and is rebuilt so at the scope's next write.
    ALTER TABLE scope_state ADD COLUMN ann_through bigint;
    ALTER TABLE scope_state ADD COLUMN ann_rows bigint;
    CREATE INDEX fact_vectors_by_scope_seq ON fact_vectors (scope, fact);
    DROP INDEX fact_vectors_by_scope;
    """,
    """
    -- 17: a fact's postings found by the fact alone, and a scope's word counts changed
    -- once per word. Joined to each removed fact's words, the planner read a scope's fresh
    -- (not yet analysed) postings and word counts by the scope alone, all of them for each
    -- fact: erasing 5k facts took 19 s, and grew with the scope.
    CREATE INDEX fact_terms_by_fact ON fact_terms (fact);
    CREATE OR REPLACE FUNCTION engram_terms_out() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM fact_terms t USING removed r WHERE t.fact = r.seq;
        UPDATE scope_terms s SET facts = s.facts - gone.n
            FROM (SELECT r.scope, u.lexeme, count(*) AS n
                FROM removed r, unnest(r.words) u GROUP BY 1, 2) AS gone
            WHERE s.scope = gone.scope AND s.term = gone.lexeme;
        DELETE FROM scope_terms s
            USING (SELECT DISTINCT r.scope, u.lexeme FROM removed r, unnest(r.words) u) AS gone
            WHERE s.scope = gone.scope AND s.term = gone.lexeme AND s.facts <= 0;
        RETURN NULL;
    END $$;
    CREATE OR REPLACE FUNCTION engram_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        word text;
        left_ integer;
    BEGIN
        DELETE FROM fact_terms WHERE fact = OLD.seq;
        -- one word at a time, each found by its whole key, whatever the statistics say
        FOREACH word IN ARRAY tsvector_to_array(OLD.words) LOOP
            UPDATE scope_terms SET facts = facts - 1 WHERE scope = OLD.scope AND term = word
                RETURNING facts INTO left_;
            IF left_ <= 0 THEN
                DELETE FROM scope_terms WHERE scope = OLD.scope AND term = word;
            END IF;
        END LOOP;
        INSERT INTO fact_terms (scope, term, impact, fact)
            SELECT NEW.scope, u.lexeme, ts_rank(NEW.words, engram_term_query(u.lexeme), 1),
                NEW.seq
            FROM unnest(NEW.words) u;
        INSERT INTO scope_terms (scope, term, facts)
            SELECT NEW.scope, u.lexeme, 1 FROM unnest(NEW.words) u
            ON CONFLICT (scope, term) DO UPDATE SET facts = scope_terms.facts + 1;
        RETURN NULL;
    END $$;
    """,
    """
    -- 18: the type the rules read a mention with, as on SQLite (migration 22).
    ALTER TABLE mentions ADD COLUMN type text;
    """,
    """
    -- 19: which extractor read an extracted relation, as on SQLite (migration 23).
    ALTER TABLE relations ADD COLUMN extractor text;
    UPDATE relations SET extractor = 'llm' WHERE origin = 'extracted';
    """,
    """
    -- 20: the rules' groundings as flags on the mentions that carry them, as on SQLite
    -- (migration 24).
    ALTER TABLE mentions ADD COLUMN grounds smallint NOT NULL DEFAULT 0;
    CREATE OR REPLACE FUNCTION engram_grounding_left() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM entities WHERE id = OLD.entity AND origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM groundings WHERE entity = OLD.entity)
            AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity = OLD.entity AND grounds = 1);
        RETURN NULL;
    END $$;
    CREATE TRIGGER mentions_ad_graph AFTER DELETE ON mentions
        FOR EACH ROW WHEN (OLD.grounds = 1) EXECUTE FUNCTION engram_grounding_left();
    CREATE TRIGGER mentions_au_graph AFTER UPDATE OF entity, grounds ON mentions
        FOR EACH ROW WHEN (OLD.grounds = 1 AND (NEW.grounds = 0 OR NEW.entity <> OLD.entity))
        EXECUTE FUNCTION engram_grounding_left();
    """,
    """
    -- 21: vectors stored at half precision where pgvector has it (0.7 and later), as SQLite
    -- stores them (float16): half their bytes, and the graph's own precision. The scopes'
    -- graphs are dropped first (rebuilding them inside the migration would hold it for
    -- minutes a large scope) and built again by the next write, or a reindex.
    DO $$
    DECLARE
        graph record;
    BEGIN
        IF (SELECT (regexp_match(extversion, '^([0-9]+)[.]([0-9]+)'))::int[] >= ARRAY[0, 7]
            FROM pg_extension WHERE extname = 'vector') THEN
            FOR graph IN SELECT indexname FROM pg_indexes
                WHERE tablename = 'fact_vectors' AND starts_with(indexname, 'fact_ann_') LOOP
                EXECUTE format('DROP INDEX %I', graph.indexname);
            END LOOP;
            UPDATE scope_state SET ann_index = NULL, ann_through = NULL, ann_rows = NULL
                WHERE ann_index IS NOT NULL;
            ALTER TABLE fact_vectors ALTER COLUMN vector TYPE halfvec;
            ALTER TABLE fact_trash ALTER COLUMN vector TYPE halfvec;
        END IF;
    END $$;
    """,
    """
    -- 22: each scope's words_version, new whenever a statement adds, removes or rewrites
    -- a fact's words in it, in that statement's transaction: a process's copies of the
    -- scope's postings (storage/postgres/postings.py) are good while it is unchanged. A
    -- random value, not a count, so a store restored from a backup never shows a version
    -- a copy was read at with other postings behind it.
    ALTER TABLE scope_state ADD COLUMN words_version bigint NOT NULL DEFAULT 0;
    CREATE FUNCTION engram_words_version() RETURNS bigint LANGUAGE sql VOLATILE AS $$
        SELECT (random() * 9.2e18)::bigint
    $$;
    CREATE FUNCTION engram_words_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            UPDATE scope_state SET words_version = engram_words_version()
                WHERE scope IN (SELECT scope FROM added);
        ELSE
            UPDATE scope_state SET words_version = engram_words_version()
                WHERE scope IN (SELECT scope FROM removed);
        END IF;
        RETURN NULL;
    END $$;
    CREATE FUNCTION engram_words_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE scope_state SET words_version = engram_words_version()
            WHERE scope IN (OLD.scope, NEW.scope);
        RETURN NULL;
    END $$;
    -- after facts_counted_in (triggers of one event fire in the order of their names),
    -- which makes a new scope's row
    CREATE TRIGGER facts_words_in AFTER INSERT ON facts REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION engram_words_changed();
    CREATE TRIGGER facts_words_out AFTER DELETE ON facts REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION engram_words_changed();
    CREATE TRIGGER facts_words_rewritten AFTER UPDATE ON facts
        FOR EACH ROW WHEN (NEW.words IS DISTINCT FROM OLD.words
            OR NEW.scope IS DISTINCT FROM OLD.scope)
        EXECUTE FUNCTION engram_words_rewritten();
    """,
    # 23: an entity's mentions by entity with their types (as SQLite's migration 31): an
    # untyped extracted entity's type, its mentions' most frequent, counted from the index.
    """
    DROP INDEX IF EXISTS mentions_by_entity;
    CREATE INDEX mentions_by_entity ON mentions (entity, type);
    """,
    # 24: a scope's facts of a type, and its verified facts (as SQLite's migration 32):
    # filters that read every row of the scope to find none pass.
    """
    CREATE INDEX facts_by_type ON facts (scope, type) WHERE type IS NOT NULL;
    CREATE INDEX facts_verified ON facts (scope, seq) WHERE source_sandbox IS NOT NULL;
    """,
    # 25: what a fact's leaving takes from the graph, once a statement: row by row, each
    # mention that left asked whether another still grounds its entity, and that walked
    # the entity's mentions the same transaction had deleted (an index keeps them until
    # vacuum), so a soft forget of a 100k-fact scope took each chunk of 10,000 longer
    # than the last: 3.3 s for the first, 13.8 for the sixth.
    """
    CREATE FUNCTION engram_facts_left_graph() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM mentions WHERE fact_id IN (SELECT id FROM removed);
        DELETE FROM groundings WHERE fact_id IN (SELECT id FROM removed);
        DELETE FROM relation_support WHERE fact_id IN (SELECT id FROM removed);
        DELETE FROM graph_reads WHERE fact_id IN (SELECT id FROM removed);
        DELETE FROM graph_dirty d USING removed r WHERE d.scope = r.scope AND d.fact_id = r.id;
        RETURN NULL;
    END $$;
    DROP TRIGGER facts_ad_graph ON facts;
    DROP FUNCTION engram_fact_left_graph();
    CREATE TRIGGER facts_ad_graph AFTER DELETE ON facts REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION engram_facts_left_graph();
    CREATE FUNCTION engram_mentions_left() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM entities e
        WHERE e.id IN (SELECT entity FROM gone WHERE grounds = 1) AND e.origin = 'extracted'
            AND NOT EXISTS (SELECT 1 FROM groundings g WHERE g.entity = e.id)
            AND NOT EXISTS (SELECT 1 FROM mentions m WHERE m.entity = e.id AND m.grounds = 1);
        RETURN NULL;
    END $$;
    DROP TRIGGER mentions_ad_graph ON mentions;
    CREATE TRIGGER mentions_ad_graph AFTER DELETE ON mentions REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION engram_mentions_left();
    """,
    # 26: what a fact's leaving the table or the trash queues or deletes beside it, once a
    # statement: row by row, three triggers each asked about every row, 150 ms a thousand
    # of a revert's 100k (15 s of its 46) and as much of a forget's. Each question is
    # still asked of one row by its key (a LATERAL lookup with a LIMIT), which no
    # statistics can turn into a scan of a whole table for each row. A fact left for
    # good loses its feedback; one whose neighbours' context, session entry, chunk or
    # the scope's wiki pages hold its words is queued for what is derived from it (the
    # trash's rows that leave as their fact comes back follow it back, as before).
    """
    DROP TRIGGER facts_ad_feedback ON facts;
    DROP TRIGGER fact_trash_ad_feedback ON fact_trash;
    DROP TRIGGER facts_ad_derived ON facts;
    DROP TRIGGER fact_trash_ad_derived ON fact_trash;
    DROP TRIGGER facts_ad_documents ON facts;
    DROP TRIGGER fact_trash_ad_documents ON fact_trash;
    DROP FUNCTION engram_fact_left_feedback();
    DROP FUNCTION engram_fact_left_documents();
    CREATE FUNCTION engram_facts_left() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM retrieval_feedback WHERE fact_id = ANY(ARRAY(
            SELECT o.id FROM gone o
            CROSS JOIN LATERAL (SELECT 1 FROM retrieval_feedback x
                WHERE x.fact_id = o.id LIMIT 1) AS fed
            LEFT JOIN LATERAL (SELECT true AS held FROM facts f
                WHERE f.id = o.id LIMIT 1) AS live ON true
            LEFT JOIN LATERAL (SELECT true AS held FROM fact_trash t
                WHERE t.id = o.id LIMIT 1) AS trashed ON true
            WHERE live.held IS NULL AND trashed.held IS NULL));
        INSERT INTO derived_dirty (scope, fact_id, session_id, idx)
        SELECT o.scope, o.id, o.source_sandbox, o.source_entry FROM gone o
        LEFT JOIN LATERAL (SELECT true AS held FROM facts f
            WHERE TG_TABLE_NAME = 'fact_trash' AND f.id = o.id LIMIT 1) AS back ON true
        LEFT JOIN LATERAL (SELECT true AS held FROM document_chunks c
            WHERE c.fact_id = o.id LIMIT 1) AS chunk ON true
        LEFT JOIN LATERAL (SELECT true AS held FROM session_entries e
            WHERE e.repeats = o.id LIMIT 1) AS repeated ON true
        WHERE CASE WHEN back.held  -- a restore (the live row first): what follows it
            THEN o.source_sandbox IS NOT NULL OR chunk.held OR repeated.held
                OR (o.type IS DISTINCT FROM 'wiki' AND engram_has_wiki(o.scope))
            ELSE coalesce(chunk.held, false)
                OR (o.type IS DISTINCT FROM 'wiki' AND (o.source_sandbox IS NOT NULL
                    OR coalesce(repeated.held, false) OR engram_has_wiki(o.scope)))
            END
        ON CONFLICT DO NOTHING;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_ad_left AFTER DELETE ON facts REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION engram_facts_left();
    CREATE TRIGGER fact_trash_ad_left AFTER DELETE ON fact_trash REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION engram_facts_left();
    """,
    # 27: a fact that comes is queued for the graph's reading once a statement: row by
    # row, the restore of each thousand and every batch written called a trigger a fact.
    """
    CREATE FUNCTION engram_facts_came() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO graph_dirty (scope, fact_id) SELECT scope, id FROM added
            ON CONFLICT DO NOTHING;
        RETURN NULL;
    END $$;
    DROP TRIGGER facts_ai_graph ON facts;
    CREATE TRIGGER facts_ai_graph AFTER INSERT ON facts REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION engram_facts_came();
    """,
    # 28: a scope's facts of a strength other than the default (as SQLite's migration
    # 34), the only ones a strength floor may drop.
    """
    CREATE INDEX facts_by_strength ON facts (scope, strength, seq) WHERE strength <> 1.0;
    """,
    # 29: a scope's recent graph, of its vectors after its graph up to a fact (recent_rows
    # of them), searched beside it until the next graph replaces both
    # (storage/postgres/vectors.py).
    """
    ALTER TABLE scope_state ADD COLUMN recent_index text;
    ALTER TABLE scope_state ADD COLUMN recent_through bigint;
    ALTER TABLE scope_state ADD COLUMN recent_rows bigint;
    """,
    # 30: each write that erased words for good, until a scrub writes anew the tables
    # that held them (storage/postgres/scrub.py). Rows are only inserted, so writes that
    # erase at once do not wait on each other's.
    """
    CREATE TABLE erasures (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now());
    """,
)


def migrate(conn: psycopg.Connection[Any], name: str, *, apply: bool = True) -> int:
    """Brings the database to the newest schema (or, without ``apply``, checks that it
    is there); refuses a schema newer than this code. Returns the schema version."""
    newest = len(MIGRATIONS)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS engram_schema (version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM engram_schema").fetchone()
        version = int(row[0]) if row and row[0] is not None else 0
        if version > newest:
            raise StorageFailure(
                f"the store at {name} has schema version {version}, newer than this engram "
                f"knows ({newest})",
                hint="upgrade engram",
            )
        if version < newest and not apply:
            raise StorageFailure(
                f"the store at {name} has schema version {version}; this engram needs {newest}",
                hint="run `engram migrate`",
            )
        for number in range(version, newest):
            try:
                conn.execute(MIGRATIONS[number].encode())
            except (
                psycopg.errors.UndefinedFile,
                psycopg.errors.InsufficientPrivilege,
                psycopg.errors.FeatureNotSupported,
            ) as exc:
                raise StorageFailure(
                    f"the database at {name} cannot take migration {number + 1}: {exc}",
                    hint="install pgvector on the server, or have the database owner run "
                    "CREATE EXTENSION vector",
                ) from exc
            conn.execute("INSERT INTO engram_schema (version) VALUES (%s)", (number + 1,))
    return newest
