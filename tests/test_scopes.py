from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram import InvalidInput, ResourceRef
from engram.core.scopes import PersonAppRef, parse_key

# Parts full of the characters that matter to the escaping, plus any other text.
_tricky = st.sampled_from([":", "%", "%3A", "%25", "::", " ", "r", "t", "acme", "é", "名", "🙂"])
part = st.one_of(
    st.lists(_tricky, min_size=1, max_size=6).map("".join),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        min_size=1,
        max_size=40,
    ),
)
resources = st.builds(ResourceRef, part, st.one_of(st.none(), part))
people = st.builds(
    PersonAppRef, part, part.map(lambda p: "app:" + p).filter(lambda a: len(a) <= 256)
)
refs = st.one_of(resources, people)


@given(refs, refs)
def test_different_refs_never_share_a_key(
    a: ResourceRef | PersonAppRef, b: ResourceRef | PersonAppRef
) -> None:
    assert (a.key == b.key) == (a == b)


@given(refs)
def test_a_key_parses_back_to_its_ref(ref: ResourceRef | PersonAppRef) -> None:
    assert parse_key(ref.key) == ref


def test_team_prefix_cannot_be_spelled_inside_a_resource_id() -> None:
    assert ResourceRef("acme:corp").key != ResourceRef("corp", team_id="acme").key
    assert ResourceRef("t:acme:corp").key != ResourceRef("corp", team_id="acme").key
    assert ResourceRef("a", team_id="b:c").key != ResourceRef("b:c:a").key
    assert ResourceRef("c", team_id="a:b").key != ResourceRef("b:c", team_id="a").key


@pytest.mark.parametrize(
    ("resource_id", "team_id", "message"),
    [
        ("", None, "resource_id must not be empty"),
        ("x", "", "team_id must not be empty"),
        ("x" * 257, None, "limit is 256"),
        ("x", "y" * 257, "limit is 256"),
        ("a\x00b", None, "NUL"),
        ("\ud800", None, "lone surrogate"),
        (42, None, "must be a string"),
    ],
)
def test_invalid_refs_are_refused_clearly(
    resource_id: object, team_id: object, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        ResourceRef(resource_id, team_id)  # type: ignore[arg-type]


def test_parts_at_the_limit_are_accepted() -> None:
    ref = ResourceRef("x" * 256, team_id="y" * 256)
    assert parse_key(ref.key) == ref


def test_a_fork_child_keeps_the_team() -> None:
    assert ResourceRef("p", team_id="acme").child("c") == ResourceRef("c", team_id="acme")


def test_a_person_in_an_app_is_never_an_agent_resource() -> None:
    assert PersonAppRef("u1", "app:a").key != ResourceRef("app:a", team_id="u1").key
    assert PersonAppRef("u1", "app:a").key != ResourceRef("u1:app:a").key


@pytest.mark.parametrize(
    ("person", "app", "message"),
    [
        ("", "app:a", "person"),
        ("u", "a", "app:<uid>"),
        ("u", "app:", "app:<uid>"),
        ("u", "", "app"),
    ],
)
def test_invalid_person_app_refs(person: str, app: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        PersonAppRef(person, app)
