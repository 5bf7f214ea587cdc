#!/usr/bin/env python3
"""Names, types and relations by rules against hand-labelled sentences: precision,
recall, F1, and what reading them costs a LoCoMo turn.

Gold: ``tests/fixtures/names-labelled.json`` (sentences written for this, in three
styles: plain prose, chat, notes; a ``dev`` split the rules were written against and a
``held-out`` one read once they were settled; guideline inside). Each sentence is read
cold, as the first fact of a scope (no name known, no speaker):
:func:`engram.core.graph.extraction.extract`, then
:func:`engram.core.graph.relations.relations` and
:func:`engram.core.graph.entity_types.types`.

Scores, per split:

- **entities**: a found mention is right when its surface is a gold entity's surface in
  the same sentence (as multisets: a name twice is two); **typed**: surface and type;
  per type, recall by the gold's type and precision by the type read;
- **relations**: (subject, type, object) as multisets per sentence, and with the time as
  written. A gold family relation (``{"type": "family", "role": "brother", "subject":
  "Ana", "object": "Luis"}``: Luis is Ana's brother) is the stored ``brother_of`` from
  Luis to Ana; ``married_to`` and ``friend_of`` are compared both ways round.

Speed: microseconds per turn over all 2,760 LoCoMo dev turns, each conversation written in
order with the names found so far known (as ``bench/extraction.py``): the extractor alone,
and with relations and types; best of ``--rounds``.

``--with spacy:PIPELINE`` scores the ``spacy`` extractor's kept spans and their types
(:mod:`engram.core.graph.ner`) on the same sentences (entities only: it reads no
relations).

    .venv/bin/python bench/names.py [--split dev|held-out|both] [--errors] [--json OUT]

The last line of stdout is the summary as one line of JSON.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extraction import DATASET, Score, per_turn
from harness import RESULTS_DIR, environment, one_line, table, write_json

from engram.core.graph import ner
from engram.core.graph.entity_types import agreeing, types
from engram.core.graph.extraction import Mention, extract
from engram.core.graph.names import normalise
from engram.core.graph.relations import relations

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "names-labelled.json"
SPLITS = ("dev", "held-out")
TYPES = ("person", "place", "organisation")
SYMMETRIC = frozenset({"married_to", "friend_of"})

Entity = tuple[str, str | None]  # surface, type
Triple = tuple[str, str, str, str | None]  # subject, type, object, time


@dataclass(frozen=True, slots=True)
class Sentence:
    id: str
    split: str
    style: str
    text: str
    entities: tuple[Entity, ...]
    relations: tuple[Triple, ...]


@dataclass(frozen=True, slots=True)
class Reading:
    entities: tuple[Entity, ...]
    relations: tuple[Triple, ...]


def load(path: Path = FIXTURE) -> list[Sentence]:
    raw = json.loads(path.read_text())
    return [
        Sentence(
            s["id"],
            s["split"],
            s["style"],
            s["text"],
            tuple((e["surface"], e["type"]) for e in s["entities"]),
            tuple(_stored(r) for r in s["relations"]),
        )
        for s in raw["sentences"]
    ]


def _stored(relation: Mapping[str, Any]) -> Triple:
    """A gold relation in the graph's form (see the module)."""
    if relation["type"] == "family":
        kind = relation["role"].casefold() + "_of"
        return relation["object"], kind, relation["subject"], relation["time"]
    return relation["subject"], relation["type"], relation["object"], relation["time"]


# -- reading -----------------------------------------------------------------------------
def read_rules(text: str) -> Reading:
    mentions = extract(text)
    stated = relations(text, mentions)
    kinds = types(text, mentions, stated)
    stated = agreeing(stated, kinds)
    return Reading(
        tuple((m.surface, kind) for m, kind in zip(mentions, kinds, strict=True)),
        tuple(
            (mentions[r.source].surface, r.type, mentions[r.target].surface, r.time) for r in stated
        ),
    )


def spacy_reader(pipeline: str) -> Callable[[Sequence[str]], list[Reading]]:
    import engram

    recogniser = engram.SpacyRecogniser(pipeline)

    def read(texts: Sequence[str]) -> list[Reading]:
        spans = recogniser.recognise(list(texts))
        found = []
        for text, named in zip(texts, spans, strict=True):
            words, kept = normalise(text), []
            for start, end, label in sorted(named):
                if label.upper() in ner.NEVER:
                    continue
                span = ner.span(text, start, end, words)
                if span is not None:
                    kept.append((text[span[0] : span[1]], ner.TYPES.get(label.upper())))
            found.append(Reading(tuple(kept), ()))
        return found

    return read


# -- scoring -----------------------------------------------------------------------------
@dataclass
class Report:
    exact: Score
    typed: Score
    by_type: dict[str, Score]
    relations: Score
    timed: Score


def score(sentences: Sequence[Sentence], found: Sequence[Reading]) -> Report:
    report = Report(Score(), Score(), {t: Score() for t in TYPES}, Score(), Score())
    for sentence, reading in zip(sentences, found, strict=True):
        _count(report.exact, [s for s, _ in sentence.entities], [s for s, _ in reading.entities])
        _count(report.typed, sentence.entities, reading.entities)
        for kind, kind_score in report.by_type.items():
            gold = [e for e in sentence.entities if e[1] == kind]
            got = [e for e in reading.entities if e[1] == kind]
            _count(kind_score, gold, got)
        gold_rel = [_key(r) for r in sentence.relations]
        got_rel = [_key(r) for r in reading.relations]
        _count(report.relations, [r[:3] for r in gold_rel], [r[:3] for r in got_rel])
        _count(report.timed, gold_rel, got_rel)
    return report


def _key(relation: Triple) -> Triple:
    subject, kind, target, when = relation
    if kind in SYMMETRIC and target < subject:
        subject, target = target, subject
    return subject, kind, target, when


def _count(into: Score, gold: Iterable[object], got: Iterable[object]) -> None:
    wanted, found = Counter(gold), Counter(got)
    same = sum((wanted & found).values())
    into.add(same, sum(found.values()) - same, sum(wanted.values()) - same)


def errors(sentences: Sequence[Sentence], found: Sequence[Reading]) -> list[str]:
    lines = []
    for sentence, reading in zip(sentences, found, strict=True):
        gold = Counter(sentence.entities)
        got = Counter(reading.entities)
        rel_gold = Counter(map(_key, sentence.relations))
        rel_got = Counter(map(_key, reading.relations))
        wrong = [f"+{e}" for e in got - gold] + [f"-{e}" for e in gold - got]
        wrong += [f"+{r}" for r in rel_got - rel_gold] + [f"-{r}" for r in rel_gold - rel_got]
        if wrong:
            lines.append(f"{sentence.id} {sentence.text!r}\n    " + "\n    ".join(wrong))
    return lines


def rows(split: str, reader: str, report: Report) -> list[list[object]]:
    scores = {"entities (exact span)": report.exact, "entities (typed)": report.typed}
    scores |= {f"  {t}": s for t, s in report.by_type.items()}
    scores |= {"relations": report.relations, "relations with time": report.timed}
    return [
        [split, reader, what, s.tp + s.fn, s.precision, s.recall, s.f1]
        for what, s in scores.items()
    ]


def as_json(report: Report) -> dict[str, Any]:
    return {
        "entities_exact": report.exact.row(),
        "entities_typed": report.typed.row(),
        "by_type": {t: s.row() for t, s in report.by_type.items()},
        "relations": report.relations.row(),
        "relations_with_time": report.timed.row(),
    }


# -- speed -------------------------------------------------------------------------------
def speed(dataset: Path, rounds: int) -> dict[str, Any]:
    """Microseconds per LoCoMo turn (see the module), wall and CPU, best of ``rounds``."""
    return per_turn(
        dataset,
        {
            "extract": lambda turns: _read_conversation(turns, False),
            "extract_relations_types": lambda turns: _read_conversation(turns, True),
        },
        rounds,
    )


def _read_conversation(conversation: Sequence[tuple[str, str]], more: bool) -> None:
    known: dict[str, str] = {}
    for text, speaker in conversation:
        mentions: list[Mention] = extract(text, known, speaker=speaker)
        if more:
            types(text, mentions, relations(text, mentions))
        for m in mentions:
            known.setdefault(m.name, m.entity or m.name)


# -- the run -----------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=(*SPLITS, "both"), default="both")
    parser.add_argument("--errors", action="store_true", help="list each sentence's errors")
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=RESULTS_DIR / "names.json")
    parser.add_argument("--with", dest="models", action="append", default=[],
                        metavar="spacy:PIPELINE")  # fmt: skip
    args = parser.parse_args()
    sentences = load()
    readers: dict[str, Callable[[Sequence[str]], list[Reading]]] = {
        "rules": lambda texts: [read_rules(t) for t in texts]
    }
    for model in args.models:
        kind, _, pipeline = model.partition(":")
        if kind != "spacy" or not pipeline:
            parser.error(f"--with takes spacy:PIPELINE, got {model!r}")
        readers[f"spacy {Path(pipeline).name}"] = spacy_reader(pipeline)
    splits = SPLITS if args.split == "both" else (args.split,)
    results: dict[str, Any] = {"environment": environment(), "scores": {}}
    printed: list[list[object]] = []
    for split in splits:
        part = [s for s in sentences if s.split == split]
        for name, reader in readers.items():
            found = reader([s.text for s in part])
            report = score(part, found)
            results["scores"][f"{split} / {name}"] = {"sentences": len(part)} | as_json(report)
            printed += rows(split, name, report)
            if args.errors and name == "rules":
                print("\n".join(errors(part, found)))
    print(table(["split", "reader", "what", "gold", "P", "R", "F1"], printed))
    results["speed"] = speed(args.dataset, args.rounds)
    print(f"\nspeed: {one_line(results['speed'])}")
    write_json(args.json, results)
    summary = {
        key: {k: v["f1"] for k, v in value.items() if isinstance(v, dict) and "f1" in v}
        for key, value in results["scores"].items()
    }
    print(one_line({"f1": summary, "speed": results["speed"]}))


if __name__ == "__main__":
    main()
