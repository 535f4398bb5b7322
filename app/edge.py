"""A lean request handler for the hot routes, behind the same declaration.

A route declared with ``route_class_override=LeanRoute`` keeps everything FastAPI derives
from its signature: the OpenAPI document, the body and response models, the parameters and
their validation, the dependencies. Only the work per request changes, on the path that
succeeds:

- the body is parsed with orjson instead of ``json.loads`` (several times faster on a long
  step), then validated by the declared body field, as FastAPI does: the same value, the same
  errors (``model_validate_json`` would not save the conversion: the request models' own
  "before" validators take Python objects, so pydantic builds them from the JSON anyway);
- the dependencies are resolved by a plan made once, when the route is built (each
  dependency's call and where its arguments come from), instead of walking the dependency
  tree and its caches on every request (bench/edge_cost.py measures both);
- the answer is the returned model's ``model_dump_json``: it is already an instance of the
  declared response model, and validating it again against that model does nothing.

Whatever the plan does not cover goes to FastAPI's own handler, built as usual: a body that
does not parse, is not sent as JSON or is empty (so those errors are worded by FastAPI as
before), a route whose dependencies use what the plan does not support, an app with
dependency overrides, and every route when the installed FastAPI lacks one of the private
helpers the plan calls. Validation errors are FastAPI's own error dicts, in FastAPI's order
(path, header, body), raised after the dependencies, as FastAPI raises them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from fastapi import Request, Response, params
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute, serialize_response
from pydantic import BaseModel

# The plan reads FastAPI's private helpers (pyproject has no upper bound on fastapi): a
# release that renames or moves one leaves every route on FastAPI's own handler, which
# serves the same contract, instead of failing at import.
try:
    from fastapi._compat import Undefined
    from fastapi._compat.shared import field_annotation_is_sequence
    from fastapi.dependencies.models import (
        Dependant,
        _is_async_gen_callable,
        _is_coroutine_callable,
    )
    from fastapi.dependencies.utils import (
        _get_param_aliases,
        _get_param_model,
        _is_json_field,
        _solve_generator,
        _validate_value_with_model_field,
    )
    from fastapi.routing import _effective_route_context_var
except ImportError:
    #: Whether this FastAPI has every private name the lean handler uses.
    LEAN_HANDLER_AVAILABLE = False
else:
    LEAN_HANDLER_AVAILABLE = True

Handler = Callable[[Request], Coroutine[Any, Any, Response]]

#: An argument of a dependency: the request itself, or the result of an earlier step.
_REQUEST = -1


@dataclass(frozen=True)
class _Step:
    """One dependency to call: with which arguments, and how."""

    dependant: Dependant
    #: (parameter name, _REQUEST or the index of the step whose result it takes)
    arguments: tuple[tuple[str, int], ...]
    kind: Literal["coroutine", "generator"]


@dataclass(frozen=True)
class _Param:
    """A path or header parameter read as ``request_params_to_args`` reads it, with what that
    function works out from the field on every request (whether it is a model or a list,
    its aliases) worked out once."""

    field: Any
    #: (validation alias, request key), in FastAPI's order of preference.
    aliases: tuple[tuple[str, str], ...]
    location: str


def _params(fields: Any) -> tuple[_Param, ...] | None:
    """``fields`` as plain parameters, or None when one of them is a model, a list or JSON
    (FastAPI's own function reads those)."""
    planned: list[_Param] = []
    for field in fields:
        if (
            not isinstance(field.field_info, params.Param)
            or _get_param_model(field) is not None
            or _is_json_field(field)
            or field_annotation_is_sequence(field.field_info.annotation)
        ):
            return None
        aliases = tuple(_get_param_aliases(field))
        planned.append(_Param(field, aliases, field.field_info.in_.value))
    return tuple(planned)


def _read_params(planned: tuple[_Param, ...], received: Any) -> tuple[dict[str, Any], list[Any]]:
    """What ``request_params_to_args`` answers for these parameters: the same lookups and the
    same validation, in the same order."""
    values: dict[str, Any] = {}
    errors: list[Any] = []
    for param in planned:
        _, key = next((pair for pair in param.aliases if pair[1] in received), param.aliases[0])
        # _get_multidict_value's answer for a field that is neither a list nor JSON, read
        # from path parameters or headers: the value, or Undefined when it is absent.
        value = received.get(key)
        if value is None:
            value = Undefined
        validated, field_errors = _validate_value_with_model_field(
            field=param.field, value=value, values=values, loc=(param.location, key)
        )
        if field_errors:
            errors.extend(field_errors)
        else:
            values[param.field.name] = validated
    return values, errors


@dataclass(frozen=True)
class _Plan:
    """What a request of the route needs, in the order FastAPI would do it."""

    steps: tuple[_Step, ...]
    #: The endpoint's dependencies: (parameter name, index of the step giving it).
    endpoint_arguments: tuple[tuple[str, int], ...]
    body_name: str
    response_model: type[BaseModel] | None
    path_params: tuple[_Param, ...]
    header_params: tuple[_Param, ...]


def _json_media_type(request: Request) -> bool:
    """What FastAPI parses as JSON: ``application/json`` or ``application/*+json``."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


def _plan(route: Any) -> _Plan | None:
    """The plan for ``route`` (an APIRoute or its inclusion in the app), or None when its
    declaration uses something the plan does not do."""
    dependant: Dependant = route.dependant
    if route.body_field is None or route._embed_body_fields or len(dependant.body_params) != 1:
        return None
    body_model = route.body_field.field_info.annotation
    if not (isinstance(body_model, type) and issubclass(body_model, BaseModel)):
        return None
    if (
        dependant.query_params
        or dependant.cookie_params
        or dependant.websocket_param_name
        or dependant.response_param_name
        or dependant.background_tasks_param_name
        or dependant.security_scopes_param_name
    ):
        return None
    steps: list[_Step] = []
    index_of: dict[Any, int] = {}

    def add(sub: Dependant) -> int | None:
        """The index of ``sub``'s step, planning its own dependencies first."""
        call = sub.call
        if call is None or not sub.use_cache or sub.own_oauth_scopes or sub.parent_oauth_scopes:
            return None
        if call in index_of:
            return index_of[call]
        if (
            sub.path_params
            or sub.query_params
            or sub.header_params
            or sub.cookie_params
            or sub.body_params
            or sub.websocket_param_name
            or sub.response_param_name
            or sub.background_tasks_param_name
            or sub.security_scopes_param_name
            or sub.concurrency is not None
        ):
            return None
        arguments: list[tuple[str, int]] = []
        for dependency in sub.dependencies:
            at = add(dependency)
            if at is None or dependency.name is None:
                return None
            arguments.append((dependency.name, at))
        for name in {sub.request_param_name, sub.http_connection_param_name} - {None}:
            arguments.append((str(name), _REQUEST))
        if _is_async_gen_callable(call):
            kind: Literal["coroutine", "generator"] = "generator"
        elif _is_coroutine_callable(call):
            kind = "coroutine"
        else:
            return None  # a plain function runs in a thread: FastAPI's to do
        steps.append(_Step(sub, tuple(arguments), kind))
        index_of[call] = len(steps) - 1
        return len(steps) - 1

    endpoint_arguments: list[tuple[str, int]] = []
    for dependency in dependant.dependencies:
        at = add(dependency)
        if at is None or dependency.name is None:
            return None
        endpoint_arguments.append((dependency.name, at))
    path_params = _params(dependant.path_params)
    header_params = _params(dependant.header_params)
    if path_params is None or header_params is None:
        return None
    response_model = route.response_model
    return _Plan(
        steps=tuple(steps),
        endpoint_arguments=tuple(endpoint_arguments),
        body_name=dependant.body_params[0].name,
        response_model=(
            response_model
            if isinstance(response_model, type) and issubclass(response_model, BaseModel)
            else None
        ),
        path_params=path_params,
        header_params=header_params,
    )


class LeanRoute(APIRoute):
    """An APIRoute whose requests take the lean path when they can (see the module)."""

    def get_route_handler(self) -> Handler:
        framework = super().get_route_handler()
        if not LEAN_HANDLER_AVAILABLE:
            return framework
        # Built once per inclusion of the router: the inclusion's view of the route (its
        # path, dependencies and responses as the app serves them) is in this context.
        effective = _effective_route_context_var.get()
        route = effective if effective is not None and effective.original_route is self else self
        plan = _plan(route)
        if plan is None:
            return framework
        return _lean_handler(route, plan, framework)


def _lean_handler(route: Any, plan: _Plan, framework: Handler) -> Handler:
    dependant: Dependant = route.dependant
    endpoint = dependant.call
    assert endpoint is not None
    overrides_provider = route.dependency_overrides_provider
    status_code: int | None = route.status_code
    response_field = route.response_field
    body_field = route.body_field

    async def handle(request: Request) -> Response:
        if overrides_provider is not None and getattr(
            overrides_provider, "dependency_overrides", None
        ):
            return await framework(request)
        raw = await request.body()
        if not raw or not _json_media_type(request):
            return await framework(request)
        try:
            received = orjson.loads(raw)
        except orjson.JSONDecodeError:
            # FastAPI's handler reads the same (cached) body with json.loads and says why it
            # does not parse in its words; it also takes what orjson refuses and json does
            # not (NaN, integers past 64 bits, UTF-16).
            return await framework(request)
        # The declared body field's own validation, as FastAPI runs it: the same value, or
        # the same errors, reported after the dependencies ran, as FastAPI does.
        body, body_errors = body_field.validate(received, {}, loc=("body",))

        results: list[Any] = []
        for step in plan.steps:
            arguments = {
                name: request if at == _REQUEST else results[at] for name, at in step.arguments
            }
            if step.kind == "generator":
                stack = request.scope[
                    "fastapi_function_astack"
                    if step.dependant.scope == "function"
                    else "fastapi_inner_astack"
                ]
                results.append(
                    await _solve_generator(
                        request=request,
                        dependant=step.dependant,
                        stack=stack,
                        sub_values=arguments,
                    )
                )
            else:
                results.append(await step.dependant.call(**arguments))  # type: ignore[misc]

        path_values, path_errors = _read_params(plan.path_params, request.path_params)
        header_values, header_errors = _read_params(plan.header_params, request.headers)
        errors = [*path_errors, *header_errors, *body_errors]
        if errors:
            raise RequestValidationError(errors, body=received)
        values: dict[str, Any] = {name: results[at] for name, at in plan.endpoint_arguments}
        values.update(path_values)
        values.update(header_values)
        values[plan.body_name] = body
        for name in (dependant.request_param_name, dependant.http_connection_param_name):
            if name:
                values[name] = request

        answer = await endpoint(**values)
        if isinstance(answer, Response):
            return answer
        if plan.response_model is not None and type(answer) is plan.response_model:
            content = _dumped(answer)
        else:
            content = await serialize_response(
                field=response_field, response_content=answer, dump_json=True
            )
        return Response(
            content=content, status_code=status_code or 200, media_type="application/json"
        )

    return handle


#: A field of this type holds what the agent sends or is sent (a prompt's messages): JSON's
#: own values, decoded from a body or a stored row, which orjson writes as they are.
_PLAIN_JSON_LIST = list[dict[str, Any]]


_PLAIN_ONLY = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


@functools.cache
def _plain_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of ``model`` written by orjson as they are, not dumped by pydantic first:
    only those pydantic would write as they are too (no alias, so the key is the field's
    name; no exclusion, no serializer of the field's or the model's own)."""
    decorators = model.__pydantic_decorators__
    if decorators.model_serializers:
        return frozenset()
    serialized = {
        name
        for serializer in decorators.field_serializers.values()
        for name in serializer.info.fields
    }
    return frozenset(
        name
        for name, field in model.model_fields.items()
        if field.annotation == _PLAIN_JSON_LIST
        and not field.exclude
        and getattr(field, "exclude_if", None) is None
        and name not in serialized
        and field.alias is None
        and field.serialization_alias is None
    )


def _dumped(answer: BaseModel) -> bytes:
    """The answer as JSON, the same bytes as ``model_dump_json(by_alias=True)``.

    A prompt is mostly long strings (a summary of 100 kB and more once a session is long),
    and pydantic's serializer writes a 143 kB prompt in ~230 µs where orjson writes the same
    bytes from the JSON-mode dump in ~50 µs (a small prompt costs both a few µs). The
    prompt's messages are not dumped at all: pydantic's JSON-mode dump walks every value of
    every message to give back the same JSON values, which for an open turn of 1,000 tool
    calls took 1 to 4 ms on the event loop per step where orjson writes them in 0.2 to 0.4 ms. What
    orjson refuses (an integer past 64 bits in a message's content, a key that is not a
    string, bytes) is written by pydantic, all of it."""
    plain = _plain_fields(type(answer))
    try:
        if not plain:
            return orjson.dumps(answer.model_dump(mode="json", by_alias=True))
        dumped = answer.model_dump(mode="json", by_alias=True, exclude=set(plain))
        # In the fields' order, as pydantic writes them (computed fields last).
        content: dict[str, Any] = {}
        for name, field in type(answer).model_fields.items():
            key = name if name in plain else field.serialization_alias or field.alias or name
            if name in plain:
                content[key] = getattr(answer, name)
            elif key in dumped:
                content[key] = dumped[key]
        for key, value in dumped.items():
            content.setdefault(key, value)
        # A value JSON has no word for (a date, a dataclass, a str's subclass) would be
        # written by orjson its own way: refused here, written by pydantic below.
        return orjson.dumps(content, option=_PLAIN_ONLY)
    except TypeError:
        return answer.model_dump_json(by_alias=True).encode()
