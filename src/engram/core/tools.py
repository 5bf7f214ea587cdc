"""The memory tools an agent calls: one specification each (name, description, JSON
Schema of the arguments, handler), the same for the library (``mem.create_tools``), the
service (``/agents/{id}/tools/...`` and a person's in an application) and any host that
registers tools with a model.

The scope is bound when the tools are made: no argument names one, so the agent never
chooses whose memory it reads or writes. A call answers text for the model, never an
exception: arguments the schema refuses and every engram error come back as a sentence
the model can act on (``is_error``), with nothing written. Each call that writes is one
ledger entry, as the library call behind it is.

- ``memory_add{content, tags?, type?, context?, expiresAt?}``: remembers a fact (until
  ``expiresAt``, when given).
- ``memory_search{query, topK?, tags?, type?}``: one line a fact, ``- [id] words
  (relevance)``, best first.
- ``memory_update{id, content}``: new words for a fact.
- ``memory_delete{id}``: forgets it (to the trash; a person's memories for good).
- ``memory_merge{ids, content}``: folds 2 to 10 facts into one, in the words given;
  ``content`` may be left out when the memory has a chat model, which then writes them
  (citing every figure and name the facts hold: :mod:`engram.core.merging`).
- ``memory_reflect{dryRun?}``: runs the consolidation cycle over the scope
  (:mod:`engram.core.consolidation`) and answers what it changed, one ledger entry for
  each step that changed something. An agent's tools have it when the memory
  self-improves; a person's never do (what is remembered of a person changes by the
  person's or the application's explicit call, not a cycle an agent starts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, Protocol, TypeVar

from engram.core import fields, ops
from engram.core.errors import EngramError, InvalidInput, NotFound
from engram.core.fields import camel, fields_of
from engram.core.models import Fact, RecallMode
from engram.core.ports import ChatModel, Embedder
from engram.core.records import ConsolidationReport
from engram.core.scopes import Scope

DEFAULT_TOP_K = 5
NAMES = (
    "memory_add",
    "memory_search",
    "memory_update",
    "memory_delete",
    "memory_merge",
    "memory_reflect",
)


Handler = Callable[[Mapping[str, Any]], str]
Made = TypeVar("Made", bound="ops.Op[Any]")
T = TypeVar("T")


class Runs(Protocol):
    """What the tools ask of a memory (:class:`engram.core.memory.Memory` is one): to
    carry out declared operations, and which models it has."""

    @property
    def embedder(self) -> Embedder | None: ...

    @property
    def chat(self) -> ChatModel | None: ...

    def run(self, ref: Scope, op: ops.Op[T]) -> T: ...


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a call answers the model: text, and whether it is an error to act on."""

    text: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Found:
    """A fact a search found: its relevance, and the application it came from when it
    is another application's memory of the person."""

    fact: Fact
    relevance: float
    remembered_by: str | None = None


class Backing(Protocol):
    """What the tools do, bound to one scope (an agent's, or a person's in an app)."""

    def add(self, note: ops.Remember) -> Fact: ...

    def search(
        self, query: str, top_k: int, tags: Sequence[str], type: str | None
    ) -> list[Found]: ...

    def update(self, fact_id: str, content: str) -> Fact: ...

    def delete(self, fact_id: str) -> bool: ...

    def merge(self, fact_ids: Sequence[str], content: str | None) -> Fact: ...

    @property
    def writes_merges(self) -> bool: ...

    @property
    def forgets_for_good(self) -> bool: ...

    def reflect(self, dry_run: bool) -> ConsolidationReport: ...


@dataclass(frozen=True, slots=True)
class Tool:
    """One memory tool: call it with the arguments a model gave (a JSON object)."""

    name: str
    description: str
    parameters: Mapping[str, Any]  # a JSON Schema object
    handler: Handler
    writes: bool  # whether a call may change the memory (an ended agent's may not)

    def __call__(self, arguments: object) -> ToolResult:
        try:
            checked = check(self.name, self.parameters, arguments)
            return ToolResult(self.handler(checked))
        except EngramError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            return ToolResult(f"{self.name} failed: {exc.message}{hint}", is_error=True)

    def spec(self) -> dict[str, Any]:
        """The specification a host registers: name, description, JSON Schema."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
        }


class AgentBacking:
    """The tools over one scope of a memory (an agent's resource)."""

    def __init__(self, memory: Runs, ref: Scope, *, hard: bool = False) -> None:
        self._memory = memory
        self._ref = ref
        self._hard = hard  # whether what it forgets or merges away goes for good

    def add(self, note: ops.Remember) -> Fact:
        return self._memory.run(self._ref, note)

    def search(self, query: str, top_k: int, tags: Sequence[str], type: str | None) -> list[Found]:
        mode: RecallMode = "hybrid" if self._memory.embedder is not None else "text"
        recall = ops.Recall(query, top_k=top_k, tags=tags, type=type, mode=mode)
        return [Found(h.fact, h.relevance) for h in self._memory.run(self._ref, recall)]

    def update(self, fact_id: str, content: str) -> Fact:
        return self._memory.run(self._ref, ops.Correct(fact_id, content))

    def delete(self, fact_id: str) -> bool:
        return self._memory.run(self._ref, ops.Forget(fact_id, hard=self._hard))

    def merge(self, fact_ids: Sequence[str], content: str | None) -> Fact:
        return self._memory.run(self._ref, ops.Merge(fact_ids, content, hard=self._hard))

    @property
    def writes_merges(self) -> bool:
        return self._memory.chat is not None

    @property
    def forgets_for_good(self) -> bool:
        return self._hard

    def reflect(self, dry_run: bool) -> ConsolidationReport:
        return self._memory.run(self._ref, ops.Consolidate(dry_run=dry_run))


# -- the specifications -------------------------------------------------------------------
# Each tool is an operation of engram.core.ops offered to a model: its arguments are the
# operation's parameters (a few renamed, as a model reads them), with the declaration's
# bounds; whether it writes is the operation's.
MAX_TOP_K = 20  # a model reads every hit: fewer than the library's 100
# memory_add's arguments: the fields of a remembered fact, named in camelCase, but
# those a model does not set: where the fact came from, its metadata, when it was
# learned and how strongly it counts are its caller's to say.
_CALLERS = {"source_ref", "metadata", "created_at", "strength"}
ADD = {camel(f.name): f.name for f in fields_of(ops.Remember) if f.name not in _CALLERS}
_TIMES = {f.name for f in fields_of(ops.Remember) if f.base is datetime}
QUERY = next(f for f in fields_of(ops.Recall) if f.name == "query").schema()  # a query's bounds


def offer(
    op: type[ops.Op[Any]],
    description: str,
    arguments: Mapping[str, str],
    answer: Callable[[Any], str],
    **more: Mapping[str, Any],
) -> Tool:
    """The operation as the tool its declaration names: ``arguments`` (argument name →
    the operation's parameter) with the declaration's bounds (``more`` merged over
    them); a call makes the operation of them, checked by the library, and ``answer``
    carries it out into the text the model reads."""
    schema = _object(op, arguments, **more)
    return _tool(op, description, schema, lambda given: answer(_made(op, arguments, given)))


def _object(
    op: type[ops.Op[Any]], arguments: Mapping[str, str], **more: Mapping[str, Any]
) -> dict[str, Any]:
    """The JSON Schema of ``arguments`` (argument name → the operation's parameter),
    each with the declaration's bounds, ``more`` merged over it."""
    by_name = {f.name: f for f in fields_of(op)}
    properties = {
        arg: by_name[name].schema() | dict(more.get(arg, {})) for arg, name in arguments.items()
    }
    required = [arg for arg, name in arguments.items() if by_name[name].required]
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def create(backing: Backing, *, reflect: bool = False) -> list[Tool]:
    """The memory tools over ``backing``, in a fixed order; ``memory_reflect`` last,
    when ``reflect``."""

    def add(args: Mapping[str, Any]) -> str:
        fact = backing.add(_made(ops.Remember, ADD, args))
        return f"Remembered [{fact.id}]: {fact.content}"

    def search(args: Mapping[str, Any]) -> str:
        top_k = args.get("topK", DEFAULT_TOP_K)
        found = backing.search(args["query"], top_k, args.get("tags", []), args.get("type"))
        if not found:
            return "No memory matches."
        return "\n".join(_line(f) for f in found)

    def update(args: Mapping[str, Any]) -> str:
        fact = backing.update(args["id"], args["content"])
        return f"Updated [{fact.id}]: {fact.content}"

    def delete(args: Mapping[str, Any]) -> str:
        if not backing.delete(args["id"]):  # as an update of it answers: a tool error
            raise NotFound(f"no fact {args['id']!r} in this scope; nothing changed")
        return f"Forgot [{args['id']}]" + (" for good." if for_good else ".")

    def merge(args: Mapping[str, Any]) -> str:
        fact = backing.merge(args["ids"], args.get("content"))
        gone = ", ".join(f"[{i}]" for i in dict.fromkeys(args["ids"]) if i != fact.id)
        return f"Merged {gone} into [{fact.id}]: {fact.content}"

    writes, for_good = backing.writes_merges, backing.forgets_for_good
    gone = " It is gone for good: nothing can bring it back." if for_good else ""

    def consolidate(args: Mapping[str, Any]) -> str:
        return reflection(backing.reflect(bool(args.get("dryRun", False))))

    made = [
        _tool(
            ops.Remember,
            "Remember a fact worth keeping beyond this conversation: one self-contained "
            "statement. The same words twice are kept once.",
            _object(
                ops.Remember,
                ADD,
                content={"description": "the fact, in a sentence"},
                type={"description": "a kind: preference, event, ..."},
            ),
            add,
        ),
        _tool(
            ops.Recall,
            "Find remembered facts by meaning and words, best first: one line each, "
            "'- [id] words (relevance 0-1)'. Use the ids to update, delete or merge.",
            _object(
                ops.Recall,
                {"query": "query", "topK": "top_k", "tags": "tags", "type": "type"},
                topK={"maximum": MAX_TOP_K, "description": f"how many (default {DEFAULT_TOP_K})"},
            ),
            search,
        ),
        _tool(
            ops.Correct,
            "Give a remembered fact new words (it keeps its id).",
            _object(ops.Correct, {"id": "fact_id", "content": "content"}),
            update,
        ),
        _tool(
            ops.Forget,
            "Forget a remembered fact that is wrong or no longer true." + gone,
            _object(ops.Forget, {"id": "fact_id"}),
            delete,
        ),
        _tool(
            ops.Merge,
            "Fold 2 to 10 facts that say the same thing into one, in the words given; "
            "the others are forgotten"
            + (" for good: nothing can bring them back." if for_good else ".")
            + (" Without content, the memory writes the merged words." if writes else ""),
            _merging(writes),
            merge,
        ),
    ]
    if reflect:
        made.append(
            _tool(
                ops.Consolidate,
                "Tidy this memory: merge facts that say the same thing, prune weak old "
                "ones, and adjust strengths from which recalled facts answers used. "
                "Answers what changed; with dryRun, what would change.",
                _object(
                    ops.Consolidate, {"dryRun": "dry_run"}, dryRun={"description": "change nothing"}
                ),
                consolidate,
            )
        )
    return made


def _made(op: type[Made], arguments: Mapping[str, str], given: Mapping[str, Any]) -> Made:
    """The operation from a model's arguments (named as the tool names them; a time as
    ISO 8601 text with its offset), checked by the library with those names."""
    values: dict[str, Any] = {}
    for arg, value in given.items():
        name = arguments[arg]
        if name in _TIMES and isinstance(value, str):
            value = _time(arg, value)
        values[name] = value
    by_field = {name: arg for arg, name in arguments.items()}
    return fields.made(op, values, lambda f: by_field.get(f.name, f.name))


def _time(arg: str, text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.utcoffset() is None:
        raise InvalidInput(f"{arg} must be an ISO 8601 time with its offset, got {text[:40]!r}")
    return moment


def _tool(
    op: type[ops.Op[Any]], description: str, schema: dict[str, Any], handler: Handler
) -> Tool:
    assert op.surface.tool is not None
    return Tool(op.surface.tool, description, schema, handler, writes=op.surface.writes)


def _merging(writes: bool) -> dict[str, Any]:
    """memory_merge's arguments: ``content`` is required unless the memory writes it."""
    schema = _object(
        ops.Merge,
        {"ids": "fact_ids", "content": "content"},
        content={"description": "the merged fact"},
    )
    if not writes:
        schema["required"] = ["ids", "content"]
    return schema


def reflection(report: ConsolidationReport) -> str:
    """What a consolidation run changed, in a sentence for the model."""
    done = [
        f"{step.step}: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in step.counts.items())
        for step in report.steps
        if step.changed
    ]
    if not done:
        return "Nothing to tidy: the memory is consolidated."
    verb = "Would change" if report.dry_run else "Changed"
    return f"{verb} {report.changed} in all. " + "; ".join(done) + "."


def writes(name: str) -> bool:
    """Whether the memory tool ``name`` may change the memory, as its declaration says
    (a name that is no tool: True, the stricter answer)."""
    return _declared().get(name, True)


@cache
def _declared() -> dict[str, bool]:
    return {t.name: t.writes for t in create(_Nowhere(), reflect=True)}


def answering(sentence: str) -> list[Tool]:
    """The memory tools, each answering ``sentence`` whatever it is asked (once its
    arguments pass): for a visitor who is not signed in, of whom nothing is remembered
    and nothing read."""
    return [
        Tool(t.name, t.description, t.parameters, lambda _args: sentence, t.writes)
        for t in create(_Nowhere())
    ]


class _Nowhere:
    """A backing never called: :func:`answering` replaces every handler."""

    writes_merges = forgets_for_good = False

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"{name} called on no memory")


def _line(found: Found) -> str:
    source = f", remembered by {found.remembered_by}" if found.remembered_by else ""
    return f"- [{found.fact.id}] {found.fact.content} ({found.relevance:.2f}{source})"


# -- checking arguments against the schema ------------------------------------------------
def check(tool: str, schema: Mapping[str, Any], arguments: object) -> dict[str, Any]:
    """``arguments`` as the schema (the subset these tools use) allows them; Refused, in
    a sentence naming the argument, otherwise."""
    if not isinstance(arguments, Mapping):
        raise InvalidInput(f"the arguments of {tool} must be a JSON object")
    properties: Mapping[str, Any] = schema["properties"]
    unknown = sorted(str(k) for k in arguments if k not in properties)
    if unknown:
        raise InvalidInput(
            f"{tool} takes no argument {unknown[0]!r}",
            hint=f"it takes {', '.join(properties)}",
        )
    for name in schema["required"]:
        if name not in arguments:
            raise InvalidInput(f"{tool} needs the argument {name!r}")
    return {
        str(name): _value(str(name), properties[str(name)], value)
        for name, value in arguments.items()
    }


def _value(where: str, schema: Mapping[str, Any], value: object) -> Any:
    kind = schema.get("type")
    if kind is None:  # any JSON value: the handler's own checks judge it
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise InvalidInput(f"{where} must be a string")
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            raise InvalidInput(
                f"{where} must be {schema.get('minLength', 0)} to "
                f"{schema['maxLength']} characters, got {len(value)}"
            )
        return value
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(f"{where} must be an integer")
        if not schema["minimum"] <= value <= schema["maximum"]:
            raise InvalidInput(
                f"{where} must be from {schema['minimum']} to {schema['maximum']}, got {value}"
            )
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise InvalidInput(f"{where} must be true or false")
        return value
    if not isinstance(value, list):
        raise InvalidInput(f"{where} must be a list")
    if not schema.get("minItems", 0) <= len(value) <= schema["maxItems"]:
        raise InvalidInput(
            f"{where} must hold {schema.get('minItems', 0)} to {schema['maxItems']} items, "
            f"got {len(value)}"
        )
    return [_value(f"{where}[{i}]", schema["items"], item) for i, item in enumerate(value)]
