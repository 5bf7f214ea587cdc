"""The labelled sentences bench/names.py scores against hold the shape their guideline
states (tests/fixtures/check_names_labelled.py), so a figure never rests on a label the
checker would refuse."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from types import ModuleType

FIXTURES = Path(__file__).parent / "fixtures"


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check", FIXTURES / "check_names_labelled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_labelled_sentences_pass_their_checker() -> None:
    doc = json.loads((FIXTURES / "names-labelled.json").read_text(encoding="utf-8"))
    assert _checker().check(doc) == []


def test_the_checker_refuses_a_label_its_sentence_does_not_hold() -> None:
    doc = json.loads((FIXTURES / "names-labelled.json").read_text(encoding="utf-8"))
    broken = copy.deepcopy(doc)
    labelled = next(s for s in broken["sentences"] if s["entities"])
    labelled["entities"][0]["surface"] = "Nowhere Inthetext"
    problems = _checker().check(broken)
    assert any("Nowhere Inthetext" in p for p in problems)
