"""The documented shapes of tool definitions and tool calls, checked where they enter.

The token counting in ``app.budget`` trusts these shapes; a definition a careless client
writes (``"properties": {"q": "string"}``, ``"enum": 5``) is refused here with a 422 naming
the field, rather than stored and failing every later turn. The dicts are returned as they
came, so pass-through fields stay untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.budget.tokens import is_anthropic_server_tool
from app.limits import json_depth

#: A tool's parameter schema may nest deeper than metadata (objects of objects), but not so
#: deep that serialising it fails.
MAX_TOOL_SCHEMA_DEPTH = 64


def tool_parameters_shape(parameters: Any) -> Any:
    """A JSON Schema object whose ``properties`` map names to schema objects, each ``enum``
    a list."""
    if parameters is None:
        return None
    if not isinstance(parameters, Mapping):
        raise ValueError("parameters must be a JSON Schema object")
    if json_depth(parameters) > MAX_TOOL_SCHEMA_DEPTH:
        raise ValueError(f"parameters nest more than {MAX_TOOL_SCHEMA_DEPTH} levels deep")
    properties = parameters.get("properties")
    if properties is None:
        return parameters
    if not isinstance(properties, Mapping):
        raise ValueError("parameters.properties must be an object of property schemas")
    for name, schema in properties.items():
        if not isinstance(schema, Mapping):
            raise ValueError(
                f"parameters.properties.{name} must be a schema object, such as "
                '{"type": "string"}'
            )
        if "enum" in schema and not isinstance(schema["enum"], list):
            raise ValueError(f"parameters.properties.{name}.enum must be a list")
    return parameters


def tool_definition_shape(tool: Any) -> Any:
    """``{"type": "function", "function": {"name": ..., "parameters": {...}}}``, or
    Anthropic's ``{"name": ..., "input_schema": {"type": "object", ...}}``, or an Anthropic
    server tool (``{"type": "web_search_20250305", "name": "web_search", ...}``)."""
    if not isinstance(tool, Mapping):
        raise ValueError("a tool must be an object")
    if "function" not in tool and ("input_schema" in tool or is_anthropic_server_tool(tool)):
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise ValueError("name must be a non-empty string")
        if "input_schema" in tool:
            schema = tool["input_schema"]
            if not isinstance(schema, Mapping) or schema.get("type") != "object":
                raise ValueError('input_schema must be a JSON Schema with "type": "object"')
            tool_parameters_shape(schema)
        elif json_depth(tool) > MAX_TOOL_SCHEMA_DEPTH:
            raise ValueError(f"a tool nests more than {MAX_TOOL_SCHEMA_DEPTH} levels deep")
        return tool
    function = tool.get("function")
    if not isinstance(function, Mapping):
        raise ValueError('a tool needs "function": an object with a name and parameters')
    if not isinstance(function.get("name"), str) or not function["name"]:
        raise ValueError("function.name must be a non-empty string")
    description = function.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError("function.description must be a string")
    tool_parameters_shape(function.get("parameters"))
    return tool


def tool_call_shape(call: Any) -> Any:
    """``{"id": ..., "type": "function", "function": {"name": ..., "arguments": "..."}}``."""
    if not isinstance(call, Mapping):
        raise ValueError("a tool call must be an object")
    if not isinstance(call.get("id"), str) or not call["id"]:
        raise ValueError("a tool call needs a non-empty string id")
    function = call.get("function")
    if not isinstance(function, Mapping):
        raise ValueError('a tool call needs "function": an object with name and arguments')
    if not isinstance(function.get("name"), str):
        raise ValueError("function.name must be a string")
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        raise ValueError("function.arguments must be a string of JSON")
    if json_depth(call) > MAX_TOOL_SCHEMA_DEPTH:
        raise ValueError(f"a tool call nests more than {MAX_TOOL_SCHEMA_DEPTH} levels deep")
    return call
