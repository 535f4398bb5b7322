"""``python -m bench``: every registered benchmark can be run from it, and a benchmark's
--write puts its figures in its own section of docs/benchmarks.md and touches nothing else."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

from bench.__main__ import BENCHMARKS
from bench.page import replace_figures, replace_section

REPO = Path(__file__).resolve().parent.parent.parent
PAGE = """# Benchmarks

Intro.

## Latency

Old latency figures.

## Search and recall

Prose written by hand.

## Counting

Counting prose.
"""


def test_every_registered_benchmark_has_a_main_to_run() -> None:
    for name, benchmark in BENCHMARKS.items():
        spec = importlib.util.find_spec(benchmark.module)
        assert spec is not None, name
        assert spec.origin is not None, name
        tree = ast.parse(Path(spec.origin).read_text())
        mains = [
            node
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "main"
        ]
        assert len(mains) == 1, f"{name}: no main()"
        arguments = mains[0].args
        assert len(arguments.args) == len(arguments.defaults), f"{name}: main() needs arguments"


def test_python_m_bench_lists_every_benchmark() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "bench"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout

    assert all(f"  {name} " in listed for name in BENCHMARKS)


def test_a_section_is_replaced_in_place_and_the_rest_of_the_page_kept(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(PAGE)

    replace_section("Latency", "New latency figures.", page=page)

    assert page.read_text() == PAGE.replace("Old latency figures.", "New latency figures.")


def test_a_new_section_goes_at_the_end(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(PAGE)

    replace_section("Tracing", "Figures.", page=page)

    assert page.read_text() == PAGE + "\n## Tracing\n\nFigures.\n"


def test_a_benchmarks_figures_go_inside_its_section_and_replace_its_last_ones(
    tmp_path: Path,
) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(PAGE)

    replace_figures("recall", "Search and recall", "run 1", page=page)
    replace_figures("recall", "Search and recall", "run 2", page=page)

    text = page.read_text()
    assert text.count("<!-- bench recall") == 1
    assert "run 1" not in text
    section = text.split("## Search and recall\n")[1].split("## Counting")[0]
    assert section.startswith("\nProse written by hand.\n")
    assert "run 2" in section
    assert text.endswith("## Counting\n\nCounting prose.\n")
