"""A fact's row read as a candidate's traits."""

from __future__ import annotations

from datetime import UTC, datetime

from engram.storage.rows import to_traits

AT = 1_700_000_000_000_000


def test_a_row_s_speaker_is_read_from_its_metadata_where_it_names_one() -> None:
    said = to_traits(("f1", "hi", None, AT, '{"speaker": "Ana", "turn": 3}', 1.0))
    assert said.speaker == "Ana"
    assert said.at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert to_traits(("f2", "hi", "ctx", AT, "{}", 0.5)).speaker is None
    assert to_traits(("f3", "hi", None, AT, '{"speaker": 7}', 1.0)).speaker is None
    # a value that holds the word is no speaker's key
    assert to_traits(("f4", "hi", None, AT, '{"note": "the speaker"}', 1.0)).speaker is None
    nested = to_traits(("f5", "hi", None, AT, '{"about": {"speaker": "Bo"}}', 1.0))
    assert nested.speaker is None
