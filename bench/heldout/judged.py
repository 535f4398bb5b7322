"""``python -m bench.heldout.judged``: how the user's sentences of generated sessions are
judged, without running them (:func:`app.budget.statements.tier` on the pieces the
extractive summariser reads): the piece that holds a fact's value judged routine or small
talk, and the pieces of routine, prose, chat and later-question turns judged statements.

    python -m bench.heldout.judged            # first set 1000-1009, second set 3000-3009
    python -m bench.heldout.judged --verbose  # and every misjudged piece
"""

from __future__ import annotations

import argparse
from collections import Counter

from app.budget.statements import Tier, tier
from app.summarize.base import SourceMessage
from app.summarize.extractive import _user_candidates
from bench.heldout.__main__ import SETS
from bench.heldout.generator import value_pattern
from bench.heldout.scenario import normalise


def _pieces(text: str) -> list[str]:
    return [c.item.text for c in _user_candidates(SourceMessage(0, "user", text), 0)]


def judge(which: str, seeds: tuple[int, ...], turns: int, verbose: bool) -> None:
    missed: Counter[str] = Counter()
    taken: Counter[tuple[str, str]] = Counter()
    facts = 0
    others: Counter[str] = Counter()
    for seed in seeds:
        scenario = SETS[which].generate(seed, turns)
        stated: dict[int, list[str]] = {}
        for fact in scenario.facts:
            stated.setdefault(fact.turn, []).append(fact.value)
            if fact.corrected_to and fact.correction_turn is not None:
                stated.setdefault(fact.correction_turn, []).append(fact.corrected_to)
        for index, turn in enumerate(scenario.turns):
            for value in stated.get(index, ()):
                facts += 1
                found = [p for p in _pieces(turn.user) if value_pattern(value).search(normalise(p))]
                judged = tier(found[0]) if found else None
                if judged is None or judged >= Tier.ROUTINE:
                    missed[judged.name if judged else "not read"] += 1
                    if verbose:
                        print(f"  missed: {turn.user[:150]!r}")  # noqa: T201
            if index in stated or turn.kind not in ("routine", "prose", "chat", "question"):
                continue
            for piece in _pieces(turn.user):
                others[turn.kind] += 1
                judged = tier(piece)
                if judged <= Tier.PLAIN:
                    taken[(turn.kind, judged.name)] += 1
                    if verbose:
                        print(f"  taken ({judged.name}): {piece[:150]!r}")  # noqa: T201
    print(  # noqa: T201
        f"{which} set, seeds {min(seeds)}-{max(seeds)}: fact pieces {facts}, judged routine "
        f"or small talk {dict(missed)}; other pieces {dict(others)} "
        f"({sum(others.values())}), judged statements {dict(taken)}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.heldout.judged", description=__doc__)
    parser.add_argument("--turns", type=int, default=280)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    judge("first", tuple(range(1000, 1010)), args.turns, args.verbose)
    judge("second", tuple(range(3000, 3010)), args.turns, args.verbose)


if __name__ == "__main__":
    main()
