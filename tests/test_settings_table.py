"""The settings are declared once: the loader, docs/configuration.md and the source agree
with SETTINGS."""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize
from pathlib import Path

import pytest

import engram
from engram import InvalidInput
from engram.settings import SETTINGS, Setting, Settings, debugging, with_table

PAGE = Path(__file__).parent.parent / "docs" / "configuration.md"
SOURCE = Path(engram.__file__).parent
NAME = re.compile(r"ENGRAM_[A-Z][A-Z0-9_]*")
_STRINGS = {tokenize.STRING} | {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def test_the_page_table_is_the_generated_one() -> None:
    text = PAGE.read_text()
    assert with_table(text) == text, "run `make settings-table`"


def test_every_field_is_filled_by_a_declared_variable() -> None:
    assert {f.name for f in dataclasses.fields(Settings)} == {s.field for s in SETTINGS}
    assert len({s.name for s in SETTINGS}) == len(SETTINGS)


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_every_declared_variable_is_read(setting: Setting) -> None:
    """A value no parser takes is refused naming the variable; one a parser takes as text
    reaches the field."""
    value = "§not a valid value§"
    try:
        settings = Settings.from_env({setting.name: value})
    except InvalidInput as exc:
        assert setting.name in exc.message
    else:
        assert getattr(settings, setting.field) == value, "the loader ignores it"


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_the_default_shown_is_the_default(setting: Setting) -> None:
    default = getattr(Settings(), setting.field)
    if setting.default:
        assert getattr(Settings.from_env({setting.name: setting.default}), setting.field) == default
    else:  # shown blank: nothing, or another variable of the same field shows it
        shown = [s for s in SETTINGS if s.field == setting.field and s.default]
        assert default in ("", ()) or len(shown) == 1


def test_debugging_is_read_while_failing_and_never_refused() -> None:
    assert debugging({"ENGRAM_DEBUG": " Yes "}) and debugging({"ENGRAM_DEBUG": "1"})
    assert not debugging({"ENGRAM_DEBUG": "2"}) and not debugging({})
    with pytest.raises(InvalidInput, match="ENGRAM_DEBUG must be true or false"):
        Settings.from_env({"ENGRAM_DEBUG": "2"})


def _names_in_strings(path: Path) -> set[str]:
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    return {name for t in tokens if t.type in _STRINGS for name in NAME.findall(t.string)}


def test_no_variable_is_named_in_the_source_without_a_declaration() -> None:
    """Every ``ENGRAM_…`` name in a string of engram's source (a read of the environment, a
    message, a hint, a docstring) is a declared setting."""
    named = {name: path for path in SOURCE.rglob("*.py") for name in _names_in_strings(path)}
    assert {"ENGRAM_DEBUG", "ENGRAM_PG_BIN", "ENGRAM_OWNER_UID"} <= named.keys()
    undeclared = {n: str(p) for n, p in named.items() if n not in {s.name for s in SETTINGS}}
    assert not undeclared
