from __future__ import annotations

import pytest

import engram
from engram.core import errors


def test_every_error_has_a_stable_code_status_and_exit_code() -> None:
    classes = {
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.EngramError)
    }
    assert classes - {errors.EngramError} == set(errors.ALL_ERRORS)
    codes = [c.code for c in errors.ALL_ERRORS]
    assert len(codes) == len(set(codes))
    for cls in errors.ALL_ERRORS:
        assert cls.http_status in {400, 401, 403, 404, 409, 413, 422, 501, 502, 503, 500}
        assert cls.exit_code not in (0, 1)
    assert not issubclass(errors.Unprocessable, errors.InvalidInput)


@pytest.mark.parametrize(
    ("cls", "code", "status"),
    [
        (engram.InvalidInput, "invalid_input", 400),
        (engram.NotFound, "not_found", 404),
        (engram.TooLarge, "too_large", 413),
        (engram.Unauthenticated, "unauthenticated", 401),
        (engram.Forbidden, "forbidden", 403),
        (engram.Unprocessable, "unprocessable", 422),
        (engram.Unavailable, "unavailable", 503),
        (engram.Conflict, "conflict", 409),
        (engram.EmbedderMismatch, "embedder_mismatch", 409),
        (engram.CapabilityMissing, "capability_missing", 501),
        (engram.UpstreamFailure, "upstream_failure", 502),
        (engram.StorageFailure, "storage_failure", 500),
    ],
)
def test_codes_are_part_of_the_contract(
    cls: type[engram.EngramError], code: str, status: int
) -> None:
    assert (cls.code, cls.http_status) == (code, status)
    error = cls("message", hint="a hint")
    assert isinstance(error, engram.EngramError)
    assert str(error) == "message (a hint)"


def test_storage_failures_are_never_upstream_failures() -> None:
    assert not issubclass(engram.StorageFailure, engram.UpstreamFailure)
    assert not issubclass(engram.UpstreamFailure, engram.StorageFailure)


def test_the_public_surface() -> None:
    for name in engram.__all__:
        assert getattr(engram, name) is not None
    assert engram.__all__ == sorted(engram.__all__)
