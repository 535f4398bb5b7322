"""What a sentence the user wrote is worth keeping as, and which later statement revises it.

A user's sentence is one of three tiers:

- a **statement** (kept first): anything that carries something the agent could not look up
  again — a name (in any script), a place, a person, an owner, a time or an amount in words,
  a preference, a rule, a fact inside a question or a request ("can you remind the team that
  …"), a sentence in another language. Recognition does not rest on English capitalisation or
  a list of keywords alone: a capitalised or non-Latin word that is not at the start of the
  sentence, a non-ASCII letter, a number written out, a subordinate clause that states
  something, or a sentence that is neither a request nor a question all count;
- a **plain** statement, with no marker or only a common word of time ("before", "week"):
  kept, but it gives way before the marked ones;
- a **routine** request or question about the work in hand (grep this trace, rerun that job,
  why did that test fail): it says what to do next, and what was done is in the record;
- **small talk**: courtesy and chatter.

A **correction** ("actually, not X — Y", "scratch that, …", "update: …") supersedes the
earlier statement on the same subject (the one sharing most of its content words); a
**retraction** ("forget the caterer, …") drops the statement it names; a **typo fix** in the
next message (``*Kowalski``, "sorry, 45 not 54") puts the statement before it right.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from itertools import pairwise


class Tier(IntEnum):
    """How much a user's sentence is worth keeping, most first."""

    STATEMENT = 0
    #: A statement with no marker at all, or only a common word of time ("week", "before"):
    #: kept as a statement, but it gives way before the marked ones.
    PLAIN = 1
    ROUTINE = 2
    SMALL_TALK = 3


_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
#: Courtesy and chatter, whatever the language.
_SMALL_TALK = re.compile(
    r"^(?:thanks|thank you|thx|ty|ok(?:ay)?|k|great|cool|perfect|nice|awesome|sure|got it|hi|"
    r"hello|hey|morning|good (?:morning|night|evening|afternoon)|no worries|no problem|"
    r"sounds|that sounds|yep|yes|yeah|nope|no|lol|haha|hah|hmm+|ugh|brb|sorry|appreciate|"
    r"how['\u2019]?s|how are|merci|danke|gracias|obrigad[oa]|grazie|dzięki|bedankt|"
    r"that['\u2019]s (?:fine|great|good|perfect|all|what|it)|that took|interesting|wow|oops|"
    r"one sec|just a sec|one moment|hold on|be right back)\b",
    re.IGNORECASE,
)
#: Courtesy in the languages users write in most, whatever the script: a thank-you or a
#: greeting carries nothing the agent needs.
_COURTESY = re.compile(
    r"^\W*(?:ありがと|どうも|すみません|谢谢|多谢|謝謝|감사|고마워|спасибо|дякую|благодарю|شكرا|"
    r"תודה|धन्यवाद|शुक्रिया|ขอบคุณ|cảm ơn|ευχαριστώ|teşekkür|sağ ?ol|tack|dziękuję|dzięki|"
    r"bedankt|dank je|danke|merci|gracias|grazie|obrigad[oa])",
    re.IGNORECASE,
)
#: The start of a request about the work in hand: a verb of work first, or a polite
#: "can you", "please", "let's" (after a label or a filler word).
_REQUEST = re.compile(
    # A label first ("Turn 12:", "step 3 -") does not hide the request after it.
    r"^(?:[^\W_]{1,12}(?:\s\S{1,12})?\s?[:\-]\s+)?"
    r"(?:(?:ok(?:ay)?|so|now|and|then|also|pls|please|quick(?:ly)?|hey|right|next)[,:]?\s+)*"
    r"(?:(?:can|could|would|will) (?:you|u)\b|please\b|pls\b|plz\b|go ahead and\b|"
    r"let['\u2019]s\b|"
    r"(?:grep|rerun|re-run|run|check|show|list|tail|bump|open|restart|kill|start|stop|search|"
    r"find|compare|look|retry|try|summari[sz]e|explain|fix|add|remove|delete|update|deploy|"
    r"roll ?back|revert|merge|print|paste|give|tell|send|fetch|get|pull|push|build|test|"
    # A verb joined to a word by a hyphen is a noun ("check-in", "run-book").
    r"clean|scale|drain|query|count|diff)\b(?!\s*:|[-\u2011]\w))",
    re.IGNORECASE,
)
#: A question's opening: a word of asking or an auxiliary before its subject, in English;
#: in any language a question mark says the same.
_ASKING = re.compile(
    r"^(?:[^\W_]{1,12}(?:\s\S{1,12})?\s?[:\-]\s+)?"
    r"(?:(?:ok(?:ay)?|so|and|also|hey|btw|quick question)[,:]?\s+)*"
    r"(?:what|what['\u2019]s|whats|why|how|how['\u2019]s|where|which|when|who|who['\u2019]s|"
    r"whose|whom|is|are|was|were|does|did|do|has|have|should|shall|can|could|would|will|"
    r"any|anything)\b",
    re.IGNORECASE,
)
#: A word of courtesy that makes a sentence a request, in the languages users write most.
_POLITE = re.compile(
    r"\b(?:please|pls|plz|per favore|por favor|bitte|s['\u2019]il (?:te|vous) pla[iî]t|"
    r"proszę|alsjeblieft|alstublieft|lütfen|пожалуйста|будь ласка)\b",
    re.IGNORECASE,
)
#: The commonest irregular past forms: "got us a table at …" reports, it does not ask.
_PAST_FORMS_TEXT = """got made took found bought paid went came gave left met kept heard thought
    saw spoke wrote told said sent brought caught felt lost won spent sold held became began booked
    had did"""
_PAST_FORMS = frozenset(_PAST_FORMS_TEXT.split())
#: An imperative's shape: a first word (after a filler) and what it acts on.
_IMPERATIVE_SHAPE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|now|and|then|also|right|next|quick(?:ly)?)[,:]?\s+)*"
    r"([^\W\d_][\w'\u2019-]*)\s+"
    r"(?:the|a|an|this|that|these|those|me|us|it|them|him|her|my|our|all|every|some|any|"
    r"both|each|up|out|down|\d)\b",
    re.IGNORECASE,
)
#: Words that open a sentence without making it an imperative: pronouns, determiners,
#: prepositions, conjunctions, auxiliaries, adverbs of time and degree.
_FUNCTION_WORDS_TEXT = """i you he she it we they me my your his her its our their this that these
    those there here the a an some any no every each all both in on at for from with by of to
    about after before since during until into over under near via per and but or so because if when
    while although though as than then today tomorrow tonight yesterday now also just still
    actually maybe probably only even really is are was were be been am has have had do does
    did will would can could should shall may might must not never always what which who whom
    whose where why how yes yeah ok okay oh well like one two once again btw fyi given
    provided assuming"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
#: What states something in a declarative sentence: a clause saying that something is so, a
#: reason, a rule, what the user marks as worth keeping.
_THAT_CLAUSE = re.compile(
    r"\b(?:remind|tell|telling|say|saying|note|notes|noting|mention|know|confirm|aware|sure|"
    r"means?|draft|write|warn|add)\b[^.?!]{0,40}\bthat\b\s+\S+\s+\S+",
    re.IGNORECASE,
)
#: A fact inside a question or a request about telling somebody: a verb of telling, then a
#: clause of its own ("should I tell the landlord the rent is now 1,450?", "do I need to let
#: Marco know the venue moved to …", "muss ich dem Vermieter sagen, dass …", "est-ce que je
#: dois dire au client que …", "czy mam powiedzieć ekipie, że …").
_TOLD = re.compile(
    r"\b(?:tell|let\s+(?!me\b|us\b)\S+(?:\s+\S+)?\s+know|remind|inform|warn|sagen|"
    r"mitteilen|dire|prévenir|decir|digo|avisar|dizer|avvisare|powiedzieć|poinformować|zeggen|"
    r"сказать|сообщить)\b[^.?!]{0,40}?"
    r"(?:\bthat\s+(?:\S+\s+){0,3}?(?:is|are|was|were|has|have|had|will|moved|changed|"
    r"starts?|stays?|goes)\b"
    r"|\b(?:dass|que|qu['\u2019]|że|che|dat|что)\b"
    r"|\b(?:the|his|her|their|our|my)\s+\S+(?:\s+\S+)?\s+(?:is|are|was|were|has|have|moved|"
    r"changed|starts?|stays?|goes)\b"
    r"|\b(?:we|they|he|she|it)(?:['\u2019](?:re|s)\b|\s+(?:are|is|were|was|have|has|will)\b))",
    re.IGNORECASE,
)
#: A reason given: a conjunction and a clause with a verb of its own ("since Anselm approves
#: …", "given that the key rotates …"), not a time ("since this morning").
_REASON = re.compile(
    r"\b(?:since|given(?: that)?|because|as long as|unless|so that|in case)\s+"
    r"(?:[\w'\u2019-]+\s+){0,4}?"
    r"(?:[\w-]+['\u2019](?:m|s|re|ve|ll|d)|am|is|are|was|were|be|has|have|had|will|would|"
    r"can|could|must|do|does|did|need|want|"
    r"(?!(?:this|his|its|hers|ours|yours|theirs|days|weeks|months|years|hours)\b)"
    r"[\w-]+[^\Wsu_]s|[\w-]+ed)\b",
    re.IGNORECASE,
)
_RULE = re.compile(
    r"\b(?:never|always|don['\u2019]t|do not|must|mustn['\u2019]t|only|has to|have to)\b"
    # What the user marks as worth keeping, and a prohibition ("Rule: no layovers").
    r"|\b(?:keep (?:this|that|it) in mind|keep in mind|remember|for the record|fyi|heads up|"
    r"note that|bear in mind|from now on)\b"
    r"|(?:^|[:;,\u2014-]\s*|\b(?:please|pls|plz)\s+)no\s+[^\W\d_]{3,}"
    # A clause whose subject is nothing or nobody forbids ("…, but nothing gets deleted
    # before the audit closes").
    r"|\b(?:nothing|nobody|no\s+one)\s+(?:\w+\s+)?(?:gets?|is|goes|should|can|may|must|"
    r"leaves?|happens?|touches)\b",
    re.IGNORECASE,
)
_STATES = re.compile("|".join(p.pattern for p in (_THAT_CLAUSE, _REASON, _RULE)), re.IGNORECASE)
#: A request to keep something in mind or on record: what is to be recorded is stated
#: ("set a reminder: boiler service w/ …", "remind me the boiler service is booked with …"),
#: unless it asks to be reminded of something ("remind me which city …").
_RECORD = re.compile(
    r"\b(?:remind(?:er)?|note|notes|remember|record|jot|write down|save)\b"
    r"(?!\s+(?:me\s+)?(?:which|what|who|where|when|how|whether)\b)(?:\W+\w+){3,}",
    re.IGNORECASE,
)
#: A name: a capitalised word, or a word holding a letter outside ASCII (Søren, 北京). It
#: starts only where a word starts and never gives back what it took, so a long run of word
#: characters with no space (a hash, a sentence in Chinese) is read once, not once per place.
_NAME = (
    r"(?<![\w'\u2019-])"
    r"(?:[A-Z][\w'\u2019-]*+|(?=[A-Za-z0-9_'\u2019-]*+(?![\x00-\x7f])\w)[\w'\u2019-]++)"
)
#: A role given to somebody named ("add Kofi Mensah as a second driver", "put … down as
#: additional driver").
_ROLE = re.compile(
    _NAME + r"\s+(?:down\s+|on\s+)?as\s+(?:a|an|the|my|our)?\s*"
    r"[^\W\d_]{3,}",
)
#: Something said of a name in passing: a parenthesis or a dash-enclosed aside after it
#: ("… to Priyanka — our new DPO — about …", "… for Fenna (new data protection officer)").
_INSERTION = re.compile(
    _NAME + r"\s*(?:\((?!\d)[^()]{3,60}\)|[\u2014\u2013]\s[^\u2014\u2013]{3,60}\s[\u2014\u2013])"
)
#: A clause of its own after a comma or a dash, whatever its subject: a few words then a
#: verb of being or having ("…, calls are hard during the day").
_SUBJECT_CLAUSE = re.compile(
    r"[,;\u2014\u2013]\s+(?:[^\W\d_][\w'\u2019-]*\s+){1,3}(?:is|are|was|were|has|have|had)\b",
    re.IGNORECASE,
)
#: The speaker as the subject of a clause of their own (at its start, or after a comma, a
#: dash or a conjunction): "I'm flying out of …", "my daughter is …", "…, my colleagues
#: read them too". Not "if I go via …" (a case, not a fact) nor "did I spend" (asking).
_FIRST_PERSON_CLAUSE = re.compile(
    r"(?:^|[,;:(\u2014\u2013?]\s*(?:(?:and|but|so)\s+)?|\b(?:since|because|as)\s+)"
    r"(?:(?:i|we)(?:['\u2019](?:m|re|ve|d|ll))?\s+(?!think\b|wonder\b|guess\b)[^\W\d_]+"
    r"|(?:my|our)\s+[^\W\d_][\w'\u2019-]*\s+[^\W\d_]+)",
    re.IGNORECASE,
)
#: A sentence that opens by saying what something is, and asks after it ("anniversary's the
#: ninth of August so keep that weekend free pls").
_OPENING_CLAUSE = re.compile(
    r"^(?:(?:the|my|our)\s+)?(?!let['\u2019]s\b)[^\W\d_][\w-]*"
    r"(?:['\u2019]s\s+(?:the|a|an|my|our|on|in|at)\b|\s+(?:is|are|was|were)\s+(?:the|a|an|my|our|on|in|at)\b)",
    re.IGNORECASE,
)
#: "Label: value", the way a user jots a detail down ("frequent flyer: KL0099213").
#: The label has no digit and the value holds one: "Turn 12: …" is a label of the agent's.
_LABELLED = re.compile(r"^[^\W\d_]+(?:\s[^\W\d_]+){0,3}:\s+(?:\S+\s+){0,2}\S*\d")
#: A clause of its own after a request or a question, that states something: a subject
#: and a verb after a comma, a dash or the question mark ("…, she wrote the scheduler",
#: "…? that's where the customer is", "…, they maintain it").
_STATED_CLAUSE = re.compile(
    r"[,;:?!\u2014\u2013]\s+(?:and\s+|but\s+|since\s+)?"
    r"(?:she|he|they|it|that|this|those|everyone|all|our|my|his|her|their|the\s+\w+)"
    r"(?:['\u2019](?:s|re)\b|\s+(?:\w+\s+){0,3}?(?:is|are|was|were|has|have|had|wrote|owns?|"
    r"maintains?|sits?|lives?|works?|runs?|built|set|told|said|knows?|needs?|wants?|"
    r"signs?|approves?|handles?|looks?|waits?|waiting|based|promised)\b)",
    re.IGNORECASE,
)
#: A standing instruction inside a request: how to work from now on, not what to do next.
_STANDING = re.compile(
    r"\b(?:stick to|from now on|going forward|in future|whenever|every time|by default|"
    r"each time|all the time)\b",
    re.IGNORECASE,
)
#: A question that weighs a choice is still open, not a request of the work in hand.
_DELIBERATION = re.compile(r"\b(?:should|shall|whether|or later|or not)\b", re.IGNORECASE)
#: A question that puts a value forward rather than asking for one: a proposal ("can we
#: move the visit to the 14th?", "what if we hold it in Ghent?", "how about Casa Lumbreras
#: for the caterer?"), a doubt or a check ("do we really need 94 chairs?", "isn't the
#: deposit 1,940?"). Its opening is the first person plural with a modal, a negative
#: auxiliary or "what if / how about", in the languages users write most.
_PROPOSING = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|but|hmm|wait|also|btw)[,:]?\s+)*(?:"
    r"(?:can|could|shall|should|may|might|do|did|would|will|must)\s+we\b"
    r"|(?:is|are|was|were|does|do|did|has|have|had|wo|would|ca|could|should)n['\u2019]?t\b"
    r"|what\s+if\b|how\s+about\b|why\s+(?:don['\u2019]?t|not)\b"
    r"|(?:können|könnten|sollen|sollten|wollen|müssen)\s+wir\b|und\s+wenn\b|wie\s+wäre\b"
    r"|on\s+(?:peut|pourrait|a|doit)\b|est-ce\s+qu['\u2019]on\b|et\s+si\b"
    r"|¿?\s*(?:podemos|podríamos|podemos|y\s+si|qué\s+tal|hace\s+falta)\b"
    r"|(?:possiamo|potremmo|e\s+se|che\s+ne\s+dici)\b"
    r"|(?:dá\s+para|daria\s+para|e\s+se|que\s+tal)\b"
    r"|(?:czy\s+)?(?:możemy|moglibyśmy|a\s+może|musimy)\b)",
    re.IGNORECASE,
)
#: A question tag after a declarative clause: the clause states, the tag only checks it
#: ("the invoice goes to Wendelin, right?", "la consegna è giovedì, giusto?").
_TAG = re.compile(
    r"[,\s]\s*(?:right|correct|yes|no|yeah|ok(?:ay)?|isn['\u2019]t\s+it|aren['\u2019]t\s+they|"
    r"wasn['\u2019]t\s+it|didn['\u2019]t\s+(?:we|i|it|they|you)|don['\u2019]t\s+(?:we|they)|"
    r"oder|nicht\s+wahr|stimmt['\u2019]?s|gell|non|n['\u2019]est-ce\s+pas|hein|¿?\s*verdad|"
    r"¿?\s*no|giusto|vero|certo|né|não\s+é|prawda|tak|ne)\s*[?\uff1f]+\s*$",
    re.IGNORECASE,
)
_WH_WORD = re.compile(
    r"^\W*(?:what|what['\u2019]s|whats|why|how|where|which|when|who|who['\u2019]s|whose|whom)\b",
    re.IGNORECASE,
)
#: What the user says of themselves, their people and who owns what.
_ABOUT = re.compile(
    r"\b(?:owns?|owned|belongs?|responsib\w*|handles?|in charge|approves?|signs? off|"
    r"reports? to|goes through|escalation|contact|due|deadline|budget|prefer\w*|rather|"
    r"like|love|hate|rule|allerg\w*|name['\u2019]?s?|call me|based|live|office|manager|boss|"
    r"lead|sister|brother|wife|husband|partner|mentor|colleague|contractor|designer|hire|"
    r"customer|vendor|legal|security)\b",
    re.IGNORECASE,
)
#: The speaker and their people ("us" in lower case only: "the US").
_PRONOUN = re.compile(
    r"(?i:\b(?:i|i['\u2019](?:m|ve|d|ll)|me|my|mine|we|we['\u2019](?:re|ve|d|ll)|our|ours)\b)|\bus\b"
)
#: A declarative sentence at least this long states something even without any marker.
_PLAIN_STATEMENT_WORDS = 4
#: A sentence in the first person is a statement about the speaker when this short (a long
#: one is narrative: "we walked along the river and looked at …").
_PRONOUN_STATEMENT_WORDS = 25
_NUMBER_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|hundred|thousand|million|billion|dozen|half|twice|first|second|third|"
    r"twentieth|thirtieth)\b",
    re.IGNORECASE,
)
_TIME_WORDS = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|quarter|tomorrow|"
    r"christmas|easter|new year|holiday|deadline|until|by the end|end of)\b",
    re.IGNORECASE,
)
#: Words of time too common to mark a statement alone.
_COMMON_TIME = re.compile(
    r"\b(?:year|month|week|weekend|tonight|summer|winter|spring|autumn|before|after)\b",
    re.IGNORECASE,
)
#: Capitalised words that do not name anybody or anything of the user's.
_NOT_NAMES_TEXT = (
    "I I'm I've I'd I'll OK Ok PR CI CD API SQL JSON HTTP URL ID UI UX DB QA EOD ETA FYI "
    "BTW TODO Can Could Would Please Also Then Now So And But Thanks Hi Hey Yes No"
)
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
#: What marks a sentence as revising something said before, in the languages users write
#: in most: an opening ("actually", "scratch that", "forget what I said about …", "make that
#: …"), a change ("moved to", "got cut to", "took over", "pushed back to"), a value that is
#: now so ("… is now …", "instead"), or a negated value ("not X —"). Not "from now on": it
#: sets a standing rule as often as it revises one ("please call me Tamsin from now on").
_CORRECTION = re.compile(
    r"\b(?:actually|correction|i meant?|whatever needs updating|i was wrong|wrong about|"
    r"(?:got|had) (?:that|it|this) wrong|my mistake|my bad|oops|wait|update(?=\s*:)|no longer|"
    r"instead|mixed (?:it|that|them) up|changed my mind|change of mind|final answer|"
    r"(?:things|plans?) (?:have )?changed|fix what|used to be|outdated|rescheduled|"
    r"not anymore|rather than|make (?:that|it)|"
    # "Ignore" only of what was said ("ignore what I said", not "ignore the wifi"); "forget"
    # is read by _FORGET, only as a command that opens a sentence.
    r"ignore (?:what|that|my (?:last|earlier))|"
    r"change of plans?|turns out|is now|are now|now is|on second thoughts?|"
    r"took over|takes over|taking over|"
    r"(?:moved?|changed?|cut|raised|bumped|pushed(?: back| out)?|switched|shifted|reduced|"
    r"increased|dropped|brought forward)(?:\s+[\w'\u2019-]+){0,4}?\s+to\b|"
    r"en fait|plutôt|finalement|je me suis trompée?|eigentlich|korrektur|stattdessen|doch|"
    r"ich habe mich (?:geirrt|vertan)|de hecho|en realidad|corrección|perdón|me equivoqué|"
    r"na verdade|correção|aliás|me enganei|in realtà|correzione|mi sono sbagliat[oa]|"
    r"właściwie|poprawka|jednak|pomyliłe[mś]|eigenlijk|ik vergiste me|на самом деле|вернее|"
    # "Change of plan(s)" in Spanish, German, French, Portuguese, Polish, each in its
    # singular and plural and usual wordings, and "after all" in Portuguese.
    r"cambio de plan(?:es)?|cambié de plan(?:es)?|planänderung|planwechsel|"
    r"(?:die )?pläne haben sich geändert|changement de (?:plans?|programme)|"
    r"(?:mudança|mudanças|alteração) de planos?|mudou o plano|afinal|"
    r"zmiana plan(?:u|ów)|zmiana w planach|"
    r"я ошиб(?:ся|лась))\b"
    # "push" bare only as an order that opens a sentence ("push the demo to the 14th");
    # said after "maybe", a modal or "wants to" it is read by _TENTATIVE.
    r"|(?:^|[.!;:]\s+)\W*(?:(?:ok(?:ay)?|so|please)\W+)?"
    r"push(?: back| out)?(?:\s+[\w'\u2019-]+){0,4}?\s+to\b"
    r"|\bnot\s+[^\W\d_][^,;.\u2014\u2013-]*(?:[,;.\u2014\u2013-]|$)"
    # A number negated: "11.45am now, not 10.30am", "it's the 12th now, not the 14th".
    r"|\bnot\s+(?:the\s+)?\d"
    # "… is Gustavo's now": a value that holds now, said last; and "now" in other languages
    # anywhere in a short sentence ("der Steuerberater ist jetzt in …", "nomor kantor
    # sekarang …", "o contabilista agora é …").
    r"|\bnow\s*[.!]?\s*$"
    r"|\b(?:jetzt|sekarang|maintenant|ahora|adesso|teraz|şimdi|acum|сейчас|теперь)\b"
    # "scratch" as an order to drop what was said: opening a clause ("scratch the 3pm",
    # "no, scratch tunde@…", "ok scratch Tuesday"), or "scratch that" / "scratch what I
    # said" anywhere; not the noun or the verb of ordinary English ("from scratch", "a
    # scratch on his arm", "cats scratch the sofa", "Scratch-resistant").
    r"|(?:^|(?<=[,;:.!?(\u2014\u2013-])|\b(?:ok|okay|oh|wait|sorry|hmm|um|uh|ugh|yeah|"
    r"please|pls|actually)\b)\s*scratch(?![-\w'\u2019])(?!\s+(?:is|are|was|were|has|have|"
    r"had|can|could|will|would|does|did|cards?|paper|pads?|made|resistant)\b)"
    r"|\bscratch\s+(?:that|this|it)\b(?!\s+[a-z])|\bscratch\s+what\b"
    r"|(?:実は|やっぱり|訂正|其实|更正|改成|改为|정정|사실은)",
    re.IGNORECASE,
)
#: Words too common to tell two subjects apart.
_COMMON_TEXT = (
    "the a an and or but so of to in on at for from with by is are was were be been it its "
    "it's this that these those there here now not no yes actually correction scratch "
    "update wait sorry mistake my our we i me you your they them their he she his her is "
    "isn't it's what who which when where how why new now then than just also really all "
    "any some moved changed change instead rather anymore longer meant wrong got bad "
    "due one this year month week next last first thing name make forget ignore said say "
    "earlier before mean oops turns out going doing plans plan works better sure got cut took "
    "over takes taking pushed back fine ok okay yeah hey guess think should would could can "
    "will has have had does did please pls thanks btw fyi still end early late mid past "
    "beginning start middle every each day days daily weekly monthly today "
    # What a correction says around the value it revises, not what it is about.
    "hmm argh ah oh one told while ago about small quick fix final answer mixed outdated "
    "things same after both many too used again i'm im don't rescheduled changes called only "
    "get gets "
    "perdón equivoqué antes fait enfin doch eigentlich"
)
_COMMON = frozenset(_COMMON_TEXT.split())


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _named(text: str) -> bool:
    """Whether a word after the first names somebody or something: capitalised (in any
    alphabet with case), or written in a script without case (Chinese, Japanese, Arabic…)."""
    words = _words(text)
    for index, word in enumerate(words):
        # A letter with no case (Chinese, Japanese, Arabic, Hebrew, Thai…).
        if not word.isascii() and any(
            c.isalpha() and not c.isupper() and not c.islower() for c in word
        ):
            return True
        if (
            index > 0
            and word[0].isupper()
            and any(c.islower() for c in word[1:])
            and word not in _NOT_NAMES
        ):
            return True
    return False


def _foreign(text: str) -> bool:
    """Letters outside ASCII: an accented name, a city, a sentence in another language."""
    return not text.isascii() and any(ord(c) > 127 and c.isalpha() for c in text)


def refers_back(sentence: str) -> bool:
    """Whether ``sentence`` opens as a clause about what was just named ("that's where the
    customer is", "they maintain it"): said after a question, it needs the question."""
    text = sentence.strip()
    if _STATED_CLAUSE.match(", " + text) is not None:
        return True
    # A few words about the speaker say why they asked ("asking for my daughter").
    words = _words(text)
    return (
        len(words) <= _REASON_AFTER_QUESTION_WORDS
        and _PRONOUN.search(text) is not None
        and _mood(text) == "declarative"
    )


#: A clause after a question about the speaker ("asking for my daughter") is this short.
_REASON_AFTER_QUESTION_WORDS = 6


def is_request(text: str) -> bool:
    """Whether ``text`` starts as a request or a question about the work in hand."""
    return _REQUEST.match(text.strip()) is not None


def _size(words: list[str]) -> int:
    """How many words ``words`` say: a run of a script written without spaces (Chinese,
    Japanese, Thai) counts a word for every two of its letters."""
    return sum(
        max(1, len(word) // 2)
        if not word.isascii()
        and any(c.isalpha() and not c.isupper() and not c.islower() for c in word)
        else 1
        for word in words
    )


def _mood(text: str) -> str:
    """ "request", "question" or "declarative": what the sentence does, judged by its shape
    and not by what it names. A request asks for work (an imperative, a polite "can you",
    a word of courtesy in any language); a question asks (a word of asking first, or a
    question mark, or an opening one: "¿")."""
    if _REQUEST.match(text) or _POLITE.search(text) or _imperative(text):
        return "request"
    if _ASKING.match(text) or text.startswith("\u00bf") or text.rstrip().endswith("?"):
        return "question"
    return "declarative"


def _imperative(text: str) -> bool:
    """Whether ``text`` opens as an imperative: a first word that is no function word, no
    past form and no third person, followed by what it acts on ("merge the two tickets",
    "draft a reply", "escalate 42413")."""
    match = _IMPERATIVE_SHAPE.match(text)
    if match is None:
        return False
    return not _imperative_word_ruled_out(match.group(1))


def _imperative_word_ruled_out(word: str) -> bool:
    """Whether ``word`` cannot open an imperative: a function word, a past form, a third
    person, an adverb."""
    verb = word.lower()
    return (
        verb in _FUNCTION_WORDS
        or verb in _PAST_FORMS
        or verb.endswith(("ed", "ing", "'s", "\u2019s", "n't", "n\u2019t"))
        or (verb.endswith("ly") and not verb.endswith("ply"))
        or (verb.endswith("s") and not verb.endswith("ss"))
    )


def _states_something(text: str, mood: str) -> bool:
    """Whether a request or a question carries a declarative clause of its own: what it
    says beyond the thing it acts on. A rule or a standing instruction counts in a request
    ("always fly me out of …"), not in a question ("where must the data stay?")."""
    if (
        (_OPENING_CLAUSE.match(text) and not _WH_WORD.match(text))
        or _THAT_CLAUSE.search(text)
        or _TOLD.search(text)
        or _REASON.search(text)
        or _STATED_CLAUSE.search(text)
        or _SUBJECT_CLAUSE.search(text)
        or _FIRST_PERSON_CLAUSE.search(text)
        or _RECORD.search(text)
        or _ROLE.search(text)
        or _INSERTION.search(text)
    ):
        return True
    if mood == "request":
        return bool(_RULE.search(text) or _STANDING.search(text))
    # "should the transfer leave at 7am or later?" weighs a choice; "who should I ask?"
    # asks for a fact.
    weighs = _DELIBERATION.search(text) and not _WH_WORD.match(text)
    return bool(weighs) or _proposes_value(text) or _clause_after_question(text)


def _code(word: str) -> bool:
    """Whether ``word`` is an identifier: letters and digits in one word, not an ordinal."""
    word = word.strip(".,;:!?()[]\"'")
    return (
        any(c.isdigit() for c in word)
        and any(c.isalpha() for c in word)
        and _ORDINAL.fullmatch(word) is None
    )


def _proposes_value(text: str) -> bool:
    """Whether a question puts a value forward (a proposal, a doubt, a check: see
    ``_PROPOSING`` and ``_TAG``) and holds one: a number, a time, a name, a word in
    another language. "can we rerun it?" proposes nothing worth keeping."""
    tagged = _TAG.search(text)
    if tagged is not None and tagged.start() > 0:
        clause = text[: tagged.start()].rstrip(" ,")
        # The clause before the tag is judged as said on its own.
        return _mood(clause) == "declarative" and tier(clause) == Tier.STATEMENT
    if _PROPOSING.match(text) is None:
        return False
    # An identifier ("INC-4411", "5f2a") names what the work is about, not a value put
    # forward: "can we get the logs for INC-4411?" asks for work.
    text = " ".join(word for word in text.split() if not _code(word))
    return (
        any(c.isdigit() for c in text)
        or bool(_NUMBER_WORDS.search(text))
        or bool(_TIME_WORDS.search(text))
        or _named(text)
        or _foreign(text)
    )


def _clause_after_question(text: str) -> bool:
    """A question followed by a clause of its own ("… pay full fare? asking for my
    daughter"): what follows the question mark is judged as said on its own."""
    _, mark, tail = text.partition("?")
    if not mark or not tail.strip():
        return False
    return tier(tail) <= Tier.PLAIN


#: Dictation's fillers ("hmm" and "ah" are left: "hmm not sure, I'll ask" is chat).
_FILLER = re.compile(r"^\s*(?:(?:u+h+|u+m+|uhm+|e+r+m+)\b[\s,.\u2026]*)+", re.IGNORECASE)


def tier(sentence: str) -> Tier:
    """How much a sentence the user wrote is worth keeping (see the module's docstring).

    Its mood is judged first, by shape: a request or a question whose only content is
    what it acts on is routine, whatever it names (a travel agent's every request names a
    place, a support agent's a customer); one that carries a declarative clause (about the
    user, their people, a rule, a reason, a role) is a statement. A declarative sentence
    is judged by what it holds: names in any script, numbers and dates in words, the
    speaker and their people."""
    if _ANSWER_LINE.match(sentence) or _CONFIG_LINE.match(sentence):
        return Tier.STATEMENT
    if typo_fix(sentence.strip()) is not None:
        return Tier.STATEMENT  # "*Kowalski": the name the statement before it holds
    # "um", "uh", "erm": what dictation and chat put before a sentence says nothing of its
    # mood ("uh the code for the key box is …" is no request to "uh" something).
    sentence = _FILLER.sub("", sentence)
    row = _TABLE_ROW.match(sentence.strip())
    # A row of a table is a line of a list whose cells say what and how much.
    stripped = ": ".join(cell.strip() for cell in row.group(1).split("|")) if row else ""
    stripped = stripped or sentence.strip()
    listed = row is not None or _LIST_MARK.match(stripped) is not None
    text = _LIST_MARK.sub("", stripped, count=1).lstrip("-*>•").strip()
    words = _words(text)
    if not words:
        return Tier.SMALL_TALK
    named = _named(text)
    if listed and _listed_fact(text):
        return Tier.STATEMENT
    # "sorry, I meant room C04", "ok scratch that, 6pm": courtesy that opens a correction
    # holding a value is the correction.
    if (
        _SMALL_TALK.match(text)
        and len(words) <= 8
        and not named
        and not (is_correction(text) and slots(text))
    ):
        return Tier.SMALL_TALK
    if _size(words) <= 2 and not _short_value(text, named):
        return Tier.SMALL_TALK
    mood = _mood(text)
    if mood != "declarative":
        # A correction is a statement even as an imperative ("scratch the last update — …");
        # a question only uses the words ("is there a train instead?").
        corrects = mood == "request" and is_correction(text)
        if corrects or _states_something(text, mood):
            return Tier.STATEMENT
        return Tier.ROUTINE
    marked = (
        _foreign(text)
        or bool(_NUMBER_WORDS.search(text))
        or bool(_TIME_WORDS.search(text))
        or bool(_STATES.search(text))
        or bool(_ABOUT.search(text))
        or bool(_STANDING.search(text))
        or bool(_LABELLED.match(text))
        or bool(_ODD_AMOUNT.search(text))
    )
    if marked or named:
        return Tier.STATEMENT
    if _PRONOUN.search(text) and len(words) <= _PRONOUN_STATEMENT_WORDS:
        return Tier.STATEMENT
    if _COMMON_TIME.search(text) or len(words) >= _PLAIN_STATEMENT_WORDS:
        return Tier.PLAIN
    return Tier.ROUTINE


def _short_value(text: str, named: bool) -> bool:
    """A message of a word or two that is a value of its own ("Kraków Balice", "Gdańsk",
    "PNR 7QX2LM"), not a word of courtesy ("ありがとう", "спасибо")."""
    if _COURTESY.search(text):
        return False
    # A name is capitalised in a script that has case: "köszi", "díky moc", "mulțumesc"
    # are words of courtesy, "Gdańsk" a place. In a script without case it may be either.
    named_abroad = _foreign(text) and any(
        c.isupper() or (c.isalpha() and not c.islower()) for c in text
    )
    return named or named_abroad or any(c.isdigit() for c in text)


#: A line of a list as users jot them: "- ", "* ", "• ", "1. ", "2) ", and the other marks
#: people type or paste: a letter ("a) ", "(b) "), a number in brackets or before a slash
#: ("(1) ", "1/ "), an en or em dash or an arrow ("→ "), a check box ("- [ ] ", "☐ ", "✅ ").
_LIST_MARK = re.compile(
    r"^(?:[-*+]\s+\[[ xX]\]|[-*+\u2022\u2013\u2014\u2192\u25aa\u25e6\u2023\u2610\u2611\u2705\u2714]"
    r"|\(?(?:\d{1,2}|[a-z])\)|\d{1,2}[./]|[a-z]\.)\s+"
)
#: A line of a pasted config as the summary keeps it: a path of keys, then its value
#: ("spec.replicas: 3", "DB_HOST: pg-7.internal", "server.requestTimeout: 47s").
#: A document that names itself ("metadata.name: api") is named before each of its lines:
#: "[api] spec.replicas: 3".
_CONFIG_LINE = re.compile(
    r"^(?P<document>\[[^\]\s]+\] )?(?P<path>"
    r"[A-Za-z_$@][\w$@-]*(?:\.[\w$@/-]+)+"
    r"|[a-z_$@][a-z0-9$@-]*_[a-z0-9_$@-]+"
    r"|[a-z]+(?:[A-Z][a-z0-9]+)+"
    r"|[A-Z][A-Z0-9]*_[A-Z0-9_]+"
    r"):\s+\S"
)


def is_config_line(text: str) -> bool:
    """Whether ``text`` is shaped as a kept line of a pasted config ("spec.replicas: 3",
    "DB_HOST: pg-7.internal", "[api] spec.replicas: 3")."""
    return _CONFIG_LINE.match(text) is not None


def _same_document_path(later: str, earlier: str) -> bool | None:
    """Whether two lines of pasted configs give the same key of the same document: None when
    ``later`` is no such line. Only a document that names itself is known to be the same:
    the prod and the staging ``.env``, the api and the worker Deployment, are two."""
    new = _CONFIG_LINE.match(later)
    if new is None:
        return None
    old = _CONFIG_LINE.match(earlier)
    return bool(
        old is not None
        and new.group("document")
        and new.group("document") == old.group("document")
        and new.group("path") == old.group("path")
    )


#: A row of a pasted markdown table: "| headcount | 57 people |".
_TABLE_ROW = re.compile(r"^\|(.+)\|$")
#: An imperative's first word followed by a number is a label ("budget 4,200 euros").
_LABEL_THEN_NUMBER = re.compile(r"^[^\W\d_][\w'\u2019-]*\s+\d")
#: A list line as "label: value" ("- dietary: vegetarian").
_LISTED_LABEL = re.compile(r"^[^\W\d_][\w' -]{0,30}:\s+[^\W_]")
#: A list line of this many words says something of its own.
_LISTED_STATEMENT_WORDS = 2


def _listed_fact(text: str) -> bool:
    """Whether a line of a list the user jotted down states a fact ("- 62 people", "2) PO
    number PO-91147", "• Treffpunkt ist an der Speicherstadt"): it asks for no work and asks
    nothing, and holds a value or a few words of its own. A list's lines are terse: a count
    or an amount with no verb is a fact there, where a sentence that short would be chat."""
    if text.rstrip().endswith(("?", "\uff1f")) or _REQUEST.match(text) or _POLITE.search(text):
        return False
    if _SMALL_TALK.match(text) and not _named(text):
        return False  # "- sounds good"
    if _imperative(text) and not _LABEL_THEN_NUMBER.match(text):
        return False
    return (
        len(_words(text)) >= _LISTED_STATEMENT_WORDS
        or _LISTED_LABEL.match(text) is not None
        or any(c.isdigit() for c in text)
        or _named(text)
        or _foreign(text)
        or bool(_NUMBER_WORDS.search(text))
    )


#: What joins the subject of the assistant's question to the user's terse answer in one
#: line ("delivery day? \u2192 Thursday"): the answer is the user's, verbatim.
ANSWER_ARROW = " \u2192 "
#: The head is a question's subject in a few words, or the question that put forward what
#: the user chose (:mod:`app.budget.proposals`).
_ANSWER_LINE = re.compile(r"^[^\n?]{1,160}\?" + ANSWER_ARROW + r"\S")
#: The answer to a question is this short (words), or it is a statement of its own.
ANSWER_WORDS = 10
#: A bare yes or no (and its like) opening an answer: what follows it is the value.
_ASSENT = re.compile(
    r"^(?:yes|yeah|yep|yup|no|nope|ok(?:ay)?|sure|s[ií]|oui|ja|nein|non|tak|nie|da|evet|"
    r"hay[\u0131i]r)\b[\s,.!:;\u2014\u2013-]*",
    re.IGNORECASE,
)
#: Putting an answer off is no answer ("let me check with Dave", "hang on, checking"), nor is
#: not knowing, not minding or a laugh, in the languages users write in most ("idk,
#: whatever", "keine Ahnung", "jaja", "spoko").
_PUT_OFF = re.compile(
    r"\b(?:let me|i['\u2019]ll|i will|not sure|no idea|don['\u2019]t know|dunno|checking|"
    r"hang on|hold on|one sec|brb|good question|idk|whatever|no clue|not bad|lol|"
    r"(?:ha|ja|je|he){2,}h?|keine ahnung|wei(?:ß|ss) nicht|passt schon|je (?:ne )?sais pas|"
    r"aucune id[ée]e|no s[ée]|ni idea|non lo so|nie wiem|n[ãa]o sei|spoko|geen idee|"
    r"maakt niet uit|egal)\b",
    re.IGNORECASE,
)
#: Words of a question that do not name what it asks about.
_QUESTION_FILLER_TEXT = """want wants need needs like would could should shall does will with
    into what which when where whom whose else something anything usually use used know think
    mind okay prefer rather there here just also first then your yours them they this that
    these those from have been make made take give keep more most much many some put get set let see
    ahead proceed continue start done help sound sounds good fine right correct look looks
    happy ready work works"""
_QUESTION_FILLER = frozenset(_QUESTION_FILLER_TEXT.split())
#: The subject of a question is told in at most this many of its words.
SUBJECT_WORDS = 3
_SUBJECT_WORD_CHARS = 12
#: Shorter words do not name a subject ("it", "go"); "day" and "van" do.
_SUBJECT_WORD_LETTERS = 3


def is_answer(reply: str) -> bool:
    """Whether a short message the user sends after the assistant asked something reads as
    the answer ("Thursday", "the blue one, 40 units", "yes, both, three months each"): not
    a request ("can you check the logs"), a question, a word of courtesy, a bare yes or no,
    or an answer put off ("let me check with Dave")."""
    text = " ".join(reply.split())
    words = _words(text)
    if not words or _size(words) > ANSWER_WORDS or "\n" in reply.strip():
        return False
    # A first word of one or two letters opens no imperative in an answer: "é a Inês
    # Carvalho" is "it's Inês Carvalho", "go with Leeds" picks one.
    if _REQUEST.match(text) or _PUT_OFF.search(text) or (_imperative(text) and len(words[0]) > 2):
        return False
    if _ASKING.match(text) or text.startswith("\u00bf") or text.endswith(("?", "\uff1f")):
        return False
    value = _ASSENT.sub("", text).strip()
    if not _words(value) or _COURTESY.search(value):
        return False
    named = _named(value) or _named(f"x {value}")
    return not (_SMALL_TALK.match(value) and not named and not any(c.isdigit() for c in value))


#: A question that asks for a value, not for a yes: a word of asking ("which", "when", "how
#: many"…) in the languages users write in most, or a choice between things ("…, or …?").
#: "Send as is?" or "OK to proceed?" wants a yes; what follows it is the next request.
_ASKS_FOR_VALUE = re.compile(
    r"\b(?:which|what|when|where|who|whom|whose|how|or|welche[rsmn]?|wann|wo|wer|wen|wem|wie|"
    r"wieviele?|oder|quel(?:le)?s?|quand|où|qui|combien|ou|qu['\u2019]est|qué|cuál(?:es)?|"
    r"cuánt[oa]s?|dónde|cuándo|quién|qual|quais|quant[oaie]s?|quando|onde|quem|quale|dove|"
    r"che|chi|ile|jaki[emch]*|jak[aąi]|któr[aeyi]\w*|gdzie|kiedy|kto|czy|welke?|wanneer|waar|"
    r"hoeveel|hangi|nerede|kim|kaç|apa|mana|berapa|kapan|siapa|когда|где|кто|как\w*|"
    r"сколько|котор\w+|كم|ما|أي|متى|أين|من)\b"
    r"|[何哪几幾多谁誰]|什么|什麼|어느|무엇|몇|언제|어디|누구",
    re.IGNORECASE,
)


def asks_for_value(question: str) -> bool:
    """Whether the assistant's ``question`` asks for a value the user's short reply gives
    ("Which day works?", "How many?", "Both, or just the van?"), not for a yes or no."""
    return _ASKS_FOR_VALUE.search(question) is not None


def question_subject(question: str) -> str:
    """The few words of a question that name what it asks about, in its order ("Which day
    works for the delivery?" -> "day works delivery"); "" when none do."""
    kept: list[str] = []
    for word in _words(question):
        caseless = not word.isascii() and _size([word]) > 1
        # "What's", "who's": the word of asking with its verb.
        bare = re.sub(r"['\u2019](?:s|re|ll|d)$", "", word.lower())
        if bare in _QUESTION_FILLER or bare in _FUNCTION_WORDS:
            continue
        if len(word) < _SUBJECT_WORD_LETTERS and not caseless and not word[:1].isupper():
            continue
        kept.append(word[:_SUBJECT_WORD_CHARS])
        if len(kept) == SUBJECT_WORDS:
            break
    return " ".join(kept)


def is_answer_line(text: str) -> bool:
    """Whether ``text`` is the line of an answer (:func:`answer_line`) or of a choice of what
    the assistant put forward (:func:`app.budget.proposals.chosen_line`)."""
    return _ANSWER_LINE.match(text) is not None


def answer_line(subject: str, answer: str) -> str:
    """The line that keeps a terse answer with what it answers: the question's subject, the
    user's words verbatim."""
    return f"{subject}?{ANSWER_ARROW}{' '.join(answer.split())}"


#: A request or a question of one shape said this many times with other values is a
#: routine of the work in hand ("cancel X's 11:45, she's sick", "did the reminder go out to
#: X?"), and so are the same words said this many times: not facts to keep.
ROUTINE_SHAPE_MENTIONS = 3
#: A shape needs this many words besides its values to say it is the same sentence.
_SHAPE_WORDS = 3


@lru_cache(maxsize=16_384)
def asks(sentence: str) -> bool:
    """Whether ``sentence`` is or holds a request or a question by its shape, whatever else
    it says: "did the reminder go out to X?", "X rang, running late, is that ok or do we
    rebook", "cancel X's 11:45, she's sick" (a verb in lower case, then whose thing it acts
    on, and no verb of being after it)."""
    for index, clause in enumerate(_ASIDE.split(sentence)):
        text = clause.strip().lstrip("-*>•").strip()
        if not text or (index and _RELATIVE.match(text)):
            continue  # ", who works from Malmö" says more of a name, it does not ask
        if _mood(text) != "declarative" or _PLEASE.search(text):
            return True
        acts = _ACTS_ON_NAMED.match(text)
        if acts and not _imperative_word_ruled_out(acts.group(1)) and not _BEING.search(text):
            return True
    return False


#: Where a sentence's clauses part, for :func:`asks`.
_ASIDE = re.compile(r"[,;?!\u2014\u2013]+\s|\s-\s")
#: A verb in lower case and whose thing it acts on: "cancel Tereza Horáková's 11:45".
_ACTS_ON_NAMED = re.compile(r"([a-z]+)\s+(?:[A-Z][^\W\d_]*\s+){0,3}[A-Z][^\W\d_]*['\u2019]s\b")
#: A word of courtesy in more languages: a sentence said again and again with it asks for
#: work ("zkontroluj prosím logy edge-proxy"), however it is judged said once.
_PLEASE = re.compile(
    r"\b(?:prosím|prosim|kérlek|kérem|molim|vă rog|te rog|tolong|mohon|lütfen|bitte)\b",
    re.IGNORECASE,
)
_JOINED = re.compile(r"[^\W_][-_./@:][^\W_]")
_RELATIVE = re.compile(r"(?:who|whom|whose|which|where|when|that)\b", re.IGNORECASE)
_BEING = re.compile(r"\b(?:is|are|was|were|has|have|had)\b")


@lru_cache(maxsize=16_384)
def shape(sentence: str) -> str:
    """``sentence`` with its values masked ("#"): each word holding a capital, a digit or a
    letter outside ASCII. Two sentences of one shape say the same thing of other names,
    times or amounts ("Did the reminder go out to Joana Ribeiro?"); "" when too few words
    are left to tell."""
    out: list[str] = []
    kept = 0
    # A word joined to another by a hyphen, a dot, a slash… names a thing: "checkout-api",
    # "payments-worker", "bia.m.santos@proton.example".
    words = [
        word
        for token in sentence.split()
        for word in (["#"] if _JOINED.search(token) else _words(token))
    ]
    for word in words:
        if not word.isascii() or not word.islower() or any(c.isdigit() for c in word):
            if not out or out[-1] != "#":
                out.append("#")
        else:
            out.append(word)
            kept += 1
    return " ".join(out) if kept >= _SHAPE_WORDS else ""


@lru_cache(maxsize=4096)
def is_correction(sentence: str) -> bool:
    """Whether a sentence revises something said before ("actually, not X — Y"). A value
    negated or said to hold "now" marks a short sentence only: in a long ramble "… but not
    more" or "… now" revises nothing."""
    if typo_fix(sentence) is not None or dropped(sentence) or _FORGET.search(sentence):
        return True
    short = len(_words(sentence)) <= WEAK_MARK_WORDS
    for mark in _CORRECTION.finditer(sentence):
        weak = (
            mark.group().lower().startswith(("not", "now")) or mark.group().lower() in _NOW_ABROAD
        )
        if not weak or short:
            return True
    return short and _now_in_finnish_or_portuguese(sentence)


def _now_in_finnish_or_portuguese(sentence: str) -> bool:
    """Finnish "nyt" and Portuguese "agora" for "now": also a newspaper ("the NYT") and
    a name ("the Agora cafe") in English, so they mark only in lower case (or opening the
    sentence) in a sentence with no English word of grammar."""
    words = _words(sentence)
    if not any(w in _AMBIGUOUS_NOW and (i == 0 or w.islower()) for i, w in enumerate(words)):
        return False
    return not any(w.lower() in _ENGLISH_GRAMMAR for w in words)


_NOW_ABROAD_TEXT = "jetzt sekarang maintenant ahora adesso teraz şimdi acum сейчас теперь"
_NOW_ABROAD = frozenset(_NOW_ABROAD_TEXT.split())
_AMBIGUOUS_NOW = frozenset(["nyt", "Nyt", "agora", "Agora"])
#: English words of grammar that Finnish and Portuguese do not write ("on", "no", "a", "e"
#: and "do" they do).
_ENGLISH_GRAMMAR_TEXT = (
    "the my our we is are was were at of and with to for from it this that they he she his her "
    "has have i you your"
)
_ENGLISH_GRAMMAR = frozenset(_ENGLISH_GRAMMAR_TEXT.split())
#: A sentence that only negates a value or says it holds "now" is a correction up to this
#: many words.
WEAK_MARK_WORDS = 20


def _stem(word: str) -> str:
    """``word`` without an English ending, so that "living" and "live", "owned" and
    "ownership", "moving" and "move" say the same (a word in another alphabet is kept)."""
    if not word.isascii():
        return word
    for suffix in _ENDINGS:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


_ENDINGS = ("ership", "ings", "ing", "ers", "ied", "ies", "ed", "es", "er", "s", "e")


def subject_words(text: str) -> set[str]:
    """The words that say what a statement is about (common words aside), each without its
    English ending."""
    found = {
        _subject_word(word) if len(word) <= _REMEMBERED_WORD else _subject_word.__wrapped__(word)
        for word in _words(text.lower())
    }
    found.discard("")
    return found


#: "the offsite's" and, in French or Italian, "l'offsite", "dell'ufficio" are about the
#: offsite and the office.
_POSSESSIVE = re.compile(r"['\u2019]s$")
_ELIDED = re.compile(r"^\w{1,4}['\u2019]")


#: Words up to this long are remembered (a run of CJK text or a long hex token is one "word",
#: and the cache is the process's).
_REMEMBERED_WORD = 64


@lru_cache(maxsize=65_536)
def _subject_word(word: str) -> str:
    """A lower-cased word as a word of a subject ("" for a common or short one): remembered
    per word, since a fold weighs the same words in hundreds of statements."""
    word = _ELIDED.sub("", _POSSESSIVE.sub("", word))
    if len(word) >= 3 and word not in _COMMON:
        return _stem(word)
    return ""


#: A value negated ("not Lisbon", and in French, German, Spanish, Portuguese, Polish: "pas à
#: Lyon", "nicht in Köln", "no en Lima", "não em Braga", "nie w Łodzi").
_NEGATED = re.compile(
    r"\b(?:not|pas|nicht|no|não|nie)\s+(?:(?:à|a|au|en|in|im|em|no|na|w|we|el|la|le|the)\s+)?"
    r"([^\W\d_][\w'\u2019 ]{1,40}?)\s*(?:[,;.\u2014\u2013-]|$)",
    re.IGNORECASE,
)


#: Values a statement holds, by slot: a time (a day, a month, an hour, a date), an amount (a
#: number in digits or words, a sum of money), a code (a flight, a booking, a ticket: "FR
#: 8843"), a name (a capitalised word not opening its clause, or one in a script without
#: case). What a statement is about is what is left of its content words.
_WHEN_VALUE = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|"
    r"christmas|easter|eve|noon|midnight|morning|afternoon|evening|o['\u2019]clock|sharp|"
    r"birthday|weekend|fortnight|"
    r"fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|"
    r"fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth|"
    r"\d{1,2}(?:st|nd|rd|th)|"
    r"half past|quarter (?:past|to)|\d{1,2}(?::\d\d)?\s*(?:am|pm|h)\b|\d{1,2}:\d\d)",
    re.IGNORECASE,
)
#: A sum's currency is part of its value: "twelve hundred dollars" and "860 euros" differ
#: in the amount, not in what they are about.
_CURRENCY = re.compile(
    r"(?:dollars?|euros?|pounds?|quid|bucks|yen|yuan|francs?|kron(?:or|er|a)|z[łl]oty|"
    r"rupees?|pesos?|reais|rubles?|cents?|usd|eur|gbp|chf|[$€£¥])",
    re.IGNORECASE,
)
_ORDINAL = re.compile(r"\d{1,2}(?:st|nd|rd|th)", re.IGNORECASE)
_AMOUNT_VALUE = re.compile(r"\d|" + _NUMBER_WORDS.pattern + "|" + _CURRENCY.pattern, re.IGNORECASE)
#: A code: capitals then digits ("FR 8843", "INC-2231"), letters joined to digits
#: ("srv-2-0", "R21"), a number that labels ("seat number 37", "#12"). A code names what a
#: statement is about as much as it is a value: "srv-2 has 20 GB" and "srv-3 has 30 GB" are
#: two servers.
_CODE_VALUE = re.compile(
    r"\b[A-Z]{2,} ?\d[\w-]*|\b[A-Za-z]+[-_]?\d[\w-]*|(?:\b(?i:number|no\.)|#)\s?\d+"
    # "Person 3", "Gate 12": a capitalised noun numbered (not "May 14").
    r"|\b(?!(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun))"
    r"[A-Z][a-z]+ \d+\b"
)
#: Where a statement is cut into clauses: a value's clause says what the value is of.
_CLAUSE = re.compile(r"[,;:()!?\u2014\u2013]+|\.(?:\s|$)|\s-\s|\s(?:but|so|because|which|who)\s")
#: A revision that does not say what it revises ("make that Thursday instead", "no wait —
#: Bergen", "the restaurant called, they can only do half past seven now") is at most this
#: long.
BARE_REVISION_WORDS = 16
#: A later statement that adds to an earlier one rather than replacing it ("Ana is on the
#: platform team too").
_ADDITIVE = re.compile(
    r"\b(?:too|also|as well|another|in addition|besides|aussi|auch|también|também|anche|"
    r"również|ook|тоже|также)\b",
    re.IGNORECASE,
)
#: The words that tie a value to its subject ("live in X", "live with X"): a revision of
#: one is not one of the other.
_RELATION_TEXT = (
    "in at on with from to for by near of à au en dans avec bei mit im nach con em com w z we ze"
)
_RELATION = frozenset(_RELATION_TEXT.split())


def _clauses(text: str) -> list[str]:
    return [clause for clause in _CLAUSE.split(text) if clause.strip()]


_SPANS_TEXT = "day days week weeks month months year years"
_SPANS = frozenset(_SPANS_TEXT.split())


def _opens_with_name(words: list[str]) -> bool:
    """Whether a clause's capitalised first word is a name rather than sentence case: it is
    no common word, and it is spelt beyond ASCII ("Zoë", "Łódź") or a capitalised word
    follows it ("Chidinma Eze is …"); "Rent is …" and "Dinner's moved …" open in sentence
    case."""
    first = words[0]
    if first.lower() in _COMMON or first in _NOT_NAMES:
        return False
    return not first.isascii() or (len(words) > 1 and words[1][:1].isupper())


#: A number as people write it in one locale or another: grouped by commas, dots, spaces,
#: narrow spaces or apostrophes ("2,40,000", "€2.340,50", "¥12 000", "CHF 4'500"), with a
#: decimal comma ("12,5 %"), a multiplier ("1.5k", "USD 1.2M", "3 lakh"), or a range with an
#: en dash ("2-3 weeks"). Read whole, it is one value: cut at its separators, "€2.340,50"
#: and "€2.410,75" would share the "2" and read as the same sum confirmed.
_ODD_NUMBER = re.compile(
    r"(?<![\w.,'\u2019])"
    r"(?P<code>(?:USD|EUR|GBP|CHF|JPY|INR|BRL|AUD|CAD|usd|eur|gbp|chf|jpy|inr|brl)\s?)?"
    r"(?P<number>\d{1,3}(?:(?:[,.'\u2019]|[ \u00a0\u202f](?=\d{3}(?!\d)))\d{2,3})+"
    r"(?:[.,]\d{1,2}(?!\d))?|\d+[.,]\d{1,2}(?![\d.,]\d)|\d+)"
    r"(?P<range>\s?\u2013\s?\d+)?"
    r"(?P<unit>\s?(?:k|K|M|mn|bn|lakhs?|crores?)\b|\s?%)?"
    r"(?![\w]|[.,'\u2019]\d)"
)
_MULTIPLIERS = {
    "k": 1_000,
    "K": 1_000,
    "M": 1_000_000,
    "mn": 1_000_000,
    "bn": 1_000_000_000,
    "lakh": 100_000,
    "lakhs": 100_000,
    "crore": 10_000_000,
    "crores": 10_000_000,
}


def _number_of(written: str) -> tuple[int, str]:
    """The whole and the decimals of a number written with separators of any locale: the
    last separator followed by one or two digits is a decimal one, every other groups."""
    pieces = re.split(r"[,.'\u2019 \u00a0\u202f]", written)
    decimals = ""
    if len(pieces) > 1 and len(pieces[-1]) <= 2:
        decimals = pieces.pop()
    return int("".join(pieces)), decimals.rstrip("0")


def _one_number(match: re.Match[str]) -> str:
    text = match.group(0)
    number, code = match.group("number"), match.group("code") or ""
    unit = (match.group("unit") or "").strip()
    odd = bool(code or unit or match.group("range")) or bool(re.search(r"\D", number))
    # "10.30", "3.5": a decimal point as English writes it is read as it was before (a time
    # of day is often written so).
    if not odd or (not (code or unit) and re.fullmatch(r"\d+\.\d{1,2}", number)):
        return text
    whole, decimals = _number_of(number)
    if unit in _MULTIPLIERS:
        scaled = (whole * 100 + int((decimals + "00")[:2])) * _MULTIPLIERS[unit] // 100
        whole, decimals = scaled, ""
    value = f"{whole}p{decimals}" if decimals else str(whole)
    if match.group("range"):
        value += "to" + re.sub(r"\D", "", match.group("range"))
    if unit == "%":
        value += "pct"
    return (code.strip().lower() + " " if code else "") + value


@lru_cache(maxsize=4096)
def plain_numbers(text: str) -> str:
    """``text`` with each number written in an odd format as one word: "€2.340,50" →
    "€2340p5", "USD 1.2M" → "usd 1200000", "3 lakh" → "300000", "12,5 %" → "12p5pct",
    "2-3 weeks" (an en dash) → "2to3 weeks". Only values are read off it, never shown."""
    return _ODD_NUMBER.sub(_one_number, text)


#: A sum or a share written so that it can only be a value: a currency, a percentage, a
#: multiplier or a grouped number ("USD 1.2M", "12,5 %", "1.5k a month", "₹2,40,000").
_ODD_AMOUNT = re.compile(
    r"[$€£¥₹]\s?\d|\d\s?(?:€|%)|\b(?:USD|EUR|GBP|CHF|JPY|INR|BRL|R\$)\s?\d|"
    r"\d(?:k|K|M|mn|bn)\b|\d\s(?:lakhs?|crores?)\b|\d{1,3}(?:[.'\u2019\u202f]\d{3})+|"
    r"\d\s?\u2013\s?\d+\s(?:days|weeks|months|years)\b|"
    r"\d\s?(?:dollars?|euros?|pounds?|yen|yuan|francs?|kron(?:or|er|a)|z[\u0142l]oty|rupees?|"
    r"pesos?|reais|rubles?)\b",
    re.IGNORECASE,
)


def _value_words_of(words: list[str]) -> set[str]:
    found = set()
    for index, word in enumerate(words):
        lower = word.lower()
        if (
            _WHEN_VALUE.fullmatch(lower)
            # "six weeks", "3 days": a span of time counted is a when.
            or (lower in _SPANS and index > 0 and bool(_AMOUNT_VALUE.match(words[index - 1])))
            or _NUMBER_WORDS.fullmatch(lower)
            or _CURRENCY.fullmatch(lower)
            or any(c.isdigit() for c in word)
            or any(c.isalpha() and not c.isupper() and not c.islower() for c in word)
            or (
                word[0].isupper()
                and word not in _NOT_NAMES
                and any(c.islower() for c in word[1:])
                and (index > 0 or _opens_with_name(words))
            )
        ):
            found.add(re.sub(r"['\u2019]s$", "", lower))
    return found


#: Where a sentence ends: the next one opens with a capital in sentence case.
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@lru_cache(maxsize=4096)
def _value_words(text: str) -> frozenset[str]:
    """The words of ``text`` that are values (names, numbers, days, hours, sums, codes),
    lower-cased."""
    text = plain_numbers(text)
    found: set[str] = set()
    for sentence in _SENTENCE.split(text):
        found |= _value_words_of(_words(sentence))
    for code in _CODE_VALUE.findall(text):
        found |= {word.lower() for word in _words(code)}
    return frozenset(found)


def _opening_names(text: str) -> frozenset[str]:
    """Capitalised words that open a sentence and may be names or sentence case alike
    ("Sunniva owns …", "Rent is …"): a value's kind, but still words of the subject."""
    found = set()
    for sentence in _SENTENCE.split(text):
        words = _words(sentence)
        if (
            words
            and words[0][0].isupper()
            and any(c.islower() for c in words[0][1:])
            and words[0].lower() not in _COMMON
            and words[0] not in _NOT_NAMES
            and not _opens_with_name(words)
        ):
            found.add(re.sub(r"['\u2019]s$", "", words[0].lower()))
    return frozenset(found)


def _kinds(values: frozenset[str], codes: frozenset[str]) -> frozenset[str]:
    found = {"code"} if codes else set()
    for word in values - codes:
        found |= _word_kinds(word)
    return frozenset(found)


@lru_cache(maxsize=16_384)
def _word_kinds(word: str) -> frozenset[str]:
    """The kinds of value one word is (a fold weighs every pair of statements, so each
    word is judged once)."""
    if _ORDINAL.fullmatch(word):
        # "the 5th" is a day of the month (or a floor, a place in a queue), never an amount:
        # "the rent is due on the 5th" says when, not how much.
        return frozenset({"when"})
    found = set()
    if _WHEN_VALUE.fullmatch(word) or word in _SPANS:
        found.add("when")
    if _AMOUNT_VALUE.match(word) and (
        _NUMBER_WORDS.fullmatch(word) or _CURRENCY.fullmatch(word) or any(c.isdigit() for c in word)
    ):
        found.add("amount")
    if not _WHEN_VALUE.fullmatch(word) and word not in _SPANS and not _AMOUNT_VALUE.search(word):
        found.add("name")
    return frozenset(found)


@lru_cache(maxsize=4096)
def _codes(text: str) -> frozenset[str]:
    text = plain_numbers(text)
    return frozenset(word.lower() for code in _CODE_VALUE.findall(text) for word in _words(code))


@lru_cache(maxsize=4096)
def slots(text: str) -> frozenset[str]:
    """The kinds of value ``text`` holds: "when", "amount", "code", "name" (a capitalised
    word opening a sentence counts as a name here)."""
    return _kinds(_value_words(text) | _opening_names(text), _codes(text))


@dataclass(frozen=True)
class Claim:
    """What a statement says, as far as revising it goes: what it is about (``subject``: the
    content words of the clauses that hold its values, without the values), which values it
    holds and of which kinds, the words that tie them to the subject ("in", "with"), and
    whether it reads as a correction."""

    subject: frozenset[str]
    #: Every content word, values aside: where a correction's subject is looked for.
    context: frozenset[str]
    values: frozenset[str]
    slots: frozenset[str]
    #: The kinds of value it holds, a capitalised word that opens a sentence aside.
    certain_slots: frozenset[str]
    relations: frozenset[str]
    #: Each value with a word that ties it ("to" of "… to Oslo"): which of two things of one
    #: kind a shared value is about ("to Oslo", "from Oslo").
    tied: frozenset[tuple[str, str]]
    marked: bool


@lru_cache(maxsize=4096)
def claim(text: str) -> Claim:
    """The subject and values of ``text`` (see :class:`Claim`)."""
    text = plain_numbers(text)
    values = _value_words(text)
    anchors = values | _opening_names(text)
    subject: set[str] = set()
    relations: set[str] = set()
    tied: set[tuple[str, str]] = set()
    for clause in _clauses(text):
        words = [re.sub(r"['\u2019]s$", "", word.lower()) for word in _words(clause)]
        if not any(word in anchors for word in words):
            continue
        subject |= subject_words(clause)
        for before, word in pairwise(words):
            if word in anchors and before in _RELATION:
                relations.add(before)
                tied.add((word, before))
    stems = values | {_stem(value) for value in values}
    subject -= stems
    context = subject_words(text) - stems
    if not subject:  # no value, or values alone: what it is about is all it says
        subject = context
    return Claim(
        subject=frozenset(subject),
        context=frozenset(context),
        values=values | _opening_names(text),
        slots=slots(text),
        certain_slots=_kinds(values, _codes(text)),
        relations=frozenset(relations),
        tied=frozenset(tied),
        marked=is_correction(text),
    )


@lru_cache(maxsize=4096)
def subject_key(text: str) -> frozenset[str]:
    """What a statement is about, without its values: "the offsite is in Lyon" and "the
    offsite moved to Porto" share {"offsite"}; "the retro is on Tuesday" is {"retro"}."""
    return claim(text).subject


def _compatible(later: Claim, earlier: Claim) -> bool:
    """Whether ``later`` may give a new value of the kind ``earlier`` holds: they share a
    kind of value, or one of them holds none that can be told (a preference in words)."""
    return not later.slots or not earlier.slots or bool(later.slots & earlier.slots)


def supersedes(later: str, earlier: str) -> int:
    """How strongly ``later`` revises ``earlier`` (0: not at all), by what each says about
    which subject (:func:`claim`):

    - a correction ("actually", "scratch that", "update:", "not X", in many languages) that
      names the earlier value and gives another ("not Lyon: Porto", "it used to be X");
    - a correction on the same subject with a value of the same kind: the subject words they
      share, enough when there are two, or when they are at least half of what the earlier
      statement is about;
    - an unmarked restatement of the same subject with another value of the same kind ("the
      rent is 1,200 dollars" after "rent is 1,040 pounds"): one subject holds the other, the
      same word ties the value to it ("live in"), and nothing says it adds ("too", "also").

    A statement that repeats the earlier values, or adds to them, revises nothing."""
    if later.rstrip().endswith("?"):
        return 0  # a question asks, it does not revise ("when was the demo moved to?")
    if _ANSWER_LINE.match(later):
        # An answer to the assistant's question answers that question: "tea, not coffee" to
        # "Tea or coffee for the guests?" says nothing of what the user drinks.
        return 0
    if typo_fix(later) is not None or _owners_differ(later, earlier):
        # A typo fix puts right the message just before it, in the fold; "Jonas's manager"
        # is not "my manager".
        return 0
    same_path = _same_document_path(later, earlier)
    if same_path is False and _CONFIG_LINE.match(earlier):
        # Another key, or another document's: both stay.
        return 0
    new, old = claim(later), claim(earlier)
    drops = dropped(later)
    if drops:
        return _retracts(later, earlier, drops, new, old)
    fresh = new.values - old.values
    if new.values and not fresh:
        return 0  # a repeat or a confirmation, not a revision
    if new.marked:
        # The correction's subject wherever the earlier statement says it, or the earlier
        # one's wherever the correction says it ("same flight, but they moved it to …").
        # A word with an ending of its own is the same word ("delivery", "delivered").
        shared = {w for w in new.subject if _found_in(w, old.context)} | {
            w for w in new.context if _found_in(w, old.subject)
        }
        # (A word that opens a sentence may be sentence case: "Small change of plan: …".)
        # Only a name or a code names the old value: "hundred" of two sums does not.
        # Whose thing it is ("Maria's flight", "Jonas's manager") is no value named.
        owners = _owners(later) | _owners(earlier)
        named = {
            word
            for word in (new.values & old.values) - _opening_names(later) - _opening_names(earlier)
            if _word_kinds(word) == {"name"} and word not in owners
        }
        said = set(_words(earlier.lower()))
        negated = 0
        for value in _NEGATED.findall(later):
            words = {w for w in _words(value.lower()) if len(w) >= 3 and w not in _COMMON}
            negated += 2 * bool(words and words <= said)
        negated += 2 * _negated_numbers(later, earlier)
        if _quotes_value(later, earlier):
            # "(I said three thousand one hundred euros before, that's outdated)"
            named.add("")
        if not negated and _tied_apart(new, old):
            # A name both say, tied to each by another word, is two things of one kind:
            # "scratch that, my flight to Oslo …" leaves "my flight back from Oslo …".
            return 0
        strength = len(shared) + 2 * len(named) + negated
        if (named or negated) and (fresh or not new.values):
            return _closeness(strength, new, old)
        if not shared or not _compatible(new, old):
            return 0
        # One word in common is enough for a value of the same kind, when it is all the
        # correction is about ("the accountant is X") or at least half of what the earlier
        # statement is about ("airport" of "always fly me out of X, it's the closest
        # airport" for "my home airport is Y").
        if len(shared) == 1 and not (
            new.slots & old.slots and (len(new.subject) == 1 or len(old.subject) <= 2)
        ):
            return 0
        # One word in common that one of them ties to a noun the other does not say is two
        # subjects: "the trip budget cap" and "the dinner budget", "the offsite caterer" and
        # "the offsite", "the backup accountant" and "the accountant".
        if len(shared) == 1 and (
            _tied_elsewhere(earlier, shared, new.context | new.values)
            or _tied_elsewhere(later, shared, old.context | old.values)
        ):
            return 0
        return _closeness(strength, new, old)
    shared = set(new.subject & old.subject)
    if (
        not fresh
        or not shared
        # One subject is the other, give or take a word.
        or len(new.subject ^ old.subject) > 1
        or not (new.subject <= old.subject or old.subject <= new.subject)
        or not new.slots & old.slots
        or old.values <= new.values
        or (new.relations and old.relations and not new.relations & old.relations)
        # A value both say, tied to each by another word, says which of two things each is
        # about: "my flight to Oslo" and "my flight back from Oslo" are two flights.
        or _tied_apart(new, old)
        # "the offsite is in Kilkenny" says where; "X is catering the offsite" says who.
        or (old.relations and not new.relations)
        or (_codes(later) != _codes(earlier) and not _same_code_slot(later, earlier))
        # Unmarked, a new name beside a new time or amount is another thing of the same
        # kind, not a new value for it ("our Berlin office opens at 9" beside "our London
        # office opens at 8", "a flight to Rome on Friday" beside "to Paris on Monday"):
        # both stand. An unmarked restatement changes one kind of value.
        or (
            "name" in (fresh_kinds := _kinds(frozenset(fresh), frozenset()))
            and len(fresh_kinds) > 1
        )
        or _ADDITIVE.search(later)
        # A negation says what is not so, it gives no new value ("the offsite is not 3 days").
        or _NEGATED_NUMBER.search(later)
        or _NEGATED.search(later)
        # The word one of them has besides the other is a noun tied to the subject: "the
        # caterer for the offsite" is not "the offsite", "the backup accountant" is not "our
        # accountant".
        or _tied_elsewhere(earlier, shared, new.context | new.values)
        or _tied_elsewhere(later, shared, old.context | old.values)
        # A value right beside a word of the subject says which one it is ("seat 1C is
        # free", "the Berlin office"), not what it is: "seat 4C is free" is another seat.
        # Last: it reads the text again, and a fold weighs every pair of statements. A line
        # of a pasted config says what its value is by its key ("limits.memory: 2816Mi"),
        # when the earlier line is the same key of the same named document.
        or (same_path is not True and _labels(later, fresh, new.subject))
    ):
        return 0
    return _closeness(len(shared), new, old)


#: What a statement says before its verb, and the code it gives after it: "my gym locker is
#: number 118".
_CODE_AFTER_VERB = re.compile(r"^(?P<before>[^,;:]+?)\s+(?:is|are)\s+(?P<after>[^,;:]+)$")


def _same_code_slot(later: str, earlier: str) -> bool:
    """Whether two statements give a code as the value of the same thing, said in the same
    words before the verb ("my gym locker is number 118", "my gym locker is number 307"):
    the code is what changed, not which thing it is. A code before the verb says which
    thing ("seat 4C is free" is another seat than "seat 1C is free")."""
    first, second = _CODE_AFTER_VERB.match(later.strip()), _CODE_AFTER_VERB.match(earlier.strip())
    if first is None or second is None:
        return False
    before = first.group("before").lower()
    if before != second.group("before").lower() or _codes(before):
        return False
    return bool(_codes(first.group("after"))) and bool(_codes(second.group("after")))


def _tied_apart(later: Claim, earlier: Claim) -> bool:
    """Whether a value both statements say is tied to each by other words ("to Oslo",
    "from Oslo"): they are about two things of the same kind, not one revised."""
    for value in later.values & earlier.values:
        first = {word for said, word in later.tied if said == value}
        second = {word for said, word in earlier.tied if said == value}
        if first and second and not first & second:
            return True
    return False


def _retracts(later: str, earlier: str, drops: frozenset[str], new: Claim, old: Claim) -> int:
    """How strongly the retraction ``later`` (of what ``drops`` names) drops ``earlier``: every
    word it drops is what ``earlier`` is about, and there its head, not a word of something
    else ("forget the caterer" drops "the caterer for the offsite is …"; "the heating is off"
    drops nothing of "the heating engineer is …")."""
    # The words of the statement besides its values: "caterer" stays what "the caterer for
    # the offsite is Olive Grove Catering" is about, though a value ("Catering") shares its
    # stem and so leaves the claim's subject.
    besides = " ".join(w for w in _words(earlier) if w.lower() not in old.values)
    about = old.subject | old.context | subject_words(besides)
    if not all(_found_in(word, about) for word in drops):
        return 0
    which = _dropped_which(later)
    if which and not any(_found_in(word, about) for word in which):
        return 0  # "forget the venue for the launch" drops nothing of "the venue for the dinner"
    # Another word of what the statement is about, named by the retraction: "forget the cap
    # on the trip" says which cap "the budget cap for the conference trip" is.
    named = any(_found_in(word, new.context) for word in old.subject if not _found_in(word, drops))
    for word in drops:
        ties = _tied(earlier, word)
        # "X for the Y": X is the head, what it is for says which; elsewhere a tie is a
        # noun the retraction must say too, unless it names which one another way.
        head_of = _heads(earlier, word)
        if not named and any(
            not _found_in(tie, new.context) and tie not in head_of for tie in ties
        ):
            return 0
    shared = {word for word in about if _found_in(word, new.context)}
    return _closeness(len(shared), new, old)


def _heads(text: str, word: str) -> set[str]:
    """The words ``word`` is the head of in ``text`` by "for"/"of": "offsite" in "the caterer
    for the offsite" when ``word`` is "caterer"."""
    sequence = _subject_sequence(text)
    found: set[str] = set()
    for index, current in enumerate(sequence):
        if current in (None, "+") or not _same_word(str(current), word):
            continue
        near = index + 1
        while near < len(sequence) and sequence[near] == "+":
            near += 1
        if near > index + 1 and near < len(sequence) and sequence[near] is not None:
            found.add(str(sequence[near]))
    return found


@lru_cache(maxsize=4096)
def revision_keys(text: str) -> frozenset[str]:
    """Every word through which a later statement can revise ``text`` or a statement run on
    inside it: each word lower-cased, without its "'s", and as a word of a subject. A fold
    indexes its statements by these, so that a new one is weighed only against those that
    share one of its :func:`revision_probe` words (:func:`supersedes` is 0 for the rest)."""
    found = set(subject_words(text)) | _value_words(text) | _opening_names(text) | _codes(text)
    for word in _words(text.lower()):
        found.add(word)
        found.add(re.sub(r"['\u2019]s$", "", word))
    return frozenset(found)


@lru_cache(maxsize=4096)
def revision_probe(text: str) -> frozenset[str]:
    """The words a revision by ``text`` must share with what it revises (see
    :func:`revision_keys`): its subject, its other content words, its values and the words
    of a value it negates. :func:`supersedes` gives 0 for a statement sharing none of them."""
    if text.rstrip().endswith("?"):
        return frozenset()  # a question revises nothing (see supersedes)
    new = claim(text)
    if not new.marked:
        # Unmarked, a restatement revises only a statement sharing a word of its subject.
        return new.subject
    negated = {
        word
        for value in _NEGATED.findall(text)
        for word in _words(value.lower())
        if len(word) >= 3 and word not in _COMMON
    }
    return new.subject | new.context | new.values | frozenset(negated)


def _labels(text: str, values: frozenset[str], subject: frozenset[str]) -> bool:
    """Whether one of ``values`` stands right beside a word of ``subject`` in ``text``: a
    name or a code there says which one; a count ("14 forklifts") still says how many."""
    values = frozenset(
        value for value in values if not (value.isdigit() or _NUMBER_WORDS.fullmatch(value))
    )
    words = [re.sub(r"['\u2019]s$", "", word) for word in _words(text.lower())]
    for before, after in pairwise(words):
        if (before in values and {after, _stem(after)} & subject) or (
            after in values and {before, _stem(before)} & subject
        ):
            return True
    return False


def _closeness(strength: int, new: Claim, old: Claim) -> int:
    """``strength`` (what the two share), less what the earlier statement is about that the
    later one does not say: of two statements sharing "move", "we're moving flats on …"
    is nearer "the move is …" than a ramble that also mentions moving meetings."""
    return max(1, 10 * strength - len(old.subject - new.context))


@lru_cache(maxsize=4096)
def is_bare_revision(text: str) -> bool:
    """A short correction that names a value but not what it revises ("make that Thursday
    instead", "sorry, i meant the end of June", "no wait — Bergen")."""
    return (
        is_correction(text)
        and len(_words(text)) <= BARE_REVISION_WORDS
        and not subject_key(text)
        and bool(slots(text))
    )


#: A change said as a maybe, a wish or a refusal ("maybe we push the demo to the 14th",
#: "the client wants to push it to the 14th but I said no", "don't move the demo"): it says
#: what might change, and what was said holds until it does.
_TENTATIVE = re.compile(
    r"\b(?:maybe|perhaps|could|might|may|would|should|wants? to|wanted to|thinking of|"
    r"considering|don['\u2019]?t|do not|never|shouldn['\u2019]?t|won['\u2019]?t)"
    r"(?:\s+[\w'\u2019-]+){0,2}?\s+(?:push|move|change|shift|switch|bump|cut|raise|reduce|"
    r"drop|reschedule|postpone|delay|bring)\b"
    r"|\bi said no\b",
    re.IGNORECASE,
)


def is_tentative(text: str) -> bool:
    """Whether ``text`` says a change that may happen, that somebody else wants, or that
    was refused, rather than one made (see :data:`_TENTATIVE`)."""
    return _TENTATIVE.search(text) is not None


def revises(later: str, earlier: str, *, just_before: bool = False) -> int:
    """How strongly ``later`` revises ``earlier`` (0: not at all):

    - on the same subject (:func:`supersedes`), marked as a correction or not;
    - a bare correction ("make that Thursday instead") of the statement said ``just_before``
      it, when that one holds a value of the same kind.

    A conditional revises nothing ("if the client pushes back, the deadline is March 10"):
    it says what would hold, and what was said holds until then.
    """
    if is_conditional(later) or is_tentative(later):
        return 0
    strength = supersedes(later, earlier)
    if strength:
        return strength
    if just_before and is_bare_revision(later) and slots(later) & slots(earlier):
        return 1
    return 0


def restated(statement: str, other: str, correction: str) -> bool:
    """Whether ``other`` says again the values ``correction`` replaces in ``statement``: the
    values of each that the correction does not hold are the same, and there are some ("the
    plumber is Ruth Okonkwo", then "as I said, the plumber is Ruth Okonkwo"). Both copies of
    a fact said twice stop being current; a statement of another value stays.

    A copy is about the same subject and ties its values with the same words: two things
    that happen to share a value ("the dentist is at 3pm", "the school pickup is at 3pm";
    "my flight to Oslo …", "my flight back from Oslo …") are two facts, and a correction of
    one leaves the other."""
    new = _value_words(correction)
    first = _value_words(statement) - new
    if not first or first != _value_words(other) - new:
        return False
    said, again = claim(statement), claim(other)
    return (
        said.subject == again.subject
        and said.relations == again.relations
        and not _tied_apart(again, said)
    )


def revises_nearest(later: str) -> bool:
    """Whether ``later``, having no subject of its own, revises the nearest earlier
    statement that holds a value of its kind, however long ago it was said: a bare
    correction ("no wait — Bergen", "turns out it's the ninth after all")."""
    return (
        _ANSWER_LINE.match(later) is None
        and not is_conditional(later)
        and not is_tentative(later)
        and is_bare_revision(later)
    )


#: A condition on what a statement says: "if …", "unless …", "in case …", "provided that
#: …", or "should … then".
_CONDITION = re.compile(
    r"\b(?:if|unless|in case|provided that)\b|^\W*should\b[^.?!]*\bthen\b", re.IGNORECASE
)


def is_conditional(text: str) -> bool:
    """Whether ``text`` says what holds only on a condition ("if the client pushes back, the
    deadline is March 10"; "unless it rains, make that Thursday")."""
    return _CONDITION.search(text) is not None


def keeps_history(correction: str, earlier: str) -> bool:
    """Whether what ``correction`` replaced is worth showing beside it ("… (was: …)"): the
    correction does not say what it revises (a bare one), or the earlier statement holds a
    value of a kind the correction does not restate ("same flight, but they moved it to the
    9th" keeps the flight's number)."""
    if is_bare_revision(correction):
        return True
    return bool(claim(earlier).certain_slots - claim(correction).slots)


def holds_revised_value(text: str, correction: str) -> bool:
    """Whether ``text`` holds a value of a kind ``correction`` gives anew (what is left of a
    revised statement must not keep the old value as a fact of its own)."""
    return bool(claim(text).certain_slots & claim(correction).slots)


#: A typo fixed in the next message: the word alone with a star and nothing else
#: ("*Kowalski", "Kowalski*", "*45"), "sorry, 45 not 54", or "typo: meant the 12th". Nothing
#: else is: "Karla* handles payroll" says who handles payroll, "*sigh*" and "**Note**" are
#: emphasis, "4.5*" is a rating.
_FIX_WORDS = r"(?:sorry|oops|typo|ugh|argh|oh|ah|my bad|correction|i\s+meant|meant)"
#: What says a swap is a fix ("sorry, 45 not 54"): without it, "tea, not coffee" answers.
_FIX_MARK = re.compile(r"\b(?:sorry|oops|typo|correction|meant)\b", re.IGNORECASE)
_FIX_AROUND = rf"(?:{_FIX_WORDS}\W*)*"
_TOKEN = r"[^\s*,;:!?]+"
#: The token alone, or with the words that say it is a fix around it ("*Bergstrom, sorry",
#: "oops, 7319*"): never a star inside a sentence ("Karla* handles payroll").
_STAR_FIX = re.compile(
    rf"^\s*(?P<pre>(?:{_FIX_WORDS}[\s,.!:\u2014\u2013-]*)*)"
    rf"(?:\*\s*(?P<before>{_TOKEN})|(?P<after>{_TOKEN})\s*\*)\s*[.!]?"
    rf"(?P<post>(?:[\s,.!:\u2014\u2013-]*{_FIX_WORDS})*)[\s.!]*$",
    re.IGNORECASE,
)
_SWAP_FIX = re.compile(
    rf"^\W*(?P<pre>{_FIX_AROUND})(?:the\s+)?(?P<new>{_TOKEN}),?\s+not\s+(?:the\s+)?"
    rf"(?P<old>{_TOKEN})\s*[.!]?\s*(?P<post>{_FIX_AROUND})\W*$",
    re.IGNORECASE,
)
_MEANT_FIX = re.compile(
    rf"^\W*typo\W+(?:i\s+)?meant\s+(?:the\s+)?(?P<new>{_TOKEN})\s*[.!]?\s*{_FIX_AROUND}\W*$",
    re.IGNORECASE,
)
#: A number alone: "45", "12:30", "1,450".
_BARE_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


@lru_cache(maxsize=4096)
def typo_fix(text: str) -> tuple[str, str | None] | None:
    """The word a message of its own puts right, and the one it replaces when it says so:
    ("Kowalski", None) for "*Kowalski", ("45", "54") for "sorry, 45 not 54"; None for any
    other message."""
    text = text.strip()
    star = _STAR_FIX.match(text)
    if star:
        word = (star.group("before") or star.group("after")).strip(".")
        lettered = any(c.isalpha() for c in word)
        # A word, or a number with the star before it: "4.5*", "2025*" rate and note; a
        # number with the star after it is a fix only when a word says so ("oops, 7319*").
        marked = bool(star.group("pre").strip() or star.group("post").strip())
        if not lettered and not ((star.group("before") or marked) and _BARE_NUMBER.fullmatch(word)):
            return None
        return (word, None) if word.lower() not in _COMMON and len(word) >= 2 else None
    swap = _SWAP_FIX.match(text)
    if (
        swap
        and _FIX_MARK.search(swap.group("pre") + " " + swap.group("post"))
        and _kind_of_token(swap.group("new")) == _kind_of_token(swap.group("old"))
    ):
        return swap.group("new").strip("."), swap.group("old").strip(".")
    meant = _MEANT_FIX.match(text)
    if meant:
        return meant.group("new").strip("."), None
    return None


def _kind_of_token(token: str) -> str:
    """A token's kind for a typo fix: a time, a number, a name or a word."""
    lower = token.lower().strip(".")
    if _WHEN_VALUE.fullmatch(lower) or re.fullmatch(r"\d{1,2}[.:]\d\d\s*(?:am|pm)?", lower):
        return "when"
    if any(c.isdigit() for c in lower):
        return "number"
    return "name" if token[:1].isupper() else "word"


def fix_typo(statement: str, fix: tuple[str, str | None]) -> str | None:
    """``statement`` with the typo ``fix`` names put right and the old spelling said after
    it ("the plumber is Piotr Kowalski (was: Kowalsky)"); None when it holds no word the fix
    can be for: the one it names, else the one word spelt nearly alike (a number: the same
    digits reordered, or one digit changed). No other value of the same kind is guessed at:
    a fix that misses is better than one that rewrites another fact."""
    new, old = fix
    tokens = list(re.finditer(r"[^\s,;:!?()]+", statement))

    def bare(token: str) -> str:
        return token.strip(".'\"\u2019").lower()

    kind = _kind_of_token(new)
    if old is not None:
        found = [t for t in tokens if bare(t.group()) == bare(old)]
    else:
        near: Callable[[str, str], bool]
        if _BARE_NUMBER.fullmatch(bare(new)):
            near = _near_number
        elif _ORDINAL.fullmatch(bare(new)):
            near = _near_ordinal
        else:
            near = _near
        found = [
            t
            for t in tokens
            if bare(t.group()) != bare(new)
            and near(bare(t.group()), bare(new))
            and _kind_of_token(t.group()) == kind
        ]
    if len(found) != 1:
        return None
    token = found[0]
    word = token.group().strip(".'\"\u2019")
    start = token.start() + token.group().index(word)
    fixed = statement[:start] + new + statement[start + len(word) :]
    return f"{fixed} (was: {word})"


def _near_number(number: str, other: str) -> bool:
    """Whether two numbers are one typo apart: the same digits in another order ("54",
    "45"), or one digit changed ("1234", "1284"). Any other number is another number."""
    if not (_BARE_NUMBER.fullmatch(number) and _BARE_NUMBER.fullmatch(other)):
        return False
    if len(number) != len(other) or number == other:
        return False
    return (
        sorted(number) == sorted(other)
        or sum(a != b for a, b in zip(number, other, strict=True)) == 1
    )


def _near_ordinal(word: str, other: str) -> bool:
    """Whether two days of the month are one typo apart: "21st" and "12th" (the digits
    swapped), "14th" and "24th"; the endings follow the digits and are not compared."""
    if not (_ORDINAL.fullmatch(word) and _ORDINAL.fullmatch(other)):
        return False
    return _near_number(word[:-2], other[:-2])


def _near(word: str, other: str) -> bool:
    """Whether two words of four letters or more are one typo apart: the same letters in
    another order, or at most two letters changed, added or dropped."""
    if min(len(word), len(other)) < 4 or abs(len(word) - len(other)) > 2:
        return False
    if sorted(word) == sorted(other):
        return True
    previous = list(range(len(other) + 1))
    for i, a in enumerate(word, 1):
        current = [i]
        for j, b in enumerate(other, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1] <= 2


#: A value negated as a number ("not 54", "not the 14th", "not 3 days", "not 10.30am").
_NEGATED_NUMBER = re.compile(
    r"\bnot\s+(?:the\s+)?(\d[\w.,:]*(?:\s+(?:"
    + "|".join(sorted(_SPANS))
    + r"|"
    + _CURRENCY.pattern
    + r")\b)?)",
    re.IGNORECASE,
)
_NUMBER_TOKEN = re.compile(r"\d[\w.,:]*\w|\d")


def _number_kind(token: str, after: str) -> str:
    """What a number is by itself and the word after it: a span ("3 days"), a time ("the
    14th", "10.30am"), or an amount."""
    if after.lower() in _SPANS:
        return "span"
    if _kind_of_token(token) == "when":
        return "when"
    return "amount"


def _negated_numbers(later: str, earlier: str) -> int:
    """How many numbers ``later`` negates that ``earlier`` says as a value of the same kind:
    "not 3 days" revises a span of three days, not a budget of 3,000 euros."""
    found = 0
    for negated in _NEGATED_NUMBER.findall(later):
        parts = negated.split()
        number, after = parts[0].rstrip(".,"), parts[1] if len(parts) > 1 else ""
        kind = _number_kind(number, after)
        for match in _NUMBER_TOKEN.finditer(earlier):
            if match.group().rstrip(".,") != number:
                continue
            rest = earlier[match.end() :].split()
            if _number_kind(number, rest[0].strip(".,;") if rest else "") == kind:
                found += 1
                break
    return found


#: What opens a sentence before a command of retraction: the start of the message or of a
#: sentence, and at most an interjection ("ok, forget the caterer", "never mind, cancel the
#: van"). A command later in a sentence is not one: "If the rain comes, cancel the caterer"
#: is a condition, "remind me to buy milk, and drop the kids at school" an errand, "I always
#: forget the gate code" a habit.
_OPENS = (
    r"(?:^|[.!?;]\s+)[\W_]*"
    r"(?:(?:ok|okay|actually|oh|also|and|so|never\s*mind)\b[\s,;:.!\u2014\u2013-]*)*"
)
#: What a retraction drops: "forget the caterer, …", "cancel the monitor delivery", "the
#: move is cancelled", "we don't have an accountant anymore". Never "drop" ("drop the kids
#: off"), never "is off" (an oven, a phone, the heating, milk), never mid-sentence.
_DROPPED = re.compile(
    _OPENS + r"(?:forget|cancel)\s+(?:about\s+|what\s+i\s+said\s+about\s+)?"
    r"(?P<what>(?:the|my|our|that|this)\s+[^,;:.!?\u2014\u2013]+)"
    r"|(?:^|[.!?;]\s+)[\W_]*(?P<off>(?:the|my|our)\s+[^\W\d_][\w'\u2019 -]{1,40}?)"
    r"\s+(?:is|are)\s+(?:cancell?ed|called off)\s*(?:[,;:.!\u2014\u2013-]|$)"
    r"|\b(?:we|i)\s+(?:don['\u2019]t|do not)\s+have\s+(?:a|an|any)\s+"
    r"(?P<none>[^\W\d_][\w'\u2019-]*)\s+(?:any ?more|now)\b",
    re.IGNORECASE,
)
#: "Forget what I said", "forget the caterer": a correction only as a command that opens a
#: sentence; "I always forget the gate code", "don't forget the rent is due" revise nothing.
_FORGET = re.compile(_OPENS + r"forget\s+(?:what|that|about|my|the)\b", re.IGNORECASE)
#: Words after which what a retraction drops is said no more: "the cap on the trip" is the cap.
_PHRASE_END = re.compile(
    r"\s(?:on|for|of|at|in|with|to|from|by|we|i|it|is|are|because|since|as)\b.*$", re.IGNORECASE
)


@lru_cache(maxsize=4096)
def dropped(text: str) -> frozenset[str]:
    """The subject words of what ``text`` retracts ("forget the caterer, we're not using
    one": {"caterer"}), empty when it retracts nothing."""
    match = _DROPPED.search(text)
    if match is None:
        return frozenset()
    phrase = match.group("what") or match.group("off") or match.group("none") or ""
    phrase = _PHRASE_END.sub("", " " + phrase).strip()
    return frozenset(subject_words(phrase))


#: What a retraction's phrase says after a preposition: which one it drops ("the venue for
#: the launch", "the cap on the trip").
_QUALIFIED = re.compile(r"\s(?:on|for|of|at|in|with|to|from|by)\s+(?P<which>.*)$", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _dropped_which(text: str) -> frozenset[str]:
    """The words by which ``text`` says which thing it retracts ("launch" of "forget the
    venue for the launch, …"), empty when it says none."""
    match = _DROPPED.search(text)
    if match is None:
        return frozenset()
    phrase = match.group("what") or match.group("off") or ""
    qualified = _QUALIFIED.search(" " + phrase)
    if qualified is None:
        return frozenset()
    return frozenset(subject_words(_PHRASE_END.sub("", " " + qualified.group("which"))))


def _same_word(word: str, other: str) -> bool:
    """The same word, or one the other with an ending ("deliver", "delivery"): a prefix of
    six letters or more that is all of the shorter one. "interview" and "internet" share
    five letters, and are two words."""
    if word == other:
        return True
    short, long = sorted((word, other), key=len)
    return len(short) >= 6 and long.startswith(short)


def _found_in(word: str, words: frozenset[str]) -> bool:
    return any(_same_word(word, other) for other in words)


@lru_cache(maxsize=4096)
def _subject_sequence(text: str) -> tuple[str | None, ...]:
    """``text``'s words in order, each a subject word (stemmed) or None where nothing ties
    across, with "for the", "of the" (and "at the", "in the") kept as "+": what ties one
    noun to another ("the caterer for the offsite", "the backup accountant")."""
    out: list[str | None] = []
    values = _value_words(text)
    words = _WORD_OR_MARK.findall(text.lower())
    before = ""
    for index, raw in enumerate(words):
        if not raw[0].isalnum():
            out.append(None)  # a comma, a dash: "on the trip, max" ties nothing
            before = ""
            continue
        owner = raw.endswith(("'s", "\u2019s")) or before in ("my", "our")
        word = re.sub(r"['\u2019]s$", "", raw)
        if word in ("for", "of") or (
            # "the food at the offsite"; not "at a quarter past four"
            word in ("at", "in") and words[index + 1 : index + 2] == ["the"]
        ):
            out.append("+")
        elif word in ("the", "a", "an", "our", "my") and out and out[-1] == "+":
            pass
        elif (
            len(word) >= 3
            and word not in _COMMON | _NOT_TIES
            and word not in values
            and word.isalnum()  # "we're", "it's": a pronoun and a verb
            # "the closest airport" describes it, it does not say which.
            and not (len(word) >= 6 and word.endswith("est"))
        ):
            if out and out[-1] not in (None, "+") and _noun_then_verb(before, word):
                out.append(None)  # "the analyst starts": a noun and its verb
            out.append(_stem(word))
            if (word.endswith(("ing", "ed")) and before in _VERB_BEFORE) or owner:
                # "we're moving flats": a verb and what it acts on, not a compound noun
                # ("the heating engineer"); "the kid's babysitter", "our wedding
                # anniversary", "my home airport": whose it is, the speaker's one.
                out.append(None)
        else:
            out.append(None)
        before = word
    return tuple(out)


def _noun_then_verb(first: str, second: str) -> bool:
    """Whether two words side by side read as a noun and its verb: the second ends in "s"
    and the first does not ("the analyst starts"), or in "ing" or "ed"; a compound keeps its
    first word bare and ends in a noun ("the heating engineer", "the dinner budget")."""
    if second.endswith(("ing", "ed")):
        return True  # "the new hire starting next month": what is said of it
    return second.endswith("s") and not second.endswith("ss") and not first.endswith("s")


_VERB_BEFORE_TEXT = "we're i'm you're they're is are was were am be been we i they"
_VERB_BEFORE = frozenset(_VERB_BEFORE_TEXT.split()) | {"we\u2019re", "i\u2019m"}
#: A mark, or an apostrophe that ends a word ("the kids' babysitter": whose it is).
_WORD_OR_MARK = re.compile(_WORD.pattern + r"|[,;:.!?()\u2014\u2013'\u2019]")
#: Determiners and possessives of other languages: "o nosso contabilista" is the accountant.
_NOT_TIES_TEXT = (
    "nosso nossa nossos meu minha seu sua unser unsere unseren mein meine notre nos mon "
    "ma mes nuestro nuestra nuestros mi mis nostro nostra nasz nasza nasze mój moja onze "
    "ons mijn kami kita agora nyt jetzt sekarang maintenant ahora adesso teraz şimdi acum "
    "сейчас теперь"
)
_NOT_TIES = frozenset(_NOT_TIES_TEXT.split())


def _tied(text: str, word: str) -> set[str]:
    """The subject words ``word`` is tied to in ``text``: a noun beside it ("the backup
    accountant", "the offsite caterer") or joined by "for"/"of" ("the venue for the launch")."""
    sequence = _subject_sequence(text)
    found: set[str] = set()
    for index, current in enumerate(sequence):
        if current is None or current == "+" or not _same_word(current, word):
            continue
        for step in (-1, 1):
            near = index + step
            while 0 <= near < len(sequence) and sequence[near] == "+":
                near += step
            if 0 <= near < len(sequence) and sequence[near] is not None:
                found.add(str(sequence[near]))
    return found


def _tied_elsewhere(text: str, shared: set[str], other: frozenset[str]) -> bool:
    """Whether a word of ``shared`` is tied in ``text`` to a subject word the other
    statement (``other``: its content words) does not say: "the backup accountant" is not
    "the accountant", "the offsite caterer" is not "the offsite"."""
    if not any(word in _ENGLISH_GRAMMAR for word in _words(text.lower())):
        return False  # how nouns join in other languages is not read here
    return any(not _found_in(tie, other) for word in shared for tie in _tied(text, word))


_OWN = re.compile(r"\b(?:my|our|mine|ours)\b", re.IGNORECASE)
#: A name that owns what a statement is about ("Jonas's manager", "Maria's flight"): the
#: next word in lower case, so "Bella's Kitchen" is a name and no owner.
#: Only an owner that opens a clause: "Jonas's manager is …", "actually, Maria's flight …";
#: not "… belongs to Nnamdi Okafor's team", where the team is what it belongs to.
_POSSESSED = re.compile(
    r"(?:^|[,:;(\u2014\u2013]\s*)(?:the\s+)?([A-Z][^\W\d_]+)['\u2019]s\s+([a-z][\w-]*)"
)
#: Words after "X's" that are no thing owned: "Gustavo's now", "the courier's coming" (is).
_NOT_OWNED = _COMMON | _FUNCTION_WORDS


def _owners_differ(later: str, earlier: str) -> bool:
    """Whether the two statements are about the things of different people: "Jonas's
    manager" is not "my manager", nor Jonas himself ("Jonas is at the Alder now")."""
    first, second = _owners(later), _owners(earlier)
    if first == second:
        return False
    if first and second:
        return True
    # One is about somebody's thing, the other about the speaker's ("my manager"); a
    # statement about the person may be about their thing when it names the thing
    # ("Priya starts on …" and "Priya's start date is …"), not otherwise ("Jonas is at the
    # Alder now" and "Jonas's manager is …").
    owned, plain = (later, earlier) if first else (earlier, later)
    if _OWN.search(plain):
        return True
    things = {_stem(thing) for _, thing in _POSSESSED.findall(owned) if _owned(thing)}
    return not things <= subject_words(plain)


def _owners(text: str) -> set[str]:
    """The names that own a thing in ``text`` ("Jonas's manager"), not a name said to own
    ("the dashboard is Gustavo's now")."""
    return {name.lower() for name, thing in _POSSESSED.findall(text) if _owned(thing)}


def _owned(word: str) -> bool:
    return word not in _NOT_OWNED and not word.endswith("ing")


def _quotes_value(later: str, earlier: str) -> bool:
    """Whether ``later`` says a value of ``earlier`` word for word, one of two words or more
    ("three thousand one hundred euros", "the twenty-first of June" as "twenty first"): a
    sum or a date said again in full names it, as a name does."""
    values = _value_words(earlier)
    words = [w.lower() for w in _words(earlier)]
    said = " " + " ".join(w.lower() for w in _words(later)) + " "
    run: list[str] = []
    for word in [*words, ""]:
        if word and word in values:
            run.append(word)
            continue
        if len(run) >= 2 and f" {' '.join(run)} " in said:
            return True
        run = []
    return False
