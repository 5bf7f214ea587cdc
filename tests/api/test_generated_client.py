"""A client generated from ``/openapi.json`` by openapi-python-client works as written:
it registers an agent, remembers, lists, recalls, corrects and forgets. The schema is
what a generator reads, so a schema that lies (defaults the route refuses together, a
body the service reads otherwise) shows here as a call that fails."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import create_app
from engram.embedders.local import LocalEmbedder

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The package openapi-python-client writes from the service's schema, imported."""
    where = tmp_path_factory.mktemp("generated")
    memory = engram.open(where / "schema.db", embedder=None)
    spec = where / "openapi.json"
    spec.write_text(json.dumps(create_app(memory_store=memory).openapi()))
    memory.close()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = str(where / "engram_generated")
    command = [BIN / "openapi-python-client", "generate", "--path", str(spec)]
    done = subprocess.run(
        [*command, "--output-path", out, "--meta", "none"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module("engram_generated")
    finally:
        sys.path.remove(str(where))
        for name in [m for m in sys.modules if m.startswith("engram_generated")]:
            del sys.modules[name]


def _api(module: str) -> Any:
    return importlib.import_module(f"engram_generated.{module}")


def test_a_generated_client_remembers_lists_recalls_corrects_and_forgets(
    generated: Any, tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    memory = engram.open(tmp_path / "engram.db", embedder=local_embedder)
    models = _api("models")
    with TestClient(create_app(memory_store=memory)) as http:
        client = generated.Client(base_url="http://testserver")
        client.set_httpx_client(http)
        agent = _api("api.agents.register_agents_post").sync(
            client=client, body=models.AgentSpec(name="planner")
        )
        assert isinstance(agent, models.AgentOut), agent
        facts = _api("api.facts.remember_agents_agent_id_facts_post")
        made = facts.sync(
            agent.id,
            client=client,
            body=models.RememberBody(content="the customer prefers email", tags=["contact"]),
        )
        assert isinstance(made, models.FactOut), made
        facts.sync(agent.id, client=client, body=models.RememberBody(content="refund confirmed"))

        listing = _api("api.facts.facts_agents_agent_id_facts_get")
        page = listing.sync(agent.id, client=client)
        assert {f.content for f in page.facts} == {"the customer prefers email", "refund confirmed"}
        short = listing.sync(agent.id, client=client, limit=1)
        assert len(short.facts) == 1 and short.next_before
        recall = _api("api.facts.recall_agents_agent_id_recall_get")
        recalled = recall.sync(agent.id, client=client, query="how to reach them by email")
        assert recalled.facts[0].content == "the customer prefers email"
        tagged = recall.sync(agent.id, client=client, query="email", tags=["contact"], top_k=3)
        assert [f.id for f in tagged.facts] == [made.id]

        fixed = _api("api.facts.correct_agents_agent_id_facts_fact_id_patch").sync(
            agent.id, made.id, client=client, body=models.CorrectBody(content="prefers phone")
        )
        assert isinstance(fixed, models.FactOut) and fixed.content == "prefers phone"
        forgotten = _api("api.facts.forget_agents_agent_id_facts_fact_id_delete").sync(
            agent.id, made.id, client=client
        )
        assert forgotten.forgotten is True
        left = listing.sync(agent.id, client=client)
        assert [f.content for f in left.facts] == ["refund confirmed"]
        # A recall before it had its own path was GET /facts?query=: still answered, not
        # published (the listing's schema then offered both shapes to a generator).
        legacy = http.get(f"/agents/{agent.id}/facts", params={"query": "refund", "topK": 1})
        assert [f["content"] for f in legacy.json()["facts"]] == ["refund confirmed"]
        assert "topK" in http.get(f"/agents/{agent.id}/facts", params={"topK": 1}).text
