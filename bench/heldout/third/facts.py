"""What users of the third set say, the way people say it: in passing, inside questions and
requests, in rambles, as lists, as negations, about other people, over two messages, as the
answer to the assistant's question, with typos, numbers, sums and dates in words or relative
to today, in a dozen languages and mixed with English.

Each frame is one detail: its kind, the values it may take, ways of saying it, a question that
shares a word with it and one in other words, and (for a detail a user may change) how it reads
restated, which a correction says. Some frames belong to one agent, the rest to every agent.

A value must not occur anywhere in a session but where it is stated: the scorer finds a fact
by its value. The generator checks it for every session it makes.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.heldout.sets import Frame


@dataclass(frozen=True)
class Group:
    """Several details in one message ("a few things: …"); a partial correction later changes
    the last of them and leaves the others standing."""

    kinds: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]
    #: With ``{a}``, ``{b}`` (and ``{c}``).
    statements: tuple[str, ...]
    asks: tuple[tuple[str, str], ...]
    #: What a partial correction says, with ``{new}`` (and ``{old}`` where it names it).
    partial: tuple[str, ...]


@dataclass(frozen=True)
class Split:
    """A detail announced in one message and given in the next ("hang on … found it: X")."""

    values: tuple[str, ...]
    first: str
    second: tuple[str, ...]
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class Reply:
    """A detail the user gives as the answer to the assistant's question ("— which floor?
    — 5th, no lift")."""

    values: tuple[str, ...]
    request: str
    question: str
    replies: tuple[str, ...]
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class AgentFacts:
    singles: tuple[Frame, ...]
    groups: tuple[Group, ...]
    split: Split
    reply: Reply


F = Frame

SHARED: tuple[Frame, ...] = (
    F(
        "not in English",
        ("Rui Vasconcelos", "Tiago Magalhães", "Nuno Albergaria"),
        (
            "O meu contabilista é o {v}, manda-lhe as faturas no fim do mês.",
            "Ah, e o contabilista é o {v}, qualquer coisa de impostos fala com ele.",
        ),
        "Who is my contabilista?",
        "Who does my books?",
        restate="o contabilista agora é o {v}",
    ),
    F(
        "not in English",
        ("Maëlle Guéguen", "Solène Aubertin", "Inès Belkacem"),
        (
            "Mon associée s'appelle {v}, c'est elle qui signe quand je suis absent.",
            "pour info mon associée c'est {v}",
        ),
        "Who is my associée?",
        "Who is my business partner?",
    ),
    F(
        "not in English",
        ("Bad Tölz", "Lörrach", "Wolfenbüttel"),
        (
            "Unser Steuerberater sitzt in {v}, falls du ihm Unterlagen schicken musst.",
            "Der Steuerberater ist in {v}, Post geht dahin.",
        ),
        "Where does our Steuerberater sit?",
        "In which town is the tax adviser's office?",
        restate="der Steuerberater ist jetzt in {v}",
    ),
    F(
        "not in English",
        ("0812 7730 4419", "0857 2261 9034", "0813 9948 1207"),
        (
            "Nomor WhatsApp kantor kami {v}, jangan pakai yang lama ya.",
            "kalau mau kirim pesan ke kantor, pakai {v} aja",
        ),
        "What's the nomor WhatsApp kantor?",
        "Which number reaches the office by chat?",
        restate="nomor kantor sekarang {v}",
    ),
    F(
        "not in English",
        ("Neema Wambui", "Zawadi Atieno", "Rehema Chepkoech"),
        (
            "Dada yangu {v} atakuja kunisaidia wiki ijayo.",
            "Dada yangu anaitwa {v}, atanisaidia kazini kwa muda.",
        ),
        "What is the name of my dada?",
        "Which sister of mine is coming to help?",
    ),
    F(
        "not in English",
        ("juhannuksen jälkeen", "heinäkuun puolivälissä", "elokuun alussa"),
        (
            "Lomani alkaa {v}, sen jälkeen en vastaa viesteihin.",
            "muistutus: loma alkaa {v}",
        ),
        "When does my loma start?",
        "From when am I on holiday and unreachable?",
        restate="lomani alkaakin {v}",
    ),
    F(
        "not in English",
        ("Café Slavia", "Kavárna Místo", "Café Savoy Malá Strana"),
        (
            "Schůzky dělám vždycky v {v}, tam je klid.",
            "Když se mám s někým sejít, tak v {v}, prosím.",
        ),
        "Which place do I use for schůzky?",
        "Where do I like to meet people over coffee?",
        restate="schůzky teď dělám v {v}",
    ),
    F(
        "not in English",
        ("Andrei Mihăilescu", "Luca Bărbulescu", "Matei Zamfirescu"),
        (
            "Fiul meu, {v}, are examen în iunie, așa că vreau serile libere.",
            "băiatul meu e {v}, dacă sună la birou e urgent",
        ),
        "What's my fiul's name?",
        "Who is my boy?",
    ),
    F(
        "not in English",
        ("মিরপুর", "ধানমন্ডি", "উত্তরা"),
        (
            "আমার অফিস {v} এলাকায়, তাই সকালে একটু দেরি হয়।",
            "আমি {v} থেকে আসি, জ্যাম থাকলে দেরি হবে",
        ),
        "Where is my অফিস?",
        "Which neighbourhood do I commute from or work in?",
    ),
    F(
        "not in English",
        ("Marites Dimaculangan", "Jomar Bautista", "Rowena Macaraeg"),
        (
            "Yung asawa ko si {v}, siya minsan ang tatawag para sa akin.",
            "pag may tumawag na {v}, asawa ko yun, ok lang kausapin",
        ),
        "Who is my asawa?",
        "Who is my spouse?",
    ),
    F(
        "not in English",
        ("Pöttyös", "Bodri", "Morzsa"),
        (
            "A kutyám neve {v}, néha hallod a háttérben a hívásokon.",
            "ha ugatást hallasz, az {v}, a kutyám",
        ),
        "What is the kutyám's name?",
        "What's the name of my pet?",
    ),
    F(
        "code-switching",
        ("15th and 30th", "last Friday of the month", "10th and 25th"),
        (
            "pls tandaan mo, ang cut-off ng payroll namin is every {v}",
            "Reminder lang: payroll cut-off is every {v}, wag kalimutan",
        ),
        "When is our payroll cut-off?",
        "When do salaries get locked in?",
        restate="payroll cut-off is every {v} na",
    ),
    F(
        "code-switching",
        ("fünfundzwanzigtausend Euro", "achtzehntausend Euro", "zweiunddreißigtausend Euro"),
        (
            "Mein Limit für das ganze Projekt ist {v}, more is really not possible.",
            "so, das Budget: {v} total, that's the ceiling",
        ),
        "What's my Limit for the whole project?",
        "How much can I spend overall?",
        restate="das Limit ist jetzt {v}",
    ),
    F(
        "with typos",
        ("rkowalczyk.work@fastmail.example", "bia.m.santos@proton.example", "tunde@zoho.example"),
        (
            "my emial is {v} if teh system needs one",
            "use {v} for anyhting official, thats my persnal one",
        ),
        "Which address did I give for the system or official stuff?",
        "How do I get contacted electronically?",
        restate="my email is {v} now",
    ),
    F(
        "with typos",
        ("blue and orange", "black and yellow", "purple and teal"),
        (
            "im colorblind so pls no red/green in anyhting you send me, use {v} insted",
            "colour thing: i cant tell red from green, {v} works for me tho",
        ),
        "Which colours should you use instead of red and green?",
        "What palette suits my eyesight?",
        restate="use {v} for charts",
    ),
    F(
        "time in words",
        ("half past six", "a quarter past eight", "ten to nine"),
        (
            "I start at {v} most days, don't put anything before that.",
            "my day starts {v}, so nothing earlier pls",
        ),
        "What time do I start most days?",
        "How early can meetings with me be set?",
        restate="I start at {v} now",
    ),
    F(
        "date (relative, in words)",
        ("the Friday after next", "a fortnight tomorrow", "three weeks on Monday"),
        (
            "I'm off from {v}, back the week after.",
            "heads up, annual leave from {v}",
        ),
        "When am I off from?",
        "When does my vacation begin?",
        restate="my leave starts {v}",
    ),
    F(
        "number in words",
        ("thirteen", "sixteen", "nineteen"),
        (
            "there are {v} of us in the office, so order lunch for that many",
            "We're {v} people all together, if it matters for the booking.",
        ),
        "How many of us are in the office?",
        "How big is the team I work with?",
        restate="we're {v} in the office now",
    ),
    F(
        "inside a question",
        ("Sparkasse Mitte", "Millennium BCP Baixa", "BRD Unirii"),
        (
            "can you check whether {v} is open on holidays? that's my branch",
            "Is {v} — my bank branch — open on Saturday mornings?",
        ),
        "Which bank branch is mine?",
        "Where do I do my banking?",
    ),
    F(
        "inside a request",
        ("Rua do Almada 117", "Kalevankatu 9 B 14", "Strada Lipscani 53"),
        (
            "send the signed copy to my home address, {v}, not the office",
            "Please post the originals to {v} (home), thanks.",
        ),
        "What's my home address?",
        "Where do I live, for sending paper?",
        restate="my home address is {v} now",
    ),
    F(
        "rambling",
        ("halal food", "raw vegan food", "gluten-free food"),
        (
            "so the thing is my mother-in-law is staying with us for a while and she only eats "
            "{v}, which means every dinner out this month is a whole project, and my partner "
            "is travelling, so it's all on me. anyway, sorry, just venting, what's next",
        ),
        "What does my mother-in-law eat?",
        "What dietary rule does my spouse's mum follow?",
    ),
    F(
        "negation",
        ("Wednesday afternoons", "Friday mornings", "Monday evenings"),
        (
            "i don't take calls on {v}, text me instead",
            "Not reachable by phone {v} — don't even try, it's school pickup.",
        ),
        "When don't I take calls?",
        "At what times am I unreachable?",
        restate="no calls on {v} now",
    ),
    F(
        "third person",
        ("Svetlana Oyelowo", "Birgit Aaltonen", "Ana Paula Rezende"),
        (
            "my boss {v} hates long emails, keep anything to her under five lines",
            "anything going to {v} (my boss) should be short, she doesn't read past line five",
        ),
        "Who is my boss?",
        "Whose messages need to stay brief?",
        restate="my new boss is {v}",
    ),
    F(
        "preference",
        ("Signal messages", "registered letters", "a video call"),
        (
            "I prefer {v} for anything official.",
            "for formal stuff, {v} please, I keep a record that way",
        ),
        "What do I prefer for anything official?",
        "How do I like paperwork handled?",
        restate="for official stuff I want {v} now",
    ),
)

CLINIC = AgentFacts(
    (
        F(
            "third person",
            ("Mondays and Thursdays", "Tuesday mornings", "Wednesdays and Fridays"),
            (
                "Dr. Halmi only sees patients on {v}, so don't offer him any other day.",
                "fyi dr halmi: {v}, nothing else",
            ),
            "Which days does Dr. Halmi see patients?",
            "When is the Hungarian doctor available for appointments?",
            restate="Dr. Halmi is on {v} from now on",
        ),
        F(
            "negation",
            ("stitches removal", "ear syringing", "travel vaccines"),
            (
                "we don't do {v} here, send those to the hospital",
                "We no longer offer {v}, send people to the hospital.",
            ),
            "What do we send to the hospital?",
            "Which procedure must patients get elsewhere?",
        ),
        F(
            "money in words",
            ("thirty-five euros", "twenty-five euros", "forty euros"),
            (
                "a no-show gets charged {v}, it's on the sign at reception",
                "No-show fee: missed appointments without notice cost {v}. Say so when confirming.",
            ),
            "How much do we charge a no-show?",
            "What's the fee when somebody skips their slot unannounced?",
            restate="the no-show fee is {v} now",
        ),
        F(
            "inside a request",
            ("PRX-44817", "PRX-90263", "PRX-17390"),
            (
                "when you fill out the insurer forms put our practice code {v} at the top",
                "Can you redo the claim with practice code {v}? It bounced.",
            ),
            "What's our practice code for the insurer forms?",
            "Which number identifies the surgery to payers?",
        ),
        F(
            "name",
            ("Abimbola Oyelaran", "Katarzyna Wilczyńska", "Maristela Bonifácio"),
            (
                "the practice manager is {v}, anything about rotas goes to her",
                "Rota questions → {v}, she's the practice manager.",
            ),
            "Who is the practice manager?",
            "Who handles staff scheduling?",
            restate="the practice manager is {v} now",
        ),
        F(
            "time in words",
            ("twenty to five", "a quarter past four", "half five"),
            (
                "last appointments are at {v}, the cleaners come right after",
                "Nothing after {v} please, that's our last slot.",
            ),
            "When are the last appointments?",
            "How late can someone be booked in?",
            restate="last appointments are at {v} from now",
        ),
        F(
            "date (relative, in words)",
            ("the week after Easter", "the last week of August", "the first three days of May"),
            (
                "we're shut {v} for the floor refinishing",
                "Heads up: closed {v} for the floor refinishing. Don't book anything.",
            ),
            "When are we shut for the floor refinishing?",
            "When will the building be off-limits for works?",
            restate="the floor closure is {v} now",
        ),
        F(
            "preference",
            ("two days before", "three days ahead", "on the Friday before"),
            (
                "I like reminders going out {v}, one day isn't enough for our patients",
                "send the SMS reminders {v} pls, the day before is too late",
            ),
            "When do I like reminders going out?",
            "How far in advance should people be notified?",
            restate="reminders go out {v} from now on",
        ),
        F(
            "constraint",
            ("eighteen", "twenty-one", "twenty-four"),
            (
                "no doctor here takes more than {v} patients a day, it's in their contracts",
                "Cap is {v} patients per doctor per day. Hard limit.",
            ),
            "How many patients a day at most per doctor?",
            "What's the ceiling on a clinician's daily list?",
            restate="the daily cap is {v} patients now",
        ),
        F(
            "rambling",
            ("the council office on Brook Row", "the annex behind St. Jude's", "Millbrook depot"),
            (
                "ugh, long day. boiler broke again, phones were down till eleven-ish, and on top "
                "of it the staff parking permits now have to be collected from {v}, which is "
                "across town, so whoever goes loses the whole morning. anyway. what's next",
            ),
            "Where do staff parking permits get collected?",
            "Where does someone go to pick up the car passes for employees?",
        ),
    ),
    (
        Group(
            ("list of several", "list of several", "list of several"),
            (
                ("Dr. Ngozi Eberechi", "Dr. Pilar Onetti", "Dr. Hiltrud Wendt"),
                ("mornings only", "afternoons only", "three days a week"),
                ("a hearing loop", "a standing desk", "a couch by the window"),
            ),
            (
                "Few things for the locum next month: 1) her name is {a} 2) she's here {b} "
                "3) she needs a room with {c}",
                "locum: {a}, {b}, needs {c} in her room. that's all I know",
            ),
            (
                ("What's the locum's name?", "Who is covering for our doctor?"),
                ("When is the locum here?", "Which part of the week will the stand-in work?"),
                ("What does the locum's room need?", "What equipment did the stand-in ask for?"),
            ),
            (
                "re the locum: same doctor, same days, but she wants {new} now, not {old}",
                "Locum update — only the room: {new}.",
            ),
        ),
        Group(
            ("name", "time in words"),
            (
                ("Kwabena Asante-Boateng", "Loïc Dufresne", "Paulo Nhantumbo"),
                ("at ten past three", "around half eleven", "just after two"),
            ),
            (
                "{a} is our new lab courier, comes {b} every weekday",
                "New courier for the samples: {a}. Pickup {b}.",
            ),
            (
                ("Who is the lab courier?", "Who picks the specimens up?"),
                ("When does the courier come?", "When are specimens collected?"),
            ),
            (
                "courier changed his time, same guy, now {new}",
                "Courier's coming {new} instead of {old}.",
            ),
        ),
    ),
    Split(
        ("Ifeoluwa Banjo-Smith", "Teodora Vasilescu-Moraru", "Josefina Allende-Ruiz"),
        "the new receptionist starts next week, her name is... hang on, it's on the contract "
        "somewhere",
        ("found it — {v}", "ok it's {v}. double-barrelled, she was particular about that"),
        "What's the new receptionist's name?",
        "Who is joining the front desk?",
    ),
    Reply(
        ("9th of October", "16th of October", "23rd of October"),
        "set up a flu jab morning for the over-65s",
        "Happy to. Which date do you want it on? I'll block the nurse's list.",
        ("the {v}", "{v}, if the nurse can"),
        "When is the flu jab morning?",
        "What day are the older patients getting their seasonal shots?",
    ),
)

RENOVATION = AgentFacts(
    (
        F(
            "third person",
            ("on Saturdays", "past three on Fridays", "during Ramadan evenings"),
            (
                "Piotr, my tiler, won't work {v}, respect that when you plan",
                "don't put piotr on anything {v}, he doesn't do it",
            ),
            "When won't Piotr work?",
            "When is my tile guy unavailable?",
        ),
        F(
            "negation",
            ("gas boilers", "asbestos removal", "roof trusses"),
            (
                "we don't touch {v}, refer those to someone licensed",
                "We don't touch {v}, ever. Not insured for it.",
            ),
            "What do we not touch?",
            "Which jobs must go to a specialist?",
        ),
        F(
            "money in words",
            (
                "four hundred and twenty euros",
                "three hundred and eighty euros",
                "five hundred and ten euros",
            ),
            (
                "my day rate for the crew is {v}, quote with that",
                "Crew day rate: {v}. Use it on every quote.",
            ),
            "What's my crew day rate?",
            "How much do I charge per worker for a shift?",
            restate="crew day rate is {v} now",
        ),
        F(
            "identifier",
            ("PT514902337", "DE318845620", "RO40177382"),
            (
                "my VAT number's {v}, put it on every invoice",
                "VAT no. {v} — needs to be on invoices or the accountant kills me",
            ),
            "What's my VAT number?",
            "Which tax ID goes on billing documents?",
        ),
        F(
            "place",
            ("Vila Nova de Gaia", "Esslingen", "Hervanta"),
            (
                "I keep all the tools at the lockup in {v}",
                "tools are in the lockup out in {v}, it's a drive",
            ),
            "Where do I keep the tools?",
            "Where is my storage unit?",
            restate="the lockup is in {v} now",
        ),
        F(
            "inside a question",
            ("Transit Custom", "Iveco Daily", "Renault Master"),
            (
                "could the {v} van fit down the lane at the Lindenstraße job? it's the long one",
                "will my {v} van get under the arch on Masarykova or do we carry everything?",
            ),
            "Which van do I have?",
            "What vehicle do I drive to sites?",
        ),
        F(
            "date (relative, in words)",
            ("the last day of August", "the second of September", "the end of the holidays"),
            (
                "the school job has to be done by {v}, before the kids come back",
                "School: finished by {v}. No wiggle room.",
            ),
            "When does the school job have to be done by?",
            "What's the deadline for the classroom works?",
            restate="the school job deadline is {v} now",
        ),
        F(
            "preference",
            ("PDFs with photos", "one-page summaries", "itemised spreadsheets"),
            (
                "I want all quotes to go out as {v}, clients like that",
                "quotes as {v} from me, always",
            ),
            "How do I want quotes to go out?",
            "What format should estimates take?",
            restate="quotes go out as {v} now",
        ),
        F(
            "number in words",
            ("thirty-eight", "forty-six", "fifty-three"),
            (
                "we need {v} sheets of board for the loft, I measured twice",
                "Loft = {v} sheets. Counted twice.",
            ),
            "How many sheets of board for the loft?",
            "How much plasterboard does the attic take?",
            restate="it's {v} sheets for the loft",
        ),
        F(
            "rambling",
            ("Farrow sage green", "terracotta limewash", "Hague blue"),
            (
                "honestly the client on the hill job keeps changing her mind, first it was grey "
                "then white now she wants {v} on the walls and i have to re-order evrything, "
                "cant even be mad she's lovely",
            ),
            "What does the hill job client want on the walls?",
            "Which paint colour did the lady up the slope settle on?",
            restate="the hill job is {v} on the walls",
        ),
    ),
    (
        Group(
            ("list of several", "list of several", "list of several"),
            (
                ("Marazzi hexagon white", "Mutina grey terrazzo", "Equipe zellige"),
                ("a freestanding Kaldewei", "a walk-in shower", "a Roca corner bath"),
                ("twelve thousand", "nine and a half thousand", "fifteen thousand five hundred"),
            ),
            (
                "Bathroom job, so you have it: tiles are {a}, the tub is {b}, and the client's "
                "ceiling is {c} all in.",
                "bathroom — tiles {a} / {b} / budget {c}",
            ),
            (
                ("Which tiles for the bathroom?", "What goes on the walls of the wet room?"),
                ("What's the tub for the bathroom?", "What will they wash in?"),
                ("What's the bathroom budget?", "How much money is there for the wet room?"),
            ),
            (
                "bathroom: same tiles, same tub, but the client's limit is {new} now",
                "client called — budget {new}, not {old}. rest stays",
            ),
        ),
        Group(
            ("name", "date (relative, in words)"),
            (
                ("Ferdinand Oyelaran-Kraus", "Gustavo Pinheiro", "Mihai Antonescu"),
                ("the Tuesday after next", "a week from Wednesday", "first thing Monday"),
            ),
            (
                "the electrician is {a}, he can come {b}",
                "Sparky: {a}. Available {b}.",
            ),
            (
                ("Who is the electrician?", "Who's doing the wiring?"),
                ("When can the electrician come?", "When can the wiring guy turn up?"),
            ),
            (
                "electrician pushed to {new}, same guy",
                "Sparky's coming {new} now instead of {old}.",
            ),
        ),
    ),
    Split(
        ("Henrike Oosterhuis", "Bernadette Mbeki-Lawson", "Ilse Vandenbroucke"),
        "the client at the barn conversion, I keep forgetting her name, wait",
        ("it's {v}. write it down this time haha", "{v}! that's it"),
        "What's the name of the barn conversion client?",
        "Who owns the farm building we're converting?",
    ),
    Reply(
        ("5th", "4th", "6th"),
        "start the quote for the flat on the hill, the one with the narrow stairs",
        "Sure. Which floor is the flat on? It matters for carrying materials up.",
        ("{v}, no lift", "the {v}. no lift obviously"),
        "Which floor is the hill flat on?",
        "How many flights up is that apartment?",
    ),
)

RECRUITING = AgentFacts(
    (
        F(
            "third person",
            ("on Tuesday afternoons", "before eleven", "on Thursdays after lunch"),
            (
                "Mehmet on the platform team only interviews {v}, he's heads-down otherwise",
                "only book Mehmet {v}, his calendar lies",
            ),
            "When does Mehmet interview?",
            "When can the backend lead sit on a panel?",
        ),
        F(
            "negation",
            ("work visas", "relocation from abroad", "H-1B transfers"),
            (
                "we don't sponsor {v}, so screen for that early",
                "We don't sponsor {v}, company policy this year. Ask in the first call.",
            ),
            "What don't we sponsor?",
            "Which applicants can't we support because of immigration?",
        ),
        F(
            "money in words",
            ("ninety-two thousand", "eighty-seven thousand", "one hundred and four thousand"),
            (
                "the band for senior backend tops out at {v}",
                "Senior backend max is {v}. Don't go above without me.",
            ),
            "Where does the senior backend band top out?",
            "What's the most we can pay an experienced server engineer?",
            restate="senior backend tops out at {v} now",
        ),
        F(
            "name",
            ("Gráinne Ní Bhriain", "Sunniva Kvalheim", "Adaeze Nwankwo-Hart"),
            (
                "my manager is {v}, cc her on offers",
                "Offers get a cc to {v}, my manager.",
            ),
            "Who is my manager?",
            "Whom do I copy on employment letters?",
            restate="my manager is {v} now",
        ),
        F(
            "identifier",
            ("JOB-7741-D", "JOB-3308-D", "JOB-5562-D"),
            (
                "use the job id {v} for the designer role, the old one is closed",
                "designer posting = {v}",
            ),
            "What's the job id for the designer role?",
            "Which reference is for the UX hire's advert?",
        ),
        F(
            "date (relative, in words)",
            ("two weeks on Monday", "the first Monday of next month", "a week tomorrow"),
            (
                "the new analyst starts {v}, laptop needs ordering",
                "Analyst's first day: {v}. IT knows?",
            ),
            "When does the new analyst start?",
            "When does the data hire begin?",
            restate="the analyst starts {v} now",
        ),
        F(
            "preference",
            ("a written summary", "a phone call", "feedback within two days"),
            (
                "I prefer candidates get {v} after every stage",
                "after each round, {v} for the candidate please",
            ),
            "What do I prefer candidates get after every stage?",
            "How should applicants hear how they did?",
            restate="candidates get {v} after each stage now",
        ),
        F(
            "inside a request",
            ("Talent Team Lisboa", "People Ops Nairobi", "Hiring Crew Brno"),
            (
                "send the rejection template, the one signed {v}, to the three from yesterday",
                "Use the decline email signed '{v}' for those two, please.",
            ),
            "How is the rejection template signed?",
            "Whose name closes our turn-down letters?",
        ),
        F(
            "number in words",
            ("twelve", "fourteen", "seventeen"),
            (
                "we have {v} open reqs right now, don't let me forget any",
                "{v} open roles at the moment. it's a lot",
            ),
            "How many open reqs do we have?",
            "How many positions are we hiring for?",
            restate="we're at {v} open reqs now",
        ),
        F(
            "rambling",
            ("Rua Augusta", "Koningsplein", "Wenceslas Square"),
            (
                "ok so long story but the candidate from yesterday, the one who was late, turns "
                "out she went to the old office on {v} because the invite still had that "
                "address, so that's on us, not her. can we fix the template at some point",
            ),
            "Which office was the late candidate at?",
            "Where did the applicant go by mistake?",
        ),
    ),
    (
        Group(
            ("list of several", "list of several", "list of several"),
            (
                ("sixty-four thousand", "fifty-nine thousand", "seventy-one thousand"),
                ("Analyst II", "Senior Analyst", "Analytics Specialist"),
                ("two days remote", "fully remote", "one day remote"),
            ),
            (
                "offer for the analyst, a few things: {a} base, title {b}, {c}",
                "Analyst offer:\n- {a}\n- {b}\n- {c}",
            ),
            (
                ("What base salary is in the analyst offer?", "How much will the data hire earn?"),
                ("What title is on the analyst offer?", "What will the data hire be called?"),
                ("How remote is the analyst offer?", "How much can the data hire work from home?"),
            ),
            (
                "offer: same salary and title but make it {new}",
                "change on the offer — {new} instead of {old}, rest as is",
            ),
        ),
        Group(
            ("name", "money in words"),
            (
                ("Leopoldina Arantes", "Dagfinn Rasmussen", "Ekaterina Volkonskaya"),
                ("eighteen percent", "twenty percent", "a flat nine thousand"),
            ),
            (
                "the agency recruiter is {a}, their fee is {b}",
                "Agency contact {a}; fee {b} of first-year salary or so.",
            ),
            (
                ("Who is the agency recruiter?", "Who's our headhunter?"),
                ("What is the agency fee?", "What do we pay the headhunter per placement?"),
            ),
            (
                "agency fee renegotiated: {new}, same recruiter",
                "fee is {new} now, was {old}",
            ),
        ),
    ),
    Split(
        ("Makena Wairimu-Odhiambo", "Rosário Quintela", "Aino Kärkkäinen"),
        "the candidate for the nurse role — the one everyone loved — what was her name, give me "
        "a sec",
        ("{v}. found the CV", "ok: {v}"),
        "What's the name of the nurse candidate everyone loved?",
        "Who was the favourite applicant for the clinical job?",
    ),
    Reply(
        ("three hours", "ninety minutes", "two and a half hours"),
        "set up the final round for the designer",
        "Will do. How long should the final round be? Then I'll find a slot with the panel.",
        ("{v}, with a break", "{v} i think"),
        "How long is the designer's final round?",
        "How much time do we block for the last interview with the UX hire?",
    ),
)

EVENTS = AgentFacts(
    (
        F(
            "third person",
            ("Odete Carvalhal", "Marjatta Heikkilä", "Ileana Stoicescu"),
            (
                "the bride's mum, {v}, is paying for the flowers so run florist stuff by her",
                "Flowers are paid by {v} (bride's mother) — she gets a say.",
            ),
            "Who is paying for the flowers?",
            "Whose approval do floral choices need?",
        ),
        F(
            "negation",
            ("open bar", "confetti cannons", "pork dishes"),
            (
                "no {v} at the reception, the groom's family is strict about it",
                "We are NOT doing {v} at the reception. Non-negotiable.",
            ),
            "What can't we have at the reception?",
            "What would upset the in-laws?",
        ),
        F(
            "money in words",
            ("forty-five thousand", "thirty-eight thousand", "fifty-two thousand"),
            (
                "the couple's total budget is {v}, everything included",
                "Budget {v} all in. They were firm.",
            ),
            "What is the couple's total budget?",
            "How much can the whole wedding cost?",
            restate="total budget is {v} now",
        ),
        F(
            "date (relative, in words)",
            ("the twelfth of September", "the third Saturday in June", "the nineteenth of July"),
            (
                "the wedding is {v}, so everything works back from there",
                "Wedding date's set: {v}!",
            ),
            "When is the wedding?",
            "What day are they getting married?",
            restate="the date is {v} now",
        ),
        F(
            "place",
            ("São Lourenço chapel", "Kirche St. Katharinen", "Biserica Stavropoleos"),
            (
                "ceremony's at {v}, reception somewhere near",
                "Ceremony at {v}. Reception TBC.",
            ),
            "Where is the ceremony?",
            "Which church is the service in?",
            restate="the ceremony is at {v} now",
        ),
        F(
            "preference",
            ("a string quartet", "a live fado singer", "a steel band"),
            (
                "they want {v} for the first dance",
                "First dance: {v}. Bride cried when she said it lol",
            ),
            "What do they want for the first dance?",
            "What music did the couple ask for when they open the dancing?",
            restate="for the first dance it's {v} now",
        ),
        F(
            "number in words",
            ("a hundred and sixty", "two hundred and twenty", "a hundred and thirty"),
            (
                "they're expecting about {v} people",
                "Guest estimate ~{v} people.",
            ),
            "How many people are they expecting?",
            "What's the expected headcount?",
            restate="we're at about {v} people now",
        ),
        F(
            "inside a question",
            ("Alpine peaks", "national parks", "famous trails"),
            (
                "do you think {v} would work for the table names? the couple met hiking",
                "Would {v} as table names be too cheesy?",
            ),
            "What are we using for the table names?",
            "How are we labelling where people sit?",
        ),
        F(
            "identifier",
            ("VC-2026-4471", "VC-2026-0938", "VC-2026-7715"),
            (
                "the venue contract number is {v}, need it for the insurance",
                "contract no {v} (venue) fyi",
            ),
            "What's the venue contract number?",
            "Which reference does the insurer want for the location?",
        ),
        F(
            "rambling",
            ("her sister Ofelia", "the twins from Braga", "Uncle Kazimierz"),
            (
                "soooo the groom just told me his grandma can't do stairs and also she wants to "
                "sit with {v} or she won't come lol, family politics, can u keep that in mind "
                "for seating",
            ),
            "Who does the groom's grandma want to sit with?",
            "Which relative must the old lady be placed next to?",
        ),
    ),
    (
        Group(
            ("list of several", "list of several", "list of several"),
            (
                ("caldo verde", "gazpacho", "burrata salad"),
                ("sea bass with fennel", "slow-roast lamb", "mushroom risotto"),
                ("pastel de nata tower", "lemon tart", "pavlova"),
            ),
            (
                "Menu's decided, finally: starter {a}, main {b}, and for dessert {c}",
                "menu!! {a} → {b} → {c}",
            ),
            (
                ("What's the starter on the menu?", "What do guests eat first?"),
                ("What's the main on the menu?", "What's the principal course?"),
                ("What's the dessert on the menu?", "What sweet thing closes the meal?"),
            ),
            (
                "menu change, just dessert: {new} instead",
                "dessert is {new} now, not {old}; rest stays",
            ),
        ),
        Group(
            ("name", "time in words"),
            (
                ("Yolanda Mbatha", "Freya Holmberg", "Conceição Arruda"),
                ("at two for the getting-ready shots", "at noon", "an hour before the ceremony"),
            ),
            (
                "the photographer is {a} and she arrives {b}",
                "Photog: {a}, arriving {b}",
            ),
            (
                ("Who is the photographer?", "Who's taking the pictures?"),
                ("When does the photographer arrive?", "When does the camera operator show up?"),
            ),
            (
                "photographer's timing changed: {new}, same person",
                "She's arriving {new} now, not {old}.",
            ),
        ),
    ),
    Split(
        ("Sr. Aurélio Bettencourt", "Frau Gundula Petersen", "Dna. Luminița Ghiță"),
        "the officiant, the one from the civil registry — name's on the tip of my tongue",
        ("{v}!!", "got it, {v}"),
        "What's the officiant's name?",
        "Who from the registry is marrying them?",
    ),
    Reply(
        ("twenty-six", "twenty-three", "twenty-nine"),
        "start the seating plan",
        "Sure. How many tables does the venue have room for?",
        ("{v}, round ones", "{v} max"),
        "How many tables does the venue have room for?",
        "What's the limit on how many we can set up in the hall?",
    ),
)

ONCALL = AgentFacts(
    (
        F(
            "third person",
            ("the billing cron", "the CDN config", "the ledger replicas"),
            (
                "Kofi owns {v}, page him not me if it breaks",
                "if {v} acts up that's Kofi's, not mine",
            ),
            "What does Kofi own?",
            "Which part of the stack is somebody else's to get woken up for?",
        ),
        F(
            "negation",
            ("Fridays after noon", "the last day of the quarter", "public holidays"),
            (
                "we never deploy on {v}, hard rule",
                "Never deploy {v}. I don't care how small.",
            ),
            "When do we never deploy?",
            "When are releases forbidden?",
            restate="no deploys on {v} now",
        ),
        F(
            "number in words",
            ("three nines", "ninety-nine point five", "four nines"),
            (
                "our SLO is {v}, don't let the status page say otherwise",
                "SLO = {v} availability, monthly",
            ),
            "What is our SLO?",
            "What uptime target did we promise?",
            restate="SLO is {v} now",
        ),
        F(
            "identifier",
            ("meet.example/zq-ptoa-kex", "meet.example/hrw-ndjq-vyb", "meet.example/lla-xmfe-tcs"),
            (
                "the war room bridge is {v}",
                "bridge link: {v} — pin it",
            ),
            "What's the war room bridge?",
            "Where do we all join the call during an outage?",
        ),
        F(
            "name",
            ("Ruairí Ó Ceallaigh", "Pernille Østergaard", "Babajide Olatunji"),
            (
                "the incident commander this week is {v}",
                "IC this week: {v}. Loop them in on anything sev2+",
            ),
            "Who is the incident commander this week?",
            "Who's running the response if things go wrong?",
            restate="the incident commander this week is {v}",
        ),
        F(
            "time in words",
            ("half past ten", "twenty past eleven", "quarter to eleven"),
            (
                "my shift ends at {v}, hand over to the EU side after",
                "shift ends at {v} tonight, the EU folks take over",
            ),
            "When does my shift end?",
            "At what hour do I stop being on duty?",
            restate="my shift ends at {v} now",
        ),
        F(
            "preference",
            ("#inc-bridge", "#sev-room", "#ops-live"),
            (
                "post updates to {v}, not DMs",
                "updates go in {v} please, people follow it there",
            ),
            "Where should updates be posted?",
            "Where do we broadcast progress during outages?",
            restate="updates go to {v} now",
        ),
        F(
            "date (relative, in words)",
            ("next Wednesday at ten", "the Thursday after the freeze", "in a fortnight"),
            (
                "the postmortem review is {v}",
                "PM review {v}, put it in the doc",
            ),
            "When is the postmortem review?",
            "When do we go over what went wrong?",
            restate="the postmortem review moved to {v}",
        ),
        F(
            "inside a request",
            ("checkout-api-7f9c-2", "auth-svc-55d4-0", "edge-proxy-91ab-3"),
            (
                "restart the pods but skip {v}, that one's pinned for the debug session",
                "bounce every pod except {v} pls (debugging on it)",
            ),
            "Which pod did I say to skip?",
            "Which container must stay untouched for troubleshooting?",
        ),
        F(
            "rambling",
            ("DiskPressureWarning", "QueueDepthHigh", "NodeNotReadyBrief"),
            (
                "ok context since ur new to this: every time {v} fires it's a false positive "
                "because of the nightly batch, so dont wake anyone for it, just ack and look in "
                "the morning. took us months to figure that out, the old runbook is wrong",
            ),
            "Which alert is a false positive?",
            "Which warning can be safely ignored overnight?",
        ),
    ),
    (
        Group(
            ("list of several", "list of several", "list of several"),
            (
                ("db-fra-1", "db-ams-3", "db-waw-2"),
                ("db-dub-2", "db-mad-1", "db-hel-4"),
                ("about ninety seconds", "four to five minutes", "just under two minutes"),
            ),
            (
                "for the failover runbook, a few things: primary is {a}, standby is {b}, and "
                "failover takes {c}",
                "failover facts:\nprimary {a}\nstandby {b}\nduration {c}",
            ),
            (
                ("Which is the primary in the failover runbook?", "Where does the database run?"),
                ("Which is the standby in the failover runbook?", "What's the replica we flip to?"),
                ("How long does failover take?", "How quickly does the database switch over?"),
            ),
            (
                "failover: same primary and standby, but it takes {new} now after the upgrade",
                "runbook fix: failover is {new}, not {old}",
            ),
        ),
        Group(
            ("name", "preference"),
            (
                ("Thaddeus Mwangi", "Signe Lauritsen", "Anh Đào Trương"),
                ("by personal mobile", "through the pager app only", "by phone after nine"),
            ),
            (
                "escalation after me is {a}, reachable {b}",
                "next in line: {a} ({b})",
            ),
            (
                ("Who is escalation after me?", "Who takes over if I can't handle it?"),
                ("How is the escalation reachable?", "How do we contact the backup?"),
            ),
            (
                "escalation: same person, but reach them {new} now",
                "{new} now, not {old}, for the backup",
            ),
        ),
    ),
    Split(
        ("+351 21 780 4411", "+49 89 2019 7730", "+40 21 313 6602"),
        "the vendor support number for the load balancer, I have it somewhere, hang on",
        ("{v}, 24/7 line", "here: {v}"),
        "What's the vendor support number for the load balancer?",
        "Whom do we ring when the traffic distributor misbehaves?",
    ),
    Reply(
        ("twelve hundred", "three thousand four hundred", "eight hundred and fifty"),
        "write the customer-facing status update",
        "Sure. Roughly how many customers were affected? I'll put it in the summary line.",
        ("{v}, maybe a bit more", "around {v}"),
        "How many customers were affected?",
        "How big was the blast radius in people?",
    ),
)

#: By agent name (agents.py), in the agents' order.
BY_AGENT: dict[str, AgentFacts] = {
    "clinic scheduling": CLINIC,
    "renovation contractor": RENOVATION,
    "recruiting": RECRUITING,
    "event planning": EVENTS,
    "on-call incident": ONCALL,
}

#: Corrections that say so: ``{old}``/``{new}`` the values, ``{restated}`` the fact restated
#: with the new value. Some name the old value, some do not.
MARKED: tuple[str, ...] = (
    "wait, I got that wrong — {restated}",
    "Correction: {restated}, not {old}.",
    "scratch {old}. {new}",
    "sorry my bad, {restated}",
    "Small update: {restated}.",
    "ah no, it's {new}. I said {old} earlier but that's outdated",
    "change of plan — {restated}",
    "Desculpa, enganei-me: {restated}.",
    "oops, {restated}. ignore what i said before",
    "Pardon, petite correction : {restated}.",
)

#: A new value stated as if it were the first time, with no word that it changed.
UNMARKED: tuple[str, ...] = (
    "{restated}",
    "{restated}, fyi",
    "just so you have it: {restated}",
    "ok so {restated}. can you update whatever needs updating",
    "{restated} — put that in the notes",
)

#: A correction of a correction: ``{old}`` the first value, ``{middle}`` the second.
RECORRECTIONS: tuple[str, ...] = (
    "ugh, changed again: {restated}. forget {old} and {middle}",
    "final final answer: {restated}",
    "Not {middle} after all — {restated}.",
    "turns out it's {new}. sorry for the back and forth",
)
