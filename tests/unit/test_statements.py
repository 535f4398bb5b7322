"""Which of the user's sentences are statements to keep, routine requests or small talk, and
which later statement revises an earlier one."""

from __future__ import annotations

import pytest

from app.budget.statements import (
    Tier,
    is_answer,
    is_correction,
    keeps_history,
    revises,
    revises_nearest,
    supersedes,
    tier,
)


@pytest.mark.parametrize(
    "sentence",
    [
        "the contractor helping us is Дмитрий",
        "our designer is 王芳, send mockups there",
        "Zoë signs off on every release",
        "the org is twelve engineers total",
        "the audit has to be finished by the end of next quarter",
        "can you remind the team that Bogdana is out until the twentieth?",
        "since Anselm approves all schema changes, should we ping him first?",
        "the status page belongs to Ingeborg's team",
        "Rule: no deploys on Fridays.",
        "Keep this in mind: no overnight layovers.",
        "Il rilascio si fa sempre di lunedì mattina, mai di venerdì.",
        "so yeah it turns out the whole thing has to run on arm64 boxes because security said so",
        "should the transfer leave at 7am or later?",
    ],
)
def test_statements_are_recognised_without_capitals_or_keywords_alone(sentence: str) -> None:
    assert tier(sentence) == Tier.STATEMENT


@pytest.mark.parametrize(
    "sentence",
    [
        "grep the logs for trace 9f3c2a77e1",
        "rerun job ingest-42",
        "can you check why search-api is failing again",
        "Turn 12: please check the hotel near the station again",
        "why did test_cache_retry fail?",
        "is api-gateway healthy now?",
        "can you check my PR",
    ],
)
def test_routine_requests_are_recognised(sentence: str) -> None:
    assert tier(sentence) == Tier.ROUTINE


@pytest.mark.parametrize(
    "sentence", ["thanks!", "lol", "ok", "sounds good to me", "merci !", "sorry, was in a meeting"]
)
def test_small_talk_is_recognised(sentence: str) -> None:
    assert tier(sentence) == Tier.SMALL_TALK


@pytest.mark.parametrize(
    ("correction", "earlier"),
    [
        ("actually, not Lyon — the offsite moved to Porto", "the offsite is in Lyon this year"),
        ("scratch that, offsite is Lyon now", "the offsite is in Gothenburg this year"),
        (
            "correction: the new hire's name is Bartosz",
            "the new hire starting next month is Nkechi",
        ),
        ("update: pentest report moved to early October", "the pentest report is due in April"),
        ("en fait, le serveur est à Lyon", "le serveur est à Paris"),
    ],
)
def test_a_correction_revises_the_statement_on_its_subject(correction: str, earlier: str) -> None:
    assert supersedes(correction, earlier) > 0


@pytest.mark.parametrize(
    ("later", "earlier"),
    [
        ("actually I prefer tabs", "I prefer answers as bullet points, not paragraphs"),
        ("the offsite moved to Porto", "Marguerite owns the billing service"),
        ("Theodoric owns the payments dashboard", "Gustavo owns the payments dashboard"),
    ],
)
def test_a_statement_on_another_subject_or_without_a_correction_revises_nothing(
    later: str, earlier: str
) -> None:
    assert supersedes(later, earlier) == 0
    assert is_correction("actually, not X — Y")


@pytest.mark.parametrize(
    "sentence",
    [
        "is the Dunedin region big enough for the pilot? that's where the customer is",
        "open a ticket for Cuthbert's team about the flaky export, they maintain it",
        "could you stick to answers as bullet points, not paragraphs?",
        "sorry, Cluj, not Lyon",
    ],
)
def test_a_request_or_question_that_states_something_is_a_statement(
    sentence: str,
) -> None:
    assert tier(sentence) == Tier.STATEMENT


@pytest.mark.parametrize(
    "sentence",
    [
        "what time is it in Bratislava right now?",
        "find me a hotel in Ljubljana near the old town",
        "kannst du den Kunden fragen, ob das Meeting in Dortmund bleibt?",
        "can you pay the Vodafone bill from the Revolut account?",
    ],
)
def test_a_request_that_only_names_what_to_work_on_is_routine(sentence: str) -> None:
    # A travel or finance agent's every request names a place or an account: counted as
    # statements, they crowd out what the user told it about themselves.
    assert tier(sentence) is Tier.ROUTINE


@pytest.mark.parametrize(
    ("correction", "earlier"),
    [
        ("make that Thursday instead", "the retro is on Tuesday this sprint"),
        ("no wait — Bergen", "offsite's in Ghent btw"),
        ("sorry, i meant the end of June", "pentest report has to be in by early October"),
        ("oops, Gustavo i mean", "Sunniva owns the payments dashboard"),
    ],
)
def test_a_bare_correction_revises_only_what_was_said_just_before(
    correction: str, earlier: str
) -> None:
    assert revises(correction, earlier, just_before=True) > 0
    assert revises(correction, earlier, just_before=False) == 0


@pytest.mark.parametrize(
    ("correction", "earlier"),
    [
        ("the payments dashboard is Gustavo's now", "Sunniva owns the payments dashboard"),
        (
            "forget what I said about the payments dashboard, Gustavo has it",
            "the payments dashboard is Sunniva's",
        ),
        (
            "scratch what I said earlier, standup is at ten fifteen",
            "daily standup is half past nine",
        ),
        (
            "they pushed the pentest report back to early October",
            "the pentest report is due the end of June",
        ),
        (
            "en fait l'offsite sera à Lyon, pas à Gothenburg",
            "we're doing the offsite in Gothenburg",
        ),
        ("let's move the retro to Wednesday", "the retro is on Tuesday this sprint"),
    ],
)
def test_corrections_of_many_phrasings_revise_their_subject(correction: str, earlier: str) -> None:
    assert supersedes(correction, earlier) > 0


@pytest.mark.parametrize(
    ("later", "earlier"),
    [
        (
            "update the README so it says the support team is in Dunedin",
            "Zoë is on the platform team",
        ),
        (
            "I prefer the seat number 38 in the quiet coach",
            "I prefer the seat number 37 in the quiet coach",
        ),
    ],
)
def test_a_request_or_an_unmarked_restatement_revises_nothing(later: str, earlier: str) -> None:
    assert revises(later, earlier, just_before=True) == 0


@pytest.mark.parametrize(
    ("later", "earlier"),
    [
        # The same subject, another value of the same kind, no mark of correction at all.
        ("the deposit is nine hundred euros", "Deposit is seven hundred and fifty euros, paid"),
        ("the warehouse has 14 forklifts", "the warehouse is 9 forklifts btw"),
        (
            "the dog walker is Saoirse Ní Bhriain",
            "if the dog needs anything, Tadhg Ó Súilleabháin is the dog walker, he has a lead",
        ),
        ("we're living in Pécs now", "we live in Szeged at the moment"),
    ],
)
def test_an_unmarked_restatement_with_a_new_value_revises_its_subject(
    later: str, earlier: str
) -> None:
    assert supersedes(later, earlier) > 0


@pytest.mark.parametrize(
    ("later", "earlier"),
    [
        # Adds to it: two people on one team.
        ("Mirela is on the data team too", "Zoë is on the data team"),
        # Another tie to the subject: with whom, not where.
        ("I live with Ana", "I live in Porto"),
        # A code names the subject: two servers, two seats.
        ("Server srv-3-0 has 30 GB of RAM.", "Server srv-2-0 has 20 GB of RAM."),
        # The same value again confirms it.
        ("the warehouse has 14 forklifts", "the warehouse is 14 forklifts btw"),
    ],
)
def test_a_restatement_that_adds_or_names_another_subject_revises_nothing(
    later: str, earlier: str
) -> None:
    assert supersedes(later, earlier) == 0


def test_the_words_two_corrections_open_with_do_not_make_them_one_subject() -> None:
    earlier = "Perdón, me equivoqué antes: my gym is Fitness Park Nation."
    later = "Perdón, me equivoqué antes: send me voice notes from now on."
    assert supersedes(later, earlier) == 0


@pytest.mark.parametrize(
    ("correction", "earlier"),
    [
        (
            "Hmm, I was wrong about Odile Marchand. Our notary is Jens Ulrich.",
            "our notary is Odile Marchand",
        ),
        ("the caterer is Kasia Nowak now (it used to be Odile Marchand)", "Odile Marchand caters"),
    ],
)
def test_a_correction_that_names_the_old_value_revises_what_holds_it(
    correction: str, earlier: str
) -> None:
    assert supersedes(correction, earlier) > 0


def test_a_partial_correction_keeps_what_it_does_not_restate_as_history() -> None:
    # The flight's number is not restated: what it revised stays beside it, as history.
    earlier = "I'm on flight LX 1614, leaving the twelfth of April."
    correction = "same flight, but the airline moved it to the fifteenth of April"
    assert revises(correction, earlier) > 0
    assert keeps_history(correction, earlier)
    # A whole restatement replaces the old one outright.
    assert not keeps_history("my dentist is Dr Aoife Brennan now", "my dentist is Dr Ruth Klein")


def test_a_bare_correction_said_long_after_revises_the_nearest_statement_of_its_kind() -> None:
    assert revises_nearest("turns out it's the ninth after all")
    assert not revises_nearest("the caterer is Kasia Nowak now")


@pytest.mark.parametrize(
    "sentence",
    [
        "book the cheapest flight to Reykjavík on the third of May",
        "merge the duplicate tickets from Søren Kierkegaard",
        "¿cuánto cuesta el tren de Sevilla a Córdoba?",
        "combien coûte l'hôtel à Montréal ?",
        "are we over budget this quarter",
        "escribe al cliente de Valparaíso, por favor",
        "why does the nightly job fail only on Sundays",
        "what's two hundred euros in yen today",
        "hotel close to the harbour in Split pls, nothing fancy",
        "Why is the error rate on ledger-api so high since this morning?",
        "Who should I ask about the payroll export?",
    ],
)
def test_a_request_or_question_is_routine_whatever_it_names(sentence: str) -> None:
    # Its mood decides, not its names, numbers, dates or script: the thing it acts on is
    # the work in hand, not something the user told the agent.
    assert tier(sentence) is Tier.ROUTINE


@pytest.mark.parametrize(
    "sentence",
    [
        "Could you add Ngozi Adichie as the emergency contact on the booking?",
        "pls cc Wilhelmina (our new controller) on the invoices",
        "send the summary to Ayşe, she runs the Ankara office",
        "remind me the dentist appointment is with Dr Okonkwo",
        "set a reminder: car service at Brightwell Motors",
        "does the lounge take kids? asking for my son",
        "My son is seven and a half — does he need a booster seat?",
        "please write invoices in Danish, my accountant reads them",
        "always book me a quiet room if you can",
        "Given that our lease ends in April, should we renew now?",
        "Scratch that last one — la reunión es en Rosario, not Mendoza.",
        "pls no red-eye flights",
    ],
)
def test_a_request_or_question_that_carries_a_clause_of_its_own_is_a_statement(
    sentence: str,
) -> None:
    assert tier(sentence) is Tier.STATEMENT


@pytest.mark.parametrize(
    "sentence",
    [
        "Got us seats at Café Momus for half past eight.",
        "frequent flyer: SK 88123",
        "Mi hermana vive en Rosario.",
        "Kraków Balice",
    ],
)
def test_a_declarative_that_names_something_is_a_statement(sentence: str) -> None:
    assert tier(sentence) is Tier.STATEMENT


@pytest.mark.parametrize("sentence", ["ありがとう!", "спасибо", "감사합니다", "hold on a sec"])
def test_courtesy_in_any_script_is_small_talk(sentence: str) -> None:
    assert tier(sentence) is Tier.SMALL_TALK


@pytest.mark.parametrize(
    ("later", "earlier"),
    [
        ("I have a flight to Rome on Friday.", "I have a flight to Paris on Monday."),
        ("Our Berlin office opens at 9am.", "Our London office opens at 8am."),
        ("The meeting with Bob is on Tuesday.", "The meeting with Anna is on Monday."),
        ("Invoice from Acme is 500 dollars.", "Invoice from Globex is 900 dollars."),
    ],
)
def test_another_name_with_another_time_or_amount_is_another_thing_not_a_revision(
    later: str, earlier: str
) -> None:
    # Unmarked, both stand: two flights, two offices, two meetings, two invoices.
    assert supersedes(later, earlier) == 0


@pytest.mark.parametrize(
    "text",
    [
        ("我们下周去北京开会" * 600)[:5000] + "?",  # Chinese has no spaces between words
        "please check " + "A" * 30_000 + " as a driver",  # one long token: a hash, base64
        "add " + "é" * 20_000 + " (new officer)",
    ],
)
def test_a_long_run_without_spaces_is_judged_in_one_pass(text: str) -> None:
    # The name patterns start only where a word starts and never give back what they took:
    # before, 1,500 characters of Chinese took over a minute and held the event loop.
    assert tier(text) in set(Tier)


@pytest.mark.parametrize(
    ("later", "earlier"),
    [
        ("Seat 4C is free.", "Seat 1C is free."),
        ("Our Berlin office opens at 9am.", "Our London office opens at 9am."),
    ],
)
def test_a_value_that_says_which_one_is_another_thing_not_a_new_value(
    later: str, earlier: str
) -> None:
    # Beside a word of the subject, the value names which seat or office: both stand.
    assert supersedes(later, earlier) == 0


@pytest.mark.parametrize(
    "sentence",
    [
        "I bake bread from scratch every Sunday.",
        "My son has a scratch on his arm.",
        "Our cats scratch the sofa all the time.",
        "I need to scratch that off my list.",
        "Scratch-resistant glass costs more.",
        "My office subscribes to the NYT.",
        "We read the nyt at breakfast.",
        "We meet at the Agora cafe on Fridays.",
    ],
)
def test_scratch_a_paper_and_a_cafe_in_ordinary_english_mark_no_correction(sentence: str) -> None:
    assert not is_correction(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "scratch that, the offsite is in Porto",
        "scratch what I said earlier, standup is at ten fifteen",
        "scratch the 3pm, make it 4",
        "ok scratch the 3pm",
        "no, scratch Tuesday",
        "scratch tunde@zoho.example. bia.m.santos@proton.example",
        "o contabilista agora é o Rui Lopes",
        "Agora o contabilista é o Rui Lopes",
        "Osoite on nyt Mannerheimintie 5",
    ],
)
def test_scratch_opening_a_clause_and_now_in_finnish_or_portuguese_mark_a_correction(
    sentence: str,
) -> None:
    assert is_correction(sentence)


@pytest.mark.parametrize(
    "reply",
    [
        "idk, whatever",
        "jaja vale",
        "spoko, dzięki",
        "passt schon",
        "not bad",
        "keine Ahnung",
        "hahaha",
        "no sé",
        "non lo so",
    ],
)
def test_not_knowing_not_minding_or_a_laugh_is_no_answer(reply: str) -> None:
    assert not is_answer(reply)


@pytest.mark.parametrize(
    "reply", ["Thursday", "the blue one, 40 units", "é a Inês Carvalho", "Egalité Hall"]
)
def test_a_short_value_is_an_answer(reply: str) -> None:
    assert is_answer(reply)
