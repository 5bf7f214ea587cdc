"""A fact's row read as a candidate's traits, and as the fact they carry."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engram.core.models import Fact
from engram.storage.rows import FACT_COLUMNS, to_fact, to_traits

AT = 1_700_000_000_000_000
COLUMNS = FACT_COLUMNS.split(", ")


def row(
    fact_id: str,
    content: str,
    context: str | None,
    metadata: str,
    strength: float,
    tags: str = '["paid"]',
) -> Any:
    """A row of FACT_COLUMNS as a store reads it, these columns given, the rest a plain
    fact's."""
    given = {
        "id": fact_id,
        "scope": "r:user-42",
        "content": content,
        "created_at": AT,
        "updated_at": AT,
        "tags": tags,
        "metadata": metadata,
        "context": context,
        "strength": strength,
        "seq": 7,
    }
    return tuple(given.get(column) for column in COLUMNS)


def test_a_row_s_speaker_is_read_from_its_metadata_where_it_names_one() -> None:
    said = to_traits(row("f1", "hi", None, '{"speaker": "Ana", "turn": 3}', 1.0))
    assert said.speaker == "Ana"
    assert said.at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert to_traits(row("f2", "hi", "ctx", "{}", 0.5)).speaker is None
    assert to_traits(row("f3", "hi", None, '{"speaker": 7}', 1.0)).speaker is None
    # a value that holds the word is no speaker's key
    assert to_traits(row("f4", "hi", None, '{"note": "the speaker"}', 1.0)).speaker is None
    nested = to_traits(row("f5", "hi", None, '{"about": {"speaker": "Bo"}}', 1.0))
    assert nested.speaker is None


def test_a_row_s_traits_carry_its_fact_as_the_row_reads() -> None:
    read = row("f6", "the invoice was paid", "after the call", '{"speaker": "Ana"}', 2.5)
    traits = to_traits(read)
    assert (traits.content, traits.context, traits.strength) == (
        "the invoice was paid",
        "after the call",
        2.5,
    )
    assert traits.fact is not None
    fact = traits.fact()
    assert isinstance(fact, Fact) and fact == to_fact(read)
    assert (fact.id, fact.content, fact.context, fact.tags) == (
        "f6",
        "the invoice was paid",
        "after the call",
        ("paid",),
    )
    assert fact.metadata == {"speaker": "Ana"} and fact.strength == 2.5


def test_empty_tags_and_metadata_read_without_the_parser_and_each_fact_its_own() -> None:
    first, second = (to_fact(row(f"f{i}", "hi", None, "{}", 1.0, tags="[]")) for i in range(2))
    assert first.tags == () and first.metadata == {}
    assert first.metadata is not second.metadata  # a dict of its own, as the parser gives
    spaced = to_fact(row("f3", "hi", None, '{ "speaker": "Ana" }', 1.0, tags='[ "q3" ]'))
    assert spaced.metadata == {"speaker": "Ana"} and spaced.tags == ("q3",)
