"""The things a user says about themselves, their people and their work: each frame is one
kind of detail, a few ways of saying it (several languages, terse to rambling), the questions
a user asks about it later (one sharing a word with the statement, one in other words), and
how it reads restated, which is what a correction says.

Values are chosen so that nothing else a session says contains them: the scorer finds a fact
by its value, so a value that also turned up in a log line would be found by accident.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    statement: str
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class Frame:
    kind: str
    values: tuple[str, ...]
    variants: tuple[Variant, ...]
    #: The fact restated with ``{v}``; set for facts a user may later correct.
    restate: str | None = None


V = Variant

FRAMES: tuple[Frame, ...] = (
    Frame(
        "name",
        ("Zoë Lindqvist", "Björn Åkesson", "Małgorzata Wiśniewska", "Thị Hương Nguyễn"),
        (
            V(
                "My manager is {v}, who signs off on every release.",
                "Who signs off on releases, remind me?",
                "Whose approval do I need before shipping something?",
            ),
            V(
                "fyi {v} is my manager now so loop them in on approvals",
                "who's my manager these days?",
                "Who is my boss right now?",
            ),
            V(
                "Mi jefa se llama {v} y aprueba todos los despliegues.",
                "Who approves deployments for me?",
                "Whose approval do I need before shipping something?",
            ),
        ),
        restate="my manager is {v}",
    ),
    Frame(
        "name",
        ("李明远", "Αθηνά Παπαδοπούλου", "Дмитрий Соколов", "佐藤 健太", "김지수"),
        (
            V(
                "The vendor contact for the payment gateway is {v}.",
                "Who's our contact at the payment gateway vendor?",
                "Whom should I email about the card-processing outage?",
            ),
            V(
                "Our contact at the payment provider: {v} (prefers email, not calls).",
                "who was our contact at the payment provider",
                "Whom should I email about the card-processing outage?",
            ),
        ),
        restate="the payment gateway contact is {v}",
    ),
    Frame(
        "place",
        ("Tromsø", "Łódź", "Cluj-Napoca", "Valparaíso", "Bydgoszcz"),
        (
            V(
                "I live in {v} these days, so my mornings are your evenings.",
                "Remind me which city I said I live in?",
                "What's my home town, as far as you know?",
            ),
            V(
                "i moved to {v} last spring and the wifi here is terrible",
                "where did I say I moved to?",
                "What's my home town, as far as you know?",
            ),
        ),
        restate="I'm living in {v} now",
    ),
    Frame(
        "place",
        ("Sintra", "Ljubljana", "Hallstatt", "Brașov", "Ericeira"),
        (
            V(
                "The team offsite is going to be in {v} this year.",
                "Where's the offsite happening?",
                "Which town are we all travelling to for the retreat?",
            ),
            V(
                "btw offsite will be in {v}, booking hotels next week",
                "where is the offsite again",
                "Which town are we all travelling to for the retreat?",
            ),
        ),
        restate="the offsite is in {v}",
    ),
    Frame(
        "relation",
        ("Kwame Asante", "Ingrid Solberg", "Tadeusz Nowicki", "Oluwaseun Bello"),
        (
            V(
                "{v} is my brother-in-law and handles the tax filings for us.",
                "What's my brother-in-law called?",
                "Who does our taxes, family-wise?",
            ),
            V(
                "my cousin {v} is the one who designed the logo, just so you know",
                "who designed the logo?",
                "Which relative of mine made our brand mark?",
            ),
            V(
                "Mon cousin {v} s'occupe de la comptabilité de la boutique.",
                "Who is my cousin that does the bookkeeping?",
                "Which relative of mine keeps the shop's accounts?",
            ),
        ),
    ),
    Frame(
        "preference",
        ("Helix", "Kakoune", "Sublime Text"),
        (
            V(
                "I write everything in {v}, so give me keybindings for that, not VS Code.",
                "Which editor do I write everything in?",
                "What text editor am I on?",
            ),
            V(
                "whenever you suggest shortcuts assume {v} please",
                "what do you assume when suggesting shortcuts for me?",
                "What text editor am I on?",
            ),
        ),
    ),
    Frame(
        "preference",
        ("pescatarian", "vegan", "strictly halal"),
        (
            V(
                "For the team dinner: I'm {v}, the others eat anything.",
                "What did I say about the team dinner for me?",
                "What food restrictions should the caterer know I have?",
            ),
            V(
                "just so it's written down somewhere, I'm {v}",
                "What did I want written down about my eating?",
                "What food restrictions should the caterer know I have?",
            ),
        ),
    ),
    Frame(
        "constraint",
        ("Fridays", "Mondays", "Wednesdays"),
        (
            V(
                "Hard rule: no production deploys on {v}. On-call is just me then.",
                "Which day did I ban production deploys on?",
                "When am I not allowed to ship to prod?",
            ),
            V(
                "never push to prod on {v}, please, ever",
                "which day should we never push to prod?",
                "When am I not allowed to ship to prod?",
            ),
        ),
        restate="no production deploys on {v}",
    ),
    Frame(
        "constraint",
        (
            "four thousand two hundred euros",
            "nine hundred and fifty dollars",
            "twelve thousand kroner",
        ),
        (
            V(
                "The cloud bill has to stay under {v} a month, finance is strict about it.",
                "What's the monthly cap on the cloud bill?",
                "How much can we spend on hosting each month?",
            ),
            V(
                "finance says max {v} per month for cloud, no exceptions",
                "what did finance set as the max for cloud?",
                "How much can we spend on hosting each month?",
            ),
        ),
        restate="the cloud bill cap is {v} a month",
    ),
    Frame(
        "owner",
        # A Turkish name keeps its dotless i: normalising it away would lose the name.
        ("Dagrun Eik", "Tomasz Wójcik", "Ayşe Yıldız", "Nnamdi Okafor", "Inés Castellanos"),  # noqa: RUF001
        (
            V(
                "The billing-export service belongs to {v}'s team.",
                "Whose team does the billing-export service belong to?",
                "Who should I ping when invoices stop going out?",
            ),
            V(
                "Ownership of the ledger cron sits with {v}.",
                "Who has ownership of the ledger cron?",
                "Who should I ask about the nightly accounting job?",
            ),
        ),
        restate="the billing-export service is owned by {v}",
    ),
    Frame(
        "owner",
        ("Émilie Durand", "Oğuz Kaplan", "Siobhán Ní Bhriain"),
        (
            V(
                "The on-call pager for payments is carried by {v} this month.",
                "Who carries the payments pager this month?",
                "If card charges start failing at night, who gets woken up?",
            ),
            V(
                "payments pager this month = {v}",
                "who has the payments pager",
                "If card charges start failing at night, who gets woken up?",
            ),
        ),
        restate="the payments pager is with {v}",
    ),
    Frame(
        "request",
        ("Kilimanjaro", "Aurora", "Matterhorn"),
        (
            V(
                "can you remind the team that the demo moved to the {v} room?",
                "Which room did the demo move to?",
                "Where do people need to go for the showcase?",
            ),
            V(
                "Please add to the standup notes that the demo is now in the {v} room.",
                "what room is the demo in now?",
                "Where do people need to go for the showcase?",
            ),
        ),
        restate="the demo is in the {v} room",
    ),
    Frame(
        "request",
        ("Priyanka Raghunathan", "Fenna de Vries", "Yolanda Mbeki"),
        (
            V(
                "Could you draft a note to {v} — our new DPO — about log retention?",
                "Who's our new DPO?",
                "Who is responsible for privacy compliance here?",
            ),
            V(
                "pls write something short for {v} (new data protection officer) on retention",
                "who is the new data protection officer?",
                "Who is responsible for privacy compliance here?",
            ),
        ),
    ),
    Frame(
        "question",
        ("ThinkPad X13s", "Framework 13", "Pinebook Pro"),
        (
            V(
                "Since my laptop is a {v}, will the ARM build even work for me?",
                "What laptop do I have?",
                "Which machine am I developing on?",
            ),
            V(
                "does the installer support the {v}? that's what I'm on",
                "what am I on, hardware-wise — which one did I say?",
                "Which machine am I developing on?",
            ),
        ),
    ),
    Frame(
        "deadline",
        ("the end of next quarter", "the second week of March", "two days before Easter"),
        (
            V(
                "We need the database migration finished by {v}.",
                "When is the database migration due?",
                "What's our target date for moving off the old storage?",
            ),
            V(
                "the migration deadline is {v}, we can't slip that",
                "what's the migration deadline?",
                "What's our target date for moving off the old storage?",
            ),
        ),
        restate="the migration is due by {v}",
    ),
    Frame(
        "number",
        ("thirty-two", "forty-eight", "seventeen"),
        (
            V(
                "The staging cluster has {v} nodes, in case it matters for sizing.",
                "How many nodes does the staging cluster have?",
                "What's the size of the pre-prod fleet?",
            ),
            V(
                "staging is {v} nodes btw",
                "how big is staging",
                "What's the size of the pre-prod fleet?",
            ),
        ),
        restate="staging has {v} nodes",
    ),
    Frame(
        "rambling",
        ("Clermont-Ferrand", "Aix-en-Provence", "Poitiers", "Annecy"),
        (
            V(
                "ok so basically my sister runs a bakery in {v} and she wants the booking widget"
                " on her site too which is why i keep asking about the calendar api she gets like"
                " three hundred orders a week and the current thing keeps double booking people",
                "where's my sister's bakery?",
                "Which town is the family shop in?",
            ),
        ),
    ),
    Frame(
        "rambling",
        ("Maple", "Biscuit", "Pretzel"),
        (
            V(
                "sorry for the slow replies today the cat knocked my monitor off the desk again"
                " her name is {v} and she has zero respect for hardware so if i go quiet that is"
                " probably why",
                "What's my cat called?",
                "What is the name of my pet?",
            ),
        ),
    ),
    Frame(
        "language",
        ("Garbanzo", "Pimienta", "Chispa"),
        (
            V(
                "Mi perro se llama {v} y le dan miedo las tormentas.",
                "What's the name of my perro?",
                "What is my dog called?",
            ),
        ),
    ),
    Frame(
        "language",
        ("Graz", "Linz", "Innsbruck"),
        (
            V(
                "Unsere Buchhaltung sitzt in {v}, die brauchen die Rechnungen bis zum Fünften.",
                "Where is our Buchhaltung?",
                "Where is our accounting department based?",
            ),
        ),
        restate="die Buchhaltung sitzt jetzt in {v}",
    ),
    Frame(
        "language",
        ("Scaleway", "OVHcloud", "Hetzner"),
        (
            V(
                "Le serveur de secours est hébergé chez {v}, pas chez nous.",
                "Who hosts the serveur de secours?",
                "Which provider runs our fallback machine?",
            ),
        ),
    ),
    Frame(
        "language",
        ("大阪", "札幌", "福岡"),
        (
            V(
                "来週の金曜日に{v}へ出張します。",
                "Where is my 出張 next week?",
                "Which city am I travelling to next week?",
            ),
        ),
    ),
    Frame(
        "language",
        ("Фёдор", "Святослав", "Евгений"),
        (
            V(
                "Мой сосед {v} чинит велосипеды, если что.",
                "What is the name of my сосед?",
                "Who is the neighbour who fixes bikes?",
            ),
        ),
    ),
    Frame(
        "language",
        ("杭州", "成都", "深圳"),
        (
            V(
                "我们的测试服务器在{v}机房。",
                "Where are our 测试服务器?",
                "Which city is the test machine room in?",
            ),
        ),
    ),
    Frame(
        "language",
        ("quinta-feira de manhã", "sábado à tarde"),
        (
            V(
                "A reunião com o cliente foi remarcada para {v}.",
                "When was the reunião com o cliente moved to?",
                "When is the customer meeting now?",
            ),
        ),
    ),
    Frame(
        "constraint",
        ("shellfish", "sesame", "buckwheat"),
        (
            V(
                "heads up I'm allergic to {v}, so no team lunch at that new place",
                "What am I allergic to?",
                "Which foods must the lunch order avoid for me?",
            ),
        ),
    ),
    Frame(
        "relation",
        ("Henrike Baumgartner", "Lucía Ferrándiz", "Ngozi Eze"),
        (
            V(
                "{v} from legal is married to our CTO, so careful what goes in that channel.",
                "Who from legal is married to the CTO?",
                "Whose spouse works in the contracts department?",
            ),
        ),
    ),
    Frame(
        "place",
        ("Reykjavík", "Querétaro", "Tórshavn"),
        (
            V(
                "Our colo contract is with a datacenter in {v}.",
                "Where's the datacenter of our colo contract?",
                "In which city do our racks physically sit?",
            ),
        ),
        restate="the colo datacenter is in {v}",
    ),
    Frame(
        "question",
        ("forty-five days", "nine weeks", "eleven days"),
        (
            V(
                "Given that the partner API key rotates every {v}, should we cache it at all?",
                "How often does the partner API key rotate?",
                "What's the lifetime of that third-party credential?",
            ),
        ),
    ),
    Frame(
        "preference",
        ("Norwegian", "Tagalog", "Catalan"),
        (
            V(
                "Please write HR-related drafts in {v}, my colleagues read them too.",
                "Which language should HR drafts be in?",
                "How should anything for the people team be worded, language-wise?",
            ),
        ),
    ),
    Frame(
        "request",
        ("Bolat Nurlanovich", "Wairimu Kamau", "Phạm Quốc Bảo"),
        (
            V(
                "pls add to the notes that {v} is taking over the mobile app in January",
                "Who is taking over the mobile app?",
                "Who's the new lead for the phone client?",
            ),
        ),
        restate="{v} takes over the mobile app",
    ),
    Frame(
        "constraint",
        ("Switzerland", "Canada", "Singapore"),
        (
            V(
                "Customer data must stay in {v}; legal was very clear on that.",
                "Where must customer data stay?",
                "What's the residency requirement for client records?",
            ),
        ),
    ),
    Frame(
        "number",
        ("three hundred and twelve", "two hundred and six"),
        (
            V(
                "the mailing list has {v} subscribers as of this morning",
                "How many subscribers does the mailing list have?",
                "How big is our newsletter audience?",
            ),
        ),
    ),
)

#: How a user takes back what they said: ``{old}`` and ``{new}`` the values, ``{restated}``
#: the fact restated with the new value.
CORRECTIONS: tuple[str, ...] = (
    "Actually, not {old}: {restated}.",
    "Correction — {restated}, not {old}.",
    "scratch what I said earlier, {restated}",
    "Update: {restated} now (it used to be {old}).",
    "wait no, I got that wrong before. {restated}. sorry",
    "Small change of plan: {restated}.",
)


@dataclass(frozen=True)
class Detail:
    """Something the assistant said (a choice it made) that the user asks about later."""

    sentence: str
    ask_shared: str
    ask_other: str


DETAILS: tuple[Detail, ...] = (
    Detail(
        "I set the retry budget for the sync worker to {v} attempts, with jitter.",
        "How many retry attempts did you give the sync worker?",
        "What limit did you put on re-tries for that background job?",
    ),
    Detail(
        "The flaky one is `{v}`; I've quarantined it for now.",
        "Which test did you quarantine?",
        "What was the name of the unreliable check you disabled?",
    ),
    Detail(
        "I opened {v} to track the TLS renewal.",
        "What was the ticket for the TLS renewal?",
        "Which issue tracks the certificate thing?",
    ),
    Detail(
        "The slow query was on the `{v}` table, so I added a partial index there.",
        "Which table was the slow query on?",
        "What did you speed up last time, database-wise?",
    ),
    Detail(
        "I put the runbook at {v} so on-call can find it.",
        "Where did you put the runbook?",
        "Link to that ops guide you wrote up?",
    ),
)
