"""Property-based fuzzing of the whole API from its own OpenAPI document: whatever the input,
no 5xx, and every answer matches what the document promises (status, type, schema)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.processes import ServerProcess

EXAMPLES_PER_OPERATION = 10
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def server(postgres_url: str, tmp_path: Path) -> Iterator[str]:
    process = ServerProcess(postgres_url, tmp_path / "server.log")
    try:
        yield process.ready()
    finally:
        process.stop()


@pytest.mark.postgres
def test_fuzzed_requests_get_no_5xx_and_documented_answers(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = schemathesis.openapi.from_url(f"{server}/openapi.json")
    http = requests.Session()
    # A session that exists, so that generated turns and steps get past the 404.
    created = http.post(f"{server}/v1/sessions", json={"id": "fuzz", "model": "gpt-4o"})
    assert created.status_code == 201, created.text
    cases = 0
    operations = 0

    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        operation = result.ok()
        operations += 1
        strategies = [operation.as_strategy(mode) for mode in GenerationMode]
        if "session_id" in operation.path:
            strategies.append(
                operation.as_strategy(
                    GenerationMode.POSITIVE, path_parameters={"session_id": "fuzz"}
                )
            )

        @given(case=st.one_of(strategies))
        @settings(
            max_examples=EXAMPLES_PER_OPERATION * len(strategies),
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: Case[Any]) -> None:
            nonlocal cases
            cases += 1
            response = case.call(base_url=server, session=http, timeout=30)
            case.validate_response(response, checks=CHECKS)

        fuzz()

    with capsys.disabled():
        print(f"\nschemathesis: {cases} cases over {operations} operations, all passed")  # noqa: T201
    assert operations >= 13
