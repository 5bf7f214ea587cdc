"""Identity is a verified token's subject: expired, wrong key, wrong algorithm (none
included), wrong audience or issuer are all refused."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from fastapi.testclient import TestClient

import engram
import stores
from engram import InvalidInput
from engram.api import create_app
from engram.settings import Settings
from stores import Target

SECRET = "s3cret-for-tests-only-0123456789abcdef"
SERVICE_TOKEN = "service-token-for-tests"


def hs256(claims: dict[str, Any], secret: str = SECRET) -> str:
    return jwt.encode({"exp": int(time.time()) + 3600, **claims}, secret, algorithm="HS256")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Any]:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (tmp_path / "rsa.pem").write_bytes(pem)
    return {"rsa": rsa_key, "rsa_path": tmp_path / "rsa.pem"}


@pytest.fixture
def client(target: Target, keys: dict[str, Any]) -> Iterator[TestClient]:
    settings = Settings.from_env(
        {
            **stores.env(target),
            "ENGRAM_EMBEDDER": "none",
            "ENGRAM_JWT_SECRET": SECRET,
            "ENGRAM_JWT_PUBLIC_KEY": str(keys["rsa_path"]),
            "ENGRAM_JWT_AUDIENCE": "engram",
            "ENGRAM_JWT_ISSUER": "https://id.example",
            "ENGRAM_SERVICE_TOKENS": hashlib.sha256(SERVICE_TOKEN.encode()).hexdigest(),
        }
    )
    with TestClient(create_app(settings)) as test_client:
        yield test_client


GOOD = {"sub": "p1", "aud": "engram", "iss": "https://id.example"}
LIST = "/api/v1/apps/memories/app:a"


def _code(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json()["error"]["code"]


def test_a_valid_token_names_the_person(client: TestClient, keys: dict[str, Any]) -> None:
    # semantic memory is off here, but the listing needs none: the identity passed
    assert client.get(LIST, headers=bearer(hs256(GOOD))).json()["count"] == 0
    signed = jwt.encode({"exp": int(time.time()) + 3600, **GOOD}, keys["rsa"], algorithm="RS256")
    assert client.get(LIST, headers=bearer(signed)).status_code == 200


# Each token is minted when its test runs: minted at collection, a token could expire
# before its test, and be refused for that instead of what the test is about.
@pytest.mark.parametrize(
    ("token", "status"),
    [
        pytest.param(lambda: None, 401, id="none"),
        pytest.param(lambda: "not-a-jwt", 401, id="not-a-jwt"),
        pytest.param(lambda: hs256({**GOOD, "exp": int(time.time()) - 10}), 401, id="expired"),
        pytest.param(
            lambda: hs256(GOOD, secret="another-secret-another-secret-123456"), 401, id="key"
        ),
        pytest.param(lambda: hs256({**GOOD, "aud": "someone-else"}), 401, id="audience"),
        pytest.param(lambda: hs256({**GOOD, "iss": "https://evil.example"}), 401, id="issuer"),
        pytest.param(
            lambda: jwt.encode({"exp": int(time.time()) + 3600, **GOOD}, None, algorithm="none"),
            401,
            id="alg-none",
        ),
        pytest.param(lambda: jwt.encode({**GOOD}, SECRET, algorithm="HS256"), 401, id="no-exp"),
        pytest.param(
            lambda: hs256({"aud": "engram", "iss": "https://id.example"}), 403, id="no-person"
        ),
        pytest.param(lambda: SERVICE_TOKEN, 403, id="service"),  # a service is not a person
    ],
)
def test_refused_tokens(client: TestClient, token: Callable[[], str | None], status: int) -> None:
    minted = token()
    headers = {} if minted is None else bearer(minted)
    assert _code(client.get(LIST, headers=headers)) == (
        status,
        "unauthenticated" if status == 401 else "forbidden",
    )


def test_hs256_token_passed_off_as_rs256_is_refused(client: TestClient) -> None:
    # the classic confusion: sign HS256 with the public key's text as the secret
    header = jwt.utils.base64url_encode(b'{"alg":"RS256","typ":"JWT"}').decode()
    forged = header + "." + hs256(GOOD).split(".", 1)[1]
    assert client.get(LIST, headers=bearer(forged)).status_code == 401


def test_es256_is_accepted_with_an_ec_public_key(target: Target, tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (tmp_path / "ec.pem").write_bytes(pem)
    settings = Settings.from_env(
        {
            **stores.env(target),
            "ENGRAM_EMBEDDER": "none",
            "ENGRAM_JWT_PUBLIC_KEY": str(tmp_path / "ec.pem"),
        }
    )
    with TestClient(create_app(settings)) as client:
        token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 3600}, key, algorithm="ES256")
        assert client.get(LIST, headers=bearer(token)).status_code == 200
        assert client.get(LIST, headers=bearer(hs256({"sub": "p1"}))).status_code == 401


def test_agent_routes_need_a_service_token_once_auth_is_configured(client: TestClient) -> None:
    assert _code(client.post("/agents", json={"name": "x"})) == (401, "unauthenticated")
    person = bearer(hs256(GOOD))
    assert _code(client.post("/agents", json={"name": "x"}, headers=person)) == (403, "forbidden")
    made = client.post("/agents", json={"name": "x"}, headers=bearer(SERVICE_TOKEN))
    assert made.status_code == 201


def test_a_non_loopback_host_needs_auth_or_an_explicit_opt_out() -> None:
    with pytest.raises(InvalidInput, match=r"refusing to listen on 0\.0\.0\.0"):
        Settings.from_env({"ENGRAM_HOST": "0.0.0.0"}).check_exposure()
    Settings.from_env(
        {"ENGRAM_HOST": "0.0.0.0", "ENGRAM_ALLOW_UNAUTHENTICATED": "true"}
    ).check_exposure()
    Settings.from_env({"ENGRAM_HOST": "0.0.0.0", "ENGRAM_JWT_SECRET": SECRET}).check_exposure()
    Settings.from_env({"ENGRAM_HOST": "::1"}).check_exposure()


def test_service_tokens_are_configured_as_hashes() -> None:
    with pytest.raises(InvalidInput, match="sha256"):
        Settings.from_env({"ENGRAM_SERVICE_TOKENS": SERVICE_TOKEN})
    assert engram.Unauthenticated.http_status == 401
