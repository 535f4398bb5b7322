"""What users of the second set say about themselves, the way people say it: in passing,
inside a question or a request, in a long ramble, with typos, with numbers and dates in words
or relative to today, and in many languages and scripts. Each frame is one detail: its kind,
the values it may take, ways of saying it, a question sharing a word with it and one in other
words, and (for a detail a user may change) how it reads restated, which a correction says.

A value must not occur anywhere in a session but where it is stated: the scorer finds a fact
by its value. The generator checks it for every session it makes.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.heldout.sets import Frame

F = Frame

FRAMES: tuple[Frame, ...] = (
    F(
        "name",
        ("Maria Costa Ferreira", "Oona Häkkinen", "Radosław Kędzierski", "Nguyễn Thu Trang"),
        (
            "my accountant is {v}, she does the taxes for both of us",
            "For the record, our accountant is {v} — cc her on anything tax-related.",
        ),
        "Who is our accountant?",
        "Who handles the family's tax returns?",
        restate="our accountant is {v}",
    ),
    F(
        "name",
        ("Chidinma Eze", "Leilani Kahale", "Sigríður Jónsdóttir"),
        (
            "The kids' babysitter is {v}; she has a key.",
            "if anything comes up with the kids, {v} is the babysitter, she has a spare key",
        ),
        "Who's the kids' babysitter?",
        "Who looks after my children when I'm out?",
        restate="the babysitter is {v}",
    ),
    F(
        "place",
        ("Porto Alegre", "Trondheim", "Plovdiv", "Gdańsk"),
        (
            "I'm based in {v}, so keep the time zone in mind.",
            "fyi im in {v} these days",
        ),
        "Which city am I based in?",
        "Where do I live at the moment?",
        restate="I'm living in {v} now",
    ),
    F(
        "place",
        ("Bilbao", "Eindhoven", "Kraków Balice"),
        (
            "My home airport is {v}, everything should start and end there.",
            "always fly me out of {v} if u can, it's the closest airport",
        ),
        "What's my home airport?",
        "Where should my trips start from?",
        restate="my home airport is {v}",
    ),
    F(
        "relation",
        ("Ifeoma Chukwu", "Brigitte Vasseur", "Keiko Arimura"),
        (
            "My sister {v} is staying with us till summer.",
            "{v} (my sister) will be around a lot, she's staying with us for a few months",
        ),
        "What's my sister's name?",
        "Who is the relative staying at our place?",
    ),
    F(
        "relation",
        ("Dariusz Wróbel", "Anneke Visser", "Emeka Nwosu"),
        (
            "My business partner is {v}; we split everything fifty-fifty.",
            "me and {v} run the company together, 50/50 partners",
        ),
        "Who's my business partner?",
        "Who co-owns the company with me?",
        restate="my business partner is {v}",
    ),
    F(
        "preference",
        ("window seat", "aisle seat", "exit row"),
        (
            "Always book me the {v} if there's a choice, I get restless otherwise.",
            "I really prefer the {v}, just so you know for bookings.",
        ),
        "What seat do I prefer when booking?",
        "Where do I like to sit on planes?",
        restate="I want the {v} from now on",
    ),
    F(
        "preference",
        ("voice notes", "WhatsApp messages", "plain text emails"),
        (
            "I'd rather get {v} than phone calls, I can't pick up at work.",
            "pls send me stuff as {v}, calls are hard during the day",
        ),
        "How do I prefer to get messages from you, instead of calls?",
        "What's the best way to reach me?",
        restate="send me {v} from now on",
    ),
    F(
        "preference",
        ("a bathtub", "a kitchenette", "a balcony"),
        (
            "When you pick hotels, I really like rooms with {v}.",
            "hotel wise the one thing i care about is {v} honestly",
        ),
        "What do I like hotel rooms to have?",
        "What do I look for when choosing where to stay?",
    ),
    F(
        "constraint",
        ("penicillin", "latex", "peanuts"),
        (
            "Important: I'm allergic to {v}. Put it on any medical form.",
            "oh and im allergic to {v}, in case it matters for the travel insurance",
        ),
        "What am I allergic to?",
        "Which substance must I avoid for health reasons?",
    ),
    F(
        "constraint",
        (
            "one thousand eight hundred euros",
            "two thousand four hundred francs",
            "nine hundred pounds",
        ),
        (
            "The whole trip can't cost more than {v}, flights included.",
            "budget for the trip is {v} max, all in",
        ),
        "What's the maximum budget for the trip?",
        "How much am I allowed to spend on the holiday in total?",
        restate="the trip budget is {v}",
    ),
    F(
        "constraint",
        ("Sundays", "Tuesdays", "Thursdays"),
        (
            "I can't do anything on {v}, that's my custody day with the kids.",
            "never book me anything on {v} please — kids' day",
        ),
        "Which day can't I do anything because of the kids?",
        "When am I unavailable every week?",
        restate="my kids' day is {v} now",
    ),
    F(
        "date",
        ("next March", "at the end of October", "in about six weeks"),
        (
            "My passport expires {v}, which might be a problem for some countries.",
            "btw passport runs out {v}",
        ),
        "When does my passport expire?",
        "How long is my travel document still valid?",
        restate="my passport expires {v}",
    ),
    F(
        "date",
        ("the twenty-first of June", "the ninth of August", "the last Saturday in May"),
        (
            "Our wedding anniversary is {v}, I want to plan something.",
            "anniversary's {v} so keep that weekend free pls",
        ),
        "When is our wedding anniversary?",
        "Which day do my spouse and I celebrate every year?",
        restate="the anniversary is {v}",
    ),
    F(
        "date",
        ("a week on Thursday", "the day after my birthday", "the Monday after next"),
        (
            "We're moving flats {v}, so the new address applies from then.",
            "moving day is {v}, total chaos incoming",
        ),
        "When are we moving flats?",
        "When does our new address apply?",
        restate="the move is {v}",
    ),
    F(
        "number",
        ("seven hundred and twelve", "six hundred and eighty-four", "seven hundred and ninety"),
        (
            "My credit score is {v}, if that matters for the mortgage.",
            "credit score came back at {v} fwiw",
        ),
        "What's my credit score?",
        "How good is my borrowing rating?",
    ),
    F(
        "number",
        ("sixty-three", "eighty-eight", "forty-one"),
        (
            "The flat is {v} square metres, so a big sofa won't fit.",
            "our place is only {v} square metres lol",
        ),
        "How many square metres is the flat?",
        "How big is our home?",
    ),
    F(
        "money",
        (
            "three thousand one hundred euros",
            "two thousand seven hundred pounds",
            "four thousand two hundred zloty",
        ),
        (
            "I take home {v} a month after tax.",
            "net salary is {v} monthly, in case you need it for the budget",
        ),
        "What's my monthly salary after tax?",
        "How much do I earn, net?",
        restate="my net pay is {v} a month",
    ),
    F(
        "money",
        (
            "eight hundred and sixty euros",
            "one thousand and forty pounds",
            "twelve hundred dollars",
        ),
        (
            "Rent is {v}, due on the first.",
            "we pay {v} rent, it goes out on the 1st",
        ),
        "How much is the rent?",
        "What do we pay the landlord each month?",
        restate="the rent is {v}",
    ),
    F(
        "identifier",
        ("MM 4471 0932", "BA-77812934", "KL0099213"),
        (
            "My frequent flyer number is {v}, add it to every booking.",
            "frequent flyer: {v}",
        ),
        "What's my frequent flyer number?",
        "Which loyalty membership should go on my tickets?",
    ),
    F(
        "identifier",
        ("A-558-2291", "ORD 7744 1020", "WX-30917-B"),
        (
            "The order number for the thing I'm returning is {v}.",
            "return order no. is {v} i think",
        ),
        "What's the order number of the return?",
        "Which purchase am I sending back, by reference?",
    ),
    F(
        "question",
        ("Vigo", "Aarhus", "Salzburg"),
        (
            "Since I'm flying out of {v} anyway, is the early train even worth it?",
            "would it be cheaper to go from {v}? that's where i'll be the night before",
        ),
        "Where am I flying out of?",
        "Which city will I be departing from?",
    ),
    F(
        "question",
        ("eleven months old", "three and a half", "nine years old"),
        (
            "My daughter is {v} — does she need her own passport?",
            "do kids who are {v} pay full fare? asking for my daughter",
        ),
        "How old is my daughter?",
        "What's the age of my child?",
    ),
    F(
        "request",
        ("Tomáš Dvořák", "Aiyana Redcloud", "Kofi Mensah"),
        (
            "Can you add {v} as a second driver on the rental?",
            "pls put {v} down as additional driver for the car",
        ),
        "Who's the second driver on the rental?",
        "Who else is allowed to drive the hire car?",
        restate="the second driver is {v}",
    ),
    F(
        "request",
        ("Hendrix Heating", "Voltaire Plumbing", "Mistral Gas Services"),
        (
            "Please remind me the boiler service is booked with {v}.",
            "set a reminder: boiler service w/ {v}",
        ),
        "Who is the boiler service booked with?",
        "Which company is coming to look at the heating?",
    ),
    F(
        "rambling",
        ("Pistachio", "Mochi", "Barnaby"),
        (
            "sorry i went quiet, the dog ate something off the street again and we spent the "
            "whole afternoon at the vet, his name is {v} and he is the dumbest sweetest thing, "
            "anyway he's fine now, the vet bill was not fine, which is partly why im asking "
            "about the budget stuff",
        ),
        "What's my dog's name?",
        "What is my pet called?",
    ),
    F(
        "rambling",
        ("Riverside Montessori", "St Brigid's Primary", "Escola Lumiar"),
        (
            "ok so context for all the school stuff: we finally got a place at {v} after "
            "months on the waiting list and it starts in autumn and it's on the other side of "
            "town so the whole morning routine changes and i'll probably need to move my "
            "early meetings, my partner can do pickups two days a week but not more",
        ),
        "Which school did we get a place at?",
        "Where will my kid be studying from the autumn?",
    ),
    F(
        "typo",
        ("Ximena", "Agnieszka", "Yevgenia"),
        (
            "my wifes name is {v} btw, its her card we use for most bookigns",
            "teh card on file is my wifes, {v}, use her name for the hotel reservaton",
        ),
        "What's my wife's name?",
        "Whose bank card is the one on file?",
    ),
    F(
        "typo",
        ("Skoda Fabia", "Renault Zoe", "Kia Niro"),
        (
            "our car is a {v} so dont book anythng that needs a tow hitch or a big boot",
            "we drive a {v}, its tiny, so parking shoudl be easy wherever",
        ),
        "What car do we drive?",
        "What vehicle do we own?",
        restate="we drive a {v} now",
    ),
    F(
        "not in English",
        ("Alicante", "Santander", "Málaga"),
        ("Mi vuelo de vuelta sale desde {v}.", "ojo, la vuelta es desde {v}"),
        "Where does my vuelo de vuelta leave from?",
        "Which airport is my return journey from?",
        restate="la vuelta es desde {v}",
    ),
    F(
        "not in English",
        ("Ferraris", "Lombardi", "Esposito"),
        ("Il mio medico di base è il dottor {v}.",),
        "Who is my medico di base?",
        "Who is my family doctor?",
    ),
    F(
        "not in English",
        ("Zwolle", "Leeuwarden", "Deventer"),
        ("Mijn zus woont in {v}, daar logeren we meestal.",),
        "Where does my zus live?",
        "In which town do we usually stay with family?",
    ),
    F(
        "not in English",
        ("PL-88213", "KL-40762", "WR-19355"),
        ("Mój numer klienta w banku to {v}.",),
        "What's my numer klienta at the bank?",
        "What's my customer reference with my bank?",
    ),
    F(
        "not in English",
        ("Gülsüm", "Şükran", "Nurhan"),
        ("Annemin adı {v}, onun için de bilet lazım.",),  # noqa: RUF001
        "What is my anne's name?",
        "What's my mother called?",
    ),
    F(
        "not in English",
        ("الإسكندرية", "مراكش", "عمّان"),
        ("أخي يعيش في {v} منذ سنتين.",),
        "In which city does أخي live?",
        "Where does my brother live?",
    ),
    F(
        "not in English",
        ("יונתן", "אורית", "נועם"),
        ("הבוס שלי הוא {v}, הוא צריך לאשר כל נסיעה.",),
        "Who is הבוס שלי?",
        "Who has to approve my business trips?",
    ),
    F(
        "not in English",
        ("पुणे", "जयपुर", "लखनऊ"),
        ("मेरी बेटी का कॉलेज {v} में है।",),
        "Where is my बेटी's कॉलेज?",
        "In which city is my daughter studying?",
    ),
    F(
        "not in English",
        ("กุ้ง", "ถั่วลิสง", "นมวัว"),
        ("ฉันแพ้ {v} นะ ช่วยจำไว้ด้วย",),
        "What does ฉันแพ้ refer to — what was it?",
        "Which food gives me a reaction?",
    ),
    F(
        "not in English",
        ("민준", "서연", "하은"),
        ("제 조카 이름은 {v}예요. 다음 달에 같이 여행 가요.",),
        "What is my 조카's name?",
        "Which young relative is coming on the trip next month?",
    ),
    F(
        "not in English",
        ("十一月三日", "四月二十日", "七月七日"),
        ("私の誕生日は{v}です。",),
        "When is my 誕生日?",
        "When do I celebrate getting a year older?",
    ),
    F(
        "not in English",
        ("王建国", "陈美玲", "刘志强"),
        ("我的房东叫{v}，有问题可以找他。",),  # noqa: RUF001
        "Who is my 房东?",
        "Who owns the flat I rent?",
    ),
    F(
        "not in English",
        ("девятом", "четырнадцатом", "третьем"),
        ("Моя квартира на {v} этаже, лифт часто не работает.",),
        "On which этаже is my квартира?",
        "How high up is my apartment?",
    ),
    F(
        "not in English",
        ("Νικόλαος Δημητρίου", "Σπύρος Κωνσταντίνου", "Θανάσης Ιωάννου"),
        ("Ο δικηγόρος μου είναι ο {v}.",),  # noqa: RUF001
        "Who is my δικηγόρος?",
        "Who is my lawyer?",
    ),
    F(
        "not in English",
        ("ПриватБанк", "Монобанк", "Ощадбанк"),
        ("Мій основний банк — {v}, зарплата приходить туди.",),
        "Which is my основний банк?",
        "Where does my salary get paid into?",
    ),
    F(
        "not in English",
        ("Đà Nẵng", "Hải Phòng", "Cần Thơ"),
        ("Công ty của tôi ở {v}, nên tôi hay bay về đó.",),
        "Where is my công ty?",
        "Which city is my employer in?",
    ),
    F(
        "not in English",
        ("Åsa Lindgren", "Märta Ek", "Sune Holmqvist"),
        ("Min tandläkare heter {v}, ring henne om tiden måste flyttas.",),
        "Who is my tandläkare?",
        "Who is my dentist?",
    ),
)


@dataclass(frozen=True)
class PairFrame:
    """Two details said in one breath, the second of which a partial correction changes
    while the first stands ("same flight, but it's on the 9th now")."""

    kinds: tuple[str, str]
    values: tuple[tuple[str, ...], tuple[str, ...]]
    statements: tuple[str, ...]
    asks: tuple[tuple[str, str], tuple[str, str]]
    #: What a partial correction says, with ``{new}`` (and ``{old}`` where it names it).
    partial: tuple[str, ...]


PAIRS: tuple[PairFrame, ...] = (
    PairFrame(
        ("identifier", "date"),
        (
            ("EI 2187", "FR 8843", "VY 6120"),
            ("the fourteenth of May", "the third of June", "the twenty-sixth of September"),
        ),
        (
            "booked myself on {a} on {b}, window if possible",
            "I'm on flight {a}, leaving {b}.",
        ),
        (
            ("What flight am I on?", "Which plane did I book?"),
            ("When am I leaving on my flight?", "What's my departure day?"),
        ),
        (
            "same flight number but they moved it to {new}",
            "The airline rescheduled: still the same flight, now on {new} instead of {old}.",
        ),
    ),
    PairFrame(
        ("name", "time in words"),
        (
            ("Tasca do Chico", "Osteria Bellavista", "Brasserie Gambetta"),
            ("half past seven", "a quarter to nine", "eight fifteen"),
        ),
        (
            "Got us a table at {a} for {b} on Saturday.",
            "dinner is at {a}, {b}, don't let me forget",
        ),
        (
            ("Which restaurant is dinner at?", "Where are we eating on Saturday evening?"),
            ("What time is the dinner table booked for?", "When should we arrive to eat?"),
        ),
        (
            "the restaurant called, same place but they can only do {new} now",
            "Dinner's moved to {new} (was {old}), same restaurant.",
        ),
    ),
    PairFrame(
        ("name", "date"),
        (
            ("Yusuf Demirci", "Brendan Mulcahy", "Matías Echeverría"),
            ("Thursday morning", "Monday after lunch", "the seventeenth"),
        ),
        (
            "The plumber, {a}, is coming {b}; someone has to be home.",
            "plumber ({a}) comes {b}",
        ),
        (
            ("What's the plumber's name?", "Who's coming to fix the pipes?"),
            ("When is the plumber coming?", "When does someone need to be home for the repair?"),
        ),
        (
            "plumber rescheduled to {new}",
            "Change for the plumber visit: {new}, not {old}. Same guy.",
        ),
    ),
)

#: How a user takes back what they said: ``{old}``/``{new}`` the values, ``{restated}`` the
#: fact restated with the new value. Some name the old value, some do not.
CORRECTIONS: tuple[str, ...] = (
    "Actually it's {new}, not {old}.",
    "sorry, got that wrong earlier — {restated}",
    "Update: {restated}.",
    "Hmm, I was wrong about {old}. {restated}.",
    "{restated}, I mixed it up before",
    "Correction: {restated} (I said {old} before, that's outdated).",
    "changed my mind, {restated}",
    "no wait, {new}! not {old}",
    "ah one thing, things changed: {restated}",
    "Perdón, me equivoqué antes: {restated}.",
    "just to fix what i told you a while ago: {restated}",
)

#: A correction of a correction: ``{old}`` the first value, ``{middle}`` the second.
RECORRECTIONS: tuple[str, ...] = (
    "argh, one more change, sorry: {restated}. forget both {old} and {middle}",
    "ok final answer, {restated}",
    "Scratch the last update too — {restated}, not {middle}.",
    "turns out it's {new} after all. so many changes, sorry",
)
