"""LangGraph namespaces as engram scopes: ``("users", "a/b")`` is
``ResourceRef("users/a%2Fb")``. Each label escapes ``%`` and ``/`` and the labels are
joined with ``/``: injective, and :func:`decode` reverses it. A prefix matches label by
label, never a sibling sharing the start of a label."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langgraph.store.base import InvalidNamespaceError, MatchCondition

from engram.core.scopes import ResourceRef, Scope

Namespace = tuple[str, ...]
MAX_NAMESPACE_CHARS = 256
_ESCAPED = re.compile("%(25|2F)")


def check_labels(namespace: object, *, as_put: bool = False) -> Namespace:
    """``namespace`` (a tuple or list of labels) as a tuple, if its labels are as upstream
    accepts them; with ``as_put``, also not empty. The ``langgraph`` root is refused by
    ``put`` itself, as upstream's stores refuse it, and taken through ``batch``, as they
    take it. Raises InvalidNamespaceError."""
    if isinstance(namespace, list):
        namespace = tuple(namespace)
    if not isinstance(namespace, tuple):
        raise InvalidNamespaceError(f"a namespace is a tuple of labels, got {namespace!r}")
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"invalid namespace label {label!r} in {namespace}: a label is a non-empty "
                "string without periods ('.') or NUL"
            )
    if as_put and not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    return namespace


def encode(namespace: Namespace) -> str:
    """The resource id of ``namespace``; injective, :func:`decode` reverses it. Raises
    InvalidNamespaceError for a bad label or over 256 characters encoded."""
    labels = check_labels(namespace)
    text = "/".join(label.replace("%", "%25").replace("/", "%2F") for label in labels)
    if len(text) > MAX_NAMESPACE_CHARS:
        raise InvalidNamespaceError(
            f"namespace {namespace} is {len(text)} characters encoded; the limit is "
            f"{MAX_NAMESPACE_CHARS}"
        )
    return text


def decode(resource_id: str) -> Namespace | None:
    """The namespace ``resource_id`` encodes, or None when no valid namespace does."""
    labels = tuple(
        _ESCAPED.sub(lambda m: "%" if m.group(1) == "25" else "/", part)
        for part in resource_id.split("/")
    )
    try:
        if encode(check_labels(labels, as_put=True)) == resource_id:
            return labels
    except InvalidNamespaceError:
        pass
    return None


def ref_of(namespace: Namespace) -> ResourceRef:
    return ResourceRef(encode(namespace))


def namespace_of(scope: Scope) -> Namespace | None:
    if not isinstance(scope, ResourceRef) or scope.team_id is not None:
        return None
    return decode(scope.resource_id)


def fixed_prefix(conditions: Sequence[MatchCondition]) -> Namespace:
    """The labels every match shares at its start: a prefix condition's, up to a ``*``."""
    for condition in conditions:
        if condition.match_type == "prefix":
            path = tuple(condition.path)
            return path[: path.index("*")] if "*" in path else path
    return ()


def does_match(condition: MatchCondition, namespace: Namespace) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(want in ("*", label) for label, want in pairs)
