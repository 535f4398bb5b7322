"""The shape of the code, checked: a pure budget core, no import circles, no reaching into
another package's private names. Read from the source (``ast``), not by importing it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"

#: What the budget core may import besides itself: computation, never I/O, logging, locks,
#: clocks or process-wide state.
CORE_STANDARD_LIBRARY = frozenset(
    {
        "__future__",
        "base64",
        "binascii",
        "collections",
        "dataclasses",
        "enum",
        "functools",
        "hashlib",
        "itertools",
        "json",
        "math",
        "re",
        "struct",
        "typing",
    }
)


def module_name(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(module, names) of every import that runs, ``if TYPE_CHECKING:`` blocks left out."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []


def app_modules() -> dict[str, Path]:
    return {module_name(path): path for path in APP.rglob("*.py")}


def test_the_budget_core_imports_nothing_but_computation_and_itself() -> None:
    offending = [
        f"{module_name(path)} imports {module}"
        for path in sorted((APP / "budget").rglob("*.py"))
        for module, _ in runtime_imports(path)
        if not module.startswith("app.budget") and module.split(".")[0] not in CORE_STANDARD_LIBRARY
    ]
    assert offending == []


def test_no_module_of_the_service_imports_itself_in_a_circle() -> None:
    modules = app_modules()
    graph = {
        name: sorted({module for module, _ in runtime_imports(path) if module in modules} - {name})
        for name, path in modules.items()
    }
    circles: list[list[str]] = []
    state: dict[str, str] = {}
    trail: list[str] = []

    def visit(name: str) -> None:
        state[name] = "open"
        trail.append(name)
        for target in graph[name]:
            if state.get(target) == "open":
                circles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target)
        trail.pop()
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert circles == []


def test_no_package_imports_another_packages_private_names() -> None:
    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    offending = [
        f"{module_name(path)} imports {name} from {module}"
        for path in APP.rglob("*.py")
        for module, names in runtime_imports(path)
        if module.startswith("app.") and package(module) != package(module_name(path))
        for name in names
        if name.startswith("_")
    ]
    assert offending == []


def test_no_two_modules_import_each_other_even_for_type_checking() -> None:
    # A circle hidden behind TYPE_CHECKING is still two modules that cannot be read apart.
    modules = app_modules()

    def imports(path: Path) -> set[str]:
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        return found & modules.keys()

    graph = {name: imports(path) - {name} for name, path in modules.items()}
    pairs = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if a in graph[b]})
    assert pairs == []
