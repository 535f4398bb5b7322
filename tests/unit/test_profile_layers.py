"""bench/profile_layers.py: py-spy's samples of a worker, each put in the layer that asked for
the work."""

from __future__ import annotations

from bench.profile_layers import (
    ASYNCPG,
    CORE,
    FASTAPI,
    LOOP,
    ORM,
    OTHER,
    OWN,
    SERVER,
    bucket,
    table,
)

OWN_ROOTS = ("/srv/contextd/app/",)
PACKAGES = "/venv/lib/python3.11/site-packages"
STDLIB = "/usr/lib/python3.11"
ROOT = (
    f"run (/srv/contextd/app/__main__.py:5);run ({PACKAGES}/uvicorn/main.py:580);"
    f"run ({STDLIB}/asyncio/runners.py:118)"
)


def stack(*frames: str) -> str:
    return ";".join([ROOT, *frames])


def test_a_sample_counts_for_the_layer_of_its_innermost_frame() -> None:
    raw = "\n".join(
        [
            stack(f"execute ({PACKAGES}/sqlalchemy/engine/base.py:1400)") + " 7",
            stack(f"_load ({PACKAGES}/sqlalchemy/orm/loading.py:90)") + " 3",
            stack(f"fetch ({PACKAGES}/asyncpg/connection.py:690)") + " 5",
            stack(f"solve ({PACKAGES}/fastapi/dependencies/utils.py:600)") + " 2",
            stack(f"__call__ ({PACKAGES}/starlette/routing.py:700)") + " 1",
            stack("decide (/srv/contextd/app/budget/decision.py:40)") + " 4",
        ]
    )

    assert bucket(raw, OWN_ROOTS) == {CORE: 7, ORM: 3, ASYNCPG: 5, FASTAPI: 2, SERVER: 1, OWN: 4}


def test_a_library_without_a_layer_counts_for_its_caller() -> None:
    validate = f"validate ({PACKAGES}/pydantic/main.py:700)"
    raw = "\n".join(
        [
            stack(f"serialize ({PACKAGES}/fastapi/routing.py:150)", validate) + " 6",
            stack("answer (/srv/contextd/app/turns/service.py:80)", validate) + " 2",
            stack(
                "count (/srv/contextd/app/tokens/counter.py:30)",
                f"encode ({PACKAGES}/tiktoken/core.py:120)",
                f"compile ({STDLIB}/re/__init__.py:220)",
            )
            + " 3",
        ]
    )

    assert bucket(raw, OWN_ROOTS) == {FASTAPI: 6, OWN: 5}


def test_the_event_loop_and_instrumentation_have_a_layer_of_their_own() -> None:
    raw = "\n".join(
        [
            ROOT + " 9",  # the loop in C, no Python callback on the stack
            stack("log (/srv/contextd/app/logs.py:50)", f"emit ({STDLIB}/logging/__init__.py:1100)")
            + " 2",
            stack(f"inc ({PACKAGES}/prometheus_client/metrics.py:300)") + " 1",
        ]
    )

    assert bucket(raw, OWN_ROOTS) == {LOOP: 12}


def test_a_stack_of_nothing_known_is_everything_else() -> None:
    raw = f"<module> (<string>:1);helper ({PACKAGES}/somelib/x.py:3) 4\n"

    assert bucket(raw, OWN_ROOTS) == {OTHER: 4}


def test_a_thread_parked_in_a_wait_is_not_busy() -> None:
    parked = (
        f"_bootstrap ({STDLIB}/threading.py:1002);get ({STDLIB}/queue.py:171);"
        f"Condition.wait ({STDLIB}/threading.py:327) 40"
    )
    raw = parked + "\n" + stack(f"fetch ({PACKAGES}/asyncpg/connection.py:690)") + " 2\n"

    assert bucket(raw, OWN_ROOTS) == {ASYNCPG: 2}


def test_the_table_gives_each_layer_its_share_of_busy_samples() -> None:
    shown = table(
        bucket(
            stack(f"fetch ({PACKAGES}/asyncpg/connection.py:690)") + " 3\n" + ROOT + " 1", OWN_ROOTS
        )
    )

    assert f"| {ASYNCPG} | 3 | 75.0% |" in shown
    assert f"| {LOOP} | 1 | 25.0% |" in shown
    assert "| **all busy samples** | 4 | 100% |" in shown
