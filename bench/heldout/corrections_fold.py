"""``python -m bench.heldout.corrections_fold``: corrections judged on the summary alone, fast.

Every user message of a session that states a fact or corrects one (with the assistant's
acknowledgement) is folded, in three summaries each carrying the last, by the extractive
summariser at a target with room for all of it; the summary's lines are scored as the
held-out scorer scores a prompt (a line holding an old value without the new one presents
it as current). With room for everything, a fact that never changed and is missing was
taken by a false revision, and an old value left standing was not revised: what the rules
decide, apart from what the block leaves out for room; each such fact is put down to the
kind of the later statement that revises it (``unrelated``: another fact never corrected),
so that false revisions are counted by style. Seconds of CPU per set, no app. ::

    python -m bench.heldout.corrections_fold --set third --seeds 5000-5009 --verbose
    python -m bench.heldout.corrections_fold --set corrections --seeds 7000-7009
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

import tiktoken

from app.budget.statements import revises
from app.budget.summary import SummaryContent
from app.budget.tokens import TiktokenCounter
from app.summarize import SourceMessage, SummaryRequest
from app.summarize.extractive import summarize_extractive
from bench.heldout.generator import value_pattern
from bench.heldout.scenario import Scenario, normalise

_PIECES = re.compile(r"[\n;]")
TARGET_TOKENS = 4000
FOLDS = 3


def _fold(scenario: Scenario) -> str:
    turns = sorted(
        {fact.turn for fact in scenario.facts}
        | {fact.correction_turn for fact in scenario.facts if fact.correction_turn is not None}
        | {said for fact in scenario.facts for _, said in fact.superseded}
    )
    messages = []
    for number, turn in enumerate(turns):
        messages.append(SourceMessage(2 * number + 1, "user", scenario.turns[turn].user))
        messages.append(SourceMessage(2 * number + 2, "assistant", scenario.turns[turn].answer))
    counter = TiktokenCounter("o200k_base", tiktoken.get_encoding("o200k_base"))
    size = max(2, len(messages) // FOLDS // 2 * 2)
    summary: SummaryContent | None = None
    for start in range(0, len(messages), size):
        chunk = tuple(messages[start : start + size])
        summary = summarize_extractive(SummaryRequest(summary, chunk, TARGET_TOKENS, counter))
    return summary.rendered if summary else ""


def score(generate: Callable[[int], Scenario], seeds: list[int], *, verbose: bool) -> str:
    """The figures of ``seeds``, by kind of correction; with ``verbose``, each failure."""
    totals = {"corrections": 0, "new": 0, "old": 0, "facts": 0, "kept": 0}
    by_kind: dict[str, list[int]] = {}
    #: Facts never corrected that left, by the kind of the later statement that revises them.
    taken: dict[str, int] = {}
    for seed in seeds:
        scenario = generate(seed)
        rendered = _fold(scenario)
        # Each turn's statement by the kind of fact it is part of ("unrelated": a control).
        kind_said: dict[int, str] = {}
        for fact in scenario.facts:
            for turn in (fact.turn, fact.correction_turn, *(t for _, t in fact.superseded)):
                if turn is not None:
                    kind_said.setdefault(turn, fact.kind)
        lines = [normalise(piece) for piece in _PIECES.split(rendered)]
        text = normalise(rendered)
        for fact in scenario.facts:
            present = bool(value_pattern(fact.corrected_to or fact.value).search(text))
            if fact.corrected_to is None:
                totals["facts"] += 1
                totals["kept"] += present
                if not present:
                    said = scenario.turns[fact.turn].user
                    by = sorted(
                        {
                            kind_said[turn]
                            for turn in kind_said
                            if turn > fact.turn
                            and revises(scenario.turns[turn].user, said, just_before=True)
                        }
                    )
                    for kind in by or ["(none)"]:
                        taken[kind] = taken.get(kind, 0) + 1
                    if verbose:
                        print(f"seed {seed} lost: {said!r} (revised by: {by})")  # noqa: T201
                continue
            new = value_pattern(fact.corrected_to)
            olds = [value_pattern(value) for value in fact.old_values]
            stale = [li for li in lines for o in olds if o.search(li) and not new.search(li)]
            totals["corrections"] += 1
            totals["new"] += present
            totals["old"] += bool(stale)
            counts = by_kind.setdefault(fact.kind, [0, 0, 0])
            counts[0] += 1
            counts[1] += present
            counts[2] += bool(stale)
            if (stale or not present) and verbose:
                print(f"seed {seed} [{fact.kind}] new value present: {present}")  # noqa: T201
                print(f"   said {scenario.turns[fact.turn].user!r}")  # noqa: T201
                if fact.correction_turn is not None:
                    print(f"   then {scenario.turns[fact.correction_turn].user!r}")  # noqa: T201
                for line in stale:
                    print(f"   ! {line[:200]}")  # noqa: T201
    out = [
        f"corrections: new value present {totals['new']}/{totals['corrections']}, "
        f"old value as current {totals['old']}/{totals['corrections']}; "
        f"facts never corrected kept {totals['kept']}/{totals['facts']}"
    ]
    for kind in sorted(by_kind):
        n, found, stale_count = by_kind[kind]
        out.append(f"  {kind:<28} new {found}/{n}  old as current {stale_count}/{n}")
    out.append(
        "facts never corrected that left, by the kind of the later statement revising them: "
        + (", ".join(f"{kind} {count}" for kind, count in sorted(taken.items())) or "none")
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    from bench.heldout.__main__ import SETS, seed_list

    parser = argparse.ArgumentParser(
        prog="python -m bench.heldout.corrections_fold", description=__doc__
    )
    parser.add_argument(
        "--set", default="corrections", choices=("first", "second", "third", "corrections")
    )
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    generate: Callable[[int], Scenario]
    if args.set == "corrections":
        from bench.heldout import corrections

        generate = corrections.generate
    else:
        chosen = SETS[args.set]

        def generate(seed: int) -> Scenario:
            return chosen.generate(seed, 280)

    print(score(generate, seed_list(args.seeds), verbose=args.verbose))  # noqa: T201


if __name__ == "__main__":
    main()
