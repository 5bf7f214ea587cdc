"""One answer, each surface's spelling: the agent routes speak camelCase and the people
routes snake_case (reference document 003). An answer is declared once, camelCase; its
people spelling is derived from it here (the same fields, nested answers too, each field
named as it is), so the two never differ in what they hold.
"""

from __future__ import annotations

import types
from functools import cache
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict

from engram.wire import PeopleAnswer


def _same(name: str) -> str:
    return name


@cache
def snake(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` with its fields named as they are (``created_at``), and its nested
    answers likewise; an answer of the people surface already is one."""
    if issubclass(model, PeopleAnswer):
        return model
    namespace: dict[str, Any] = {
        "__module__": model.__module__,
        "__doc__": model.__doc__,
        "model_config": ConfigDict(alias_generator=_same, title=f"Person{model.__name__}"),
        "__annotations__": {},
    }
    for name, info in model.model_fields.items():
        respelled = _respelled(info.annotation)
        if respelled is not info.annotation:
            namespace["__annotations__"][name] = respelled
            if not info.is_required():
                namespace[name] = info.default
    built: type[BaseModel] = type(f"Person{model.__name__}", (model,), namespace)
    return built


def _respelled(kind: Any) -> Any:
    """``kind`` with every answer in it in its snake_case spelling (itself if none)."""
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return snake(kind)
    args = get_args(kind)
    if not args:
        return kind
    new = tuple(_respelled(a) for a in args)
    if all(a is b for a, b in zip(new, args, strict=True)):
        return kind
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        return Union[new]  # noqa: UP007 (built from a tuple)
    return origin[new if len(new) > 1 else new[0]]
