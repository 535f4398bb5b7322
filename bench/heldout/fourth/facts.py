"""What users of the fourth set say, the way people say it: tersely, dictated without
punctuation, with emoji, under a quote of an earlier message, buried mid-paragraph, as the
answer to the assistant's question, fixed after a typo ("*Pennyworth"), with numbers in
words, dates in several formats and relative to today, units and currencies, names in Greek,
Hebrew, Thai, Korean and Japanese script, and in languages the earlier sets do not use.

Each frame is one detail: its kind, the values it may take, ways of saying it, a question that
shares a word with it and one in other words, how it reads restated (which a correction
says, for a detail a user may change), and, for a detail a user may drop altogether, what
dropping it says. Some frames belong to one agent, the rest to every agent.

A value must not occur anywhere in a session but where it is stated: the scorer finds a fact
by its value. The generator checks it for every session it makes.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.heldout.sets import Frame


@dataclass(frozen=True)
class Group:
    """A person, a place and a time in one message; a partial correction later changes the
    time alone ("same place but 3pm")."""

    values: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    #: With ``{a}``, ``{b}`` and ``{c}``.
    statements: tuple[str, ...]
    asks: tuple[tuple[str, str], tuple[str, str], tuple[str, str]]
    #: What the partial correction says, with ``{new}`` (and ``{old}`` where it names it).
    partial: tuple[str, ...]


@dataclass(frozen=True)
class Reply:
    """A detail the user gives as the answer to the assistant's question ("yes, the 14th")."""

    values: tuple[str, ...]
    request: str
    question: str
    replies: tuple[str, ...]
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class Fix:
    """A detail misspelt in one message and put right in the next ("*Pennyworth"): the
    misspelling is not the value; the fix is."""

    #: (misspelt, right) pairs.
    values: tuple[tuple[str, str], ...]
    #: With ``{typo}``.
    first: str
    #: With ``{v}``.
    fixes: tuple[str, ...]
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class AgentFacts:
    singles: tuple[Frame, ...]
    group: Group
    reply: Reply


F = Frame

TERSE = "terse"
DICTATED = "dictated, no punctuation"
EMOJI = "with emoji"
BURIED = "buried in a paragraph"
QUOTE = "under a quote"
WORDS = "number in words"
DATE = "date (a written format)"
RELATIVE = "date (relative)"
UNIT = "with a unit"
CURRENCY = "currency"
SCRIPT = "name in another script"
LANGUAGE = "another language"
THIRD = "third person"
LIST = "person, place and time in one message"
ANSWER = "answer to a question"
FIXED = "fixed after a typo"

SHARED: tuple[Frame, ...] = (
    F(
        TERSE,
        ("kestrel-mango-88", "otter-basil-42", "heron-quince-17"),
        ("guest wifi pw: {v}", "wifi (guests) → {v}"),
        "What's the guest wifi pw?",
        "How do visitors get online at my place?",
        restate="guest wifi password is {v} now",
    ),
    F(
        TERSE,
        ("level -2, bay 117", "level -3, bay 64", "level -1, bay 208"),
        ("parking: {v}", "my spot = {v}"),
        "Where's my parking?",
        "Where do I leave the car under the office?",
        restate="parking is {v} now",
        retract=(
            "scratch the parking spot, {new} — I take the tram now",
            "no parking spot any more",
        ),
    ),
    F(
        DICTATED,
        ("Halldóra Sveinsdóttir", "Mererid Hopwood", "Ieva Žemaitytė"),
        (
            "ok so note this my daughters swimming coach is {v} and she wants the fees by the "
            "end of the month",
            "also the swimming coach for my daughter is {v} she texts a lot sorry",
        ),
        "Who is my daughter's swimming coach?",
        "Who trains my kid in the pool?",
        restate="my daughter has a new swimming coach {v}",
    ),
    F(
        DICTATED,
        ("four four one two seven", "three nine zero eight eight", "five two six six one"),
        (
            "remind me the gas meter read {v} the day we moved in dont lose that",
            "gas meter on move in day was {v} write that down somewhere safe",
        ),
        "What did the gas meter read when we moved in?",
        "What number did the counter for heating fuel show on day one in the house?",
    ),
    F(
        EMOJI,
        ("the 9th of March", "the 23rd of July", "the 2nd of December"),
        ("🎂 mum's birthday is {v} 🎉 don't let me forget!!", "mum 🎂 = {v} 🥳"),
        "When is mum's birthday?",
        "What day should I ring my mother with cake wishes?",
    ),
    F(
        EMOJI,
        ("Ramen Kōbō", "Phở Sài Gòn Corner", "Dumpling Darbar"),
        ("new fave lunch spot 🍜 {v}", "🍜🍜 {v} is my go-to for lunch now 😍"),
        "What's my fave lunch spot?",
        "Where do I like to eat at midday?",
        restate="fave lunch place is {v} now 🍜",
    ),
    F(
        BURIED,
        ("marine electrician", "piano tuner", "stonemason"),
        (
            "So the week has been mad: the kids had the flu, the car failed its inspection on "
            "a brake light, and my brother-in-law, who is a {v} by the way, says he can sort "
            "it on Saturday if I buy the part, which is kind of him, and then on Sunday we "
            "have the christening, and nobody has bought a present yet, so that's Saturday "
            "evening gone as well.",
        ),
        "What does my brother-in-law do?",
        "What is my sister's husband's job?",
    ),
    F(
        BURIED,
        ("the 5th of October", "the 31st of January", "the 30th of June"),
        (
            "Long story, but I finally got hold of the accountant after three voicemails. She "
            "had lost the receipts folder, then found it in her car, then lost the password to "
            "the portal. Anyway the tax return is due {v}, she says she will be fine, I am "
            "less sure, and she also wants to talk about pensions, which I'm avoiding.",
        ),
        "When is the tax return due?",
        "By when must the forms for the revenue office be in?",
        restate="the tax return is due {v} after all",
    ),
    F(
        BURIED,
        ("Mrs Threlkeld", "Mr Ogunbanjo", "Ms Castellví"),
        (
            "I was on hold with the school for forty minutes this morning, which is its own "
            "kind of torture. They have changed the lunch system again, the uniform shop has "
            "moved, the new head teacher is {v} (apparently from up north), and parents' "
            "evening is online now, which honestly suits me fine. Then the car park was full.",
        ),
        "Who is the new head teacher?",
        "Who runs the kids' school now?",
    ),
    F(
        BURIED,
        ("Borrowdale", "Ardnamurchan", "Dingle"),
        (
            "We finally sat down and sorted the summer: the kids want a beach, my partner wants "
            "hills, I want to sleep. We've booked the same cottage as last year, the one in "
            "{v} with the wood burner, for the second fortnight, and the dog comes too, so "
            "the car will be packed to the roof again.",
        ),
        "Where is the cottage we booked?",
        "Where are we going on holiday this summer?",
    ),
    F(
        WORDS,
        ("sixteen", "twenty-one", "twenty-four"),
        ("I've got {v} days of leave left this year", "leave left: {v} days"),
        "How many days of leave do I have left?",
        "How much holiday time is still mine this year?",
        restate="I've got {v} days of leave left now",
    ),
    F(
        WORDS,
        ("ninety-one", "eighty-eight", "ninety-six"),
        ("my grandmother turns {v} in May, big party", "gran is {v} in May!!"),
        "How old does my grandmother turn in May?",
        "What birthday is my nan celebrating this spring?",
    ),
    F(
        QUOTE,
        ("Tuesday nights", "Thursday nights", "Monday nights"),
        (
            "> When would suit you for those?\nanything but {v}, that's choir",
            "> Any evening you can't do?\n{v} — choir",
        ),
        "When do I have choir?",
        "Which evening am I always busy singing?",
        restate="choir moved to {v}",
    ),
    F(
        QUOTE,
        ("Mrs Okonkwo-Barry", "Mr Ferreira-Lund", "Ms Abernathy-Sato"),
        (
            "> anything else I should know?\nyes — the spare key is with {v} at number 12",
            "> Noted.\nalso the spare key: {v} has it, she's at number 12",
        ),
        "Who has the spare key?",
        "If I'm locked out, who do I go to?",
        restate="the spare key is with {v} now",
    ),
    F(
        QUOTE,
        ("penicillin", "latex gloves", "bee stings"),
        (
            "> Anything else for your profile?\nyes: I'm allergic to {v}, badly",
            "> what should I put under health?\n{v} — serious allergy",
        ),
        "What am I allergic to?",
        "Which substance could give me a bad reaction?",
    ),
    F(
        WORDS,
        ("forty-seven", "sixty-three", "eighty-two"),
        ("we're expecting {v} people at the open day", "open day headcount is {v}"),
        "How many people at the open day?",
        "What's the expected number of visitors for the public event?",
        restate="it's {v} people at the open day now",
    ),
    F(
        DATE,
        ("14.08.2027", "03.11.2028", "27.02.2029"),
        ("My passport expires {v}.", "passport exp. {v}, so renew in time"),
        "When does my passport expire?",
        "How long is my travel document valid?",
        restate="new passport — it expires {v}",
    ),
    F(
        DATE,
        ("2026-09-30", "2026-10-29", "2026-12-31"),
        ("the car insurance renews on {v}", "Car insurance renewal: {v}."),
        "When does the car insurance renew?",
        "What's the date my vehicle cover rolls over?",
        restate="car insurance renews {v} now",
    ),
    F(
        DATE,
        ("Oct 3rd", "Nov 17th", "Sept 29th"),
        ("dentist moved me to {v}, 8:40 in the morning", "Dentist: {v}. Early one."),
        "When is the dentist?",
        "When's my teeth appointment?",
        restate="dentist is {v} now",
    ),
    F(
        RELATIVE,
        ("in ten days", "a week on Thursday", "the day after the bank holiday"),
        ("my sister lands {v}, need the guest room ready", "sis arrives {v}!!"),
        "When does my sister land?",
        "When is my sibling's flight getting in?",
        restate="my sister lands {v} now",
    ),
    F(
        RELATIVE,
        ("the Monday after next", "three weeks from today", "the end of next month"),
        ("the boiler service is {v}", "boiler guy comes {v}, someone has to be in"),
        "When is the boiler service?",
        "When does the heating engineer visit?",
        restate="the boiler service moved to {v}",
    ),
    F(
        UNIT,
        ("1.94 m", "196 cm", "1,91 m"),
        ("I'm {v} tall, so seats with legroom pls", "fyi I'm {v}, legroom matters"),
        "How tall am I?",
        "What's my height?",
    ),
    F(
        UNIT,
        ("68 m²", "74 m²", "91 m²"),
        ("the flat is {v}, for the insurance form", "Flat size: {v}."),
        "How big is the flat for the insurance form?",
        "What's the floor area of where I live?",
    ),
    F(
        CURRENCY,
        ("CHF 2'140", "R$ 3.850,00", "₹48,500"),
        ("rent is {v} a month, due on the first", "monthly rent {v}"),
        "How much is rent?",
        "What do I pay the landlord each month?",
        restate="rent went up to {v}",
    ),
    F(
        CURRENCY,
        ("¥168,000", "zł 5 499", "kr 14 990"),
        (
            "max I'll spend on a new laptop is {v}, hard cap",
            "Laptop budget: {v}, not a cent more.",
        ),
        "What's my laptop budget?",
        "How much can go on the new computer?",
        retract=(
            "forget the laptop cap, {new} — work is paying for it",
            "no limit on the laptop",
        ),
    ),
    F(
        THIRD,
        ("before 10am", "after 4pm", "between 1 and 2pm"),
        (
            "Oluwaseun only takes calls {v}, don't book her otherwise",
            "my co-founder Oluwaseun: calls {v}, nothing else",
        ),
        "When does Oluwaseun take calls?",
        "When can my business partner be reached by phone?",
        restate="Oluwaseun takes calls {v} now",
    ),
    F(
        THIRD,
        ("until the 16th", "from the 6th to the 10th", "all of August"),
        (
            "Bartek next door waters our plants but he's away {v}",
            "Bartek (plants guy) is away {v}",
        ),
        "When is Bartek away?",
        "When is the neighbour who does our watering gone?",
        restate="Bartek is away {v} now",
    ),
    F(
        SCRIPT,
        ("Σταύρος Μαυρίδης", "Ελευθερία Κωστοπούλου", "Παναγιώτης Λαμπράκης"),
        ("my landlord is {v}, he's Greek, lovely guy", "landlord: {v}"),
        "Who is my landlord?",
        "Who do I rent from?",
        restate="the flat was sold, the landlord is {v} now",
    ),
    F(
        SCRIPT,
        ("שירה אלמוג", "אביגיל כהן", "עומר ביטון"),
        ("our downstairs neighbour {v} takes our parcels", "parcels → {v} downstairs"),
        "Who takes our parcels?",
        "Which person in the building collects deliveries for us?",
    ),
    F(
        SCRIPT,
        ("สมหญิง", "ปรีชา", "วันเพ็ญ"),
        ("the massage therapist I like is {v} (Thai place on the corner)",),
        "Who is the massage therapist I like?",
        "Who should I ask for at the spa on the corner?",
    ),
    F(
        SCRIPT,
        ("박지훈", "이수빈", "최민서"),
        ("my language exchange buddy is {v}, we meet on zoom", "buddy for exchange: {v}"),
        "Who is my language exchange buddy?",
        "Who do I practise speaking with over video?",
    ),
    F(
        SCRIPT,
        ("湯元館", "花月庵", "山水荘"),
        ("the ryokan we booked for the autumn trip is {v}", "ryokan: {v} (autumn)"),
        "Which ryokan did we book?",
        "Where are we staying on the trip in the fall?",
    ),
    F(
        LANGUAGE,
        ("Montserrat Puig", "Núria Casals", "Meritxell Soler"),
        (
            "La meva gestora és la {v}, li pots enviar les factures.",
            "la gestora és la {v}, ja ho saps",
        ),
        "Who is my gestora?",
        "Who takes care of my paperwork and bills?",
        restate="la gestora ara és la {v}",
    ),
    F(
        LANGUAGE,
        ("Aberystwyth", "Llandudno", "Machynlleth"),
        ("Mae fy nhad yn byw yn {v}.", "mae dad yn {v} nawr"),
        "Where does my nhad live?",
        "Which town is my father in?",
    ),
    F(
        LANGUAGE,
        ("Hemsedal", "Lofoten", "Geilo"),
        ("Hytta vår ligger i {v}, vi drar dit hver påske.", "hytta er i {v} forresten"),
        "Where is our hytta?",
        "Where is the family cabin we go to at Easter?",
    ),
    F(
        LANGUAGE,
        ("Kadri Tamm", "Liis Saar", "Mart Sepp"),
        ("Minu raamatupidaja on {v}.", "raamatupidaja: {v}"),
        "Who is my raamatupidaja?",
        "Who keeps my accounts?",
    ),
    F(
        LANGUAGE,
        ("Vesna Horvat", "Snježana Kovač", "Dubravka Jurić"),
        ("Moja teta {v} dolazi u subotu.", "teta {v} dolazi ovaj vikend"),
        "Which teta is coming?",
        "Which aunt of mine is visiting?",
    ),
    F(
        LANGUAGE,
        ("Graaff-Reinet", "Prins Albert", "Clanwilliam"),
        ("My broer se plaas is naby {v}.", "die plaas is by {v}"),
        "Where is my broer's plaas?",
        "Where is my brother's farm?",
    ),
    F(
        LANGUAGE,
        ("Bangsar South", "Cyberjaya", "Petaling Jaya"),
        ("Pejabat saya di {v}, tingkat lima.", "pejabat baru kat {v}"),
        "Where is my pejabat?",
        "Where do I work from?",
        restate="pejabat saya sekarang di {v}",
    ),
    F(
        LANGUAGE,
        ("Цветанка Илиева", "Божидар Стоянов", "Радослава Петкова"),
        ("Моят зъболекар е д-р {v}.", "зъболекар: д-р {v}"),  # noqa: RUF001
        "Who is my зъболекар?",
        "Who looks after my teeth?",
    ),
    F(
        LANGUAGE,
        ("فرشته رضایی", "کاوه نادری", "نسرین موسوی"),
        ("همکار جدیدم {v} است، هفته بعد شروع می‌کند.",),
        "What's the name of my new همکار?",
        "Who is joining my team next week?",
    ),
    F(
        LANGUAGE,
        ("कोल्हापूर", "नाशिक", "सातारा"),
        ("माझी आजी {v} येथे राहते.", "आजी {v} ला असते"),
        "Where does my आजी live?",
        "Which town is my grandmother in?",
    ),
    F(
        LANGUAGE,
        ("سیالکوٹ", "ملتان", "حیدرآباد"),
        ("میرے چچا {v} میں رہتے ہیں۔",),  # noqa: RUF001
        "Where do my چچا live?",
        "Which city is my uncle in?",
    ),
    F(
        LANGUAGE,
        ("Zarautz", "Hondarribia", "Getaria"),
        ("Nire ama {v} herrian bizi da.",),
        "Where does my ama live?",
        "Which town is my mother in?",
    ),
    F(
        LANGUAGE,
        ("Rūta Vaitkienė", "Dalia Kazlauskienė", "Asta Jankauskienė"),
        ("Mano šeimos gydytoja yra {v}.", "gydytoja: {v}"),
        "Who is my gydytoja?",
        "Who is my family doctor?",
    ),
    F(
        LANGUAGE,
        ("Snúður", "Mjálmar", "Brandur"),
        ("Kötturinn minn heitir {v}.", "kötturinn heitir {v} 🐈"),
        "What is my köttur called?",
        "What's my cat's name?",
    ),
    F(
        LANGUAGE,
        ("Thandeka", "Nomvula", "Sibusiso"),
        ("Umngane wami {v} uzofika kusasa.",),
        "Which umngane is arriving?",
        "Which friend of mine gets here tomorrow?",
    ),
)

LEGAL = AgentFacts(
    (
        F(
            THIRD,
            ("Tuesday afternoons", "Friday mornings", "the first Monday of the month"),
            (
                "Gwenllian (senior partner) only signs engagement letters on {v}",
                "engagement letters: Gwenllian signs {v}, no other time",
            ),
            "When does Gwenllian sign engagement letters?",
            "When is the head of the firm available for client paperwork?",
            restate="Gwenllian signs on {v} now",
        ),
        F(
            CURRENCY,
            ("£1,450", "£1,875", "£2,200"),
            (
                "our fixed fee for a deposit claim is {v} plus VAT",
                "Deposit claims: fixed fee {v} + VAT.",
            ),
            "What's our fixed fee for a deposit claim?",
            "How much do we charge for getting a tenant's money back?",
            restate="the fixed fee is {v} plus VAT now",
        ),
        F(
            DATE,
            ("12/03/2027", "07/11/2026", "29/01/2027"),
            (
                "limitation date on the Harcourt matter is {v}, diarise it twice",
                "Harcourt — limitation {v}",
            ),
            "What's the limitation date on the Harcourt matter?",
            "By when must we issue proceedings for that client?",
            restate="Harcourt limitation is {v}, I miscalculated",
        ),
        F(
            TERSE,
            ("SRA 648213", "SRA 702958", "SRA 591344"),
            ("firm's reg no: {v}", "{v} (ours)"),
            "What's our reg no?",
            "Which regulator ID does the firm have?",
        ),
        F(
            DICTATED,
            ("immigration appeals", "personal injury", "clinical negligence"),
            (
                "new rule from today we dont take on {v} at all send them to the clinic "
                "down the road",
            ),
            "What don't we take on any more?",
            "Which cases get referred elsewhere?",
        ),
        F(
            EMOJI,
            ("PrintHaus Cardiff", "Copy Corner Leeds", "Bundle & Bind"),
            ("court bundles go to {v} 🖨️ cheapest by far", "🖨️ bundles → {v}"),
            "Where do court bundles go?",
            "Who prints our hearing documents?",
            restate="bundles go to {v} now 🖨️",
        ),
    ),
    Group(
        (
            ("Ms Adeyemi-Roth", "Mr Kowalczyk-Hale", "Dr Ferreira-Obi"),
            ("the Quay Street office", "the small library room", "the Cardiff chambers"),
            ("3pm", "11am", "4.15pm"),
        ),
        (
            "client meeting: {a}, in {b}, at {c}",
            "Meeting with {a} is in {b} at {c} — can you book it",
        ),
        (
            ("Who is the client meeting with?", "Who are we seeing for the consultation?"),
            ("Where is the client meeting?", "Which room do we see the consultation in?"),
            ("When is the client meeting?", "What time is the consultation?"),
        ),
        ("same place but {new}", "Client meeting: same room, same client, {new} instead"),
    ),
    Reply(
        ("the 14th", "the 21st", "the 28th"),
        "book the deposition room for the Oyelowo matter",
        "Sure. Is it the date they offered in their email — which day was it?",
        ("yes, {v}", "{v} yes"),
        "Which day is the deposition room booked for?",
        "When do we take the witness's evidence?",
    ),
)

HOME = AgentFacts(
    (
        F(
            UNIT,
            ("18.5 °C", "19 °C", "17.5 °C"),
            ("keep the nursery at {v} at night, not warmer", "nursery night temp {v}"),
            "What temp for the nursery at night?",
            "How warm should the baby's room be while she sleeps?",
            restate="nursery at {v} at night now",
        ),
        F(
            THIRD,
            ("Wednesdays at nine", "Mondays at two", "every other Friday at ten"),
            (
                "the cleaner, Edite, comes {v}, so ask me to disarm for her",
                "Edite (cleaning) comes {v}",
            ),
            "When does Edite come?",
            "When is the person who cleans our house due?",
            restate="Edite comes {v} now",
        ),
        F(
            TERSE,
            ("green bins, Thursday", "blue bins, Tuesday", "brown bins, Friday"),
            ("bin day: {v}", "bins → {v}"),
            "What's bin day?",
            "When is the rubbish collected?",
            restate="bin day is {v} now",
        ),
        F(
            DICTATED,
            ("nine three one seven", "two eight eight four", "six zero five one"),
            (
                "the garage door code is {v} but only give it to the plumber",
                "garage code {v} dont share it with anyone but the plumber",
            ),
            "What's the garage door code?",
            "How does the tradesman get into where the car lives?",
            restate="new garage code {v}",
        ),
        F(
            CURRENCY,
            ("€0.094", "€0.117", "€0.083"),
            (
                "our off-peak tariff is {v} per kWh, run the dishwasher then",
                "off-peak = {v}/kWh",
            ),
            "What's our off-peak tariff?",
            "How much is electricity at night?",
            restate="off-peak is {v} per kWh now",
        ),
        F(
            RELATIVE,
            ("a fortnight on Monday", "six weeks from now", "the week before Easter"),
            ("the solar panel installer comes {v}", "solar install: {v}"),
            "When does the solar panel installer come?",
            "When are they putting the roof generation kit on?",
            restate="solar install moved to {v}",
        ),
    ),
    Group(
        (
            ("Ines the electrician", "Kofi the plumber", "Radek the joiner"),
            ("the back door", "the side gate", "the cellar hatch"),
            ("8am", "half past one", "noon"),
        ),
        (
            "{a} comes tomorrow, let them in through {b} at {c}",
            "tomorrow: {a}, via {b}, {c}",
        ),
        (
            ("Who comes tomorrow?", "Which tradesperson is visiting?"),
            ("Which way do I let the tradesperson in?", "Through where does the worker enter?"),
            ("What time does the tradesperson come?", "When is the worker arriving?"),
        ),
        ("same door but {new}", "tomorrow's visit: same way in, {new} now"),
    ),
    Reply(
        ("the 15th", "the 22nd", "the 29th"),
        "schedule the boiler flush",
        "Happy to. The engineer said he could do a date next month — is that right, which one?",
        ("yes, {v}", "yep {v}"),
        "Which date is the boiler flush?",
        "When does the engineer come for the heating system clean?",
    ),
)

TUTOR = AgentFacts(
    (
        F(
            DATE,
            ("Sat 14 Feb", "Fri 6 Mar", "Sun 19 Apr"),
            ("my flight to Amsterdam is {v}, so that's the deadline", "flight: {v}"),
            "When is my flight to Amsterdam?",
            "When do I leave for the Netherlands?",
            restate="flight moved to {v}",
        ),
        F(
            TERSE,
            ("CNaVT PAT", "NT2 programma II", "Inburgeringsexamen A2"),
            ("exam: {v}", "target exam = {v}"),
            "Which exam am I taking?",
            "What test am I preparing for?",
        ),
        F(
            THIRD,
            ("complete beginner", "lower intermediate", "upper beginner"),
            ("my husband Teodor is learning too, he's a {v}", "Teodor's level: {v}"),
            "What level is Teodor?",
            "How far along is my spouse with the language?",
            restate="Teodor is a {v} now",
        ),
        F(
            EMOJI,
            ("Sundays", "Saturday mornings", "Wednesday evenings"),
            ("no homework on {v} pls 🙏 family time", "🙏 {v} off please"),
            "When is no homework?",
            "When should I be left alone with no tasks?",
            restate="no homework on {v} now 🙏",
        ),
        F(
            WORDS,
            ("twenty-five", "thirty-five", "fifty-five"),
            ("I can do {v} minutes a day, no more", "{v} mins daily max"),
            "How many minutes a day can I do?",
            "How long can I study each day?",
            restate="I can do {v} minutes a day now",
        ),
        F(
            DICTATED,
            ("Marijke de Graaf", "Anneloes Bakker", "Femke Jansen"),
            ("my teacher back home was {v} she said my accent is too flat",),
            "Who was my teacher back home?",
            "Who taught me before you?",
        ),
    ),
    Group(
        (
            ("Joris", "Saskia", "Pieter-Jan"),
            ("Café de Jaren", "the Stadsbibliotheek", "Bagels & Beans"),
            ("7pm", "half six", "8.30pm"),
        ),
        (
            "conversation meetup: with {a}, at {b}, {c}",
            "Practice session — {a}, {b}, {c}. Prep me before?",
        ),
        (
            ("Who is the conversation meetup with?", "Who am I practising speaking with?"),
            ("Where is the conversation meetup?", "Where do I practise speaking?"),
            ("When is the conversation meetup?", "What time do I practise speaking?"),
        ),
        ("same place but {new}", "meetup: same person and place, {new} though"),
    ),
    Reply(
        ("the 12th", "the 19th", "the 26th"),
        "book me a mock oral exam",
        "Sure. Is it the day your course finishes — which date is that?",
        ("yes, {v}", "{v}, yes"),
        "Which date is the mock oral exam?",
        "When do I rehearse the speaking test?",
    ),
)

FREIGHT = AgentFacts(
    (
        F(
            UNIT,
            ("7.5 t", "12 t", "3.5 t"),
            (
                "the bridge on the yard road has a {v} limit, no loaded artics",
                "yard bridge: {v} max",
            ),
            "What's the limit on the yard road bridge?",
            "How heavy can a truck be crossing into our depot?",
        ),
        F(
            CURRENCY,
            ("€1.42", "€1.58", "€1.37"),
            ("our rate floor is {v} per km, never below", "floor: {v}/km"),
            "What's our rate floor?",
            "What's the least we accept per kilometre?",
            restate="rate floor is {v} per km now",
        ),
        F(
            THIRD,
            ("day shifts only", "routes under 400 km", "Mon to Thu only"),
            ("Dragan drives {v}, his back", "Dragan: {v}"),
            "What does Dragan drive?",
            "What work can our driver with the bad back take?",
            restate="Dragan does {v} now",
        ),
        F(
            TERSE,
            ("7-3-9-1", "2-2-8-6", "5-0-4-4"),
            ("depot gate code {v}", "gate: {v}"),
            "What's the depot gate code?",
            "How do drivers get into the yard at night?",
            restate="gate code changed to {v}",
        ),
        F(
            DICTATED,
            ("Sunniva Aasheim", "Kristiina Mägi", "Dagnija Ozola"),
            ("the insurance broker is {v} call her before any claim",),
            "Who is the insurance broker?",
            "Who do I ring before reporting damage?",
        ),
        F(
            DATE,
            ("3 Sept 2026", "17 Oct 2026", "22 Nov 2026"),
            ("the annual truck inspection is due {v}", "MOT/inspection: {v}"),
            "When is the annual truck inspection due?",
            "When does the lorry need its yearly test?",
            restate="inspection is {v} now",
        ),
    ),
    Group(
        (
            ("Mehmet from Arslan Logistik", "Aino from Nordlink", "Tiago from Luso Frio"),
            ("the Venlo cross-dock", "the Zeebrugge terminal", "the Poznań hub"),
            ("6am", "2.45pm", "11pm"),
        ),
        (
            "handover tomorrow: {a} meets our driver at {b} at {c}",
            "Trailer swap — {a}, {b}, {c}.",
        ),
        (
            ("Who meets our driver for the handover?", "Which partner takes the trailer?"),
            ("Where is the handover?", "Where does the trailer swap happen?"),
            ("When is the handover?", "What time is the trailer swap?"),
        ),
        ("same place but {new}", "swap: same people, same spot, {new}"),
    ),
    Reply(
        ("the 11th", "the 18th", "the 25th"),
        "book the ferry for the Tallinn load",
        "Will do. Is it the sailing they proposed — which day?",
        ("yes, {v}", "yeah {v}"),
        "Which day is the ferry for the Tallinn load?",
        "When does our truck sail to Estonia?",
    ),
)

LAB = AgentFacts(
    (
        F(
            UNIT,
            ("4 °C", "2 to 8 °C", "-20 °C"),
            ("keep the stock solutions at {v}, never in the door shelf", "stocks at {v}"),
            "What temperature for the stock solutions?",
            "How cold do the reagent bottles need to be stored?",
            restate="stock solutions at {v} now",
        ),
        F(
            THIRD,
            ("stability study", "method transfer", "out-of-spec"),
            (
                "Dr Mbeki-Larsen reviews every {v} report herself",
                "{v} reports → Dr Mbeki-Larsen personally",
            ),
            "Which reports does Dr Mbeki-Larsen review?",
            "What paperwork does our head scientist check in person?",
            restate="Dr Mbeki-Larsen reviews the {v} reports now",
        ),
        F(
            TERSE,
            ("GLP-26-0417", "GLP-26-0933", "GLP-26-1288"),
            ("study no: {v}", "{v} ← our study"),
            "What's our study no?",
            "Which code does the regulated trial carry?",
        ),
        F(
            CURRENCY,
            ("$185", "$240", "$310"),
            ("client pays {v} per sample for the rush service", "rush = {v}/sample"),
            "How much per sample for the rush service?",
            "What do we charge for fast turnaround?",
            restate="rush is {v} per sample now",
        ),
        F(
            DICTATED,
            ("World Courier", "Marken", "Biocair"),
            ("dry ice shipments go with {v} they pick up at four",),
            "Who takes dry ice shipments?",
            "Which company collects our frozen parcels?",
            restate="dry ice goes with {v} now",
        ),
        F(
            RELATIVE,
            ("six weeks from Monday", "the last week of next month", "a month tomorrow"),
            ("the sponsor audit is {v}", "audit {v}, tidy the freezers"),
            "When is the sponsor audit?",
            "When are the inspectors from the client coming?",
            restate="the sponsor audit moved to {v}",
        ),
    ),
    Group(
        (
            ("Dr Okwuosa", "Dr Lindahl", "Dr Carvalho"),
            ("seminar room 2", "the glass meeting room", "the mezzanine"),
            ("9am", "1.30pm", "5pm"),
        ),
        ("method review with {a}, {b}, {c}", "Method review: {a} / {b} / {c}"),
        (
            ("Who is the method review with?", "Which scientist goes over the procedure?"),
            ("Where is the method review?", "Which room for going over the procedure?"),
            ("When is the method review?", "What time do we go over the procedure?"),
        ),
        ("same place but {new}", "method review: same room, same person, {new} now"),
    ),
    Reply(
        ("the 13th", "the 20th", "the 27th"),
        "schedule the freezer defrost",
        "OK. Is it the date facilities proposed — which one?",
        ("yes, {v}", "{v} yes"),
        "Which date is the freezer defrost?",
        "When are the cold stores switched off for de-icing?",
    ),
)

BY_AGENT: dict[str, AgentFacts] = {
    "legal intake": LEGAL,
    "home automation": HOME,
    "language tutoring": TUTOR,
    "freight dispatch": FREIGHT,
    "lab samples": LAB,
}

FIXES: tuple[Fix, ...] = (
    Fix(
        (("Pennyworht", "Pennyworth"), ("Ellingwsorth", "Ellingsworth"), ("Hathawya", "Hathaway")),
        "the new accountant's surname is {typo}, she starts monday",
        ("*{v}", "{v}* sorry, autocorrect"),
        "What's the new accountant's surname?",
        "What is the family name of the woman doing our books from now on?",
    ),
    Fix(
        (
            ("Wolverhamtpon", "Wolverhampton"),
            ("Llanelil", "Llanelli"),
            ("Scunthrope", "Scunthorpe"),
        ),
        "my cousin is moving to {typo} in the spring",
        ("*{v}", "ugh, *{v}"),
        "Where is my cousin moving?",
        "Which town will my relative live in from spring?",
    ),
    Fix(
        (("Bergamott", "Bergamot"), ("Cardamon", "Cardamom"), ("Tumeric", "Turmeric")),
        "we named the puppy {typo}",
        ("*{v} lol", "*{v}, she'd be offended"),
        "What did we name the puppy?",
        "What's the young dog called?",
    ),
)

MARKED: tuple[str, ...] = (
    "no wait — {restated}",
    "correction!! {restated}",
    "I misspoke earlier: {restated}, not {old}.",
    "Update: {restated}.",
    "that was wrong, {restated}",
    "Esmena: {restated}.",
    "Rettelse: {restated}.",
    "ignore the {old} thing, {restated}",
)
#: Corrections that just state the new value, with no word saying it is one.
UNMARKED: tuple[str, ...] = (
    "{restated}",
    "btw {restated}",
    "fyi {restated} 👍",
    "{restated}. anyway, next thing",
    "as of today {restated}",
)
#: A correction of a correction: only the last value stands.
RECORRECTIONS: tuple[str, ...] = (
    "and again, sorry: {restated}. not {old}, not {middle}",
    "ok final: {restated}",
    "{middle} fell through, {restated}",
    "changed once more — {restated}",
)
