"""Reading the service's answers in route tests: the body of a success, the error of a
refusal, each asserting the status (and the error's code) first."""

from __future__ import annotations

from typing import Any


def ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def error(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    found: dict[str, Any] = answer.json()["error"]
    assert found["code"] == code, answer.text
    return found
