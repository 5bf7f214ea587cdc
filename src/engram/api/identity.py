"""Who is calling: established from a verified bearer token, never from what a caller says.

- a service token (its sha256 is configured in ``ENGRAM_SERVICE_TOKENS``): the agent routes;
- a JWT verified with ``ENGRAM_JWT_SECRET`` (HS256) or ``ENGRAM_JWT_PUBLIC_KEY`` (RS256,
  ES256), unexpired, with the configured issuer and audience: its subject is the person;
  a valid token without a subject is not a person (403 on people's routes);
- no token: an anonymous visitor (401 wherever a person or a service is needed).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any, Literal

import jwt

from engram.core.errors import Forbidden, Unauthenticated
from engram.settings import Settings

ASYMMETRIC = ("RS256", "ES256")


@dataclass(frozen=True, slots=True)
class Caller:
    kind: Literal["person", "service", "token", "anonymous"]  # token: verified, no person
    uid: str | None = None


class Verifier:
    """Turns an ``Authorization`` header into a Caller, or raises Unauthenticated."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def caller(self, authorization: str | None) -> Caller:
        if not authorization:
            return Caller("anonymous")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
        token = token.strip()
        if self._is_service_token(token):
            return Caller("service")
        claims = self._claims(token)
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject.strip():
            return Caller("token")  # verified, but names no person
        return Caller("person", subject)

    def person(self, authorization: str | None) -> str:
        """The verified person's uid. 401 without a valid token; 403 for a token that
        names no person."""
        caller = self.caller(authorization)
        if caller.kind == "anonymous":
            raise Unauthenticated("sign in: this route answers only a signed-in person")
        if caller.kind != "person" or caller.uid is None:
            raise Forbidden("this token names no person; people's memories need one")
        return caller.uid

    def actor(self, authorization: str | None) -> str:
        """Who the ledger names as a request's writer, from what was verified, never from
        a body: a person's uid, ``service:<first 8 hex of the token's SHA-256>``, or
        ``anonymous`` on a service that asks for no token."""
        try:
            caller = self.caller(authorization)
        except Unauthenticated:
            return "anonymous"  # an open service let it through; it proves nothing
        if caller.kind == "person" and caller.uid is not None:
            return caller.uid
        if caller.kind == "service" and authorization:
            token = authorization.partition(" ")[2].strip()
            return "service:" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:8]
        return caller.kind

    def service(self, authorization: str | None) -> None:
        """Lets a service token through when auth is configured; open otherwise."""
        if not self._settings.auth_configured:
            return
        caller = self.caller(authorization)
        if caller.kind == "anonymous":
            raise Unauthenticated("the agent routes need a service token")
        if caller.kind != "service":
            raise Forbidden("the agent routes need a service token, not a person's")

    def _is_service_token(self, token: str) -> bool:
        digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
        return any(
            hmac.compare_digest(digest, known) for known in self._settings.service_token_hashes
        )

    def _claims(self, token: str) -> dict[str, Any]:
        settings = self._settings
        try:
            algorithm = jwt.get_unverified_header(token).get("alg")
        except jwt.PyJWTError as exc:
            raise Unauthenticated("the bearer token is not a valid token") from exc
        if algorithm == "HS256" and settings.jwt_secret:
            key: str = settings.jwt_secret
        elif algorithm in ASYMMETRIC and settings.jwt_public_key:
            key = settings.jwt_public_key
        else:
            raise Unauthenticated(f"tokens signed with {algorithm!r} are not accepted here")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=settings.jwt_audience or None,
                issuer=settings.jwt_issuer or None,
                options={"require": ["exp"], "verify_aud": bool(settings.jwt_audience)},
            )
        except jwt.ExpiredSignatureError as exc:
            raise Unauthenticated("the bearer token has expired") from exc
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"the bearer token was refused: {exc}") from exc
        return claims
