#!/usr/bin/env python3
"""The rule extractor against hand-labelled LoCoMo dev turns: precision, recall, speed.

Gold: ``tests/fixtures/entities-dev.json`` (616 turns labelled by hand, guideline inside:
308 ``dev`` turns the rules were written against, 308 ``held-out`` turns read once the
rules were settled). Each turn is read as the write path reads it, ``"{speaker}: {text}"``
with its speaker given, under three states of the scope's known names:

- **cold**: none;
- **speakers**: the conversation's two speakers (a scope knows them once each has spoken);
- **running**: the whole conversation written in order, every name found in the turns
  before it known (what inline extraction builds); needs the dataset.

A found mention is right when its span is a gold span (**exact**) or, counted apart, when
its normal name is a gold mention's in the same turn (**names**, as multisets). Scored on
all mentions and on the text alone (**text**: what lies in the speaker's prefix, gold or
found, left out; the prefix is right whenever the speaker is given). Speed: microseconds
per turn to read a turn, look up its candidate names in the scope's known names and
extract, over all 2,760 turns with the running names, best of ``--rounds``.

``--with spacy:PIPELINE`` (an installed package name or a pipeline's directory; needs
``engram[nlp]``) measures the ``spacy`` extractor on the same turns: the spans it keeps
(the recogniser's on the text after the speaker's prefix, its labels of times and
amounts left out, trimmed and checked by the rules' hygiene:
:func:`engram.core.graph.ner.span`), alone and added to the rules'
running mentions where they overlap none (the graph holds both). Speed: seconds per
1,000 turns over the 2,760, best of ``--model-rounds``, the pipeline as loaded by name
(pruned to what its entities need) and whole; and ``mem.graph.extract(ref,
extractor="spacy")`` over the first 1,000 turns written to a fresh SQLite store, the
writes included.

    .venv/bin/python bench/extraction.py [--dataset PATH] [--errors dev] [--json OUT]
    .venv/bin/python bench/extraction.py --with spacy:PIPELINE --json OUT

The last line of stdout is the summary as one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import RESULTS_DIR, environment, one_line, table, write_json
from locomo import load_samples

import engram
from engram.core.graph import names, ner
from engram.core.graph.extraction import Mention, extract, read
from engram.core.graph.names import normalise

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "entities-dev.json"
DATASET = Path("/work/shared/data/locomo/locomo-dev.json")
SPLITS = ("dev", "held-out")
GOAL = {"precision": 0.85, "recall": 0.80}


@dataclass(frozen=True, slots=True)
class Gold:
    start: int
    end: int
    surface: str
    type: str
    speaker: bool


@dataclass(frozen=True, slots=True)
class LabelledTurn:
    split: str
    sample: str
    dia_id: str
    text: str
    gold: tuple[Gold, ...]

    @property
    def speaker(self) -> str:
        return next(g.surface for g in self.gold if g.speaker)


@dataclass
class Score:
    """True positives, false positives and false negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, tp: int, fp: int, fn: int) -> None:
        self.tp, self.fp, self.fn = self.tp + tp, self.fp + fp, self.fn + fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def row(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 3),
            "recall": round(self.recall, 3),
            "f1": round(self.f1, 3),
        }


@dataclass
class Report:
    exact: Score = field(default_factory=Score)
    names: Score = field(default_factory=Score)
    by_kind: dict[str, Score] = field(default_factory=lambda: defaultdict(Score))
    by_type: dict[str, Score] = field(default_factory=lambda: defaultdict(Score))


def load_fixture(path: Path = FIXTURE) -> list[LabelledTurn]:
    raw = json.loads(path.read_text())
    return [
        LabelledTurn(
            t["split"],
            t["sample"],
            t["dia_id"],
            t["text"],
            tuple(
                Gold(e["start"], e["end"], e["surface"], e["type"], e.get("speaker", False))
                for e in t["entities"]
            ),
        )
        for t in raw["turns"]
    ]


# -- what the scope knows ----------------------------------------------------------------
def predict_cold(turns: Iterable[LabelledTurn]) -> dict[str, list[Mention]]:
    return {_key(t): extract(t.text, {}, speaker=t.speaker) for t in turns}


def predict_speakers(turns: Sequence[LabelledTurn]) -> dict[str, list[Mention]]:
    speakers: dict[str, set[str]] = defaultdict(set)
    for t in turns:
        speakers[t.sample].add(t.speaker)
    known = {s: {normalise(name): name for name in names} for s, names in speakers.items()}
    return {_key(t): extract(t.text, known[t.sample], speaker=t.speaker) for t in turns}


def predict_running(
    turns: Sequence[LabelledTurn], dataset: Path, *, speaker: bool = True
) -> dict[str, list[Mention]]:
    """Each conversation written in order; every name found becomes known."""
    wanted = {_key(t) for t in turns}
    found: dict[str, list[Mention]] = {}
    for sample in load_samples(dataset):
        known: dict[str, str] = {}
        for turn in sample.turns:
            text = f"{turn.speaker}: {turn.text}"
            mentions = extract(text, known, speaker=turn.speaker if speaker else None)
            if (key := f"{sample.sample_id} {turn.dia_id}") in wanted:
                found[key] = mentions
            for m in mentions:
                known.setdefault(m.name, m.entity or m.name)
    return found


def _key(turn: LabelledTurn) -> str:
    return f"{turn.sample} {turn.dia_id}"


# -- scoring -----------------------------------------------------------------------------
def score(
    turns: Iterable[LabelledTurn], found: Mapping[str, list[Mention]], *, text_only: bool = False
) -> Report:
    report = Report()
    for turn in turns:
        prefix = next(g.end for g in turn.gold if g.speaker) if text_only else -1
        gold = [g for g in turn.gold if g.start > prefix]
        mentions = [m for m in found[_key(turn)] if m.start > prefix]
        spans = {(g.start, g.end): g for g in gold}
        hits = {(m.start, m.end) for m in mentions} & set(spans)
        report.exact.add(len(hits), len(mentions) - len(hits), len(gold) - len(hits))
        for m in mentions:
            report.by_kind[m.kind].add(
                int((m.start, m.end) in hits), int((m.start, m.end) not in hits), 0
            )
        for g in gold:
            report.by_type[g.type].add(
                int((g.start, g.end) in hits), 0, int((g.start, g.end) not in hits)
            )
        names = Counter(m.name for m in mentions)
        wanted = Counter(normalise(g.surface) for g in gold)
        same = sum((names & wanted).values())
        report.names.add(same, sum(names.values()) - same, sum(wanted.values()) - same)
    return report


def scores(
    turns: Sequence[LabelledTurn], settings: Mapping[str, Mapping[str, list[Mention]]]
) -> tuple[dict[str, Any], list[list[object]]]:
    """Each split's scores under each setting, on all mentions and on the text: for the
    JSON, and as the printed table's rows."""
    scored: dict[str, Any] = {}
    rows: list[list[object]] = []
    for split in SPLITS:
        part = [t for t in turns if t.split == split]
        for setting, found in settings.items():
            for text_only in (False, True):
                report = score(part, found, text_only=text_only)
                what = "text" if text_only else "all"
                scored[f"{split} / {setting} / {what}"] = {
                    "turns": len(part),
                    "exact": report.exact.row(),
                    "names": report.names.row(),
                    "by_kind": {k: s.row() for k, s in sorted(report.by_kind.items())},
                    "by_type": {k: s.row() for k, s in sorted(report.by_type.items())},
                }
                e, n = report.exact, report.names
                rows.append([split, setting, what, e.tp + e.fn, e.precision, e.recall, e.f1,
                             n.precision, n.recall, n.f1])  # fmt: skip
    return scored, rows


def errors(turns: Iterable[LabelledTurn], found: Mapping[str, list[Mention]]) -> list[str]:
    """Each wrong or missed mention, by exact span, one line each."""
    lines = []
    for turn in turns:
        spans = {(g.start, g.end) for g in turn.gold}
        got = {(m.start, m.end) for m in found[_key(turn)]}
        for m in found[_key(turn)]:
            if (m.start, m.end) not in spans:
                lines.append(f"FP {_key(turn)}: {m.surface!r} ({m.kind})")
        for g in turn.gold:
            if (g.start, g.end) not in got:
                lines.append(f"FN {_key(turn)}: {g.surface!r} ({g.type})")
    return lines


# -- speed -------------------------------------------------------------------------------
def speed(dataset: Path, rounds: int) -> dict[str, Any]:
    """Microseconds per turn over every turn of the split, the scope's names growing as
    they are found: (a) extract with the scope's names as a dict; (b) read, keep the
    known ones of its lookups (a store's one query), then mentions. Wall time and this
    process's CPU time (the machine is shared: CPU time leaves out waiting for a core)."""
    runs = {"extract": _with_dict, "read_lookups_mentions": _with_lookups}
    return per_turn(dataset, runs, rounds)


Conversation = Sequence[tuple[str, str]]  # each turn's "{speaker}: {text}" and speaker


def per_turn(
    dataset: Path, runs: Mapping[str, Callable[[Conversation], None]], rounds: int
) -> dict[str, Any]:
    """Microseconds per turn of each of ``runs`` (a reader of one conversation's turns,
    in order) over every conversation of ``dataset``, wall and CPU, best of ``rounds``,
    the runs alternating."""
    conversations = [
        [(f"{t.speaker}: {t.text}", t.speaker) for t in s.turns] for s in load_samples(dataset)
    ]
    turns = sum(len(c) for c in conversations)
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
            for conversation in conversations:
                run(conversation)
            wall[name].append((time.perf_counter_ns() - start) / 1e3 / turns)
            cpu[name].append((time.process_time_ns() - start_cpu) / 1e3 / turns)
    return {
        "turns": turns,
        "rounds": rounds,
        **{
            name: {
                "best_us": round(min(wall[name]), 2),
                "median_us": round(statistics.median(wall[name]), 2),
                "best_cpu_us": round(min(cpu[name]), 2),
            }
            for name in runs
        },
    }


def _with_dict(conversation: Sequence[tuple[str, str]]) -> None:
    known: dict[str, str] = {}
    for text, speaker in conversation:
        for m in extract(text, known, speaker=speaker):
            known.setdefault(m.name, m.entity or m.name)


def _with_lookups(conversation: Sequence[tuple[str, str]]) -> None:
    known: dict[str, str] = {}
    for text, speaker in conversation:
        reading = read(text, speaker=speaker)
        answers = {k: known[k] for k in reading.lookups if k in known}
        for m in reading.mentions(answers):
            known.setdefault(m.name, m.entity or m.name)


# -- the spacy extractor -----------------------------------------------------------------
def kept(text: str, spans: Iterable[tuple[int, int, str]]) -> list[Mention]:
    """The spans the spacy extractor keeps of a recogniser's, as mentions (kind: label)."""
    words = normalise(text)
    found = []
    for start, end, label in sorted(spans):
        if label.upper() in ner.NEVER:
            continue
        span = ner.span(text, start, end, words)
        if span is not None:
            surface = text[span[0] : span[1]]
            found.append(Mention(surface, *span, normalise(surface), label))  # type: ignore[arg-type]
    return found


def read_turns(recogniser: Any, turns: Sequence[tuple[str, str]]) -> list[list[Mention]]:
    """``(text, speaker)`` turns read as the extractor reads them: the text after the
    speaker's prefix recognised, the spans kept."""
    starts = [names.body(text, speaker) for text, speaker in turns]
    spans = recogniser.recognise([text[n:] for (text, _), n in zip(turns, starts, strict=True)])
    return [
        kept(text, [(s + n, e + n, label) for s, e, label in found])
        for (text, _), n, found in zip(turns, starts, spans, strict=True)
    ]


def predict_spacy(turns: Sequence[LabelledTurn], recogniser: Any) -> dict[str, list[Mention]]:
    found = read_turns(recogniser, [(t.text, t.speaker) for t in turns])
    return {_key(t): mentions for t, mentions in zip(turns, found, strict=True)}


def union(
    rules: Mapping[str, list[Mention]], model: Mapping[str, list[Mention]]
) -> dict[str, list[Mention]]:
    """The rules' mentions, and the model's that overlap none of them."""
    return {
        key: sorted(
            found
            + [m for m in model[key] if all(m.end <= r.start or r.end <= m.start for r in found)],
            key=lambda m: m.start,
        )
        for key, found in rules.items()
    }


def spacy_speed(dataset: Path, recognisers: Mapping[str, Any], rounds: int) -> dict[str, Any]:
    """Seconds per 1,000 turns over every turn of the split, recognised in one call and
    kept, best of ``rounds``; wall and CPU time."""
    turns = [(t.memory(), t.speaker) for s in load_samples(dataset) for t in s.turns]
    found: dict[str, Any] = {"turns": len(turns), "rounds": rounds}
    for name, recogniser in recognisers.items():
        read_turns(recogniser, turns[:16])  # loads a named pipeline
        wall, cpu = [], []
        for _ in range(rounds):
            start, start_cpu = time.perf_counter(), time.process_time()
            read_turns(recogniser, turns)
            wall.append((time.perf_counter() - start) / len(turns) * 1000)
            cpu.append((time.process_time() - start_cpu) / len(turns) * 1000)
        found[name] = {
            "best_s_per_1000": round(min(wall), 3),
            "median_s_per_1000": round(statistics.median(wall), 3),
            "best_cpu_s_per_1000": round(min(cpu), 3),
        }
    return found


def spacy_extract(dataset: Path, recogniser: Any, rounds: int, size: int = 1000) -> dict[str, Any]:
    """``mem.graph.extract(ref, extractor="spacy")`` until the backlog is empty, over the
    first ``size`` turns written (with their speakers) to a fresh SQLite store; the
    median of ``rounds``, and what it wrote."""
    turns = [t for s in load_samples(dataset) for t in s.turns][:size]
    notes = [engram.Note(t.memory(), metadata={"speaker": t.speaker}) for t in turns]
    times: list[float] = []
    calls = added = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(rounds):
            with engram.open(
                Path(tmp) / f"{n}.db", embedder=engram.HashingEmbedder(16), recogniser=recogniser
            ) as mem:
                ref = engram.ResourceRef("turns")
                mem.remember_many(ref, notes)
                start, calls, added = time.perf_counter(), 0, 0
                while (report := mem.graph.extract(ref, extractor="spacy")).facts_read:
                    calls, added = calls + 1, added + report.entities_added
                times.append(time.perf_counter() - start)
    return {
        "facts": len(notes),
        "calls": calls,
        "median_s": round(statistics.median(times), 3),
        "rounds_s": [round(t, 3) for t in times],
        "entities_added": added,
    }


def measure_spacy(
    pipeline: str,
    turns: Sequence[LabelledTurn],
    running: Mapping[str, list[Mention]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    import spacy

    named = engram.SpacyRecogniser(pipeline)
    whole = engram.SpacyRecogniser(spacy.load(pipeline))
    found = predict_spacy(turns, named)
    settings = {"spacy": found, "rules (running) + spacy": union(running, found)}
    same = predict_spacy(turns, whole) == found
    scored, rows = scores(turns, settings)
    results: dict[str, Any] = {"pipeline": pipeline, "pruned_equals_whole": same}
    results["scores"] = scored  # by_kind: by the pipeline's label
    print(f"\nspacy: {pipeline} (pruned as loaded by name equals whole: {same})")
    print(table(["split", "extractor", "mentions", "gold", "P exact", "R exact", "F1 exact",
                 "P names", "R names", "F1 names"], rows))  # fmt: skip
    recognisers = {"by name (pruned)": named, "whole": whole}
    results["speed"] = spacy_speed(args.dataset, recognisers, args.model_rounds)
    print(f"spacy speed: {one_line(results['speed'])}")
    results["extract"] = spacy_extract(args.dataset, named, args.model_rounds)
    print(f"spacy extract: {one_line(results['extract'])}")
    return results


# -- the run -----------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--errors", choices=SPLITS, help="list the split's errors (running)")
    parser.add_argument("--json", type=Path, default=RESULTS_DIR / "extraction.json")
    parser.add_argument(
        "--with",
        dest="models",
        action="append",
        default=[],
        metavar="spacy:PIPELINE",
        help="also measure the spacy extractor with this pipeline (package name or directory)",
    )
    parser.add_argument("--model-rounds", type=int, default=3)
    args = parser.parse_args()
    pipelines = []
    for model in args.models:
        kind, _, pipeline = model.partition(":")
        if kind != "spacy" or not pipeline:
            parser.error(f"--with takes spacy:PIPELINE, got {model!r}")
        pipelines.append(pipeline)
    turns = load_fixture()
    settings = {
        "cold": predict_cold(turns),
        "speakers": predict_speakers(turns),
        "running": predict_running(turns, args.dataset),
        "running, no speaker given": predict_running(turns, args.dataset, speaker=False),
    }
    scored, rows = scores(turns, settings)
    results: dict[str, Any] = {"environment": environment(), "goal": GOAL, "scores": scored}
    print(table(["split", "known", "mentions", "gold", "P exact", "R exact", "F1 exact",
                 "P names", "R names", "F1 names"], rows))  # fmt: skip
    for split in SPLITS:
        key = f"{split} / running / all"
        kinds = results["scores"][key]["by_kind"] | results["scores"][key]["by_type"]
        print(f"\n{split}, running, exact spans: precision by kind found, recall by gold type")
        print(table(["kind or type", "tp", "fp", "fn", "precision", "recall"],
                    [[k, s["tp"], s["fp"], s["fn"], s["precision"], s["recall"]]
                     for k, s in kinds.items()]))  # fmt: skip
    results["speed"] = speed(args.dataset, args.rounds)
    print(f"\nspeed: {one_line(results['speed'])}")
    if args.errors:
        part = [t for t in turns if t.split == args.errors]
        print("\n".join(errors(part, settings["running"])))
    for pipeline in pipelines:
        results.setdefault("spacy", []).append(
            measure_spacy(pipeline, turns, settings["running"], args)
        )
        if args.errors:
            part = [t for t in turns if t.split == args.errors]
            print("\n".join(errors(part, predict_spacy(part, engram.SpacyRecogniser(pipeline)))))
    write_json(args.json, results)
    summary = {k: results["scores"][f"{k} / running / all"]["exact"] for k in SPLITS}
    print(one_line({"running_exact": summary, "speed": results["speed"]}))


if __name__ == "__main__":
    main()
