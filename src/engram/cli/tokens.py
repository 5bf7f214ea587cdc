"""``engram token``: bearer tokens for trying the service.

A person's token is an HS256 JWT signed with ``ENGRAM_JWT_SECRET``, naming the person as
its subject, with an expiry (required by the service) and the configured issuer and
audience, so the service verifies it exactly as it would one from an identity provider.
A service token is random; the service is configured with its sha256, never the token.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from datetime import timedelta

from engram.core import installing
from engram.core.errors import CapabilityMissing, InvalidInput
from engram.settings import Settings


def person_token(settings: Settings, person: str, *, ttl: timedelta) -> str:
    """A token naming ``person``, valid for ``ttl``. Raises InvalidInput without
    ``ENGRAM_JWT_SECRET`` (RS256/ES256 tokens come from whoever holds the private key)."""
    if not person.strip():
        raise InvalidInput("--person must name a person (the token's subject)")
    if not settings.jwt_secret:
        raise InvalidInput(
            "minting a person's token needs ENGRAM_JWT_SECRET, the HS256 secret the service "
            "verifies tokens with",
            hint="set the same ENGRAM_JWT_SECRET here and in the service",
        )
    try:
        import jwt
    except ImportError as exc:
        raise CapabilityMissing(
            "minting tokens needs PyJWT", hint=installing.extra("service")
        ) from exc
    now = int(time.time())
    claims: dict[str, object] = {"sub": person, "iat": now, "exp": now + int(ttl.total_seconds())}
    if settings.jwt_issuer:
        claims["iss"] = settings.jwt_issuer
    if settings.jwt_audience:
        claims["aud"] = settings.jwt_audience
    return jwt.encode(claims, settings.jwt_secret, algorithm="HS256")


def service_token() -> tuple[str, str]:
    """A new random service token and its sha256 (hex), for ``ENGRAM_SERVICE_TOKENS``."""
    token = secrets.token_urlsafe(32)
    return token, hashlib.sha256(token.encode("utf-8")).hexdigest()
