"""docs/benchmarks.md, one section per benchmark: a run rewrites its own part of the page and
leaves every other part (other benchmarks' figures, the prose written by hand) as it was."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
TITLE = "# Benchmarks\n"


def _marks(name: str) -> tuple[str, str]:
    return f"<!-- bench {name}: written by python -m bench {name} -->", f"<!-- /bench {name} -->"


def replace_section(heading: str, body: str, *, page: Path = PAGE) -> None:
    """Put ``## heading`` with ``body`` in place of the section of that heading (up to the next
    ``## ``), or at the end of the page when it has none."""
    text = page.read_text() if page.exists() else TITLE
    section = f"## {heading}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip() + "\n\n" + section
    page.write_text(text.rstrip() + "\n")


def replace_figures(name: str, heading: str, figures: str, *, page: Path = PAGE) -> None:
    """Put a run's ``figures`` between the marks of benchmark ``name``, inside ``## heading``
    (made at the end of the page when missing), and leave the prose around them alone."""
    start, end = _marks(name)
    block = f"{start}\n\n{figures.strip()}\n\n{end}"
    text = page.read_text() if page.exists() else TITLE
    marked = re.compile(rf"{re.escape(start)}.*?{re.escape(end)}", re.DOTALL)
    if marked.search(text):
        text = marked.sub(lambda _: block, text, count=1)
    elif re.search(rf"^## {re.escape(heading)}\n", text, re.MULTILINE):
        nxt = re.compile(rf"(^## {re.escape(heading)}\n.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
        text = nxt.sub(
            lambda found: found.group(1).rstrip() + "\n\n" + block + "\n\n", text, count=1
        )
    else:
        text = text.rstrip() + f"\n\n## {heading}\n\n{block}\n"
    page.write_text(text.rstrip() + "\n")
