"""The English words the rules tell names from (engram.core.graph.english)."""

from __future__ import annotations

from engram.core.graph import english


def test_words_are_english_whatever_else_they_are() -> None:
    assert all(english.word(w) for w in ("work", "teacher", "will", "chase", "carried", "runs"))
    assert not any(english.word(w) for w in ("sunniva", "dagny", "frodo", "okafor", "ikram"))


def test_a_word_also_written_as_a_name_or_a_given_name_is_not_only_a_word() -> None:
    assert all(english.only_word(w) for w in ("work", "teacher", "traffic", "boss"))
    # written with a capital in the lists ("Will", "Chase"), or a given name ("Ciara")
    assert not any(english.only_word(w) for w in ("will", "chase", "grace", "ciara"))
    assert not english.only_word("sunniva")  # no word at all
    assert english.word("yaw") and not english.only_word("yaw")  # a word few write
    assert english.word("dairy-free") and not english.word("spider-zuberi")


def test_the_lists_ship_with_the_package_and_hold_what_their_header_says() -> None:
    lists = english._lists()
    assert (len(lists.words), len(lists.common), len(lists.named)) == (65_525, 41_005, 1_090)
    assert lists.common < lists.words and lists.named < lists.words
    assert all(w.islower() and w.isalpha() for w in lists.words)
