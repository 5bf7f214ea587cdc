"""Taking a health report (:mod:`engram.core.health` holds what it says): one read
transaction of the store's counts, a scope's graph drift when asked for, and what is
kept past its time against the retention in force."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from engram.core.clock import from_us
from engram.core.errors import InvalidInput
from engram.core.graph import rebuild
from engram.core.health import DRIFT_PER_SCOPE, HealthReport, Retention, StaleHealth
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope


def report(
    store: Store,
    scope: Scope | None,
    now_us: int,
    retention: Retention | None = None,
    *,
    graph_drift: bool = False,
) -> HealthReport:
    """The report of ``scope`` (None: the whole store) in one read transaction; working
    keys count as live when unexpired at ``now_us``, trashed facts and ledger entries as
    past ``retention`` when older than it at ``now_us``. ``graph_drift`` rebuilds the
    scope's graph by the rules to compare (InvalidInput for the whole store: a rebuild
    is per scope). Never writes."""
    retention = retention or Retention()
    if graph_drift and scope is None:
        raise InvalidInput(DRIFT_PER_SCOPE)
    trash_cutoff = now_us - retention.trash_us if retention.trash_us else None
    ledger_cutoff = now_us - retention.ledger_us if retention.ledger_us else None

    def read(tx: Tx) -> HealthReport:
        counts = store.health.report(tx, scope, now_us, trash_cutoff, ledger_cutoff)
        graph = counts.graph
        if graph_drift and scope is not None:
            graph = dataclasses.replace(graph, drift=rebuild.drift(store, tx, scope))
        stale = counts.stale
        return HealthReport(
            scope=scope,
            schema_version=store.schema_version,
            model=store.models.get(tx),
            facts=counts.facts,
            fulltext=counts.fulltext,
            vector_index=counts.vector_index,
            working_keys=counts.working_keys,
            ledger=counts.ledger,
            sessions=counts.sessions,
            graph=graph,
            documents=counts.documents,
            feedback=counts.feedback,
            stale=StaleHealth(
                working_keys=stale.working_keys,
                trash_past_retention=stale.trash_past_retention,
                trash_retention=_duration(retention.trash_us),
                ledger_past_retention=stale.ledger_past_retention,
                ledger_retention=_duration(retention.ledger_us),
                ledger_oldest=None
                if stale.ledger_oldest_us is None
                else from_us(stale.ledger_oldest_us),
                session_entries_hidden=stale.session_entries_hidden,
            ),
            storage=counts.storage,
        )

    return store.run(read, write=False)


def _duration(us: int) -> timedelta | None:
    return timedelta(microseconds=us) if us else None
