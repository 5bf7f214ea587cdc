"""Routes built from the declared operations (:mod:`engram.core.ops` and
:mod:`engram.core.graph.ops`), one per method and path: the parameters, the body, the
answer and the statuses all come from the declaration. Two operations may share a route
(``GET /facts`` lists, or recalls with ``?query=``): the one whose required parameters
are given is carried out, and a parameter only the other takes is refused rather than
ignored.

Each is mounted on an agent's memory (``/agents/{agent_id}``, a service token,
camelCase) and, when its declaration offers it to people, on what an application
remembers of a person (``/api/v1/apps/{app}``, the person's token, snake_case bodies and
answers; query parameters are named as on the agent routes).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, get_args, get_origin

from fastapi import APIRouter, Body, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, Response
from pydantic import BeforeValidator, WithJsonSchema
from starlette.convertors import Convertor, register_url_convertor

from engram import wire
from engram.api import preconditions
from engram.api.context import Person, agent_memory, memory_of
from engram.api.openapi import errors
from engram.api.params import Flag, Integer
from engram.api.people import app_memory
from engram.core import ops
from engram.core.errors import InvalidInput
from engram.core.fields import Field, fields_of
from engram.core.graph import ops as graph_ops
from engram.core.memory import Memory
from engram.core.scopes import Scope
from engram.wire import parse_time
from engram.wire.ops import (
    OpType,
    Where,
    answer,
    body_model,
    body_op,
    carried,
    either_body,
    made,
    naming,
    path_fields,
    sent,
    sent_in_body,
    wire_name,
)

DECLARED: tuple[OpType, ...] = ops.OPS + graph_ops.OPS


@dataclass(frozen=True, slots=True)
class Mount:
    """Where declared operations are offered: ``prefix`` (its one path parameter names
    the scope), the errors every route there can answer, and whose memory it is."""

    prefix: str
    key: str
    common: tuple[int, ...]
    people: bool = False
    shown: WithJsonSchema | None = None  # what the key may be, when not any text

    def offers(self, op: OpType) -> bool:
        return op.surface.people or not self.people


AGENTS = Mount("/agents/{agent_id}", "agent_id", (400, 401, 403, 404, 500, 501, 503))
PEOPLE = Mount(
    "/api/v1/apps/{app}", "app", (400, 401, 403, 404, 500, 503), people=True, shown=wire.APP
)


def router(declared: tuple[OpType, ...] = DECLARED, mount: Mount = AGENTS) -> APIRouter:
    """The route of every declared operation the mount offers, under its prefix."""
    built = APIRouter(prefix=mount.prefix, responses=errors(*mount.common))
    rest = {f.name for op in declared for f in path_fields(op) if f.rest}
    groups: dict[tuple[str, str], list[OpType]] = {}
    for op in declared:
        if mount.offers(op):
            groups.setdefault((op.surface.method, op.surface.path), []).append(op)
    for op in declared:
        if op.surface.legacy and mount.offers(op):
            groups[(op.surface.method, op.surface.legacy)].append(op)
    for (method, path), group in groups.items():
        first = group[0]
        either = _either(group)
        declared_errors = {e.http_status for op in either for e in op.surface.errors}
        statuses = sorted(declared_errors - set(mount.common))
        model = answer(first, people=mount.people).model
        answered = {"description": "no body"} if model is None else {"model": model}
        built.add_api_route(
            _with_rest(path, rest),
            _endpoint(group, mount),
            methods=[method],
            status_code=first.surface.status,
            response_model=None,
            response_class=Response if model is None else JSONResponse,
            responses={**errors(*statuses), first.surface.status: answered},
            tags=["people" if mount.people else first.surface.tag],
            summary=_summary(either),
            description=_description(either),
            openapi_extra=_order(first, mount),
        )
    return built


class RestOfPath(Convertor[str]):
    """The rest of the path, whatever it holds (Starlette's ``path`` stops at a newline)."""

    regex = r"[\s\S]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("rest", RestOfPath())


def _with_rest(path: str, rest: set[str]) -> str:
    """The route's path, a parameter that takes the rest of it marked so (``{key:rest}``)."""
    for name in rest:
        path = path.replace("{" + name + "}", "{" + name + ":rest}")
    return path


def _either(group: list[OpType]) -> list[OpType]:
    """The operations a route publishes: all of a body's (it is one of theirs), the
    first of a query's (the others answer at an older path)."""
    return group if sent_in_body(group[0]) else group[:1]


def _summary(either: list[OpType]) -> str:
    """``Delete facts for good, live or trashed; or delete every fact …``"""
    said = [ops.summary(op) for op in either]
    return "; or ".join([said[0], *(s[:1].lower() + s[1:] for s in said[1:])])


def _description(either: list[OpType]) -> str:
    """The help of the route's operation; of several, what each does, then the rest of
    each one's help."""
    helps = [inspect.cleandoc(op.__doc__ or "") for op in either]
    if len(helps) == 1:
        return helps[0]
    rests = [h.partition("\n\n")[2] for h in helps]
    return "\n\n".join([_summary(either) + ".", *filter(None, rests)])


def _order(op: OpType, mount: Mount) -> dict[str, Any] | None:
    """The operation's times that must come in order, as ``x-order`` (JSON Schema
    cannot compare two values): each ``earlier`` before ``later`` (``strict``) or not
    after it, named as this mount sends them."""
    if not op.order:
        return None
    spelt = naming(op, people=mount.people)
    named = {f.name: spelt(f) for f in fields_of(op)}
    return {
        "x-order": [
            {"earlier": named[o.earlier], "later": named[o.later], "strict": o.strict}
            for o in op.order
        ]
    }


def _endpoint(group: list[OpType], mount: Mount) -> Callable[..., Any]:
    first = group[0]
    people = mount.people
    params = [
        inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request),
        _param(mount.key, Annotated[str, PathParam(), mount.shown]),
    ]
    if people:
        params.append(_param("person", Person))
    params += [_path(f) for f in path_fields(first)]
    condition = first.surface.precondition
    if condition:
        params += [_param(name, kind, None) for name, kind in preconditions.HEADERS.items()]
    in_body = sent_in_body(first)
    if in_body and len(group) > 1:
        params.append(_param("body", Annotated[either_body(group, people=people), Body()]))
    elif in_body and carried(first):
        model = body_model(first, people=people)
        has_required = any(f.required for f in carried(first))
        default = inspect.Parameter.empty if has_required else None
        accepted: Any = model if has_required else model | None
        kind = Annotated[accepted, Body()]
        params.append(_param("body", kind, default))
    elif not in_body:
        seen: set[str] = set()
        for op in group:  # the first's published; an older path's others taken, unpublished
            for f in carried(op):
                if f.name not in seen:
                    seen.add(f.name)
                    required = len(group) == 1 and f.required
                    params.append(_query(f, required=required, published=op is first))

    def endpoint(request: Request, **given: Any) -> Any:
        values = dict(given)
        key, person = values.pop(mount.key), values.pop("person", None)
        body = values.pop("body", None)
        headers = [values.pop(name, None) for name in preconditions.HEADERS]
        if len(group) == 1:
            op = first
        elif in_body:
            op = body_op(group, body, people=people)
        else:
            op = _chosen(group, request, given)
        if body is not None:
            values.update({k: getattr(body, k) for k in type(body).model_fields})
        if condition:
            values[condition] = preconditions.expected(values.get(condition), *headers)
        made_op = made(op, values, people=people)
        if person is None:
            memory, scope = _agent(request, key, made_op)
        else:
            memory, scope = _person(request, key, person, made_op)
        where = Where(key, scope, memory.embedder is not None)
        answered = answer(op, people=people).of(made_op, memory.run(scope, made_op), where)
        if answered is None:
            return Response(status_code=op.surface.status)
        version = getattr(answered, "version", None)  # what a compare-and-set names
        tag = {} if version is None else {"ETag": f'"{version}"'}
        return JSONResponse(sent(answered, people=people), op.surface.status, headers=tag)

    endpoint.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    endpoint.__name__ = ops.name_of(first)
    endpoint.__doc__ = first.__doc__
    return endpoint


def _agent(request: Request, agent_id: str, op: ops.Op[Any]) -> tuple[Memory, Scope]:
    """The store and the agent's scope (a write refused once it has ended)."""
    surface = type(op).surface
    memory, agent = agent_memory(request, agent_id, write=op.changes(), facts=surface.facts)
    return memory, agent.ref


def _person(request: Request, app: str, person: str, op: ops.Op[Any]) -> tuple[Memory, Scope]:
    """The store and the person's scope in the application; asking for meaning where
    nothing embeds is a 503 in a sentence, as on the person's other routes."""
    apps = app_memory(request, app)
    if op.asks_embedder():
        apps.require_semantic()
    return memory_of(request), apps.scope(person)


def _chosen(group: list[OpType], request: Request, given: dict[str, Any]) -> OpType:
    """Of operations sharing a route, the one whose required parameters were given; a
    parameter only the others take is refused."""
    sent = set(request.query_params)
    by_needs = sorted(group, key=lambda op: -sum(f.required for f in carried(op)))
    for op in by_needs:
        needs = [f for f in carried(op) if f.required]
        if all(given.get(f.name) is not None for f in needs):
            chosen = op
            break
    else:
        chosen = group[-1]
    mine = {wire_name(f) for f in carried(chosen)}
    misplaced = sorted(
        {wire_name(f) for other in group if other is not chosen for f in carried(other)} - mine
        & sent
    )
    if misplaced:
        others = [f for o in group if o is not chosen for f in carried(o) if f.required]
        mine_needs = [f for f in carried(chosen) if f.required]
        if others:
            why = f"taken only with ?{wire_name(others[0])}="
        else:
            why = f"not taken with ?{wire_name(mine_needs[0])}=" if mine_needs else "not taken here"
        verb = "is" if len(misplaced) == 1 else "are"
        raise InvalidInput(f"{', '.join(misplaced)} {verb} {why}")
    return chosen


def _query(field: Field, *, required: bool, published: bool) -> inspect.Parameter:
    name, base = wire_name(field), field.base
    query = Query(
        alias=name if name != field.name else None,
        description=field.help,
        include_in_schema=published,
    )
    shown = WithJsonSchema(field.schema())
    kind: Any
    if base is int:
        kind = Annotated[int, Integer, shown]
    elif base is bool:
        kind = Annotated[bool, Flag, shown]
    elif base is datetime:
        kind = Annotated[datetime, BeforeValidator(parse_time), shown]
    elif get_args(base) and get_origin(base) is not Literal:
        kind = Annotated[list[get_args(base)[0]], shown]  # type: ignore[misc]
    else:
        kind = Annotated[base, shown]
    if not required:
        kind = kind | None
    return _param(field.name, Annotated[kind, query], inspect.Parameter.empty if required else None)


def _path(field: Field) -> inspect.Parameter:
    """A path parameter, read as its declaration types it (an entry number an integer)."""
    shown = WithJsonSchema(field.schema())
    if field.base is int:
        return _param(field.name, Annotated[int, PathParam(description=field.help), Integer, shown])
    return _param(field.name, Annotated[str, PathParam(description=field.help), shown])


def _param(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
    )
