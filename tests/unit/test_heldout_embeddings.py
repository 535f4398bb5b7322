"""``python -m bench heldout --embeddings-url``: the held-out sessions run through the real
app with an embeddings API configured, and every turn that asks a question waits until the
messages before it have their vectors, so that recall can fuse meaning with full text."""

from __future__ import annotations

import asyncio

from bench.heldout import generator
from bench.heldout.__main__ import run
from tests.fake_embeddings import serve_fake_embeddings


def test_questions_are_asked_once_every_earlier_message_is_embedded() -> None:
    scenario = generator.generate(1000, 60)
    with serve_fake_embeddings() as fake:
        # One message a request: unsettled, the worker would lag well behind the turns.
        settings = {"embeddings_batch_size": 1}
        results = asyncio.run(run([1000], 60, [True], settings=settings, embeddings_url=fake.url))
    (result,) = results
    assert result.recall
    assert result.refused == 0
    assert result.over_budget == 0
    embedded = fake.texts()
    # Each question was embedded as recall's query ...
    for turn in {question.turn for question in scenario.questions}:
        asked = scenario.turns[turn].user
        assert any(asked in text for text in embedded), asked
    # ... and the user messages said before the first question were embedded by then: the
    # app asks for each stored message once, in the order stored, so each comes before it.
    first = min(question.turn for question in scenario.questions)
    order = {text: index for index, text in reversed(list(enumerate(embedded)))}
    first_query = min(
        index for index, text in enumerate(embedded) if scenario.turns[first].user in text
    )
    for earlier in scenario.turns[:first]:
        asked_for = [index for text, index in order.items() if earlier.user in text]
        assert asked_for, f"never embedded: {earlier.user}"
        assert min(asked_for) < first_query, f"embedded after the question: {earlier.user}"
