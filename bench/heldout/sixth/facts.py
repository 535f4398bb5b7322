"""What users of the sixth set say about themselves, in the shapes real users say it: in
passing in a long ramble, dictated by voice without punctuation, switching language
mid-sentence, numbers and dates in many formats, names in many scripts, inside a request,
as a reply to the assistant's proposal, and inside pasted Slack threads, YAML and CSV.

Every fact is labelled by how it is said (its ``kind``), every correction by how it is made
(its ``style``), every later question by what it asks about."""

from __future__ import annotations

from dataclasses import dataclass

from bench.heldout.sets import Frame

# How a fact is said.
PLAIN = "plain statement"
RAMBLING = "in passing, mid-ramble"
VOICE = "voice-dictated, unpunctuated"
SWITCH = "code-switched mid-sentence"
NUMBER = "number in an odd format"
WHEN = "date or time in an odd format"
SCRIPT = "name in another script"
REQUEST = "inside a request"
REPLY = "reply to the assistant's proposal"
SLACK = "in a pasted Slack thread"
YAML = "in a pasted YAML config"
CSV = "in a pasted CSV"

# How a correction is made.
MARKED = "marked"
UNMARKED = "unmarked"
FAR = "100+ turns later"
OTHER_LANGUAGE = "in another language"
PARTIAL = "one field of a paste"
RETRACTED = "retracted"
REPEATED = "said twice"
SCRATCH = "scratch that, same message"
CONFIRMED = "assistant's, user confirms"
CHAIN = "corrected twice"

# What a later question asks about.
Q_FACT = "user's detail"
Q_CORRECTED = "user's corrected detail"
Q_PASTED = "inside pasted material"
Q_ASSISTANT = "what the assistant said"
Q_TOOL = "what a tool returned"


RAMBLE_OPEN = (
    "ok so long story but bear with me, the week has been chaos, the kids had a bug, the "
    "boiler made that noise again and I spent an hour on hold with the landlord, ",
    "sorry this is going to be a wall of text because I'm on the train and have time, I "
    "keep meaning to tell you things and then forgetting, so, ",
    "right, brain dump before I forget everything: I was at my sister's on Sunday and we "
    "ended up talking about work for way too long which is my own fault, anyway ",
)
RAMBLE_CLOSE = (
    ", and then of course the meeting ran over and nobody had read the doc, which, fine, "
    "it's Thursday, nobody reads anything on a Thursday. anyway that's my life. carry on",
    ". also I need to buy a new charger because the cat chewed through the old one and I "
    "refuse to pay forty quid for the official one, but that's not your problem",
    " — not urgent, just so it's somewhere. the rest of the week is meetings and me "
    "pretending to be on top of my inbox, which I am absolutely not",
)

SINGLES: dict[str, tuple[Frame, ...]] = {
    PLAIN: (
        Frame(
            PLAIN,
            ("Okonkwo & Brandt", "Halvorsen Partners", "Lisgar Accountancy"),
            ("Our accountants are {v}.", "We use {v} for the books, fyi."),
            "Who are our accountants?",
            "Which firm does the bookkeeping for us?",
            restate="the accountants are {v}",
        ),
        Frame(
            PLAIN,
            ("Thinkpad X13 Gen 4", "Framework 13 DIY", "Dell Latitude 7440"),
            ("My work laptop is a {v}.", "Running all this on a {v} btw."),
            "Which laptop do I work on?",
            "What machine am I typing on all day?",
            restate="my laptop is a {v}",
        ),
        Frame(
            PLAIN,
            ("Rosalind Achterberg", "Teodor Wisłocki", "Maureen Castellanos"),
            ("{v} signs off anything over budget.", "Sign-off on overspend is {v}."),
            "Who signs off the over-budget stuff?",
            "If we spend more than planned, whose approval do we need?",
            restate="sign-off on overspend is {v}",
        ),
        Frame(
            PLAIN,
            ("Marigold Street depot", "Fenwick Yard", "Quayside unit 9"),
            ("Parcels go to the {v}, not the house.", "Deliveries to {v} please."),
            "Where do parcels get delivered?",
            "Where should anything ordered be sent?",
            restate="parcels go to the {v}",
        ),
    ),
    RAMBLING: (
        Frame(
            RAMBLING,
            ("Aunt Philippa", "Uncle Torsten", "cousin Ilaria"),
            (
                "{open}oh and {v} is house-sitting while we're away so they have the spare "
                "keys{close}",
            ),
            "Who is house-sitting while we're away?",
            "Who has the spare keys to our place?",
            restate="{v} is house-sitting, not who I said",
        ),
        Frame(
            RAMBLING,
            ("shellfish allergy", "sesame allergy", "kiwi allergy"),
            ("{open}the other thing is I have a {v}, found out the hard way last year{close}",),
            "What allergy do I have?",
            "Is there anything I mustn't eat?",
            restate="it's a {v}, I mixed it up",
        ),
        Frame(
            RAMBLING,
            ("Wednesdays after six", "Tuesday lunchtimes", "Friday mornings before ten"),
            ("{open}I can only really do calls {v} this month because of the school run{close}",),
            "When can I do calls this month?",
            "What's my availability for a chat?",
            restate="calls only {v}",
        ),
        Frame(
            RAMBLING,
            ("the Brompton", "the cargo bike", "the old Peugeot"),
            ("{open}I'm commuting on {v} now since the bus route changed{close}",),
            "How am I commuting these days?",
            "How do I get to work now?",
            restate="commuting on {v} now",
        ),
    ),
    VOICE: (
        Frame(
            VOICE,
            ("gate forty two", "gate thirty seven", "gate nineteen"),
            (
                "ok so the pickup is at {v} tell the driver that ok thanks",
                "note that my brother will wait at {v} when we land",
            ),
            "Which gate is the pickup at?",
            "Where will my brother be waiting when we land?",
            restate="pickup is {v}",
        ),
        Frame(
            VOICE,
            ("pinecrest dental", "harbourside dental", "elm row dental"),
            (
                "my dentist is {v} in case you need to move the appointment",
                "the appointment is with {v} not the other one",
            ),
            "What's my dentist called?",
            "Where's the tooth appointment?",
            restate="the dentist is {v}",
        ),
        Frame(
            VOICE,
            (
                "blue folder under the desk",
                "second drawer of the filing cabinet",
                "shoebox in the loft",
            ),
            (
                "the old receipts are in the {v} if anyone asks",
                "remember the warranty papers are in the {v} thanks",
            ),
            "Where are the old receipts kept?",
            "If I need proof of purchase where do I look?",
            restate="receipts are in the {v}",
        ),
        Frame(
            VOICE,
            ("thirty one degrees", "twenty eight degrees", "thirty four degrees"),
            (
                "dont book anything outdoors if its over {v} i melt",
                "my limit for outdoor stuff is {v} keep that in mind",
            ),
            "Over what temperature should outdoor stuff be avoided?",
            "How hot is too hot for me?",
            restate="the limit is {v}",
        ),
    ),
    SWITCH: (
        Frame(
            SWITCH,
            ("Baustelle Nordring", "Bahnhof Altona", "Messe Süd"),
            (
                "meeting is at {v}, weil das Büro renoviert wird, so not the usual place",
                "treffen wir uns bei {v}? yeah let's say that's the spot",
            ),
            "Where is the meeting, not the usual place?",
            "Where are we getting together instead of the office?",
            restate="we meet at {v}",
        ),
        Frame(
            SWITCH,
            ("mi abuela Remedios", "la señora Etxeberria", "mi tía Consuelo"),
            (
                "the emergency contact es {v}, she speaks only Spanish",
                "si pasa algo call {v} first",
            ),
            "Who is the emergency contact?",
            "If something happens, who do you phone first?",
            restate="emergency contact es {v}",
        ),
        Frame(
            SWITCH,
            ("Rue des Tanneurs", "Quai Saint-Vincent", "Place Bellecour"),
            (
                "le rendez-vous c'est {v}, just so you know where to send the cab",
                "the flat is on {v}, c'est au troisième",
            ),
            "Where's the flat?",
            "Where should the cab go to?",
            restate="c'est {v}",
        ),
        Frame(
            SWITCH,
            ("Kazuki-san", "Sakamoto-sensei", "Hirano-buchō"),
            ("the report goes to {v}, 来週の月曜までに", "{v} に送ってね, he's the reviewer now"),
            "Who does the report go to?",
            "Who's reviewing it now?",
            restate="it goes to {v}",
        ),
    ),
    NUMBER: (
        Frame(
            NUMBER,
            ("1.5k a month", "2.2k a month", "950 a month"),
            ("rent is {v}, bills on top", "we pay {v} for the flat"),
            "How much is the rent?",
            "What does the flat cost us?",
            restate="rent is {v}",
        ),
        Frame(
            NUMBER,
            ("¥12 000", "¥18 500", "¥9 800"),
            ("the ryokan deposit was {v}, paid on the card", "put {v} down for the ryokan deposit"),
            "How big was the ryokan deposit?",
            "What did we pay up front for the Japanese inn?",
            restate="the deposit was {v}",
        ),
        Frame(
            NUMBER,
            ("€2.340,50", "€1.875,25", "€3.120,00"),
            ("the quote from the builder came in at {v}", "builder says {v} all in"),
            "What did the builder quote?",
            "How much will the works cost?",
            restate="the quote is {v}",
        ),
        Frame(
            NUMBER,
            ("CHF 85/h", "CHF 110/h", "CHF 72/h"),
            ("the freelancer charges {v}", "our designer's rate is {v}"),
            "What's the freelancer's rate?",
            "How expensive is the designer per hour?",
            restate="the rate is {v}",
        ),
    ),
    WHEN: (
        Frame(
            WHEN,
            ("quarter past four", "twenty to six", "half seven"),
            ("the kids finish at {v} on Fridays", "pickup from school is {v}"),
            "When do the kids finish on Fridays?",
            "What time is the school collection?",
            restate="they finish at {v}",
        ),
        Frame(
            WHEN,
            ("2026-04-17", "2026-05-09", "2026-06-02"),
            ("the visa expires {v}", "visa valid until {v}"),
            "When does the visa expire?",
            "Until what day am I allowed to stay?",
            restate="the visa expires {v}",
        ),
        Frame(
            WHEN,
            ("the 3rd", "the 22nd", "the 29th"),
            ("salary lands on {v} of each month", "payday is {v}"),
            "When does salary land?",
            "On what day of the month am I paid?",
            restate="payday is {v}",
        ),
        Frame(
            WHEN,
            ("end of Q3", "mid-November", "first week of March"),
            ("the lease renewal is due by {v}", "need to renew the lease by {v}"),
            "When is the lease renewal due?",
            "By when must we sort out the flat contract?",
            restate="renewal by {v}",
        ),
    ),
    SCRIPT: (
        Frame(
            SCRIPT,
            ("Δημήτρης Παπαδάκης", "Σταυρούλα Κωνσταντίνου", "Ηλίας Μαυρίδης"),
            ("the landlord is {v}", "our landlord, {v}, prefers email"),
            "Who's the landlord?",
            "Whose flat do we rent?",
            restate="the landlord is {v}",
        ),
        Frame(
            SCRIPT,
            ("Ярослава Мельник", "Всеволод Орлов", "Людмила Зайцева"),
            ("my co-author is {v}", "co-authoring with {v} on this one"),
            "Who is my co-author?",
            "Who am I writing the paper with?",
            restate="co-author is {v}",
        ),
        Frame(
            SCRIPT,
            ("नंदिनी अय्यर", "रघुवीर सक्सेना", "इंदिरा बाजपेयी"),
            ("the new tenant is {v}", "{v} takes over the flat from April"),
            "Who is the new tenant?",
            "Who moves into the flat in April?",
            restate="the tenant is {v}",
        ),
        Frame(
            SCRIPT,
            ("박서연", "정우진", "윤하늘"),
            ("my manager now is {v}", "I report to {v} since the reorg"),
            "Who is my manager now?",
            "Who do I report to after the reorg?",
            restate="my manager is {v}",
        ),
        Frame(
            SCRIPT,
            ("יונתן אברמוביץ", "רבקה שטרן", "אליעזר כהנא"),
            ("the notary is {v}", "we'll sign at {v}'s office"),
            "Who's the notary?",
            "At whose office are we signing?",
            restate="the notary is {v}",
        ),
    ),
    REQUEST: (
        Frame(
            REQUEST,
            ("the Lindenhof room", "the Atrium room", "the Boathouse room"),
            (
                "can you remind the team that retro is in {v} now",
                "could you tell everyone standup moved to {v}?",
            ),
            "Where's the team retro held now?",
            "Which space do we meet in for standup these days?",
            restate="it's {v}",
        ),
        Frame(
            REQUEST,
            ("Ngozi Adebayo-Brandt", "Friedrich Ostrowski-Lee", "Aoife Ní Bhraonáin"),
            (
                "please cc {v} on everything to do with the move",
                "add {v} to the thread, she owns the move now",
            ),
            "Who should be cc'd on the move?",
            "Who owns the house move now?",
            restate="cc {v}",
        ),
        Frame(
            REQUEST,
            ("vegetarian but eats fish", "vegan and gluten-free", "halal"),
            (
                "can you make sure the caterer knows my partner is {v}",
                "when you book dinner, note my partner is {v}",
            ),
            "What does my partner eat?",
            "Any diet I should tell the restaurant about?",
            restate="my partner is {v}",
        ),
    ),
}

RESTATED_SAYINGS = {
    MARKED: (
        "actually, correction: {restated}",
        "sorry, got that wrong earlier — {restated}",
        "wait no. {restated}. my mistake",
    ),
    UNMARKED: ("{restated}", "fyi {restated}", "btw {restated}"),
    OTHER_LANGUAGE: (
        "perdón, me equivoqué: {restated}",
        "Korrektur, mein Fehler: {restated}",
        "実は間違えました: {restated}",
        "desculpa, corrigindo: {restated}",
    ),
    REPEATED: ("heads up, {restated}", "change of plan: {restated}"),
}
REPEAT_AGAIN = (
    "saying it again so it sticks: {restated}",
    "just repeating in case it got lost — {restated}",
)
CHAIN_SAYINGS = (
    "ugh it changed again, {restated} (not {middle} any more)",
    "update on the update: {restated}, forget {middle}",
)
RETRACT_SAYINGS = (
    "ignore my last change, it's {old} after all",
    "scrap that correction — back to {old}",
    "no sorry, I was right the first time: {old}",
)
SCRATCH_SAYINGS = (
    "{said} — no wait scratch that, {restated}",
    "{said}... hm no, {restated}",
)
CONFIRM_PROPOSALS = (
    "Before I go on: the documents you shared earlier suggest {restated}, which isn't what I "
    "had noted. Should I update it?",
    "One thing looks off — the latest email in the thread says {restated}. Want me to use that?",
)
CONFIRM_REPLIES = ("yes, go with that", "oh yes you're right, use that one", "yep good catch")
CONFIRM_PROMPTS = (
    "can you double check what I told you against the docs",
    "sanity check my notes pls",
)


@dataclass(frozen=True)
class Reply:
    """The assistant proposes options (each in its own words, never the user's); the user
    picks one in few words."""

    proposal: str
    request: str
    values: tuple[str, ...]
    replies: tuple[str, ...]
    ask_shared: str
    ask_other: str


REPLIES = (
    Reply(
        "I can get you in on Thu 14/05 at 09:40 or Sat 16/05 at 11:00 — which do you prefer?",
        "can you find a slot for the physio",
        ("the 14th", "the 16th"),
        ("yes {v} works", "{v} pls", "{v}, the other one clashes"),
        "Which day did I pick for the physio?",
        "When's my back treatment?",
    ),
    Reply(
        "Two options for the rental car: a compact (Fiat 500 class) or an estate (Octavia "
        "class). Which one?",
        "sort out a car for the trip",
        ("the estate", "the compact"),
        ("{v}, we have luggage", "go for {v}"),
        "Which car class did I choose?",
        "What kind of rental vehicle are we getting?",
    ),
    Reply(
        "For the standing order I can set day 1 or day 15 of the month. Which?",
        "set up the savings transfer",
        ("the 1st", "the 15th"),
        ("{v} is better", "{v}, right after payday-ish"),
        "On which day does the savings transfer go?",
        "When each month does money move to savings?",
    ),
)


@dataclass(frozen=True)
class Pasted:
    """A pasted text with two details, each with its two questions and its field's name."""

    kind: str
    texts: tuple[str, ...]
    values: tuple[tuple[str, ...], tuple[str, ...]]
    asks: tuple[tuple[str, str], tuple[str, str]]
    #: How a partial correction names each field: "{v}" stands for the new value.
    fields: tuple[str, str]


PASTED = (
    Pasted(
        SLACK,
        (
            "pasting from slack so you have it:\n\n**Mirela** 10:42\nok who's on the "
            "vendor call?\n**Tomasz** 10:43\nme, and the vendor contact is {a}\n**Mirela** "
            "10:44\n👍 and the contract number?\n**Tomasz** 10:44\n{b}\n**Mirela** 10:45\n"
            "thx :pray:",
            "from #ops-chat, fyi\n[09:12] jun.w: anyone know the vendor?\n[09:13] "
            "dana.k: {a} handles our account\n[09:15] jun.w: contract?\n[09:15] dana.k: "
            "{b} — renewed last month\n[09:16] jun.w: ty",
        ),
        (
            ("Genoveva Tranquilli", "Bartholomew Asante", "Sigrún Hallgrímsdóttir"),
            ("MSA-2291-K", "MSA-4408-P", "MSA-7153-R"),
        ),
        (
            (
                "Who is the vendor contact from the Slack thread?",
                "Who do we deal with at the supplier?",
            ),
            (
                "What's the vendor contract number?",
                "Which agreement reference covers the supplier?",
            ),
        ),
        ("the vendor contact is {v}", "the contract number is {v}"),
    ),
    Pasted(
        YAML,
        (
            "this is our deploy config, keep it handy:\n\n```yaml\nservice: ledger\nowner: "
            "{a}\nscaling:\n  min: 2\n  max: 8\nalerts:\n  channel: '{b}'\n```",
            "config we agreed on:\n```\nowner: {a}\nnotify: {b}\nretries: 3\n```",
        ),
        (
            ("team-kestrel", "team-marlin", "team-ibis"),
            ("#pager-ledger-west", "#pager-ledger-east", "#pager-ledger-north"),
        ),
        (
            ("Which team owns the ledger service in the config?", "Who's responsible for ledger?"),
            ("Which alerts channel is in the config?", "Where do pages for ledger get posted?"),
        ),
        ("owner is {v}", "alerts go to {v}"),
    ),
    Pasted(
        CSV,
        (
            "here's the guest list export\n\nname,role,table\nHelga Brunnhilde,host,1\n{a},"
            "best man,1\nPiet Zwanenburg,guest,4\n\nand the venue booking ref is {b}",
            "csv from the sheet:\nitem,who,ref\nvenue,{a},{b}\nflowers,Dorota,-\ncake,me,-",
        ),
        (
            ("Leopold Mbeki-Larsson", "Caspian Oyelowo", "Dariusz Hollandt"),
            ("VEN-88213", "VEN-61904", "VEN-37756"),
        ),
        (
            (
                "Who's on the guest list as best man / the venue person?",
                "Who did we put down next to the venue?",
            ),
            ("What's the venue booking ref?", "What reference did the hall give us?"),
        ),
        ("{v} instead, in that list", "the venue ref is {v}"),
    ),
)
PARTIAL_SAYINGS = (
    "one change to what I pasted: {field}, everything else stands",
    "small fix in that paste — {field}",
)
