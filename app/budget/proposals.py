"""What the assistant puts forward and the user chooses or confirms.

A user's fact often lives in the assistant's message: "I can book the 09:40 or the 13:15 —
which one?" and the user answers "the later one"; "Should I set the budget to €4,000?" and
the user answers "yes"; "You said the venue is the Marriott, but the booking shows the
Hilton — should I update it to the Hilton?" and the user answers "yes, update it". Alone,
"the later one" or "yes" says nothing; with the proposal it is the user's choice.

- :func:`proposal` reads an assistant's message: the values it puts forward (a list of
  options, "A or B", a single value in a yes/no question) and, for a correction it proposes
  ("you said X … should I update it to Y?"), the values the user said before that it would
  replace.
- :func:`respond` reads the user's reply to it: which option it picks (named, by its place:
  "option 2", "die zweite", or relative: "the later one", "the cheaper one"), an assent to a
  single value ("yes", "do it", "sounds good", "ja"), an acceptance with a change ("ok but
  make it 4,500"), or a decline ("no", "not yet", "let's hold off"). A reply that asks a new
  question, puts the answer off or says nothing that resolves is no response.

Pure: text in, data out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from app.budget.statements import ANSWER_ARROW, asks_for_value, question_subject

#: A value put forward: a time, an amount with its currency, a day of the month, a number,
#: or a run of capitalised words (a hotel, a person, a place).
_TIME = r"\d{1,2}[:.h]\d{2}(?:\s?[aApP]\.?[mM]\.?)?|\d{1,2}\s?[aApP]\.?[mM]\.?"
_CURRENCY_WORDS = r"(?i:euros?|eur|usd|dollars?|pounds?|gbp|chf|francs?|zł|pln|kr|yen)"
_AMOUNT = (
    r"[€$£¥]\s?\d[\d,.' ]*\d|[€$£¥]\s?\d"
    rf"|\d[\d,.' ]*\d\s?(?:€|{_CURRENCY_WORDS})\b|\d\s?(?:€|{_CURRENCY_WORDS})\b"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)\b"
_NUMBER = r"\d[\d,.]*\d|\d"
#: A capitalised word: its first letter is no ASCII lower-case one (the rest of the check is
#: :func:`_capitalised`), the others no ASCII capitals ("PO", "AC" are parts of codes).
#: It starts a word: tried once a word, not at each letter of a long run of capitals (which
#: made the search quadratic in the run's length).
_NAME_WORD = r"(?<![^\W\d_])[^\W\d_a-z][^\W\d_]*[^\W\d_A-Z][^\W\d_]*"
_CAPITALISED = rf"{_NAME_WORD}(?:[ -](?:{_NAME_WORD}|[A-Z]{{1,2}}\d{{1,3}}\b)){{0,3}}"
#: A code: letters then digits ("AC 875", "PO-40781").
_CODE = r"\b[A-Z]{1,4}(?:[- ]|\s#)?\d{2,}\b"
#: A number in words with what it counts ("two years", "eighteen months").
_COUNTED = (
    r"\b\d+\s+(?i:people|persons|guests|nights|days|weeks|months|years|hours|rooms|seats)\b|"
    r"\b(?i:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|eighteen|"
    r"twenty|thirty|forty|fifty)\s+(?i:years?|months?|weeks?|days?|hours?|nights?|people)\b"
)
_VALUE = re.compile(
    rf"(?P<code>{_CODE})|(?P<time>{_TIME})|(?P<amount>{_AMOUNT})|(?P<day>{_DAY})"
    rf"|(?P<counted>{_COUNTED})|(?P<number>{_NUMBER})"
    rf"|(?P<name>{_CAPITALISED})"
)
#: What follows the number of a list's mark.
_LIST_END = re.compile(r"[.)]")
#: What stands beside the digits of a code.
_CODE_EDGE = re.compile(r"[^\W\d]|[-#/_]")
#: Capitalised words that name nothing put forward.
_NOT_VALUES_TEXT = """I I'm I'll I'd Should Shall Can Could Would Will Do Does Did Want Is Are
    Was Or And But
    OK Ok Okay Yes No Which What When Where Who How Sure Great Happy Option Options Also Then
    You Your We Our It This That The A An Let Let's Here There Just Or Oder Soll Sollen Ich Du
    Sie Wir Welche Welchen Welcher Welches Je Tu Vous Nous Quel Quelle Lequel Laquelle Dois
    Puis Devo Posso Quale Debo Puedo Cuál Qual Devo Mam Czy Który Która Które Moet Zal Welke
    Option"""
_NOT_VALUES = frozenset(_NOT_VALUES_TEXT.split())
#: A list's mark opening a line of options.
_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)]|[a-c][.)]|\(\d\))\s+(?P<option>\S.*)$")
#: Options offered inline: "A or B", in the languages users write in most.
#: ("of", Dutch "or", is left out: it is English "of".)
_OR = re.compile(r"\b(?:or|oder|ou|o|lub|albo|или|veya|atau)\b|或者|还是", re.IGNORECASE)
#: Where one alternative ends and the next begins.
_AND = re.compile(r"\b(?:and|und|et|y|en)\b", re.IGNORECASE)
_PARTS = re.compile(
    rf"\s*(?:,(?=\s)|;|\s/\s|(?<!\w)(?:{_OR.pattern}|{_AND.pattern})(?!\w))\s*", re.IGNORECASE
)
#: Cut at "or" and "and" alone: options that hold a comma ("Hotel Adler, 120 € or …").
_ALTERNATIVES = re.compile(rf"\s*(?<!\w)(?:{_OR.pattern}|{_AND.pattern})(?!\w)\s*", re.IGNORECASE)
#: Asking which, where the words of :func:`asks_for_value` miss it.
_WHICH = re.compile(r"\b(?:któr\w+|laquelle|lequel)\b", re.IGNORECASE)
#: "How about …?" puts a value forward, it does not ask for one.
_HOW_ABOUT = re.compile(r"\b(?:how|what) about\b", re.IGNORECASE)
#: Where what the assistant says the user said ends ("You said X, but …").
_QUOTED = re.compile(r"[,;]|\s[\u2014\u2013-]\s")
#: A correction the assistant proposes names what the user said before.
_YOU_SAID = re.compile(
    r"\b(?:you (?:said|mentioned|told me|wrote|gave|had)|earlier you|you['\u2019]d said|"
    r"du hast|sie haben|sie sagten|vous avez (?:dit|indiqué)|tu as dit|dijiste|usted dijo|"
    r"mencionaste|hai detto|aveva detto|você disse|voce disse|powiedział[ae]ś|podał[ae]ś|"
    r"je zei|u zei|je had)\b",
    re.IGNORECASE,
)
#: "from X to Y", "X instead of Y": the first is what would go.
_FROM_TO = re.compile(r"\bfrom\s+(?:the\s+)?(?P<old>.+?)\s+to\s+(?:the\s+)?(?P<new>.+?)[?.!,]")
_INSTEAD_OF = re.compile(r"\b(?:instead of|rather than|statt|au lieu de|en vez de|invece di)\b")
#: A question that asks for a yes (a single value put forward).
_ASKS = ("?", "\uff1f", "\u061f")

#: Saying yes, in the languages users write in most.
#: What may open a reply before it says yes or no ("hmm, neither for now").
_OPENING = r"^\W*(?:(?:hmm+|ok(?:ay)?|ah|oh|well|actually|so|also)\W+)?"
_ASSENT = re.compile(
    _OPENING + r"(?:yes|yeah|yep|yup|ya|ok(?:ay)?|k|sure|sounds good|sounds great|sounds right|"
    r"do it|go ahead|go for it|please do|perfect|great|correct|right|that['\u2019]s right|"
    r"exactly|fine|works|that works|confirmed|confirm|agreed|deal|absolutely|of course|"
    r"ja|jawohl|genau|passt|gerne|richtig|stimmt|mach das|oui|d['\u2019]accord|parfait|"
    r"exact|vas-y|allez-y|c['\u2019]est ça|sí|si|vale|claro|dale|perfecto|correcto|exacto|"
    r"sim|pode|certo|isso|va bene|certo|esatto|perfetto|tak|jasne|dobrze|zgadza się|"
    r"prima|klopt|doe maar|evet|tamam|да|давай|верно|はい|ええ|好的|好|对|是的|可以)\b",
    re.IGNORECASE,
)
#: Saying no, or not now.
_DECLINE = re.compile(
    _OPENING + r"(?:no|nope|nah|not (?:yet|now|really|for now)|hold off|"
    r"let['\u2019]s (?:hold|wait)|don['\u2019]t|do not|leave it|keep it|"
    r"neither|none|never ?mind|skip it|wait|"
    r"nein|nicht|lass|non|pas (?:encore|maintenant)|laisse|no,|todavía no|déjalo|ninguno|"
    r"não|ainda não|deixa|nessuno|lascia|nie|jeszcze nie|zostaw|nee|niet|laat|hay\u0131r|нет|"
    r"не надо|いいえ|いや|不|不用|不要|别)\b",
    re.IGNORECASE,
)
#: A reply that asks, or puts the answer off, responds to nothing yet.
_PUT_OFF = re.compile(
    r"\b(?:let me (?:check|think|ask|look)|not sure|no idea|i['\u2019]ll (?:check|ask|let)|"
    r"hang on|hold on|one sec|good question|dunno|idk|checking|keine ahnung|je sais pas|"
    r"no sé|non lo so|nie wiem|não sei)\b",
    re.IGNORECASE,
)
#: A reply that says no, or rules something out, anywhere in it ("absolutely not", "of course
#: not", "perfect timing but no", "anything but the 09:40", "the 09:40 is too early"): it is
#: no assent and names no choice.
_NEGATES = re.compile(
    r"\b(?:no|not|nope|nah|never|neither|none|anything but|all but|but no|except|besides|"
    r"too|without|rather not|instead|nein|nicht|kein\w*|außer|non|pas|sauf|ni|nunca|"
    r"excepto|não|nie|oprócz|nee|niet|geen|нет|не)\b|n['\u2019]t\b",
    re.IGNORECASE,
)
#: A reply that puts the decision off ("right, I'll think about it", "ok I'll sleep on it",
#: "sure, maybe later"): no choice yet.
_HEDGE = re.compile(
    r"\b(?:think (?:about|it over|on)|sleep on|maybe|perhaps|possibly|later maybe|"
    r"get back to you|another time|some other time|we'll see|will see|not sure yet|"
    r"vielleicht|peut-être|quizás|tal vez|forse|talvez|może)\b",
    re.IGNORECASE,
)
#: Undoing is not choosing ("cancel the last one").
_UNDO = re.compile(
    r"\b(?:cancel|drop|remove|delete|undo|storniere|lösch\w*|annule\w*|cancela\w*|anuluj)\b",
    re.IGNORECASE,
)
#: Picking by place, in the languages users write in most: (pattern, index; -1 the last).
_ORDINALS: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), index)
    for pattern, index in (
        (
            r"\b(?:first|1st|erste[nrms]?|premi(?:er|ère)|primer[oa]?|prim[oa]|primeir[oa]|"
            r"pierwsz\w*|eerste)\b|一つ目|最初|第一",
            0,
        ),
        (
            r"\b(?:second|2nd|zweite[nrms]?|deuxième|second[e]?|segund[oa]|second[oa]|"
            r"drug\w+|tweede)\b|二つ目|第二",
            1,
        ),
        (
            r"\b(?:third|3rd|dritte[nrms]?|troisième|tercer[oa]?|terz[oa]|terceir[oa]|"
            r"trzeci\w*|derde)\b|三つ目|第三",
            2,
        ),
        (r"\b(?:last|letzte[nrms]?|derni(?:er|ère)|últim[oa]|ultim[oa]|ostatni\w*|laatste)\b", -1),
    )
)
#: "option 2", "#2", "number 2", "no. 2", or a lone digit.
_NUMBERED = re.compile(
    r"(?:\b(?:option|opt|number|no\.?|nr\.?|choice|variante|opción|opzione|opcja|optie)\s*|#)"
    r"(?P<n>\d)\b|^\W*(?P<alone>\d)\W*$",
    re.IGNORECASE,
)
#: Picking relative to the others: by time, or by price and size.
_LATER = re.compile(
    r"\b(?:later|latest|late one|after|spätere?n?|später|plus tard|más tarde|più tardi|"
    r"mais tarde|późniejsz\w*|latere)\b",
    re.IGNORECASE,
)
_EARLIER = re.compile(
    r"\b(?:earlier|earliest|early one|sooner|frühere?n?|früher|plus tôt|más temprano|"
    r"più presto|mais cedo|wcześniejsz\w*|eerdere)\b",
    re.IGNORECASE,
)
_LESS = re.compile(
    r"\b(?:cheaper|cheapest|less expensive|lower|smaller|smallest|fewer|günstiger\w*|"
    r"billiger\w*|moins cher\w*|más barat\w*|più economic\w*|mais barat\w*|tańsz\w*|"
    r"goedkoper\w*)\b",
    re.IGNORECASE,
)
_MORE = re.compile(
    r"\b(?:more expensive|pricier|priciest|higher|bigger|biggest|larger|largest|teurer\w*|"
    r"plus cher\w*|más car\w*|più car\w*|droższ\w*|duurder\w*)\b",
    re.IGNORECASE,
)
#: A word that picks by place or by comparison.
_ORDINAL_OR_RELATIVE = re.compile(
    "|".join(
        [p.pattern for p, _ in _ORDINALS]
        + [_LATER.pattern, _EARLIER.pattern, _LESS.pattern, _MORE.pattern, r"^#?\d$"]
    ),
    re.IGNORECASE,
)
#: Words that tie no option to the reply.
_PLAIN_WORDS_TEXT = """the a an one with go take book let's lets it please pls that this works
    fine for me
    we us yes ok okay sure do option hotel flight train"""
_PLAIN_WORDS = frozenset(_PLAIN_WORDS_TEXT.split())


@dataclass(frozen=True)
class Proposal:
    """What an assistant's message puts forward."""

    #: The sentence that puts it forward (or asks which), verbatim.
    sentence: str
    #: The values offered, in their order (one: a value put forward for a yes).
    options: tuple[str, ...]
    #: For a correction the assistant proposes: the values the user said before.
    replaces: tuple[str, ...] = ()


@dataclass(frozen=True)
class Response:
    """What the user's reply does with a proposal."""

    #: The option chosen; "" when the reply gives a value of its own instead.
    chosen: str
    #: Whether the reply names the chosen option in its own words.
    named: bool


def _kinded(text: str) -> list[tuple[str, str, int, int]]:
    """The values of ``text``: (kind, value, start, end), in order."""
    found: list[tuple[str, str, int, int]] = []
    for match in _VALUE.finditer(text):
        value = match.group().rstrip(" ,.")
        start = match.start()
        line_before = text[:start].rsplit("\n", 1)[-1]
        if (
            match.lastgroup == "number"
            and not line_before.strip()
            and _LIST_END.match(text[match.end() : match.end() + 1])
        ):
            continue  # a list's mark ("4) Two patients share that slot")
        if match.lastgroup in ("number", "day") and (
            _CODE_EDGE.match(text[match.end() : match.end() + 1])
            or _CODE_EDGE.match(text[max(0, start - 1) : start])
        ):
            continue  # part of a code ("build-4411", "PR#12"): routine work, no proposal
        if match.lastgroup == "name":
            words = value.split()
            # Leading words that name nothing ("Should Hilton" -> "Hilton"), and a word that
            # opens in lower case ends the name ("Brandstätter ändern"); a name has a
            # lower-case letter ("PO" and "AC" are parts of codes).
            while words and (words[0] in _NOT_VALUES or not _capitalised(words[0])):
                start = text.index(words[1], start) if len(words) > 1 else start
                words = words[1:]
            cut = next(
                (i for i, w in enumerate(words) if not (_capitalised(w) or _MODEL.match(w))),
                len(words),
            )
            words = words[:cut]
            if not words:
                continue
            before = text[: match.start()].rstrip()
            # A capitalised word that opens a sentence is no name alone.
            opens = not before or before[-1] in ".!?:\n\u2014-"
            if opens and len(words) == 1 and words[0] == value.split()[0]:
                continue
            value = " ".join(words)
        found.append((match.lastgroup or "", value, start, start + len(value)))
    return found


#: A model's mark after a name ("Flexispot E7", "Uplift V2").
_MODEL = re.compile(r"^[A-Z]{1,2}\d{1,3}$")


def _asks_which(question: str) -> bool:
    return (asks_for_value(question) or bool(_WHICH.search(question))) and not _HOW_ABOUT.search(
        question
    )


#: A value put forward for a yes is said in this many words at most.
_ONE_VALUE_WORDS = 6


def _one_value(text: str, values: list[str]) -> list[str]:
    """The value a yes/no question names: from its first value to its last, when that is
    short, else its last."""
    found = [v for v in _kinded(text) if v[1] in values]
    span = text[found[0][2] : found[-1][3]] if found else ""
    return [span] if span and len(span.split()) <= _ONE_VALUE_WORDS else values[-1:]


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and any(c.islower() for c in word[1:])


def _values(text: str) -> list[str]:
    return list(dict.fromkeys(value for _, value, _, _ in _kinded(text)))


def _options(text: str) -> list[str]:
    """The alternatives ``text`` offers: the values of its last parts (cut at "or", "and"
    and at commas, or at "or" and "and" alone: whichever finds more) that hold values of
    the same kinds, each from its first value to its last ("Room Baltic for 140 euros or
    Room Nordic for 180 euros")."""
    return max(_options_cut(text, _PARTS), _options_cut(text, _ALTERNATIVES), key=len)


def _options_cut(text: str, cut: re.Pattern[str]) -> list[str]:
    bounds = [0, *(p for m in cut.finditer(text) for p in (m.start(), m.end())), len(text)]
    parts = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
    held = [[v for v in _kinded(text) if a <= v[2] and v[3] <= b] for a, b in parts]
    held = [values for values in held if values]
    if not held:
        return []
    shape = {kind for kind, *_ in held[-1]}
    length = len(held[-1])
    options: list[str] = []
    for values in reversed(held):
        own = values[-length:]
        if {kind for kind, *_ in own} != shape:
            break
        options.insert(0, text[own[0][2] : own[-1][3]])
    return list(dict.fromkeys(options))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?\uff1f\u3002])\s+|\n+", text) if s.strip()]


#: Where a clause ends inside a sentence ("You said X, but the booking shows Y — should I …").
_CLAUSE = re.compile(r",\s*(?:but|aber|mais|pero|ma|mas|ale|maar)\b|\s[\u2014\u2013]\s|;|\s-\s")


@lru_cache(maxsize=4096)
def proposal(text: str) -> Proposal | None:
    """What the assistant's message ``text`` puts forward for the user to choose or confirm,
    or None: it must end by asking (a question mark in its last three sentences). Only the
    message's end is read."""
    if len(text) > _PROPOSAL_CHARS:
        text = text[-_PROPOSAL_CHARS:].split(None, 1)[-1]
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    listed = [m.group("option").strip() for line in lines if (m := _LIST_LINE.match(line))]
    sentences = _sentences(text)
    asking = [s for s in sentences[-3:] if s.rstrip(" \"')").endswith(_ASKS)]
    if not asking:
        return None
    question = asking[-1]
    if 2 <= len(listed) <= 6 and all(_terse(option) for option in listed):
        return Proposal(question, tuple(listed)) if _asks_which(question) else None
    # What the user said before, as the assistant quotes it: the clause of "you said".
    said_before: list[str] = []
    quoted = ""
    for sentence in sentences:
        for clause in _QUOTED.split(sentence):
            if _YOU_SAID.search(clause) and _values(clause):
                said_before.extend(_values(clause))
                quoted = quoted or sentence
    # A correction proposed reads with what it corrects: "Earlier you gave the flight as AC
    # 871, but the airline has AC 875. Should I use AC 875 instead?"
    where = question if quoted in question else f"{quoted} {question}"
    asked = _CLAUSE.split(question)[-1]
    fresh = [v for v in _values(asked) if v not in said_before]
    # A question that asks which puts forward two values or more ("Welche Zeit?" names
    # none: German capitalises its nouns).
    if not fresh or (_asks_which(asked) and not _OR.search(asked) and len(fresh) < 2):
        # "which one?" after what offers the choice: the two read together. A yes/no
        # question puts forward only what it names itself ("I found 3 failing tests.
        # Should I rerun them?" proposes nothing).
        at = sentences.index(question)
        offered = _CLAUSE.split(question)[-2] if len(_CLAUSE.split(question)) > 1 else ""
        if not [v for v in _values(offered) if v not in said_before] and at:
            offered = sentences[at - 1]
            where = where if offered in where else f"{offered} {where}"
        if not _asks_which(question) or not (_OR.search(offered) or _AND.search(offered)):
            return None
        asked = offered
    values = [v for v in _values(asked) if v not in said_before]
    if not values:
        return None
    replaces = list(said_before)
    moved = _FROM_TO.search(asked) or _FROM_TO.search(f"{asked}.")
    cut = _INSTEAD_OF.search(asked)
    if moved:
        replaces.extend(v for v in values if v in moved.group("old"))
    elif cut:
        replaces.extend(v for v in values if v in asked[cut.end() :])
    values = [v for v in values if v not in replaces]
    if len(values) >= 2:
        offers = _OR.search(asked) or (_AND.search(asked) and _asks_which(question))
        if _asks_which(asked) and not offers:
            return None  # several values, none offered as an alternative: no choice
        # A yes/no question puts forward what it names, read as one value ("Wednesday the
        # 14th", "Wagen bei Europcar Hauptbahnhof": German capitalises its nouns).
        values = _options(asked) if offers else _one_value(asked, values)
    if not values or len(values) > 6:
        return None
    return Proposal(where, tuple(values), tuple(dict.fromkeys(replaces)))


#: A listed option is terse: a value and a few words about it, not a sentence.
_OPTION_WORDS = 8


def _terse(option: str) -> bool:
    return len(option.split()) <= _OPTION_WORDS and not option.rstrip().endswith((".", "!"))


def _mentions(reply: str, option: str, others: tuple[str, ...] = ()) -> bool:
    """Whether ``reply`` names ``option``: all of it, the same amount or time, or one of the
    values it holds (a name of it: "the Adler" for "Hotel Adler, 120 € per night") that
    ``others`` do not share ("Frau" of "Frau Brandauer" and "Frau Brandstätter")."""
    low = reply.lower()
    if re.search(rf"(?<!\w){re.escape(option.lower())}(?!\w)", low):
        return True
    wanted = [_number(value) for kind, value, _, _ in _kinded(option) if kind != "name"]
    given = [_number(value) for kind, value, _, _ in _kinded(reply) if kind != "name"]
    if any(number is not None and number in given for number in wanted):
        return True
    shared = {w.lower() for other in others for w in re.findall(r"[^\W\d_]+", other)}
    names = {
        word.lower()
        for kind, value, _, _ in _kinded(f"x {option}")
        if kind == "name"
        for word in value.split()
    }
    return bool((names - _PLAIN_WORDS - shared) & set(re.findall(r"[^\W\d_]+", low)))


def _number(value: str) -> float | None:
    time = re.match(r"(\d{1,2})[:.h](\d{2})\s?([ap])?", value, re.IGNORECASE)
    if time:
        hour = int(time.group(1)) % 12 if time.group(3) else int(time.group(1))
        hour += 12 if (time.group(3) or "").lower() == "p" else 0
        return hour * 60 + int(time.group(2))
    hour_only = re.match(r"(\d{1,2})\s?([ap])", value, re.IGNORECASE)
    if hour_only:
        afternoon = 12 if hour_only.group(2).lower() == "p" else 0
        return (int(hour_only.group(1)) % 12 + afternoon) * 60
    digits = re.search(r"\d[\d,.' ]*", value)
    if not digits:
        return None
    raw = re.sub(r"[,' ]", "", digits.group()).rstrip(".")
    try:
        return float(raw)
    except ValueError:
        return None


def _relative(reply: str, options: tuple[str, ...]) -> str:
    """The option the reply picks relative to the others ("the later one"), or ""."""
    numbers = [_number(option) for option in options]
    if len(options) < 2 or any(n is None for n in numbers):
        return ""
    known = [n for n in numbers if n is not None]
    if _LATER.search(reply) or _MORE.search(reply):
        return options[known.index(max(known))]
    if _EARLIER.search(reply) or _LESS.search(reply):
        return options[known.index(min(known))]
    return ""


def _by_place(reply: str, options: tuple[str, ...]) -> str:
    numbered = _NUMBERED.search(reply)
    if numbered:
        index = int(numbered.group("n") or numbered.group("alone")) - 1
        return options[index] if 0 <= index < len(options) else ""
    found = {index for pattern, index in _ORDINALS if pattern.search(reply)}
    if len(found) == 1:
        index = found.pop()
        return options[index] if -len(options) <= index < len(options) else ""
    return ""


#: Words a pick by place or by comparison may come with ("ok, go with the second one, thanks").
_PICK_WORDS_TEXT = """ok okay so yes yeah yep please pls thanks thank you go with take the a one
    ones let's lets do it that this then maybe probably i'd i guess prefer rather would like
    ja bitte danke die der das den oui merci la le les sí gracias el tak poproszę tę ten
    one option number no nr choice first second third last later earlier cheaper latest
    earliest early late more less expensive bigger smaller lower higher found out dave says
    más barato barata tarde temprano plus cher chère tard tôt più mais"""
_PICK_WORDS = frozenset(_PICK_WORDS_TEXT.split())
#: What else a pick by place or by comparison may say (words): "last 30 min, errors only"
#: says something else.
_PICK_OTHER_WORDS = 3


def _terse_pick(text: str) -> bool:
    """Whether a reply that picks by place or by comparison says little else: "the later
    one", "ja, die zweite", not "logs for edge-proxy last 30 min, errors only"."""
    words = re.findall(r"[^\W_]+(?:['\u2019][^\W_]+)?", text.lower())
    other = [w for w in words if w not in _PICK_WORDS and not _ORDINAL_OR_RELATIVE.search(w)]
    return len(other) <= _PICK_OTHER_WORDS and not any(c.isdigit() for c in "".join(other))


def holds_value(text: str) -> bool:
    """Whether ``text`` holds a value of its own: a number, a time, a name."""
    return any(c.isdigit() for c in text) or bool(
        [v for v in _values(text) if not text.startswith(v)]
    )


#: A reply that chooses is short (words, and characters: a long token is no choice, and
#: its values are not read).
_REPLY_WORDS = 10
_REPLY_CHARS = 200
#: Of an assistant's message, only its end is read for a proposal (characters): the
#: question is in its last sentences.
_PROPOSAL_CHARS = 2000


@lru_cache(maxsize=4096)
def respond(put_forward: Proposal, reply: str) -> Response | None:
    """What the user's ``reply`` does with ``put_forward``: the option it chooses, a value of
    its own given instead (``chosen`` ""), or None when it declines, asks a question back,
    puts the answer off, or does not say which."""
    text = " ".join(reply.split())
    if (
        not text
        or len(text) > _REPLY_CHARS
        or len(text.split()) > _REPLY_WORDS
        or text.rstrip().endswith(_ASKS)
    ):
        return None
    if _PUT_OFF.search(text) or _UNDO.search(text) or _HEDGE.search(text):
        return None
    options = put_forward.options
    every = (*options, *put_forward.replaces)
    if any(_mentions(text, old, options) for old in put_forward.replaces):
        return None  # "no, it's the Marriott": the user keeps what they said
    declined = _DECLINE.match(text) is not None and not _NUMBERED.match(text)
    if declined or _NEGATES.search(_NUMBERED.sub(" ", text)):
        # A reply that says no or rules an option out chooses nothing the assistant put
        # forward; after a plain "no" a value of the user's own is theirs, in their words
        # ("no, make it 4,500").
        if declined and holds_value(text):
            return Response("", False)
        return None
    named = [
        option
        for option in options
        if _mentions(text, option, tuple(o for o in every if o != option))
    ]
    if len(named) == 1:
        return Response(named[0], True)
    if len(named) > 1:
        return None
    chosen = _by_place(text, options) if len(options) > 1 else ""
    chosen = chosen or _relative(text, options)
    if chosen and _terse_pick(text):
        return Response(chosen, False)
    if len(options) == 1 and _ASSENT.match(text):
        # "ok, make it 4,500": accepted with a change, the user's value in their words.
        return Response("" if holds_value(text) else options[0], False)
    return None


def declines(put_forward: Proposal, reply: str) -> bool:
    """Whether the user's ``reply`` turns ``put_forward`` down and gives nothing instead
    ("no", "not yet", "let's hold off", "nein, lass es")."""
    text = " ".join(reply.split())
    return (
        bool(text)
        and len(text) <= _REPLY_CHARS
        and len(text.split()) <= _REPLY_WORDS
        and _DECLINE.match(text) is not None
        and respond(put_forward, text) is None
        and not text.endswith(_ASKS)
    )


#: What ends a question: trimmed before its options are said after it.
_TRAILING_MARKS = " ?\uff1f\u061f"
#: The longest head of a choice's line: the question as the assistant put it.
_HEAD_CHARS = 160


#: Words of a proposal that do not say what it is about.
_NOT_SUBJECT = re.compile(
    r"\b(?:instead|update|change|send|book|reserve|one|ones|option|options|prefer|suits?|"
    r"accept|found|two|came|back|free|next|week|there['\u2019]s|can|let|me|put|set|use|"
    r"renew|offers?|quotes?|possible|also|either|both|our|time|you|your|said|mentioned|"
    r"gave|earlier|shows|has|have|got|but|booking|system|steht|aber|genannt|ändern|soll|"
    r"ich|kann|welche|welchen|hay|uno|por|mogę|albo|którą|j['\u2019]ai|laquelle|ou|cuál|"
    r"prefieres|reservo|quelle|dois|bei|auf|den|der|die|das|people|nehmen|mam|dr|do|"
    r"should|shall|want|how|about|which|what|book|buchen|réserve|je|du|hast)\b",
    re.IGNORECASE,
)


def subject(put_forward: Proposal) -> str:
    """What ``put_forward`` is about, in at most three of its words ("budget", "venue")."""
    return _subject(put_forward)


def _subject(put_forward: Proposal) -> str:
    """What the proposal is about, in at most three of its words ("budget", "train"),
    from its question without the values it offers."""
    question = _sentences(put_forward.sentence)[-1]
    for value in (*put_forward.options, *put_forward.replaces):
        question = question.replace(value, " ")
    subject = question_subject(_NOT_SUBJECT.sub(" ", question))
    if subject:
        return " ".join(dict.fromkeys(subject.split()))
    text = put_forward.sentence
    for value in (*put_forward.options, *put_forward.replaces):
        text = text.replace(value, " ")
    return " ".join(dict.fromkeys(question_subject(_NOT_SUBJECT.sub(" ", text)).split()))


def chosen_line(put_forward: Proposal, reply: str, response: Response) -> str:
    """The line that keeps the user's choice with what it chose from, in few words: what the
    proposal is about, the options it offered, an arrow, the user's words verbatim, and the
    option chosen when the reply does not name it ("train: 09:38 / 13:17? \u2192 the later
    one (chose 13:17)")."""
    subject = _subject(put_forward)
    offered = " / ".join(put_forward.options)
    head = f"{subject}: {offered}" if subject else offered
    line = f"{head[:_HEAD_CHARS].replace('?', '')}?{ANSWER_ARROW}{' '.join(reply.split())}"
    if response.chosen and not response.named and len(put_forward.options) > 1:
        line = f"{line} (chose {response.chosen})"
    return line


def asked_in_full(put_forward: Proposal) -> str:
    """The proposal's question with what it offers, so that it reads alone ("Which train
    should I book: 09:38 or 13:17?"): kept as an open question, the user's choice in the
    next fold still finds its options."""
    head = " ".join(put_forward.sentence.split())
    if all(option in head for option in put_forward.options):
        return head
    offered = " or ".join(put_forward.options)
    return f"{head.rstrip(_TRAILING_MARKS)}: {offered}?"
