"""``engram.Client``: the HTTP service from Python, with the library's method names.

Errors come back as the same classes the library raises (by their stable ``code``).
Answers are the service's JSON, as dicts.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import quote

import httpx

from engram.core.errors import ALL_ERRORS, EngramError

JSON = dict[str, Any]
_BY_CODE = {cls.code: cls for cls in ALL_ERRORS}


class Client:
    """A client of one engram service. ``token`` is a bearer token: a service token for
    the agent routes, a person's token for the people routes."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:4600",
        *,
        token: str | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = http or httpx.Client(base_url=base_url, timeout=timeout)
        self._headers = headers
        self.working = WorkingClient(self)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request; the decoded answer, or the engram error it carries."""
        answer = self._http.request(method, path, headers=self._headers, **kwargs)
        if answer.status_code == 204:
            return None
        try:
            body = answer.json()
        except ValueError:
            body = None
        if answer.is_success:
            return body
        error = body.get("error", {}) if isinstance(body, dict) else {}
        cls = _BY_CODE.get(error.get("code", ""), EngramError)
        raise cls(error.get("message") or f"HTTP {answer.status_code}", hint=error.get("hint"))

    # -- the service ---------------------------------------------------------------
    def healthz(self) -> JSON:
        result: JSON = self.call("GET", "/healthz")
        return result

    # -- agents --------------------------------------------------------------------
    def register(
        self, name: str, *, resource_id: str | None = None, team_id: str | None = None
    ) -> JSON:
        spec = {"name": name, "resourceId": resource_id, "teamId": team_id}
        return self.call_json(
            "POST", "/agents", json={k: v for k, v in spec.items() if v is not None}
        )

    def agent(self, agent_id: str) -> JSON:
        return self.call_json("GET", f"/agents/{agent_id}")

    def spawn(self, agent_id: str, name: str, *, resource_id: str | None = None) -> JSON:
        spec = {"name": name} | ({"resourceId": resource_id} if resource_id else {})
        return self.call_json("POST", f"/agents/{agent_id}/spawn", json=spec)

    def end(self, agent_id: str) -> JSON:
        return self.call_json("POST", f"/agents/{agent_id}/end")

    # -- an agent's facts ----------------------------------------------------------
    def remember(
        self,
        agent_id: str,
        content: str,
        *,
        source_ref: tuple[str, int] | None = None,
        context: str | None = None,
    ) -> JSON:
        body: JSON = {"content": content}
        if source_ref is not None:
            body["sourceRef"] = {"sandboxId": source_ref[0], "entryIndex": source_ref[1]}
        if context is not None:
            body["context"] = context
        return self.call_json("POST", f"/agents/{agent_id}/facts", json=body)

    def recall(self, agent_id: str, query: str, *, top_k: int | None = None) -> list[JSON]:
        params: JSON = {"query": query} | ({"topK": top_k} if top_k else {})
        return list(self.call_json("GET", f"/agents/{agent_id}/facts", params=params)["facts"])

    def facts(self, agent_id: str, *, limit: int | None = None, before: str | None = None) -> JSON:
        params = {k: v for k, v in {"limit": limit, "before": before}.items() if v is not None}
        return self.call_json("GET", f"/agents/{agent_id}/facts", params=params)

    def compact(
        self,
        agent_id: str,
        *,
        max_facts: int | None = None,
        max_age: timedelta | None = None,
    ) -> JSON:
        body: JSON = {}
        if max_facts is not None:
            body["maxFacts"] = max_facts
        if max_age is not None:
            body["maxAgeMs"] = int(max_age / timedelta(milliseconds=1))
        return self.call_json("POST", f"/agents/{agent_id}/compactions", json=body)

    # -- people ----------------------------------------------------------------------
    def app(self, app: str) -> AppClient:
        """What ``app`` remembers of the person this client's token names."""
        return AppClient(self, app)

    def shares(self, *, source: str | None = None, reader: str | None = None) -> list[JSON]:
        params = {k: v for k, v in {"source": source, "reader": reader}.items() if v}
        return list(self.call_json("GET", "/api/v1/memory-shares", params=params)["shares"])

    def allow(self, source: str, reader: str) -> JSON:
        return self.call_json(
            "PUT", "/api/v1/memory-shares", json={"source": source, "reader": reader}
        )

    def stop(self, source: str, reader: str) -> None:
        self.call("DELETE", "/api/v1/memory-shares", params={"source": source, "reader": reader})

    def memories(self, app: str, *, limit: int | None = None) -> JSON:
        """The person's memories of ``app`` (the route that works without a runtime)."""
        params: JSON = {"agent_id": app} | ({} if limit is None else {"limit": limit})
        return self.call_json("GET", "/api/v1/memories", params=params)

    def forget_memories(self, app: str, *, count: int) -> int:
        """Forgets everything ``app`` remembers of the person, confirming ``count``."""
        params = {"agent_id": app, "count": count}
        return int(self.call_json("DELETE", "/api/v1/memories", params=params)["forgotten"])

    def correct_memory(self, memory_id: str, text: str) -> JSON:
        """Corrects one of the person's memories by id, whatever application holds it."""
        return self.call_json("PATCH", f"/api/v1/memories/{memory_id}", json={"memory": text})

    def forget_memory(self, memory_id: str) -> None:
        self.call("DELETE", f"/api/v1/memories/{memory_id}")

    def call_json(self, method: str, path: str, **kwargs: Any) -> JSON:
        result: JSON = self.call(method, path, **kwargs)
        return result


class WorkingClient:
    """An agent's working memory, as ``Memory.working`` with an agent id for a scope."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def get(self, agent_id: str, key: str) -> Any:
        return self._client.call("GET", f"/agents/{agent_id}/memory/{_quote(key)}")["value"]

    def set(self, agent_id: str, key: str, value: Any) -> JSON:
        result: JSON = self._client.call(
            "PUT", f"/agents/{agent_id}/memory/{_quote(key)}", json={"value": value}
        )
        return result

    def delete(self, agent_id: str, key: str) -> None:
        self._client.call("DELETE", f"/agents/{agent_id}/memory/{_quote(key)}")

    def list(self, agent_id: str, *, after: str | None = None, limit: int | None = None) -> JSON:
        params = {k: v for k, v in {"after": after, "limit": limit}.items() if v is not None}
        result: JSON = self._client.call("GET", f"/agents/{agent_id}/memory", params=params)
        return result


class AppClient:
    """The person's memory in one application, as ``engram.core.people.AppMemory``."""

    def __init__(self, client: Client, app: str) -> None:
        self._client = client
        self.app = app

    def remember(self, text: str) -> JSON:
        return self._client.call_json(
            "POST", f"/api/v1/apps/{self.app}/memories", json={"memory": text}
        )

    def recall(self, query: str, *, top_k: int | None = None) -> list[JSON]:
        params: JSON = {"query": query} | ({"topK": top_k} if top_k else {})
        path = f"/api/v1/apps/{self.app}/memories/search"
        return list(self._client.call_json("GET", path, params=params)["memories"])

    def listing(self, *, limit: int | None = None) -> JSON:
        params = {} if limit is None else {"limit": limit}
        return self._client.call_json("GET", f"/api/v1/apps/memories/{self.app}", params=params)

    def correct(self, memory_id: str, text: str) -> JSON:
        path = f"/api/v1/apps/memories/{self.app}/{memory_id}"
        return self._client.call_json("PATCH", path, json={"memory": text})

    def forget(self, memory_id: str) -> None:
        self._client.call("DELETE", f"/api/v1/apps/memories/{self.app}/{memory_id}")

    def forget_all(self, *, count: int) -> int:
        path = f"/api/v1/apps/memories/{self.app}"
        return int(self._client.call_json("DELETE", path, params={"count": count})["forgotten"])


def _quote(key: str) -> str:
    return quote(key, safe="")
