"""Consolidation as a property (Hypothesis): over any mix of facts (near-duplicates that
differ in case, punctuation, a figure, a date or a negation; weak and old ones; verified
turns; tags) and pending feedback signals,

- a second run changes nothing and writes no ledger entry;
- reverting the run's entries, newest first, gives back the memory as it was (every
  fact live or trashed as before, with its strength, and every signal pending again);
- running again after that revert does exactly what the first run did.

``ENGRAM_CONSOLIDATION_EXAMPLES`` sets the examples (30 by default, fixed; with
``ENGRAM_CONSOLIDATION_RANDOM=1`` new ones are drawn)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engram
from engram import Note, ResourceRef
from stores import ManualClock, rows_through

EXAMPLES = int(os.environ.get("ENGRAM_CONSOLIDATION_EXAMPLES", "30"))
RANDOM = os.environ.get("ENGRAM_CONSOLIDATION_RANDOM") == "1"
REF = ResourceRef("property")

BASES = [
    "Ana moved to Lyon in 2020",
    "Bo met Cy at the park on the 3rd",
    "Cy likes painting sunsets",
    "the team ships on Friday",
]
VARIANTS = [
    lambda t: t,
    lambda t: t.lower() + "!",
    lambda t: t + ".",
    lambda t: t.replace("2020", "2021").replace("3rd", "4th").replace("Friday", "Monday"),
    lambda t: t.replace("likes", "doesn't like").replace("ships", "never ships"),
]

fact = st.fixed_dictionaries(
    {
        "base": st.integers(0, len(BASES) - 1),
        "variant": st.integers(0, len(VARIANTS) - 1),
        "strength": st.sampled_from([0.05, 0.1, 0.5, 1.0, 1.9]),
        "old": st.booleans(),
        "tag": st.sampled_from([None, "work"]),
        "said": st.booleans(),
    }
)
signal = st.tuples(st.integers(0, 30), st.sampled_from(["used", "ignored"]))


def _state(mem: engram.Memory) -> dict[str, Any]:
    live = {f.id: (f.content, f.strength) for f in mem.facts(REF, limit=1000).facts}
    trashed = sorted(t.fact.id for t in mem.trash(REF, limit=1000).facts)
    pending = rows_through(
        mem, "SELECT id FROM retrieval_feedback WHERE applied = 0 ORDER BY id", ()
    )
    return {"live": live, "trashed": trashed, "pending": pending}


@settings(
    max_examples=EXAMPLES,
    derandomize=not RANDOM,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(fact, min_size=1, max_size=12), st.lists(signal, max_size=12))
def test_a_run_is_idempotent_and_reverts_whole(
    tmp_path_factory: Any, facts: list[dict[str, Any]], signals: list[tuple[int, str]]
) -> None:
    clock = ManualClock()
    path = Path(tmp_path_factory.mktemp("property")) / "e.db"
    with engram.open(path, embedder=engram.HashingEmbedder(64), clock=clock) as mem:
        for spec in facts:
            text = VARIANTS[spec["variant"]](BASES[spec["base"]])
            if spec["said"]:
                mem.remember_conversation(REF, [engram.Turn("Ann", text)])
                continue
            tags = [spec["tag"]] if spec["tag"] else []
            created = None
            if spec["old"]:
                created = engram.core.clock.from_us(clock.now - 40 * 86_400_000_000)
            mem.remember_many(
                REF, [Note(text, strength=spec["strength"], tags=tags, created_at=created)]
            )
        ids = list(_state(mem)["live"])
        for n, kind in signals:
            mem.usage.record(REF, ids[n % len(ids)], kind)
        clock.advance(timedelta(seconds=1))
        before = _state(mem)

        first = mem.consolidate(REF)
        entries = len(mem.ledger(REF, limit=1000).entries)
        after = _state(mem)
        assert mem.consolidate(REF).changed == 0
        assert len(mem.ledger(REF, limit=1000).entries) == entries and _state(mem) == after

        for step in reversed(first.steps):
            if step.entry is not None:
                mem.revert(REF, step.entry)
        assert _state(mem) == before

        again = mem.consolidate(REF)
        assert [(s.step, s.counts) for s in again.steps] == [
            (s.step, s.counts) for s in first.steps
        ]
        assert _state(mem) == after
