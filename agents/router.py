"""The offline router: which operation a task asks for, and its arguments, with no model.

Routing only: every argument is read by the operations' own extractors
(:meth:`lemmata.operations.Operation.arguments`, the same reader every surface uses). Three
signals:

- **form**: each operation's extractor reads its arguments out of the text (a Coq statement, a
  sum identity, a screenshot's path, a database file, "remember that ..."); an operation whose
  extractor finds nothing cannot be run, however similar the words are. An extractor outside
  memory that fires settles the route, unless a memory extractor fired too and its examples are
  nearer ("Add to memory: the invoices live under Finance/2024");
- **nearest examples**: the task's vector (the one the agent computes once per turn) against
  every operation's description and example tasks, and against examples of requests that no
  operation serves (:data:`DECLINE_EXAMPLES`): the best and the mean of the three nearest;
- **memory**: what memory matched (the agent recalls before routing and passes the best
  match's similarity as ``evidence``).

Memory's phrasings are many ("fyi my locker number is 214", "No need to keep the standup time
anymore - forget it", "wat's the wifi called"), and a rule per phrasing does not carry to the
next user. A task that the form does not settle goes to the **memory gate** (:class:`Gate`), a
multinomial logistic model over the similarities, the evidence and cues of the task's form (a
question, a request to keep or to forget, a statement about the user's own things, what
memory's extractors read, strictly and loosely), fitted on the development tasks of
``benchmarks/agent_routing.py`` by ``benchmarks/router_fit.py`` (regularisation chosen by
leave-one-source-out; the left-out figures are stored with the weights). It says: keep
(``memory_remember``), forget (``memory_forget``), a question to memory (``memory_recall``, or
``memory_reason`` for "why ..." and "based on what you know ..."), or none of them (always none
for a reminder of something to do, "remind me every Monday at 9 to ...", and for asking how a
thing is done, "how do I reset a router?", whatever memory holds). With none, a
request whose nearest examples are another capability's, by ``near_at`` and ``near_margin``
above the nearest decline, is read loosely by that operation (a folder of data files); anything
else is declined, plainly, naming what is missing when the task resembles an operation.

>>> router = Router(load_registry(), embedder)                          # doctest: +SKIP
>>> route = router.route("Prove in Coq: forall n : nat, n + 0 = n")    # doctest: +SKIP
>>> route.operation, route.args["statement"]                            # doctest: +SKIP
('provers_prove', 'Theorem goal : forall n : nat, n + 0 = n.')
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lemmata.errors import ConfigError
from lemmata.memory.operations import cue_words, first_clause

if TYPE_CHECKING:
    from lemmata.embeddings import Embedder
    from lemmata.operations import Operation, Registry

__all__ = ["DECLINE_EXAMPLES", "GATE_CLASSES", "WEIGHTS_FILE", "Gate", "Route", "Router"]

#: The fitted memory gate (``benchmarks/router_fit.py`` writes it).
WEIGHTS_FILE = Path(__file__).with_name("router_weights.json")

#: Requests that no operation serves, one or two per kind (reminders and alarms, messages,
#: bookings and purchases, the web and general knowledge, arithmetic and school maths, writing
#: and translation, programming help, chores on files, devices), including those that share
#: words with the capabilities ("remember to", "prove", "check", "sum", a file's path). They
#: are the decline class of the nearest-example vote.
DECLINE_EXAMPLES: tuple[str, ...] = (
    "Remind me on Friday to call the bank.",
    "Set an alarm for 7 am.",
    "Start a 25 minute timer.",
    "Remember to pick up the dry cleaning after work.",
    "Don't let me forget to pay the electricity bill.",
    "Never mind, forget about it.",
    "Send a message to Dad saying happy birthday.",
    "Email the slides to my boss.",
    "Call the pharmacy and ask if my prescription is ready.",
    "Book a flight to Berlin for next Monday.",
    "Order more printer ink online.",
    "Reserve a hotel room in Madrid for two nights.",
    "Search the web for vegan lasagne recipes.",
    "What is the capital of Peru?",
    "Who painted the Mona Lisa?",
    "What's the latest news about the elections?",
    "Will it rain in London tomorrow?",
    "What time is it in Sydney right now?",
    "Do you know the words to a famous song?",
    "I can't recall which film that famous quote comes from, do you know?",
    "What is 15% of 240?",
    "Solve x^2 - 5x + 6 = 0.",
    "Differentiate cos(x) times x squared.",
    "Add up 345 and 982.",
    "Is 97 a prime number?",
    "Prove you are not a bot.",
    "What does the Pythagorean theorem say?",
    "Write a limerick about a frog.",
    "Rephrase this email so it sounds more polite.",
    "Draft a thank-you note to my teacher.",
    "Translate 'thank you very much' into Italian.",
    "Summarise the plot of a famous novel.",
    "Explain how vaccines work.",
    "Why is the ocean salty?",
    "How do I sort a dictionary by value in Python?",
    "How do I center a div with CSS on my site?",
    "Write a regex that matches email addresses.",
    "Convert photo.png to a JPEG.",
    "Rename data.csv to old_data.csv.",
    "Zip the logs folder and upload it.",
    "Delete the file temp.db from my desktop.",
    "Print the invoice.",
    "Turn up the volume.",
    "Switch off the kitchen lights.",
    "Check the tyre pressure on my car.",
    "Recommend a good podcast about history.",
    "How many calories are in an apple?",
    "How can I get better at remembering people's names?",
    "Why do we forget things as we get older?",
    "My phone is out of storage, what can I delete?",
    "Who first studied how memory works in the brain?",
    "What are common side effects of ibuprofen?",
    "Buy a new phone charger online.",
    "Write a tweet announcing our product launch.",
)

# Operations whose extractor accepts any question: they are chosen by the gate below.
_MEMORY_QUESTIONS = ("memory_recall", "memory_reason")
# The gate's classes: what a task that no formal extractor claims asks of memory.
GATE_CLASSES = ("none", "memory_remember", "memory_forget", "question")
# the time of a reminder, between "remind me" and what to do: "every Monday at 9", "tomorrow"
_WHEN = (
    r"(?:(?:every|each|on|at|in|by|this|next|tomorrow|tonight|today|later|before|after|"
    r"morning|afternoon|evening|night|week|month|day|hour|minutes?|hours?|days?|weeks?|"
    r"mon|tues|wednes|thurs|fri|satur|sun)(?:day)?s?\b|\d{1,2}(?::\d{2})?\s*(?:am|pm|h)?\b|[,\s])*"
)
_QUESTION = re.compile(
    r"\?\s*$|^\s*(?:who|whom|whose|what|wat|when|where|which|why|how|did|does|do|is|are|was|were|"
    rf"has|have|had|can|could|tell me|remind me(?!\s+{_WHEN}to\b))\b",
    re.I,
)
_ASKS_MEMORY = re.compile(
    r"\b(?:remember|recall|remind me(?! to\b)|did i (?:ever |already )?(?:say|tell|mention)|"
    r"have i (?:ever |already )?(?:said|told|mentioned)|"
    r"i (?:told|said to|mentioned to) you|you know about|in (?:your |my )?memory|"
    r"we (?:talked|spoke|discussed)|(?:based on|from|given) what you know|you know of|"
    r"what you (?:have|know|remember|stored|saved) (?:on|about)|(?:i've|i have) (?:told|said|mentioned)"
    r"(?: to)?(?: you)?|(?:do|did|would) you (?:know|have|remember) (?:my|our|anything about|"
    r"(?:where|what|when|who|how|if|whether) (?:i|my|we|our)))\b|\bagain\s*\?\s*$",
    re.I,
)
# Questions about the user's own life: no capability but memory can answer them.
_PERSONAL = re.compile(
    r"\b(?:my|our)\b|\bwhy\s+(?:\w+\s+){0,2}I\b|\bshould I\b|\b(?:do|did|have|am) I\b", re.I
)
# Commands to search memory, whatever their grammar.
_RECALL_COMMAND = re.compile(
    r"^\s*(?:please\s+)?(?:recall|search (?:my |your )?memory|look (?:it )?up in (?:your |my )?memory|"
    r"look up\b.*\bmy\b|look up what you (?:have|know)|check (?:your |my )?memory|"
    r"what do you (?:remember|know) about|"
    # a command whose object is what memory holds: "give me the 3 most relevant memories about"
    r"(?:give|show|list|find|fetch|get|pull up|bring up|read)\s+(?:me\s+)?(?:the\s+|all\s+|any\s+)?"
    r"(?:top\s+)?(?:\d+\s+)?(?:most\s+)?(?:relevant\s+|recent\s+|related\s+)?"
    r"(?:memories|notes|facts|things you (?:know|remember))\b|"
    # "pull up whatever I noted about ...": the object is what the user gave memory
    r"(?:give|show|list|find|fetch|get|pull up|bring up|dig up|read)\s+(?:me\s+)?(?:back\s+)?"
    r"(?:whatever|what|everything|anything|all)\s+(?:that\s+)?(?:i|i've|i have|we)\s+"
    r"(?:noted|told you|said|saved|stored|wrote down|jotted down|mentioned|gave you)\b)",
    re.I,
)
# the spellings of texting: "do u know my shoe size", "what's ur address for me"
_TEXTING = {"u": "you", "ur": "your", "r": "are", "pls": "please", "plz": "please", "abt": "about"}


def _texted(text: str) -> str:
    return re.sub(
        r"\b(?:u|ur|r|pls|plz|abt)\b(?!['’.])",
        lambda m: _TEXTING[m.group(0).lower()],
        text,
        flags=re.I,
    )


# Requests that say they are to be answered from memory, whatever their grammar.
_FROM_MEMORY = re.compile(
    # and said as a command: "use what you know", "go by what you remember", "draw on ..."
    r"\b(?:(?:based on|from|given|using|use|draw on|drawing on|go by|going by|rely on|relying on) "
    r"what (?:you know|you remember|i(?:'ve| have) told you)|"
    r"(?:from|according to|based on|using|in) (?:my|your) (?:notes|memory|memories)|"
    r"(?:what|everything|all) (?:i(?:'ve| have)|i) (?:told|said to|mentioned to) you)\b",
    re.I,
)
_WHY = re.compile(
    r"^\s*(?:(?:from|according to|based on|using) (?:my|your) (?:notes|memory|memories)\s*,?\s*)?"
    r"(?:please\s+)?(?:explain|why|summari[sz]e|reason about)\b",
    re.I,
)
_KEEP_VERB = re.compile(
    r"\b(?:remember|memori[sz]e|note|jot|save|store|record|log|file|keep|commit|(?:hold|hang) on to)\b",
    re.I,
)
_FORGET_VERB = re.compile(
    r"\b(?:forget|delete|erase|remove|wipe|drop|clear|scrap|scratch|ditch|toss|purge|discard|"
    r"get rid of|unlearn|"
    # "let go of" asked of the agent ("you can let go of X now"), not a person's own letting go
    r"(?:^\s*|\byou\s+(?:can|may|could)\s+(?:now\s+)?)let go of)\b",
    re.I,
)
# a forget request asked as a polite question: "Can you get rid of the entry about X?", "could
# you please delete ..."; a command, not a question to memory
_ASKED_TO_FORGET = re.compile(
    r"^\s*(?:(?:hey|ok|okay|so|oh|please|pls)[\s,!]+)*(?:can|could|would|will)\s+you\s+"
    r"(?:please\s+|just\s+|now\s+)*(?:forget|delete|erase|remove|wipe|drop|clear|scrap|scratch|"
    r"ditch|toss|purge|discard|get rid of|scrub|unlearn)\b",
    re.I,
)
_MEMORY_WORD = re.compile(r"\b(?:memory|memories|notes?|on file|in mind)\b", re.I)
# a statement about the user's own things: "my locker number is 214", "I parked on level 3"
_OWN_STATEMENT = re.compile(
    r"^\s*(?:(?:fyi|btw|heads[\s-]up|so|oh|also)\b[\s,:-]*)*(?:my|our|i|i'm|i've|we|we're)\b", re.I
)
_ASIDE_CUE = re.compile(r"^\s*(?:fyi|btw|heads[\s-]up|note to self|just so you know)\b", re.I)
_REMINDER = re.compile(
    rf"\bremind me\s+{_WHEN}to\b|\b(?:remember|don'?t (?:let me )?forget)\s+to\b|"
    r"\b(?:at|on|by|tomorrow|tonight)\s+\d",
    re.I,
)
# asking memory to stop keeping something, or not to lose it ("don't forget that ...")
_STOP_KEEPING = re.compile(
    r"\b(?:anymore|any more|no longer|stop remembering|(?:don'?t|do not) (?:want|need) you to "
    r"(?:remember|keep|know)|no need to (?:keep|remember|store))\b",
    re.I,
)
_DONT_FORGET = re.compile(r"\b(?:don'?t|do not|never) (?:let me )?forget\b(?! to\b)", re.I)
# Requests that are not for memory whatever memory holds: a reminder of something to do ("remind
# me every Monday at 9 to ...", "remember to buy milk"), and asking how a thing is done ("how do
# I reset a router?"; but "how do I usually take my coffee?" asks about the user)
_NOT_FOR_MEMORY = re.compile(
    r"^\s*(?:(?:hey|ok|okay|so|oh|please|pls)[\s,!]+)*(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    rf"(?:remind\s+me\s+{_WHEN}to|remember\s+to|don'?t\s+(?:let\s+me\s+)?forget\s+to)\b|"
    # a request to change something in the world: "could you shift my check-up to Thursday",
    # "send an email to Marco", "book a table" (but "cancel my note about X" is memory's)
    r"^\s*(?:(?:hey|ok|okay|so|please|pls)[\s,!]+)*(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?:shift|move|reschedule|postpone|push\s+back|bring\s+forward|book|cancel|schedule|order|buy|"
    r"send|email|text|call|phone|pay|transfer|renew|extend|upgrade|downgrade|unsubscribe|"
    r"subscribe|top\s+up|sign\s+up|register|return|refund|unfollow|deactivate|close)\s+"
    r"(?:my|our|the|a|an|me)\b"
    r"(?!.*\b(?:note|notes|memory|memories|remember|remembered|saved|stored)\b)|"
    r"^\s*how\s+(?:do|can|could|should)\s+(?:i|we|one)\s+(?!know\b|remember\b|recall\b)\w+\b"
    r"(?!.*\b(?:usually|normally|always|like|prefer|take\s+my)\b)|"
    # a reminder asked with another verb, at a time: "ping me each Friday around four ...",
    # "nudge me tomorrow at 8", "give me a shout on Monday"
    r"^\s*(?:(?:hey|ok|okay|so|please|pls)[\s,!]+)*(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?:ping|nudge|buzz|alert|notify|poke|text|message|give\s+me\s+a\s+(?:nudge|shout|ping|buzz))"
    r"(?:\s+me)?\s+(?:(?:every|each|on|at|in|around|about|tomorrow|tonight|today|later|next|this|"
    r"before|after|once|twice|daily|weekly)\b|\d)|"
    # summarising or translating a document that is not given ("Summarise the meeting notes"),
    # not what the user told memory ("summarise my notes", "what you know about ...")
    r"^\s*(?:please\s+)?(?:summari[sz]e|translate|proofread|shorten|paraphrase)\s+"
    r"(?:the|this|that|these|those|a|an)\b"
    r"(?!.*\b(?:my|our|i|i've|me|you\s+(?:know|remember|have|stored|kept)|memory|memories|told)\b)",
    re.I,
)
# deleting something kept in another program or device, not in memory: "wipe the saved passwords
# out of Firefox", "delete the cookies from Chrome", "remove the old photos from my phone"
_DELETE_ELSEWHERE = re.compile(
    r"\b(?:delete|erase|remove|wipe|clear|purge|scrub)\b.*?\b(?:(?:from|out\s+of|off)\s+"
    r"(?-i:(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|"
    r"April|May|June|July|August|September|October|November|December|Memory|Notes)\b)[A-Z][\w.-]+)|"
    r"(?:from|out\s+of|off|in|on)\s+(?:my\s+|the\s+|our\s+)?(?:phone|laptop|computer|browser|"
    r"hard\s+drive|usb\s+(?:stick|drive)|server|inbox|desktop|downloads?\s+folder|cloud|camera|"
    r"tablet))\b",
    re.I,
)
# what is kept in the world, not in memory: an account, a login, messages, a mail folder ("delete
# my account together with my login", "4,000 messages in my junk folder; wipe the lot")
_WORLD_THINGS = (
    r"(?:accounts?|logins?|profiles?|subscriptions?|e-?mails|messages|texts|voicemails?|inbox|"
    r"junk|spam|trash|recycle\s+bin|folders?|cookies|cache|browser\s+history|apps?|tabs|"
    r"contacts|photos|pictures|downloads|files)"
)
_WORLD_DELETE = re.compile(
    # the verb's object is such a thing ("delete my Lemmata account")
    r"\b(?:delete|erase|remove|wipe|clear|purge|empty|get\s+rid\s+of)\s+"
    r"(?:(?:my|our|the|all|of|these|those|this|that|old)\s+)*(?:[\w'’-]+\s+){0,2}?"
    rf"{_WORLD_THINGS}\b|"
    # or it points back at one named before ("4,000 messages in my junk folder; wipe the lot")
    rf"\b{_WORLD_THINGS}\b.*\b(?:delete|erase|remove|wipe|clear|purge|empty|get\s+rid\s+of)\s+"
    r"(?:the\s+lot|them(?:\s+all)?|all\s+of\s+them|(?:it|everything)\s+(?:in\s+)?there)\b",
    re.I | re.S,
)
_ABOUT_MEMORY = re.compile(
    r"\b(?:memory|memories|notes?|remember\w*|told\s+you|you\s+know|stored|kept|entry|entries)\b",
    re.I,
)
_GENERAL = re.compile(
    # "how do I reset a router": asking how a thing is done, not what memory holds (but "how do
    # I know her", "how did I ...")
    r"^\s*how\s+(?:do|can|could|should|would)\s+(?:i|we|you|one)\s+(?!know\b|remember\b)\w+|"
    r"\b(?:people|someone|anyone|in general|usually|generally|typically|tips?|best way|how to|"
    r"(?:at|in|for) most (?:\w+ )?(?:companies|places|people|countries|teams))\b",
    re.I,
)


# the person's own trouble, said after a fact to keep: ", que siempre se me olvida", ", car
# je l'oublie toujours", ", weil ich es immer vergesse", ", que eu sempre esqueço"
_OWN_FORGETTING = (
    r"(?:\s*,\s*(?:que|porque|pues|car|parce\s+qu(?:e|')|weil|denn|da|pois|já\s+que)\b[^,]*?"
    r"\b(?:olvid\w*|oubli\w*|vergess\w*|vergiss\w*|esque[cç]\w*)\b[^,]*?)"
)


# Memory requests in German, French, Spanish and Portuguese, read by their form: the gate's
# cues are English. A request to keep ("Retiens que ...", "Recuerda que ...", "Merk dir, dass
# ..."), to forget ("Olvida lo de ...", "Vergiss alles über ...") and a question about the
# user's own things or what memory holds ("Où habite ma sœur ?", "Was hast du über X
# gespeichert?"); "basándote en lo que sabes de mí" asks memory to reason.
_FOREIGN_KEEP = re.compile(
    # (after a word that only calls the listener: "Oye, apúntate ...", "Écoute, note que ...")
    r"^\s*(?:(?:s'il te plaît|por favor|bitte|oye|oiga|mira|escucha|écoute|écoutez|dis|olha|"
    r"ouve|ei|hör mal|hey)[\s,!]+)*(?:retiens|souviens-toi|rappelle-toi|"
    r"note|notez|retenez|recuerda|recuerde|acuérdate de|ap[uú]nta(?:te)?|an[oó]ta(?:te)?|"
    r"gu[aá]rda(?:te)?|lembra|lembre|"
    r"lembre-se de|lembra-te de|anote|grava|merk dir|merke dir|merken sie sich|notier dir|"
    r"speicher|speichere)\s*,?\s*"
    # where or for whom it is kept, said before the clause: "Note quelque part que ...", "anota
    # aí na tua memória", "apúntate en la memoria"
    r"(?:(?:quelque part|pour moi|bien|irgendwo|für mich|en algún (?:sitio|lado|lugar)|para mí|"
    r"em algum lugar|para mim|por favor|bitte|s'il te plaît|aí|ahí|là|"
    r"(?:en|na|no|dans|in)\s+(?:(?:la|le|a|o|tu|tua|ta|ma|mi|deinem|deiner|dem|der)\s+)?"
    r"(?:memoria|memória|mémoire|gedächtnis|cabeza|cabeça|tête|kopf))\s*,?\s*)*"
    # the fact as a clause ("que ...") or after a colon ("Anota, por favor: ...")
    r"(?:que\b|qu'|dass\b|das\b|:)\s*(?P<rest>.+?)"
    # the person's own trouble after the fact: ", que siempre se me olvida", ", car je l'oublie"
    rf"{_OWN_FORGETTING}?"
    # a thanks or a tag question after the fact: ", merci.", ", tá?", ", ¿vale?"
    r"(?:\s*,\s*¿?(?:merci|thanks|gracias|obrigad[oa]|danke|tá|ok|vale|né|d'accord|por favor|porfa|"
    r"pf|svp|stp|bitte|"
    r"s'il te plaît)\b[.!?]*)?\s*[.!]*\s*$",
    re.I,
)
# the keeping asked after the fact, as a verb with its pronoun: "... Retiens-le stp.",
# "..., guárdalo", "... Merk dir das.", "... Anota isso, por favor."
_FOREIGN_KEEP_AFTER = re.compile(
    r"^\s*(?P<rest>.+?)[\s.!,;:]+(?:(?:s'il te plaît|por favor|bitte|porfa)[\s,]+)?"
    r"(?:(?:retiens|retenez|note|notez|garde|gardez)[\s-]+(?:le|la|les|ça|cela|bien)|"
    r"(?:rappelle|souviens)-toi[\s-]+(?:de\s+)?(?:ça|cela)|"
    r"(?:gu[aá]rd|ap[uú]nt|an[oó]t|recu[eé]rd)a(?:te)?l[oa]|"
    r"(?:guarda|anota|grava|lembra|lembre)(?:-o|-a|\s+isso|\s+isto|-te\s+disso|-se\s+disso)|"
    r"(?:merk|notier)\s+dir\s+das|(?:speicher|speichere|behalte?)\s+das)"
    r"(?:\s+(?:bien|bitte|por favor|porfa|stp|svp|s'il te plaît|para mí|pour moi|für mich))*"
    r"(?:\s*,?\s*(?:stp|svp|s'il te plaît|por favor|porfa|bitte|merci|gracias|obrigad[oa]|danke))?"
    r"\s*[.!]*\s*$",
    re.I,
)
# a preface that only says there is something to keep: "Petit truc à noter pour plus tard :",
# "Algo para apuntar:", "Zum Merken:"
_FOREIGN_KEEP_LABEL = re.compile(
    r"^[^:]{0,60}?\b(?:not(?:er|ar|ieren)|retenir|anotar|apuntar|guardar|merken|lembrar|recordar|"
    r"memori[sz]\w*|souvenir|notiz)\b[^:]{0,30}?\s*:\s*(?=\S)",
    re.I,
)
_FOREIGN_FORGET = re.compile(
    # (after a word that joins it to the reason before: "..., alors efface ...", "..., also
    # lösch bitte ...", "..., así que borra ...", "..., então apaga ...")
    r"^\s*(?:(?:alors|donc|et|also|dann|und|daher|deshalb|así\s+que|entonces|pues|y|então|"
    r"por\s+isso|e)\s+)?(?:(?:s'il te plaît|por favor|bitte)[\s,]+)?(?:oublie|oubliez|olvida|olvide|olvídate de|"
    r"esquece|esqueça|vergiss|vergessen sie|lösche|lösch|löschen sie|efface|effacez|supprime|"
    r"supprimez|borra|borre|elimina|elimine|apaga|apague)[\s,]+"
    r"(?:(?:bitte|s'il te plaît|por favor)\s*,?\s+)?(?:(?:tout )?(?:ce que tu sais (?:sur|de)|ce qui concerne)|tout sur|todo (?:lo )?(?:de|sobre)|"
    r"lo de|tudo (?:sobre|de)|alles über|alles zu|das mit|"
    # what was said or is known about it: "ce que je t'ai dit sur X", "lo que sabes del X" (del
    # is "de el": the article stays), "o que eu disse sobre X"
    r"(?:ce que (?:tu sais|je t'ai dit|je t'avais dit)|lo que (?:sabes|te dije|te conté)|"
    r"o que (?:sabes|eu (?:te )?disse|te disse)|"
    # "(alles,) was du zu X gespeichert hast": the verb after the topic goes below
    r"(?:alles\s*,?\s+)?was\s+du)\s+(?:sur|à propos de|sobre|de(?!l\b)|d(?=el\b)|zu|über|von))?"
    r"\s*(?P<rest>.+?)\s*[.!]*\s*$",
    re.I,
)
# German puts the verb last: "Das mit dem Fitnessstudio kannst du löschen"
_FOREIGN_FORGET_LAST = re.compile(
    r"^\s*(?:das\s+mit|alles\s+(?:über|zu))\s+(?P<rest>.+?)\s+(?:kannst|darfst|sollst|könntest)\s+du\s+"
    r"(?:(?:jetzt|ruhig|bitte|auch)\s+)*(?:vergessen|löschen|streichen)\b",
    re.I,
)
# what only points back at a topic named in another clause: "apaga isso", "lösch alles, was du
# darüber gespeichert hast", "efface ça", "bórralo"
_FOREIGN_POINTING = re.compile(
    r"^(?:isso|isto|iss|ça|cela|tout\s+ça|eso|esto|todo\s+eso|das|es|alles|tout|todo|tudo|lo|"
    r"it|that)\b(?:\s*,?\s*(?:was|ce\s+que|lo\s+que|o\s+que|que)\b.*)?$",
    re.I,
)
# the topic of the clause a pronoun points back at: what a keep verb is denied about ("Não
# quero mais que guardes nada sobre X"), else the subject before its verb ("Das Projekt
# Bluebird ist abgesagt")
_FOREIGN_ABOUT = re.compile(r"\b(?:sobre|über|sur|à\s+propos\s+de|acerca\s+de)\s+(?P<x>.+)$", re.I)
_FOREIGN_VERB = re.compile(
    r"\s+(?:ist|sind|war|wurde|hat|est|sont|a\s+(?:été|\w+é)|es|está|son|fue|ya|é|são|foi|já)\b",
    re.I,
)
# the words that name a note rather than its topic: "die Notiz über X", "la note sur X"
_FOREIGN_NOTE = re.compile(
    r"^(?:(?:die|meine|deine|la|ma|ta|el|mi|tu|a|o|minha|tua)\s+)?(?:notiz|notizen|eintrag|note|"
    r"nota|notas|registro|entrada)\s+(?:über|zu|sur|de|sobre|acerca\s+de)\s+",
    re.I,
)


# a name inside a clause (not its first word): "Ya no me gusta Sakura", "Je ne vois plus le Dr
# Okafor"
_FOREIGN_NAME = re.compile(r"(?<=\s)(?:[A-ZÀ-Ý][\w'’-]*\.?)(?:\s+[A-ZÀ-Ý][\w'’-]*)*")
# a forget verb with its object pronoun joined to it: "bórralo", "olvídala", "efface-le",
# "apaga-o"; read as the verb and the pronoun
_ENCLITIC = re.compile(
    r"\b(b[oó]rr[ae]|elim[ií]n[ae]|olv[ií]d[ae])(l[oa]s?)\b|"
    r"\b(efface|effacez|supprime|supprimez|oublie|oubliez|apaga|apague|esquece|esqueça)-"
    r"(le|la|les|o|a|os|as)\b",
    re.I,
)
# the verb that closes a German relative clause after its topic: "was du zu X gespeichert hast"
_FOREIGN_KEPT_VERB = re.compile(
    r"\s+(?:gespeichert|gemerkt|notiert|abgelegt|aufgeschrieben|behalten)(?:\s+(?:hast|habe|hattest))?$|"
    r"(?<=\w)\s+(?:weißt|kennst)$",
    re.I,
)
_UNACCENTED = str.maketrans("áéíóúÁÉÍÓÚ", "aeiouAEIOU")
# where memory keeps it, said with the verb: "de tu memoria", "de ta mémoire", "aus deinem
# Gedächtnis", "da tua memória"
_FOREIGN_PLACE = re.compile(
    r"\s+(?:(?:de|da|do|aus|dans|in|en|na|no)\s+(?:tu|tus|ta|tes|tua|tuas|teu|teus|deinem|deiner|"
    r"deinen|mi|mis|vos|votre|sua)\s+(?:memoria|mémoire|memória|gedächtnis|speicher|notas|notes|"
    r"notizen|registros?|apuntes)|"
    # memory itself needs no possessive: "Apaga da memória ...", "aus dem Gedächtnis"
    r"(?:da|de\s+la|de\s+a|aus\s+dem|dans\s+la|de\s+la|en\s+la|na|in\s+der)\s+"
    r"(?:memoria|mémoire|memória|gedächtnis))\b",
    re.I,
)


def _enclitic(m: re.Match[str]) -> str:
    if m[1]:
        return f"{m[1].translate(_UNACCENTED)} {m[2]}"
    return f"{m[3]} {'ça' if m[4].lower() in ('le', 'la', 'les') else 'isso'}"


def _foreign_referent(clause: str) -> str | None:
    clause = clause.strip(" .!?,;")
    m = _FOREIGN_ABOUT.search(clause)
    if m:
        return m["x"].strip(" .!?,")
    verb = _FOREIGN_VERB.search(clause)
    if verb and 1 <= len(clause[: verb.start()].split()) <= 6:
        return clause[: verb.start()].strip()
    names = _FOREIGN_NAME.findall(clause)
    return names[0].strip() if len(names) == 1 else None


def _foreign_forget(text: str) -> str | None:
    """The topic of a forget request in German, French, Spanish or Portuguese: the object of
    the forget verb that opens any clause of it, up to the first clause boundary, or, where
    that object only points back ("apaga isso"), the topic of another clause."""
    text = _FOREIGN_PLACE.sub("", _ENCLITIC.sub(_enclitic, text))
    starts = [0] + [m.end() for m in re.finditer(r"(?<=[.!?;,])\s+", text)]
    for start in starts:
        m = _FOREIGN_FORGET.match(text[start:]) or _FOREIGN_FORGET_LAST.match(text[start:])
        if not m:
            continue
        rest = first_clause(m["rest"].strip(" .!?,")).strip(" .!?,:")
        rest = _FOREIGN_KEPT_VERB.sub("", rest).strip(" .!?,:")
        if not _FOREIGN_POINTING.match(rest):
            return _FOREIGN_NOTE.sub("", rest) or None
        split = r"(?<=[.!?;:])\s+|,\s+|\s+:\s+"
        before = [c for c in re.split(split, text[:start]) if c.strip(" .!?,;:")]
        after = [c for c in re.split(split, m["rest"])[1:] if c.strip(" .!?,;:")]
        for clause in [*reversed(before), *after]:
            said = _foreign_referent(clause)
            if said:
                return said
        return None
    return None


_FOREIGN_ARITHMETIC = re.compile(
    r"\d\s*(?:[-+*/×÷^]|\b(?:por|mal|fois|vezes|plus|más|mais|minus|menos|moins|entre|durch|"
    r"geteilt\s+durch|dividido\s+por|divisé\s+par|hoch)\b)\s*\d|"
    r"\b(?:raíz|raiz|racine|wurzel|quadratwurzel|logaritmo|logarithme|logarithmus|"
    r"porcentaje|pourcentage|prozent|porcentagem)\b",
    re.I,
)
_FOREIGN_QUESTION = re.compile(
    # (after a "tell me" that opens it: "Sag mal, welchen ...", "Dis-moi, où ...")
    r"^\s*¿|^\s*(?:(?:sag|sagen sie|dis|dites|dime|diga|diz|oye)(?:[\s-]+(?:mal|moi|me|aí))?\s*,\s*)?"
    # (after a "remind me" that asks it: "Rappelle-moi dans quelle ville ...", "Recuérdame dónde
    # ...", "Erinnere mich, wann ..."; "Rappelle-moi d'appeler ..." is a reminder)
    r"(?:(?:rappelle-moi|rappelez-moi|recuérdame|recuérdeme|erinnere\s+mich|erinner\s+mich|"
    r"lembra-me|lembre-me)\s*,?\s*(?:(?:dans|en|em|in|à|a|de|von|con|com|mit|por|para|pour|an|"
    r"bei|no|na|à)\s+)?)?"
    r"(?:was (?:hast|habe|weißt|ist|sind|war)|wie|wer|wo|wann|welche[rsnm]?|warum|hast du|weißt du|où|quand|qui|"
    r"quel(?:le)?s?|comment|combien|pourquoi|est-ce que|qu'est-ce|dónde|cuándo|quién|cuál|"
    r"cómo|qué|cuánto|onde|quando|quem|qual|como|quanto|o que)\b",
    re.I,
)
# the prepositions a question word may follow: "em que", "en qué", "à quelle", "unter welchem"
_FOREIGN_PREPOSITION = (
    r"(?:en|em|a|à|de|dans|pour|par|sur|con|com|por|para|desde|hasta|até|no|na|do|da|in|an|auf|"
    r"mit|von|zu|bei|für|aus|nach|um|unter|über|seit|bis)"
)
# the same question asked in a later clause or after its first words: "Mein Laptop hat das Netz
# vergessen – welches WLAN nehmen wir?", "C'est quand, déjà, ...?", "..., weißt du das noch?"
# (words English shares, "was" and "como", are left to the start of a question)
_FOREIGN_QUESTION_LATER = re.compile(
    # (or in a sentence of its own: "Mein Laptop hat das Netz vergessen. Unter welchem Namen
    # ...?", "... Was weißt du dazu?"; a question word may follow its preposition: "em que
    # cidade", "en qué fecha", "unter welchem Namen")
    r"(?:[,;:–—]\s*¿?|(?<=[.!?])\s+¿?|\bc'est\s+|\bes\s+|\bé\s+|\bist\s+)"
    rf"(?:{_FOREIGN_PREPOSITION}\s+que\b|(?:{_FOREIGN_PREPOSITION}\s+)?(?:wie|wer|wo|wann|welche[rsnm]?|warum|"
    r"weißt\s+du|erinnerst\s+du|was\s+(?:weißt|hast|habe)\s+du|où|quand|qui|quel(?:le)?s?|"
    r"comment|combien|pourquoi|te\s+souviens|"
    r"dónde|cuándo|quién|cuál|cómo|qué|cuánto|te\s+acuerdas|onde|quem|qual|quanto|lembras))"
    r"\b[^?]*\?\s*$|"
    # a Spanish question anywhere, set off by its opening mark: "Oye, ¿en qué fecha ...? Quiero
    # reservar algo."
    r"(?:^|[\s,;:.!?])¿[^?¿]{3,}\?",
    re.I,
)
_FOREIGN_MEMORY = re.compile(
    r"\b(?:mein|meine[mnrs]?|unser(?:e[mnrs]?)?|gespeichert|gemerkt|erinnerst|ma|mon|mes|notre|"
    r"nos|déjà|retenu|mi|mis|nuestr[oa]s?|guardado|recuerdas|meu|minha|meus|minhas|nosso|nossa|"
    r"lembras|acuerdas|acordas|souviens|nochmal|noch mal|(?:weißt|wusstest)\s+du\s+(?:das\s+|es\s+)?noch|"
    r"sabes de mim|sabes de mí|sais de moi|weißt du über mich)\b",
    re.I,
)
_FOREIGN_REASON = re.compile(
    r"\b(?:basándote en|según|con) lo que sabes|\b(?:d'après|selon|avec|à partir de) ce que tu sais|"
    r"\bcom o que sabes|\bmit dem,? was du (?:über mich )?weißt|"
    r"\b(?:com base n)?o que (?:tu )?sabes de mim|\bnach allem,? was du (?:über mich )?weißt",
    re.I,
)
# words of English that the foreign patterns could take for their own ("note that ...", "como")
_ENGLISH_START = re.compile(r"^\s*note\s+(?:that|down)\b", re.I)


@dataclass(frozen=True)
class Route:
    """The router's decision: ``operation`` (None when declined) and its ``args``;
    ``reason`` says why, in words a user can act on; ``scores`` are the word similarities."""

    operation: str | None
    args: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0
    reason: str = ""
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def declined(self) -> bool:
        return self.operation is None


class Router:
    """Routes tasks over ``registry`` with ``embedder`` (the offline MiniLM by default).

    ``evidence_at`` is the similarity a recalled item needs to count as memory knowing about a
    task (a gate feature); ``hint_at`` the word similarity above which a decline names the
    operation the task resembles; ``near_at`` and ``near_margin``: the similarity to an
    operation's nearest example, and its margin over the nearest request no operation serves,
    that take a task no extractor claimed for a capability outside memory (a folder of data
    files); ``weights``: the memory gate (see :class:`Gate`; the fitted
    ``router_weights.json`` beside this module by default).
    """

    def __init__(
        self,
        registry: Registry,
        embedder: Embedder,
        *,
        evidence_at: float = 0.5,
        hint_at: float = 0.45,
        near_at: float = 0.25,
        near_margin: float = 0.05,
        weights: Gate | None = None,
    ) -> None:
        self.registry = registry
        self.embedder = embedder
        self.evidence_at = evidence_at
        self.hint_at = hint_at
        self.near_at = near_at
        self.near_margin = near_margin
        self.gate = weights if weights is not None else Gate.load()
        self._ops: list[Operation] = list(registry)
        texts: list[str] = []
        owner: list[int] = []
        for i, op in enumerate(self._ops):
            for t in (op.summary, *op.examples):
                texts.append(t)
                owner.append(i)
        self._owner = np.asarray(owner)
        # embedded once per router (the agent keeps one); a task costs one product with them
        self._vectors = embedder.embed(texts) if texts else np.zeros((0, 1), np.float32)
        # the decline examples are embedded when first needed: the form settles most tasks
        self._decline_vectors: np.ndarray | None = None

    def similarities(self, text: str) -> dict[str, float]:
        """The best cosine similarity of ``text`` to each operation's description and examples."""
        return self._similarities(self._vector(text)) if self._ops else {}

    def decline_similarity(self, text: str) -> float:
        """The best cosine similarity of ``text`` to the requests no operation serves."""
        return float(np.max(self._decline_sims(self._vector(text))))

    def _vector(self, text: str) -> np.ndarray:
        # the agent embedded the task already: its embedder answers from that vector
        return np.asarray(self.embedder.embed([text])[0])

    def _similarities(self, v: np.ndarray) -> dict[str, float]:
        best = np.full(len(self._ops), -1.0)
        np.maximum.at(best, self._owner, self._vectors @ v)
        return {
            op.qualified_name: round(float(s), 4) for op, s in zip(self._ops, best, strict=True)
        }

    def _decline_sims(self, v: np.ndarray) -> np.ndarray:
        if self._decline_vectors is None:  # embedded when first needed
            self._decline_vectors = self.embedder.embed(list(DECLINE_EXAMPLES))
        return np.asarray(self._decline_vectors @ v)

    def _near(self, v: np.ndarray, k: int) -> dict[str, float]:
        """Per operation and for the decline class: the mean of the ``k`` nearest examples."""
        sims = self._vectors @ v
        out: dict[str, float] = {}
        for i, op in enumerate(self._ops):
            mine = np.sort(sims[self._owner == i])[::-1][:k]
            out[op.qualified_name] = float(mine.mean()) if mine.size else -1.0
        out["decline"] = float(np.sort(self._decline_sims(v))[::-1][:k].mean())
        return out

    def features(
        self, text: str, evidence: float | None = None, *, v: np.ndarray | None = None
    ) -> dict[str, float]:
        """What the memory gate reads of a task: its nearest examples per memory operation and
        among the requests no operation serves (best, and the mean of the three nearest), how
        well memory matched it, and the cues of its form (a question, a request to keep or to
        forget, a statement about the user's own things, the memory extractors' findings)."""
        if v is None:
            v = self._vector(text)
        cued = _texted(cue_words(text))
        best = self._similarities(v)
        top3 = self._near(v, 3)
        decline = self._decline_sims(v)
        others = [n for n in best if not n.startswith("memory_")]
        f: dict[str, float] = {}
        for name in (*_MEMORY_QUESTIONS, "memory_remember", "memory_forget"):
            f[f"best:{name}"] = best.get(name, -1.0)
            f[f"top3:{name}"] = top3.get(name, -1.0)
        f["best:decline"] = float(np.max(decline))
        f["top3:decline"] = top3["decline"]
        f["best:other"] = max((best[n] for n in others), default=-1.0)
        e = 0.0 if evidence is None else float(evidence)
        f["evidence"] = e
        f["evidence_high"] = float(e >= self.evidence_at)
        remember = self.registry.find("memory_remember")
        forget = self.registry.find("memory_forget")
        cues = {
            "question": (bool(_QUESTION.search(cued)) or bool(_WHY.match(cued)))
            and not _ASKED_TO_FORGET.match(cued),
            "ends_question": cued.rstrip().endswith("?"),
            "asks_memory": bool(_ASKS_MEMORY.search(cued)) or bool(_RECALL_COMMAND.match(cued)),
            "from_memory": bool(_FROM_MEMORY.search(cued)),
            "why": bool(_WHY.match(cued)),
            "personal": bool(_PERSONAL.search(cued)),
            "keep_verb": bool(_KEEP_VERB.search(cued)),
            "forget_verb": bool(_FORGET_VERB.search(cued)),
            "memory_word": bool(_MEMORY_WORD.search(cued)),
            "own_statement": bool(_OWN_STATEMENT.match(cued)) and not cued.rstrip().endswith("?"),
            "aside": bool(_ASIDE_CUE.match(cued)),
            "reminder": bool(_REMINDER.search(cued)),
            # a request that says to answer from memory is not a general question ("is there
            # anyone there I could stay with? Use what you know.")
            "general": bool(_GENERAL.search(cued)) and not _FROM_MEMORY.search(cued),
            "stop_keeping": bool(_STOP_KEEPING.search(cued)),
            "dont_forget": bool(_DONT_FORGET.search(cued)),
            "remember_form": remember is not None and bool(remember.arguments(text)),
            "forget_form": forget is not None and bool(forget.arguments(text)),
            "remember_read": remember is not None and bool(remember.arguments(text, loose=True)),
            "forget_read": forget is not None and bool(forget.arguments(text, loose=True)),
        }
        f.update({k: float(c) for k, c in cues.items()})
        f["words"] = float(np.log1p(len(text.split())))
        # what memory knows counts for a question, not for a command
        f["question*evidence"] = f["question"] * e
        f["personal*evidence"] = f["personal"] * e
        f["own_statement*keep"] = f["own_statement"] * f["keep_verb"]
        f["remember_read*ends_question"] = f["remember_read"] * f["ends_question"]
        return f

    def route(self, text: str, *, evidence: float | None = None) -> Route:
        """Route one task; ``evidence`` is how well memory matched it (None: not looked)."""
        text = text.strip()
        if not text:
            return Route(None, reason="the task is empty: say what you want done")
        v = self._vector(text) if self._ops else None
        scores = self._similarities(v) if v is not None else {}
        fired, settled = self.formal(text, scores)
        if settled:
            sim, op, args = fired[0]
            why = f"the task's form matches {op.qualified_name}"
            return Route(op.qualified_name, args, sim, why, scores)
        foreign = self._foreign_memory(text, evidence)
        if foreign is not None:
            return Route(*foreign, scores=scores)
        # what memory is asked for, if anything: the fitted gate over words, evidence and form
        feats = self.features(text, evidence, v=v) if v is not None else {}
        probs = self.gate.probabilities(feats) if feats else {"none": 1.0}
        if _NOT_FOR_MEMORY.search(_texted(cue_words(text))) or (
            (_DELETE_ELSEWHERE.search(text) or _WORLD_DELETE.search(text))
            and not _ABOUT_MEMORY.search(text)
        ):
            probs = {"none": 1.0}
        choice = max(probs, key=lambda c: probs[c])
        if choice != "none":
            routed = self._memory_route(choice, text, probs[choice], scores)
            if routed is not None:
                return routed
        if fired:  # memory's extractor read it, but the gate says it is not for memory
            sim, op, args = fired[0]
            why = f"the task's form matches {op.qualified_name}"
            return Route(op.qualified_name, args, sim, why, scores)
        decline_near = float(np.max(self._decline_sims(v))) if v is not None else -1.0
        # a request outside memory whose form its extractor did not expect, read loosely
        for name in sorted(scores, key=lambda n: -scores[n]):
            op_found = self.registry.get(name)
            if op_found.capability == "memory" or op_found.read is None:
                continue
            if scores[name] < self.near_at or scores[name] - decline_near < self.near_margin:
                continue
            read = op_found.arguments(text, loose=True)
            if read:
                why = f"the task reads like the examples of {name}"
                return Route(name, read, scores[name], why, scores)
        best_name, best = max(scores.items(), key=lambda kv: kv[1], default=(None, 0.0))
        if feats.get("question") and best_name in _MEMORY_QUESTIONS:
            return Route(
                None,
                {},
                best,
                "memory holds nothing about this question, and no other operation serves it",
                scores,
            )
        if best_name is not None and best >= self.hint_at and best > decline_near:
            op = self.registry.get(best_name)
            needs = ", ".join(
                n for n, f in op.input.model_fields.items() if f.is_required() and n != "namespace"
            )
            example = f"; for example: {op.examples[0]}" if op.examples else ""
            return Route(
                None,
                {},
                best,
                f"this looks like {best_name}, but I could not find its {needs} in the text"
                + example,
                scores,
            )
        capabilities = ", ".join(sorted({op.capability for op in self._ops}))
        return Route(
            None, {}, best, f"no operation serves this task (I can do: {capabilities})", scores
        )

    def formal(
        self, text: str, scores: dict[str, float]
    ) -> tuple[list[tuple[float, Operation, dict[str, Any]]], bool]:
        """The operations outside memory whose extractors read ``text`` (nearest first), and
        whether the form settles the route: one of them is nearer than any memory operation
        whose extractor also read it ("Add to memory: the invoices live under Finance/2024")."""
        fired: list[tuple[float, Operation, dict[str, Any]]] = []
        for op in self._ops:
            if op.extract is None or op.capability == "memory":
                continue
            args = op.arguments(text)
            if args:
                fired.append((scores.get(op.qualified_name, 0.0), op, args))
        fired.sort(key=lambda f: -f[0])
        memory_form = [
            n for n in ("memory_remember", "memory_forget") if self._form(n, text) is not None
        ]
        best_memory_form = max((scores.get(n, 0.0) for n in memory_form), default=-1.0)
        return fired, bool(fired) and fired[0][0] >= best_memory_form

    def _foreign_memory(
        self, text: str, evidence: float | None
    ) -> tuple[str, dict[str, Any], float, str] | None:
        """A memory request in German, French, Spanish or Portuguese, read by its form: the
        operation, its arguments, a confidence and the reason (None: not such a request)."""
        if _ENGLISH_START.match(text):
            return None
        why = "the task's form matches {} (a request in another language)"
        m = _FOREIGN_KEEP.match(text)
        kept = m["rest"] if m else None
        after = None if m else _FOREIGN_KEEP_AFTER.match(text)
        if after:  # the fact is what was said before, without a preface that announces it
            kept = _FOREIGN_KEEP_LABEL.sub("", after["rest"].strip(" .!?,;:")) or None
        if kept and self.registry.find("memory_remember") is not None:
            return "memory_remember", {"text": kept}, 0.9, why.format("memory_remember")
        about = _foreign_forget(text)
        if about and self.registry.find("memory_forget") is not None:
            return "memory_forget", {"about": about}, 0.9, why.format("memory_forget")
        if not (
            _FOREIGN_QUESTION.search(text)
            or _FOREIGN_QUESTION_LATER.search(text)
            or _FOREIGN_REASON.search(text)
        ):
            return None
        name = "memory_reason" if _FOREIGN_REASON.search(text) else "memory_recall"
        # a question of arithmetic with nothing of the user's in it asks for a computation, not
        # memory ("¿Cuál es la raíz cuadrada de 144?", "Combien font 12 fois 7 ?")
        known = evidence is not None and evidence >= 0.25 and not _FOREIGN_ARITHMETIC.search(text)
        op = self.registry.find(name)
        if op is None or not (name == "memory_reason" or known or _FOREIGN_MEMORY.search(text)):
            return None
        return name, op.arguments(text) or {"query": text}, 0.7, why.format(name)

    def _form(self, name: str, text: str) -> dict[str, Any] | None:
        op = self.registry.find(name)
        return op.arguments(text) if op is not None else None

    def _memory_route(
        self, choice: str, text: str, p: float, scores: dict[str, float]
    ) -> Route | None:
        """The memory operation the gate chose, with its arguments (None: none could be read)."""
        if choice == "question":
            name = (
                "memory_reason"
                if _WHY.match(text) or _FROM_MEMORY.search(text)
                else "memory_recall"
            )
            op = self.registry.find(name) or self.registry.find("memory_recall")
            if op is None:
                return None
            args: dict[str, Any] | None = op.arguments(text) or {"query": text}
            why = "it reads like a question to memory"
        else:
            op = self.registry.find(choice)
            if op is None:
                return None
            strict = op.arguments(text)
            args = strict or op.arguments(text, loose=True)
            why = (
                f"the task's form matches {choice}"
                if strict
                else f"the task reads like the examples of {choice}"
            )
        if not args:
            return None
        return Route(op.qualified_name, args, p, f"{why} (memory gate {p:.2f})", scores)


@dataclass(frozen=True)
class Gate:
    """The memory gate: a multinomial logistic model over :meth:`Router.features` that says
    whether a task no formal extractor claimed asks memory to keep something, to forget
    something, or a question, or none of them. Fitted on the development tasks of
    ``benchmarks/agent_routing.py`` by ``benchmarks/router_fit.py``; stored as JSON."""

    features: tuple[str, ...]
    classes: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # classes x features
    bias: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None = None) -> Gate:
        """The gate stored at ``path`` (``router_weights.json`` beside this module).

        A file that cannot be read, is not JSON or does not hold a gate raises
        :class:`~lemmata.errors.ConfigError` naming the file and what is wrong.
        """
        where = path or WEIGHTS_FILE
        try:
            data = json.loads(Path(where).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(
                f"cannot read the router's memory gate from {where}: {exc} (refit it with "
                "benchmarks/router_fit.py, or reinstall lemmata for the shipped one)"
            ) from None
        try:
            return cls.from_dict(data)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    @classmethod
    def from_dict(cls, data: Any) -> Gate:
        """A gate from its JSON form (:meth:`to_dict`), checked: every field present, the
        classes those the router knows, and every array of the size the features and classes
        give."""
        if not isinstance(data, dict):
            raise ConfigError("a memory gate is a JSON object")
        missing = [
            k for k in ("features", "classes", "mean", "scale", "weights", "bias") if k not in data
        ]
        if missing:
            raise ConfigError(f"the memory gate lacks {', '.join(missing)}")
        try:
            features = tuple(str(f) for f in data["features"])
            classes = tuple(str(c) for c in data["classes"])
            mean = np.asarray(data["mean"], float)
            scale = np.asarray(data["scale"], float)
            weights = np.asarray(data["weights"], float)
            bias = np.asarray(data["bias"], float)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"the memory gate holds a value that is not a number: {exc}"
            ) from None
        unknown = set(classes) - set(GATE_CLASSES)
        if unknown or "none" not in classes:
            raise ConfigError(
                f"the memory gate's classes must be among {list(GATE_CLASSES)} and include "
                f"'none', not {list(classes)}"
            )
        n, m = len(features), len(classes)
        shapes = {
            "mean": (mean, (n,)),
            "scale": (scale, (n,)),
            "weights": (weights, (m, n)),
            "bias": (bias, (m,)),
        }
        for name, (array, shape) in shapes.items():
            if array.shape != shape:
                raise ConfigError(
                    f"the memory gate's {name} has shape {array.shape}, not {shape} "
                    f"({n} features, {m} classes)"
                )
        if not np.all(np.isfinite(weights)) or not np.all(scale > 0):
            raise ConfigError("the memory gate's weights must be finite and its scales positive")
        meta = data.get("meta", {})
        return cls(
            features=features,
            classes=classes,
            mean=mean,
            scale=scale,
            weights=weights,
            bias=bias,
            meta=dict(meta) if isinstance(meta, dict) else {},
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "classes": list(self.classes),
            "mean": [round(float(x), 6) for x in self.mean],
            "scale": [round(float(x), 6) for x in self.scale],
            "weights": [[round(float(x), 6) for x in row] for row in self.weights],
            "bias": [round(float(x), 6) for x in self.bias],
            "meta": self.meta,
        }

    def matrix(self, rows: list[dict[str, float]]) -> np.ndarray:
        """The standardised feature matrix of ``rows`` (a missing feature reads as 0)."""
        x = np.asarray([[r.get(k, 0.0) for k in self.features] for r in rows], float)
        return (x - self.mean) / self.scale

    def probabilities(self, row: dict[str, float]) -> dict[str, float]:
        z = self.matrix([row])[0] @ self.weights.T + self.bias
        z = np.exp(z - z.max())
        p = z / z.sum()
        return {c: float(q) for c, q in zip(self.classes, p, strict=True)}
