"""The memory tools on the wire: their specifications and what a call answers, once per
surface (camelCase on the agent routes, snake_case on the people routes). A call's
arguments are the tool's own JSON object, checked by the tool (:mod:`engram.core.tools`)."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel

from engram.core.tools import Tool, ToolResult
from engram.wire import Answer, PeopleAnswer


class _SpecFields(BaseModel):
    name: str
    description: str
    parameters: dict[str, Any]

    @classmethod
    def of(cls, tool: Tool) -> Self:
        return cls(name=tool.name, description=tool.description, parameters=dict(tool.parameters))


class _ResultFields(BaseModel):
    text: str
    is_error: bool

    @classmethod
    def of(cls, result: ToolResult) -> Self:
        return cls(text=result.text, is_error=result.is_error)


class ToolSpecOut(_SpecFields, Answer):
    """A tool as a host registers it: ``parameters`` is the JSON Schema of its arguments."""


class ToolsOut(Answer):
    tools: list[ToolSpecOut]


class ToolResultOut(_ResultFields, Answer):
    """What the tool answers the model: ``isError`` when it refused or failed (nothing
    written), in a sentence the model can act on."""


class PersonToolSpecOut(_SpecFields, PeopleAnswer):
    pass


class PersonToolsOut(PeopleAnswer):
    tools: list[PersonToolSpecOut]


class PersonToolResultOut(_ResultFields, PeopleAnswer):
    pass
