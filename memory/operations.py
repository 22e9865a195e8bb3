"""PlugMem's operations (see :mod:`lemmata.operations`): ``remember``, ``recall``, ``forget`` and
``reason``, each confined to one namespace (user, agent, session).

The memory lives in ``data_dir/memory`` (the settings' data folder); one :class:`Memory` is
opened per context and shared by the calls, each call scoped to its namespace.

>>> from lemmata.memory.operations import recall       # doctest: +SKIP
>>> recall(namespace={"user": "alice"}, query="Where does Alice live?").payload.items  # doctest: +SKIP
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from lemmata.memory.types import Item
from lemmata.operations import Operation, OperationContext, Outcome, Scope, operation

if TYPE_CHECKING:
    from lemmata.embeddings import Embedder
    from lemmata.memory.core import Memory

__all__ = [
    "ForgetInput",
    "ForgetOutput",
    "OPERATIONS",
    "RecallInput",
    "RecallOutput",
    "ReasonOutput",
    "RememberInput",
    "RememberOutput",
    "cue_words",
    "first_clause",
    "forget",
    "open_memory",
    "shared_embedder",
    "recall",
    "reason",
    "remember",
]


def shared_embedder(ctx: OperationContext) -> Embedder:
    """The context's embedder (loaded once, shared by memory, the router and the store)."""
    from lemmata.embeddings import get_embedder

    embedder: Embedder = ctx.resource(("embedder",), lambda: get_embedder(ctx.settings))
    return embedder


def open_memory(ctx: OperationContext, scope: Scope) -> Memory:
    """The context's memory (opened once, in ``data_dir/memory``) under ``scope``."""
    from lemmata.memory.core import Memory

    root = ctx.settings.data_dir / "memory"
    base: Memory = ctx.resource(
        ("memory", str(root)),
        lambda: Memory(root, settings=ctx.settings, model=ctx.model, embedder=shared_embedder(ctx)),
    )
    return base.scoped(user=scope.user, agent=scope.agent, session=scope.session)


_NS = Field(
    None,
    description="whose memory: {user, agent?, session?}; taken from the signed-in user when "
    "the surface has one",
)


class RememberInput(BaseModel):
    namespace: Scope | None = _NS
    text: str = Field(min_length=1, max_length=100_000, description="what to remember")
    speaker: str | None = Field(None, max_length=200, description="who said it")
    timestamp: str | None = Field(
        None, description='when it happened (ISO 8601 or "1:56 pm on 8 May, 2023")'
    )


class RememberOutput(BaseModel):
    episode: str = Field(description="the id of the stored episode")
    facts_added: int
    procedures_added: int
    items: list[Item] = Field(description="the knowledge now derived from this episode")

    def describe(self) -> str:
        lines = [f"Remembered (episode {self.episode}; {self.facts_added} new facts)."]
        lines += [f"- {i.text}" for i in self.items[:10]]
        return "\n".join(lines)


def _items_text(items: list[Item], empty: str) -> str:
    if not items:
        return empty
    return "\n".join(f"- {i.text} [{i.id}; from {', '.join(i.provenance)}]" for i in items)


class RecallInput(BaseModel):
    namespace: Scope | None = _NS
    query: str = Field(min_length=1, max_length=2000, description="what to look for")
    k: int = Field(5, ge=1, le=100, description="at most this many items")
    budget_tokens: int | None = Field(None, ge=1, le=100_000)
    as_of: str | None = Field(None, description="what was true at this time (ISO 8601)")


class RecallOutput(BaseModel):
    query: str
    items: list[Item]
    context: str = Field(description="the items as prompt lines, each with its id")

    def describe(self) -> str:
        return _items_text(self.items, "Nothing in memory matches.")


class ForgetInput(BaseModel):
    namespace: Scope | None = _NS
    ids: list[str] = Field(
        default_factory=list, max_length=1000, description="item or episode ids to remove"
    )
    about: str | None = Field(
        None, min_length=1, max_length=2000, description="remove the items recall finds for this"
    )
    limit: int = Field(3, ge=1, le=50, description="with `about`, remove at most this many")


class ForgetOutput(BaseModel):
    items: list[str]
    episodes: list[str]

    def describe(self) -> str:
        return f"Forgot {len(self.items)} items and {len(self.episodes)} episodes."


class ReasonOutput(BaseModel):
    query: str
    answer: str | None = Field(description="the model's answer; None offline")
    cited: list[str]
    items: list[Item]
    model: str

    def describe(self) -> str:
        known = _items_text(self.items, "Nothing in memory matches.")
        if self.answer is None:
            return f"From memory (offline, no model):\n{known}"
        return f"{self.answer}\n\nFrom memory:\n{known}"


# the store's ids by their prefix, their hex tail long or short as a store or a person wrote it
# ("fact_deadbeefdeadbeef", "ep_2031", "fact_19ab"): a short one holds a digit, so no word
# ("fact_bad") is taken for one
_ID = re.compile(r"\b(?:ep|fact|proc|item)_(?:[0-9a-f]{8,32}|(?=[0-9a-f]*\d)[0-9a-f]{3,7})\b")
_REMEMBER = re.compile(
    r"^\s*(?:(?:please|pls|plz)\s+(?:to\s+)?)?(?:(?:(?:could|can|would|will)\s+you|you\s+(?:can|could))\s+"
    r"(?:please\s+)?)?(?:(?:i(?:'d|\s+would)?\s+(?:want|need|like)\s+you\s+to\s+)?(?:remember|memori[sz]e|"
    r"keep in mind|file\s+away|don'?t\s+(?:let\s+me\s+)?forget(?!\s+to\b))\b"
    r"(?:\s+for\s+(?:me|later|next\s+time|the\s+future|future\s+reference))?"
    r"(?:\s+(?:that|this))?|(?:make\s+a\s+)?note\b(?:\s+(?:that|this|down))?\s*(?=that\b|:|-)|"
    r"(?:note|jot)\s+(?:that|down)\b|"
    r"(?:store|save|record|log)\b(?:\s+(?:this|that))?(?:\s+for\s+later)?\s*(?=:)|"
    r"(?:store|save|record|remember|note)\s+the\s+fact\s+that\b|"
    r"(?:store|save|record|log|add|put|commit)\s+(?:(?:this|that|it)\s+)?(?:in|into|to)\s+(?:your\s+|my\s+)?(?:long[\s-]term\s+)?memory\b"
    r"(?:\s+that)?|"
    r"(?:make|keep|take)\s+(?:a\s+)?(?:note|record|log)\s+(?:that|of)\b|"
    # "I want you to know, going forward, that ...": to be known from now on is to be kept
    r"i(?:'d|\s+would)?\s+(?:want|like|need)\s+you\s+to\s+know\s*,?\s*(?:going\s+forward|from\s+now\s+on|"
    r"for\s+(?:the\s+)?future(?:\s+reference)?|for\s+later|for\s+next\s+time)\s*,?\s*(?=that\b)|"
    r"(?:save|store|record)\s+that\s+(?=(?:my|our|his|her|their|i|we|he|she|they)\b)|"
    r"i(?:'d|\s+would)?\s+(?:want|like)\s+(?:this|that|it)\s+(?:saved|stored|noted|remembered|kept)\s*(?=:)|"
    r"for (?:future reference|the record|your records|later)\b|heads[\s-]up\b|just so you know\b)"
    r"\s*(?:that\b)?\s*[:,-]?\s*(?P<text>.+?)\s*$",
    re.I | re.S,
)
# "..., remember that." / "... - please keep that in memory." / "FYI ..., keep that on file."
_REMEMBER_AFTER = re.compile(
    r"^\s*(?:(?:fyi|heads[\s-]up|btw)[:,]?\s+)?(?P<text>.+?)\s*[.,;!-]*\s*(?:please\s+)?"
    # the keeping asked as a question after it: "... Could you hang on to that?"
    r"(?:(?:could|can|would|will)\s+you\s+(?:please\s+)?)?(?:remember|"
    r"memori[sz]e|note|keep|store|save|log|file|commit|(?:hold|hang)\s+on\s*to)\s+(?:that|this|it)"
    r"(?:\s+(?:on file|in(?:\s+your)?\s+(?:memory|mind)|to\s+(?:your\s+)?memory|"
    r"for (?:me|later|next time|the future|future reference|safekeeping)|going forward|down|away|"
    r"somewhere(?:\s+safe)?|safe|(?:where\s+)?you(?:'ll|\s+will|\s+can)\s+find\s+it(?:\s+(?:later|again))?))*"
    r"(?:\s*,?\s*(?:please|pls|thanks|thank\s+you))?[\s.!?]*(?:thanks!?)?\s*$",
    re.I | re.S,
)
# Greetings before a request: "Hey! Remember that ...", "OK so, note that ..."
_INTERJECTION = re.compile(r"^\s*(?:(?:hey|hi|hello|ok(?:ay)?|so|also|oh|and)\b[\s!,.]*)+", re.I)
_RECALL = re.compile(
    r"^\s*(?:please\s+)?(?:recall|look up|search (?:my |your )?memory for|"
    r"what do you (?:remember|know) about|do you remember)\s*[:,-]?\s*(?P<text>.+)$",
    re.I | re.S,
)
# "don't keep X anymore", "stop holding on to X": to stop keeping is to forget
_STOP_KEEP = (
    r"(?:(?:don'?t|do\s+not|stop|quit)\s+(?:keep(?:ing)?|stor(?:e|ing)|sav(?:e|ing)|"
    r"(?:hold|hang)(?:ing)?\s+on\s*to)\b(?=.*\b(?:any\s?more|no\s+longer)\b))"
)
_FORGET = re.compile(
    r"^\s*(?:please\s+)?(?:(?:could|can|would)\s+you\s+(?:please\s+)?)?"
    r"(?:forget\b(?:\s+(?:what|everything)\s+(?:i (?:said|told you)|you know)\s+about)?|"
    r"(?:stop|quit)\s+remembering\b|unlearn\b|"
    r"(?:delete|erase|remove|wipe|drop|clear(?:\s+out)?|scrap|scratch|scrub|ditch|toss|purge|"
    r"get\s+rid\s+of|discard)\b"
    r"(?=.*\b(?:from|in)\s+(?:your\s+|my\s+|the\s+)?memory\b|"
    r".*\b(?:note|notes|fact|facts|episode|memory|memories)\b|.*\b(?:ep|fact|proc|item)_[0-9a-f]{8}|"
    r".*\b(?:you know|you (?:stored|saved|have|remember|kept)|i (?:said|told you))\b|"
    r"\s+(?:anything|everything|whatever)\s+(?:about|mentioning|on|regarding|you)\b|"
    # "delete the stuff about the Berlin trip": what names a note's matter, then its topic
    r"\s+(?:the\s+|that\s+|all\s+the\s+)?(?:stuff|things?|bits?|info(?:rmation)?|details)\s+"
    r"(?:about|on|regarding|concerning)\b)|"
    rf"i\s+(?:don'?t|do not)\s+want\s+you\s+to\s+remember|{_STOP_KEEP})"
    r"\s*[:,-]?\s*(?P<text>.+?)\s*$",
    re.I | re.S,
)
# What names the topic, not the topic: "the note about", "anything mentioning", "what you stored on"
_FORGET_LEAD = re.compile(
    r"^(?:about\s+|(?:(?:the|your|my|that|this|any)\s+)?(?:notes?|facts?|memory|memories|items?|"
    r"entry|entries|records?)\s+(?:about|on|of|regarding)\s+|"
    r"(?:anything|everything|whatever|all)\s+(?:(?:you|i)\s+\w+\s+)?(?:about|mentioning|on|regarding|"
    r"concerning)\s+|what(?:ever)?\s+(?:you|i)\s+(?:\w+\s+){0,2}(?:about|on|regarding)\s+)",
    re.I,
)
_FORGET_TAIL = re.compile(
    r"\s*(?:(?:from|in|out\s+of|off)\s+(?:your\s+|ur\s+|my\s+|the\s+)?(?:memory|notes|records|"
    r"files|list|database|brain|head)|any\s?more|anymore|now|please|pls|plz|thanks|thx|"
    # where memory keeps it, said as what it keeps: "from what you store", "out of what you know"
    r"(?:from|out\s+of|in)\s+(?:what(?:ever)?|everything)\s+(?:you|i)(?:'ve|\s+have)?\s+"
    r"(?:store|stored|keep|kept|have|saved|know|remember|noted)|"
    # a clause that only says memory holds it: "the office network name you saved"
    r"(?<=\w\s)(?:that\s+|which\s+)?(?:you|i)(?:'ve|\s+have)?\s+(?:saved|stored|kept|noted|"
    r"recorded|wrote\s+down))\b[\s.!?]*$",
    re.I,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\s+-\s+|\s+—\s+")
# The verbs that ask memory for something, as users mistype them ("remeber", "forgett").
_CUES = ("remember", "forget", "memorize", "memorise", "delete", "unlearn")
_NOT_TYPOS = {
    "forgot", "remembers", "forgets", "deleted", "deletes", "memorised", "memorized", "memories",
}  # fmt: skip


def cue_words(text: str) -> str:
    """``text`` with near misses of memory's request verbs spelled right (one edit or swap away,
    words of five letters or more; two letters dropped from a long verb that starts right, as in
    "rember"), so that one reader serves typed requests."""
    from rapidfuzz.distance import OSA

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if len(low) < 5 or low in _CUES or low in _NOT_TYPOS:
            return word
        for cue in _CUES:
            near = abs(len(cue) - len(low)) <= 1 and OSA.distance(low, cue) <= 1
            # a long verb typed with two letters missing ("rember"), its start intact
            dropped = (
                len(cue) >= 8
                and len(cue) - len(low) == 2
                and low[:3] == cue[:3]
                and OSA.distance(low, cue) == 2
            )
            if near or dropped:
                return cue if word.islower() else cue.capitalize()
        return word

    # the abbreviations of a typed request: "rmbr 4 me: ..."
    text = re.sub(r"\b(?:rmbr|rmber|rmb)\s+4\s+me\b", "remember for me", text, flags=re.I)
    text = re.sub(r"\b(?:rmbr|rmber|rmb)\b", "remember", text, flags=re.I)
    # "can u remember", "could u forget": chat's "u" after an asking verb is "you"
    text = re.sub(r"\b(can|could|would|will|do|did|pls)\s+u\b", r"\1 you", text, flags=re.I)
    # "would you kindly forget ...": the asking's "kindly" is its "please"
    text = re.sub(r"\b(can|could|would|will)\s+you\s+kindly\b", r"\1 you please", text, flags=re.I)
    return re.sub(r"[A-Za-z]+", fix, text)


_REASON = re.compile(r"^\s*(?:please\s+)?(?:explain|reason about|summari[sz]e|why)\b", re.I)
_NOT_A_TOPIC = {"it", "that", "this", "everything", "all", "them", "me"}


def _extract_remember(text: str) -> dict[str, Any] | None:
    body = _INTERJECTION.sub("", cue_words(text.strip())).strip()
    m = _REMEMBER.match(body)
    if (
        m
        and body.endswith("?")
        and not re.match(
            r"^\s*(?:(?:could|can|would|will)\s+you|you\s+(?:can|could))\b", body, re.I
        )
    ):
        return None
    if m and _reminiscing(m["text"], body):
        return None
    after = None if m else _REMEMBER_AFTER.match(body)
    m = m or after
    if not m:
        framed = _KEEP_FRAME.match(body)
        if framed is None or framed["text"].rstrip().endswith("?"):
            return None
        said = _kept(framed["text"])  # as the loose reader keeps it ("Note to self: X." keeps X)
        return {"text": said} if said else None
    if after and re.search(
        r"\?\s*$|^(?:do|did|does|can|could|what|where|when|who|why|how|which)\b",
        after["text"],
        re.I,
    ):
        return None  # "Do you remember that?", "What did I say? Can you remember that?"
    said = m["text"].strip().rstrip("?").strip()
    if after:  # "..., remember that": what "that" stands for is the sentence before
        said = _referent(said)
    tail = _REMEMBER_AFTER.match(said)  # "heads up: ... keep that on file"
    if tail and tail["text"].strip():
        said = tail["text"].strip()
    said = re.sub(r"\s*[-,]?\s*(?:thanks|thank you)!?\s*$", "", said, flags=re.I).strip()
    # "remember the following: X" keeps X
    said = re.sub(r"^(?:the\s+following|as\s+follows|this|these)\s*[:-]\s*", "", said, flags=re.I)
    # the asking clauses left around it ("Quick one - X. Can you remember that?"); a text
    # that had none is kept as written, its full stop included
    kept = _kept(said)
    if kept != said.strip(" .!?,"):
        said = kept or ""
    if not said or said.lower() in _NOT_A_TOPIC or re.match(r"^(?:to|a|an)\b", said, re.I):
        return None
    return {"text": said}


# a short asking to keep, set off from what to keep by a colon, a dash or its own sentence:
# "memo to you: ...", "keep track of this -- ...", "Can you hang on to this for me? ..."; the
# asking has a word of keeping and, unless a colon or a dash sets it off, points ahead ("this");
# an asking about what memory holds ("Summarise what you remember about: ...") is no such thing
_KEEP_FRAME = re.compile(
    r"^(?![^:?!\n]{0,60}\b(?:you\s+(?:remember|know|have|kept|stored)|summari[sz]e|explain|tell|list|"
    r"what|where|when|who|why|how|which|did|do\s+i)\b)"
    r"(?P<lead>(?=[^:?!\n]{0,60}\b(?:keep|keeping|track|record|note|notes|memo|remember|save|store|"
    r"hold|hang|log|jot|file|retain|merk\w*|notier\w*|guarda\w*|retien\w*)\b)[^:?!\n]{0,60}?)"
    r"(?:\s*(?::|--+|—|–)\s*|\s+-\s+|(?<=\bthis)(?:\s+for\s+me)?\s*[?!.]\s+|(?<=\bthis\s)\s*)"
    r"(?P<text>\S.*)$",
    re.I | re.S,
)


# "remember when/how ...": a memory shared, not one to keep
_RECALLING = re.compile(r"(?:when|how|where|what|who|why|the\s+(?:time|day|night))\b", re.I)
# a sentence end ("Dr. Okafor" and "Ms. Alvarez" are not one)
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)]{3}[.!?])\s+|(?<=[!?])\s+")
_BACK_REFERENCE = re.compile(r"^(?:it|its|it's|she|he|they|this|that|which|and|but|also)\b", re.I)


def _reminiscing(said: str, body: str) -> bool:
    """Whether "remember ..." shares a memory rather than asks to keep one ("remember when we
    went to Rome? great times")."""
    return "?" in body and bool(_RECALLING.match(said.strip()))


def _referent(said: str) -> str:
    """The sentence a trailing "remember that" stands for: the last one before it, with the
    one before that when the last leans on it ("My flight is BA123. It lands at 6.")."""
    sentences = [x for x in _SENTENCE_END.split(said.strip()) if x.strip(" .!?,")]
    if len(sentences) < 2:
        return said
    keep = sentences[-1:]
    if _BACK_REFERENCE.match(_CHATTER.sub("", keep[0]).strip()):
        keep = sentences[-2:]
    return " ".join(keep)


# Words that ask to keep something, and the short clauses made of them ("keep that somewhere",
# "Can you remember that?", "Note to self", "Log this for me")
_KEEP_WORDS = re.compile(
    r"\b(?:remember|memori[sz]e|memory|note|notes|save|saved|store|stored|keep|record|file|mind|"
    r"jot|log|commit|forget|(?:hang|hold)\s+on\s*to|(?:don'?t|do\s+not|never)\s+lose)\b",
    re.I,
)
_KEEP_LEAD = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+|pls\s+)?(?:(?:i\s+)?(?:want|need)\s+you\s+to\s+)?"
    r"(?:remember|memori[sz]e|keep\s+in\s+mind|keep(?=\s+(?:this|that|it)\b)(?:\s+(?:this|that|it))?(?:\s+in\s+mind)?(?:\s+going\s+forward)?|don'?t\s+(?:let\s+me\s+)?forget|(?:make|keep|take)\s+a\s+note|"
    r"(?:jot|write|note)\s+down|note|save|store|record|log|file\s+away|"
    r"commit(?:\s+(?:this|that|it))?\s+to\s+(?:your\s+)?memory|"
    r"(?:add|put|save|store|write|keep)(?:\s+(?:this|that|it))?\s+(?:in|into|to|on)\s+(?:your\s+|my\s+)?"
    r"(?:long[\s-]term\s+)?(?:memory|notes|file))\b"
    r"(?:\s+(?:this|that|it)(?:\s+one)?)?(?:\s+for\s+(?:me|later))?(?:\s+(?:that|of))?\s*[:,-]?\s*",
    re.I,
)
_KEEP_TAIL = re.compile(
    r"\s*\b(?:for\s+(?:me|later|future\s+reference|the\s+record|safekeeping)|somewhere|on\s+file|"
    r"in\s+(?:your\s+)?(?:long[\s-]term\s+)?(?:mind|memory)|please|pls|plz|thanks|thx|"
    # a laugh or an emoticon at the end of a chat message is no part of the fact
    r"lol|lmao|haha+|hehe+|xd)\b\s*(?::\)|:d|;\))?\s*$",
    re.I,
)
# Words around a fact that are not part of it: "it's important", "quick one", "can you"
_ASIDE = re.compile(
    r"^(?:(?:it'?s|this\s+is)\s+(?:important|urgent)|quick\s+one|(?:(?:this|that)\s+)?one|(?:can|could|would|will)\s+you|"
    r"(?:for\s+)?(?:me|later|future\s+reference|the\s+record|next\s+time)|"
    r"(?:the\s+)?(?:important|key|main|relevant|crucial|short)\s+(?:bit|part|thing|point|version))$",
    re.I,
)
# what only announces the point: "the one thing that came out of it is that", "the key bit is"
_POINT_IS = re.compile(
    r"^(?:[^,;]*?\s)?(?:the|my|our)\s+(?:one|main|only|key|important|big|real)\s+(?:thing|point|"
    r"takeaway|bit|part|lesson|outcome|news)\b[^,;]*?\s(?:is|was)\s+(?:that\s+)?(?=\S)",
    re.I,
)
_CHATTER = re.compile(
    r"^\s*(?:(?:hey|hi|hello|ok(?:ay)?|so|also|oh|and|but|anyway|anyhow|btw|fyi|pls|please|quick\s+one|"
    r"long\s+story(?:\s+short)?|"
    r"heads[\s-]up|just\s+so\s+you\s+know)\b[\s!,.:-]*)+",
    re.I,
)


# A clause after the fact that is no part of it: why it is kept or the person's own trouble
# ("in case it ever comes up at a clinic", "so I don't lose it", "I always forget"), or who
# said it ("the landlord finally confirmed it", "Ana just told me")
_AFTERTHOUGHT = re.compile(
    r"^(?:(?:just\s+)?in\s+case|so\s+(?:that\s+)?(?:i|we)\s+(?:don'?t|won'?t|do\s+not|can)|"
    r"(?:because|since|as|cause|'cause|cos)\s+(?:i|we)\s+(?:always|keep|tend\s+to|never)|"
    r"(?:i|we)\s+(?:always|keep|never)\s+(?:forget|forgetting|lose|losing|remember)|"
    r"(?:(?:the|my|our|his|her|their)\s+)?[\w'’-]+(?:\s+[\w'’-]+)?\s+(?:finally\s+|just\s+|"
    r"already\s+|officially\s+)?(?:confirmed|told\s+me|said\s+so|announced|texted\s+me|"
    r"emailed\s+me|let\s+me\s+know)(?:\s+(?:it|that|this|so|today|yesterday))*$)",
    re.I,
)
# a preface before the asking that points ahead at the fact: "Neighbour's watering the plants
# while we're away, so hang on to this: spare key's under ..." keeps what follows the colon
_POINTS_AHEAD = re.compile(
    r"^.+?[,.;]\s*(?:(?:so|and|but|anyway)\s+)?(?:please\s+|pls\s+)?(?:remember|memori[sz]e|note|"
    r"keep|save|store|log|file|jot\s+down|(?:hang|hold)\s+on\s*to|don'?t\s+(?:let\s+me\s+)?forget)"
    r"\s+(?:this|the\s+following|these)(?:\s+(?:one|bit|for\s+me|for\s+later))*\s*:\s+(?P<fact>\S.*)$",
    re.I | re.S,
)


def _kept(body: str) -> str | None:
    """The clauses of ``body`` that are not the asking to keep it ("keep that somewhere",
    "Can you remember that?", "Note to self", "Quick one"), each without a request before it
    ("pls remember my locker number is 214")."""
    body = _CHATTER.sub("", body.strip()).strip()
    ahead = _POINTS_AHEAD.match(body)
    if ahead:
        body = ahead["fact"]
    # an aside in parentheses after the fact, a sentence of its own or an exclamation: "Lucia's
    # shoe size is now 31 (she grew again)", "... is 4417 (not 4471!)"; "(3rd floor)" is part of it
    body = (
        re.sub(
            r"\s*\((?:(?:she|he|they|it|i|we|you|that|this|not|ugh|lol|haha)\b[^()]*|[^()]*!)\)"
            r"[\s.!?]*$",
            "",
            body,
            flags=re.I,
        )
        or body
    )
    kept: list[str] = []
    point: str | None = None
    for part in re.split(r"\s*(?::|->|\u2014)\s+|\s+-+>?\s+|(?<=[.!?])\s+", body):
        clauses: list[str] = []
        for clause in re.split(r",\s+", part.strip(" .!?,")):
            clause = _CHATTER.sub("", clause).strip(" .!?,>")
            announced = _POINT_IS.sub("", clause)
            if announced != clause and point is None:
                point = announced  # "..., but the one thing to hold on to is that X": X alone
            clause = announced
            rest = _KEEP_LEAD.sub("", clause, count=1).strip(" .!?,")
            rest = _KEEP_TAIL.sub("", rest).strip(" .!?,")
            if not rest or _ASIDE.match(rest) or ((kept or clauses) and _AFTERTHOUGHT.match(rest)):
                continue
            if rest != clause:
                if len(rest.split()) >= 2 and not re.match(r"^(?:to|it|that|this)\b", rest, re.I):
                    clauses.append(rest)
            elif not (_KEEP_WORDS.search(clause) and len(clause.split()) <= 6):
                clauses.append(clause)
        if clauses:
            kept.append(", ".join(clauses))
    said = ". ".join(kept).strip()
    if point and len(point.split()) >= 2:
        said = _KEEP_TAIL.sub("", point).strip(" .!?,")
    return said if len(said.split()) >= 2 and said.lower() not in _NOT_A_TOPIC else None


def _read_remember(text: str) -> dict[str, Any] | None:
    """What to keep, read loosely (the task is known to ask for it): the clauses that are not
    the asking to keep ("fyi my passport expires in March, keep that somewhere", "Log this for
    me: I ran 12 km"), or the statement itself ("my locker number is 214")."""
    body = cue_words(text).strip()
    asked = _REMEMBER.match(_INTERJECTION.sub("", body))
    if asked and _reminiscing(asked["text"], body):
        return None
    after = _REMEMBER_AFTER.match(body)
    if after:  # "..., keep that": what "that" stands for is the sentence before
        body = _referent(after["text"])
    said = _kept(body)
    return {"text": said} if said else None


def _extract_query(text: str) -> dict[str, Any] | None:
    m = _RECALL.match(text)
    query = (m["text"] if m else text).strip()
    if not query:
        return None
    out: dict[str, Any] = {"query": query}
    k = _HOW_MANY.search(query)
    if k and 1 <= int(k["k"]) <= 100:
        out["k"] = int(k["k"])
    when = _AS_OF.search(query)
    if when:
        out["as_of"] = when["date"]
    return out


# "the 3 most relevant memories", "top 10 facts": how many items are asked for
_HOW_MANY = re.compile(
    r"\b(?:the\s+|top\s+|first\s+|best\s+)(?P<k>\d{1,3})\s+(?:(?:most\s+)?(?:relevant|closest|best|"
    r"recent|related)\s+)?(?:memories|items|facts|notes|results|matches|entries|things)\b",
    re.I,
)
# "as of 2024-01-01": what was true then
_AS_OF = re.compile(
    r"\b(?:as\s+of|as\s+at)\s+(?P<date>\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?)", re.I
)


def _extract_forget(text: str) -> dict[str, Any] | None:
    m = None
    text = cue_words(text)
    sentences = [text, *_SENTENCES.split(text.strip())]
    # a label before the request: "GDPR request: remove ...", "Privacy: forget ..."
    sentences += [_LABELLED.sub("", x) for x in sentences if _LABELLED.match(x)]
    for sentence in sentences:
        m = _FORGET.match(_INTERJECTION.sub("", sentence))
        if m:
            break
    if not m:
        return None
    ids = _ID.findall(text) or _named_ids(text)
    if ids:
        return {"ids": ids}
    if _DROP_THE_TOPIC.match(text):
        return None
    said, limit = _limit(m["text"])
    # "peanuts - forget I ever mentioned them": the pronoun stands for another clause
    about = _subject(said) or _referred(text)
    if not about or _NOT_MEMORY.match(about):
        return None
    return {"about": about} | limit


# what a user deletes elsewhere, not in memory: "delete my account", "remove my profile"
_NOT_MEMORY = re.compile(
    r"^(?:my|our|the|this)\s+(?:user\s+)?(?:account|profile)(?:\s+(?:on|at|for|with|in|from)\b.*)?$",
    re.I,
)


# "forget it, let's talk about something else": dropping the conversation's topic, not a memory
_DROP_THE_TOPIC = re.compile(
    r"^\s*(?:(?:oh|ok(?:ay)?|nah|never\s?mind|whatever)\s*[,.!-]*\s*)*forget\s+(?:about\s+)?"
    r"(?:it|that|this)\s*(?:[,.;:!—–-]+\s*(?:let'?s|let\s+us|we|i'?ll|i\s+will|never\s?mind|"
    r"(?:it\s+)?(?:doesn'?t|does\s+not)\s+matter|no\s+worries|not\s+important|whatever|moving\s+on)\b"
    r"|[.!]*\s*$)",
    re.I,
)
# what a clause that asks for nothing says of its topic: "the airport parking note can go"
_GONE = re.compile(
    r"\s+(?:(?:can|could|should|may|must)\s+(?:go|be\s+(?:deleted|removed|dropped|forgotten|"
    r"erased|binned))|(?:is|are|'s|'re)\s+(?:no\s+longer\s+(?:needed|relevant|true|valid)|"
    r"(?:out\s?of\s?date|outdated|obsolete|wrong|stale|not\s+needed)(?:\s+(?:now|anymore|any\s+more))?))"
    r"\s*$",
    re.I,
)
# saying one would rather memory did not keep something: "I'd rather you didn't keep ..."
_RATHER_NOT = re.compile(
    r"^(?:i'?d|i\s+would)\s+(?:rather|prefer(?:\s+(?:it\s+)?if)?)\s+you\s+(?:didn'?t|did\s+not|not|"
    r"wouldn'?t|would\s+not)\s+(?:keep|remember|store|know|hold(?:\s+on\s+to)?)\s+",
    re.I,
)


def _referred(text: str) -> str | None:
    """The topic that "forget it" or "forget I mentioned them" points back to: a clause
    without a forget verb that names it, either as a bare noun phrase ("peanuts - forget I ever
    mentioned them"), as a wish not to keep it ("I'd rather you didn't keep anything about my
    dentist. Forget it.") or as something that can go ("the parking note can go, delete it")."""
    clauses = [c.strip(" .!?,") for c in re.split(r"(?<=[.!?])\s+|\s+[-—–]+\s+|,\s*", text.strip())]
    for clause in (c for c in clauses if c and not _FORGET_ANY.search(c)):
        wish = _NO_NEED.sub("", _RATHER_NOT.sub("", clause))
        gone = _GONE.sub("", wish)
        if wish != clause or gone != wish:
            return _subject(gone)
        if len(clause.split()) <= 4 and not re.search(
            r"\b(?:is|are|was|were|i|you|we|let'?s|please|thanks?)\b", clause, re.I
        ):
            return _subject(clause)
    return None


_LABELLED = re.compile(r"^\s*[\w' -]{1,30}:\s+(?=\S)")
# how many to remove: "at most 5", "up to three", "no more than 2", "limit 4"
_LIMIT = re.compile(
    r"\s*,?\s*(?:but\s+)?(?:at\s+most|up\s+to|no\s+more\s+than|max(?:imum)?|limit(?:\s+(?:it\s+)?to)?)"
    r"\s*:?\s*(?P<n>\d{1,2})(?:\s+(?:items?|memories|facts?|notes?|entries|of\s+them))?\b",
    re.I,
)


def _limit(said: str) -> tuple[str, dict[str, int]]:
    m = _LIMIT.search(said)
    if m is None or not 1 <= int(m["n"]) <= 50:
        return said, {}
    return said[: m.start()] + said[m.end() :], {"limit": int(m["n"])}


# ids named as such, in whatever form a store printed them: "items 4f2a91 and 7c0d3e",
# "episode ep-1042" (letters and digits both, so that "the notes from 2023" names none)
_NAMED_IDS = re.compile(
    r"\b(?:items?|ids?|episodes?|facts?|entr(?:y|ies)|records?|memor(?:y|ies)|notes?)\s*:?\s*#?[\"'“‘`]?"
    r"(?P<ids>(?=[\w-]*\d)[\w-]+(?:[\"'”’`]?\s*(?:,|and|&)\s*#?[\"'“‘`]?[\w-]+)*)",
    re.I,
)


def _named_ids(text: str) -> list[str]:
    out: list[str] = []
    for m in _NAMED_IDS.finditer(text):
        tokens = re.split(r"[\"'”’`]?\s*(?:,|\band\b|&)\s*#?[\"'“‘`]?", m["ids"])
        # the list ends at the first word that is no id: "facts f-118 and f-119, they're wrong"
        ids: list[str] = []
        for t in tokens:
            if not (re.search(r"\d", t) and re.search(r"[a-z]", t, re.I) and len(t) >= 3):
                break
            ids.append(t)
        out += ids
    return out


# words that name what memory holds rather than a topic, up to the "about" that names the topic:
# "that note about", "the memory abt", "all data you stored about", "whatever you have on"
_NAMES_A_NOTE = re.compile(
    r"^(?:(?:the|that|this|those|these|a|an|any|all|every|my|your|of|our)\s+)*(?:(?:old|saved|stored|"
    r"personal|other)\s+)?(?:notes?|memor(?:y|ies)|facts?|data|info(?:rmation)?|items?|entr(?:y|ies)|"
    r"records?|things?|stuff|everything|anything|whatever|what|details?|mentions?)?"
    r"(?:\s+(?:that\s+|which\s+)?(?:you|i|we)(?:'ve|\s+have|\s+had)?(?:\s+\w+){1,2}?)?"
    r"\s*\b(?:about|abt|regarding|concerning|re:?|on\s+the\s+subject\s+of)\s+(?=\S)",
    re.I,
)


# A forget verb's object ends at the first clause boundary: a dash set off by spaces ("my peanut
# allergy — turns out ..."), or a comma that does not go on with a list ("Dr Okafor's address,
# the practice moved", "mi restaurante favorito, ya cerró"; "my address, phone and email" is one
# object): what follows is the person's reason or news, in whatever words or language.
_DASH = re.compile(r"\s+[-—–]+\s+|\s*[—–;]\s*")
_LIST_GOES_ON = re.compile(
    r"^(?:(?:and|or|&)\s+)?[\w'’-]+(?:\s+[\w'’-]+){0,3}(?:\s*,|\s+(?:and|or|&|y|e|et|und|ou|o)\s+)",
    re.I,
)


def first_clause(said: str) -> str:
    """``said`` up to its first clause boundary (see above): a forget verb's object."""
    said = _DASH.split(said, maxsplit=1)[0]
    parts = re.split(r",\s+", said)
    kept = parts[0]
    for part in parts[1:]:
        if not _LIST_GOES_ON.match(part) and not re.match(r"(?:and|or|&)\s", part, re.I):
            break
        kept += ", " + part
    return kept


# What a pronoun's clause names ("Drop it" after it): a thing one no longer wants kept ("I no
# longer want the standup schedule kept in memory"), the thing asked about ("You know the
# Orchard-5G thing?"), or the subject before its verb ("Lucia's birthday is in the calendar now").
_UNWANTED = re.compile(
    r"^(?:i\s+)?(?:no\s+longer|don'?t|do\s+not|never)\s+(?:want|need)\s+(?P<x>.+?)\s+(?:kept|stored|"
    r"saved|remembered|recorded|on\s+file|in\s+(?:your\s+)?(?:memory|notes))\b",
    re.I,
)
_ASKED_ABOUT = re.compile(
    r"^(?:(?:do\s+)?you\s+(?:know|remember|recall|have)|remember|about|re:?|what\s+about|"
    r"(?:the\s+)?thing\s+(?:about|with))\s+(?P<x>.+)$",
    re.I,
)
_FINITE_VERB = re.compile(
    r"\s+(?:is|are|was|were|'s|has|have|had|got|gets|moved|changed|can|will|won'?t|isn'?t|"
    r"aren'?t|wasn'?t|doesn'?t|does|did|lives|works|ended|turned|went)\b",
    re.I,
)


def _pointed_back(clause: str) -> str | None:
    """The thing a clause without a forget verb names, for a pronoun after it (see above)."""
    clause = clause.strip(" .!?,")
    m = _UNWANTED.match(clause) or _ASKED_ABOUT.match(clause)
    if m:
        return _subject(m["x"])
    verb = _FINITE_VERB.search(clause)
    if verb and 1 <= len(clause[: verb.start()].split()) <= 6:
        return _subject(clause[: verb.start()])
    return _subject(_NO_NEED.sub("", clause))


def _subject(said: str) -> str | None:
    """The subject of a forget request, without the words around it: what names the note
    ("the thing about", "anything you stored on"), the reason after it ("..., it's public
    now", "? Turns out ..."), "from your memory"; None when it is only a pronoun."""
    # the first sentence ("Dr. Okafor" is not a sentence end)
    # (or clause: "...; security asked us not to store it")
    about = re.split(r"(?<=[a-z]{3}[.!?])\s+|(?<=[!?])\s+|\s*;\s+", said.strip(), maxsplit=1)[0]
    about = first_clause(about)
    about = re.sub(
        r"^(?:(?:the|that)\s+)?(?:thing|stuff|bit|part|info(?:rmation)?|record|mention)\s+"
        r"(?:about|on|of)\s+",
        "",
        about,
        flags=re.I,
    )
    for _ in range(2):
        about = _FORGET_LEAD.sub("", about).strip()
        about = re.sub(
            r"^(?:from|in|out\s+of)\s+(?:your\s+|my\s+|the\s+)?memory\s*[:,-]?\s*",
            "",
            about,
            flags=re.I,
        )
    # "that note about X", "all data you stored about X": what comes before "about" only names
    # what memory holds, the topic is after it
    named = _NAMES_A_NOTE.match(about)
    if named and named.group(0).strip():
        about = about[named.end() :].strip()
    about = re.sub(r"^(?:the\s+)?fact\s+that\s+", "", about, flags=re.I)
    # "(that) I ever mentioned them": only points back at the topic
    about = re.sub(
        r"^(?:that\s+|what\s+)?i\s+(?:ever\s+|even\s+|once\s+)?(?:mentioned|said|told\s+you(?:\s+about)?|"
        r"brought\s+up)\s+(?=(?:it|them|that|this)\s*$)",
        "",
        about,
        flags=re.I,
    )
    about = re.sub(r"^(?:that|about)\s+(?=\S+\s)", "", about, flags=re.I)
    # "..., it's public now": the reason after the topic is not part of it
    about = re.split(
        r",\s*(?=(?:it'?s|it\s+(?:is|was|has|had|turned|got|changed|ended|moved|\w+ed)|since|because|as|"
        r"that'?s|that\s+(?:was|is)|they'?re|i'?ve|we'?ve|he|she|they|we|i|turns\s+out|"
        r"never\s?mind|so|"
        # a sentence of news after the topic: "Marco gave it back", "the project got cancelled"
        r"(?:(?:the|my|our|his|her|their)\s+)?[\w'-]+\s+(?:gave|got|was|is|has|had|were|are|"
        r"took|sold|left|moved|changed|returned|brought|came|went|did|didn'?t|doesn'?t|won'?t|"
        r"isn'?t|wasn'?t)\b)\b)",
        about,
        maxsplit=1,
        flags=re.I,
    )[0]
    for _ in range(3):
        about = _FORGET_TAIL.sub("", about).strip().rstrip(".?!,").strip()
    # "the drill thing": the word that only says "the matter of"
    about = re.sub(r"(?<=\w)\s+(?:thing|stuff|business|situation)$", "", about, flags=re.I)
    # "the dentist memory": the word that names what memory holds, after its topic
    about = re.sub(r"(?<=\w)\s+(?:memory|memories)$", "", about, flags=re.I)
    if not about or about.lower() in _NOT_A_TOPIC:
        return None
    return about


_FORGET_ANY = re.compile(
    r"\b(?:forget|delete|erase|remove|wipe|drop|clear(?:\s+out)?|scrap|scratch|scrub|ditch|toss|"
    rf"purge|get\s+rid\s+of|let\s+go\s+of|discard|stop\s+remembering|unlearn)\b\s*(?P<rest>.*)$|"
    rf"{_STOP_KEEP}\s*(?P<kept>.*)$",
    re.I | re.S,
)
# a forget verb that asks the opposite: "don't let me forget: ...", "never forget that ..."
_NEGATED = re.compile(r"\b(?:don'?t|do\s+not|never|not)\s+(?:let\s+(?:me|us)\s+)?$", re.I)
_NO_NEED = re.compile(
    r"^(?:(?:there'?s\s+)?no\s+need\s+to|you\s+(?:don'?t|do\s+not)\s+need\s+to|"
    r"(?:you\s+)?(?:can|may)\s+stop|i\s+(?:don'?t|do\s+not)\s+want\s+you(?:\s+to)?)\s+"
    r"(?:keep(?:ing)?(?:\s+track\s+of)?|remember(?:ing)?|stor(?:e|ing)|know(?:ing)?|sav(?:e|ing)|"
    r"retain(?:ing)?|(?:hold|hang)(?:ing)?\s+on\s*to)\s+",
    re.I,
)


def _read_forget(text: str) -> dict[str, Any] | None:
    """What to forget, read loosely (the task is known to ask for it): the subject after the
    verb, without the words that name a note rather than its subject ("wipe the thing about
    X"), or, where the verb's object is "it" or "that", the clause the pronoun stands for
    ("No need to keep the standup time anymore - forget it")."""
    text = cue_words(text.strip())
    if _DROP_THE_TOPIC.match(text):
        return None
    ids = _ID.findall(text)
    if ids:  # the store's own ids, wherever the request names them ("Two to purge: fact_19ab")
        return {"ids": ids}
    clauses = [c.strip(" .!?,") for c in re.split(r"(?<=[.!?])\s+|\s+-\s+|,\s*(?:so\s+)?", text)]
    clauses = [c for c in clauses if c]
    for i, clause in enumerate(clauses):
        m = _FORGET_ANY.search(clause)
        if not m or _NEGATED.search(clause[: m.start()]):
            continue
        about = _subject(m["rest"] if m["rest"] is not None else m["kept"])
        if about and _NOT_MEMORY.match(about):
            return None
        if about:
            return {"about": about}
        others = [
            c
            for j, c in enumerate(clauses)
            if j != i and not _FORGET_ANY.search(c) and len(c.split()) >= 3
        ]
        said = _referred(text)
        if said is None and others:  # "forget it": the subject is in the clause before
            said = _pointed_back(others[0])
        if said:
            return {"about": said}
    return None


@operation(
    "memory",
    scoped=True,
    time_limit_s=60,
    examples=(
        "Remember that my sister Ana lives in Porto.",
        "Note: the staging database password rotates every Monday.",
        "Please keep in mind that I am allergic to peanuts.",
        "Save this: the meeting moved to Thursday at 3 pm.",
        "Remember that my car insurance renews in May.",
        "Save this: the gate code is 2580.",
        "Make a note: Julia's flight lands at 6 pm on Sunday.",
        "Could you store that my son's teacher is Mrs. Hall?",
        "For the record, my blood type is O negative.",
        "Add this to your memory - the rent is due on the first of the month.",
        "I'd like you to remember that Carlos prefers email over phone calls.",
        "Jot down that the boiler was serviced in March.",
        "The spare charger is in the second drawer. Keep that in mind.",
        "Heads up, my new office is on the fourth floor. Please note it.",
        "Write this down for later: our router is in the hallway cupboard.",
        "Keep a note that the recycling bins are collected on Tuesdays.",
        "fyi, my library card number is 55012.",
        "Note to self: the spare key is under the blue flowerpot.",
        "Log this: I took my blood pressure pill at 8.",
        "My bike's frame size is 54 cm, in case it comes up.",
        "Just so you know, our landlord is called Mr. Petrov.",
        "Commit this to memory: the alarm code is 9931.",
        "File this away, Nadia's wedding is on 3 June.",
        "btw the new printer's address is 10.0.0.42",
    ),
    extract=_extract_remember,
    read=_read_remember,
)
def remember(args: RememberInput, ctx: OperationContext) -> RememberOutput:
    """Store something in long-term memory: it is kept as an episode and structured into
    facts and procedures, each linked to the episode it came from."""
    assert args.namespace is not None
    mem = open_memory(ctx, args.namespace)
    fields: dict[str, Any] = {"speaker": args.speaker, "timestamp": args.timestamp}
    episode = mem.add_episode(args.text, **{k: v for k, v in fields.items() if v is not None})
    ctx.report("stored the episode; structuring it", 0.5)
    report = mem.consolidate()
    derived = [
        Item(id=i.id, kind="fact", text=i.statement, score=1.0, provenance=i.sources)
        for i in mem.facts(current_only=True)
        if episode in i.sources
    ]
    return RememberOutput(
        episode=episode,
        facts_added=report.facts_added,
        procedures_added=report.procedures_added,
        items=derived,
    )


@operation(
    "memory",
    scoped=True,
    read_only=True,
    idempotent=True,
    time_limit_s=60,
    examples=(
        "What did I tell you about my sister?",
        "Where does Ana live?",
        "When did Caroline go to the LGBTQ support group?",
        "What do you remember about the staging database?",
        "Do you remember what Melanie painted last year?",
        "What did I say my locker number was?",
        "Who did I tell you is the new team lead?",
        "Which hotel did I book for the trip?",
        "What's the name of my boss again?",
        "When is my mother's birthday?",
        "Do you know where I left my keys?",
        "What was the gate code I gave you?",
        "Look up what you have on my car insurance.",
        "Search your memory for the plumber's number.",
        "Which day do the bins go out? I told you before.",
        "Can you remind me of my blood type?",
        "What do you have on file about Carlos?",
    ),
    extract=_extract_query,
)
def recall(args: RecallInput, ctx: OperationContext) -> RecallOutput:
    """Look up what long-term memory knows about a question: the most relevant facts and
    procedures, each with the ids of the episodes it came from."""
    assert args.namespace is not None
    mem = open_memory(ctx, args.namespace)
    found = mem.retrieve(args.query, k=args.k, budget_tokens=args.budget_tokens, as_of=args.as_of)
    return RecallOutput(query=args.query, items=list(found.items), context=found.as_context())


@operation(
    "memory",
    scoped=True,
    destructive=True,
    idempotent=True,
    time_limit_s=60,
    examples=(
        "Forget what I said about my sister.",
        "Delete fact_0123456789abcdef from memory.",
        "Erase everything you know about the old address.",
        "Please forget my phone number.",
        "Delete the note about the gate code.",
        "Get rid of everything you stored about my old job.",
        "Remove whatever you have on Carlos.",
        "Stop remembering my home address.",
        "Wipe what I told you about the surprise party, it's over.",
        "Clear out anything you know mentioning my ex.",
        "Erase item_0123456789abcdef and fact_fedcba9876543210.",
        "I sold the car, so forget the parking details.",
        "That address is outdated now - forget it.",
        "You don't need to remember my old phone number anymore.",
        "Scrap the note on the book club, it ended.",
    ),
    extract=_extract_forget,
    read=_read_forget,
)
def forget(args: ForgetInput, ctx: OperationContext) -> ForgetOutput | Outcome:
    """Remove items or episodes from long-term memory, by id or by what they are about (the
    items recall finds for it); every removal is audited."""
    assert args.namespace is not None
    if not args.ids and not args.about:
        return Outcome(
            ForgetOutput(items=[], episodes=[]),
            "invalid",
            "forget needs ids or about",
            'pass "ids": ["fact_..."] or "about": "the old address"',
        )
    mem = open_memory(ctx, args.namespace)
    items = [i for i in args.ids if not i.startswith("ep_")]
    episodes = [i for i in args.ids if i.startswith("ep_")]
    if args.about:
        items += [i.id for i in mem.retrieve(args.about, k=args.limit).items]
    report = mem.forget(items, episodes=episodes)
    out = ForgetOutput(items=report.items, episodes=report.episodes)
    if not report.items and not report.episodes:
        return Outcome(out, "failed", "nothing matched: no item was removed", "")
    return out


@operation(
    "memory",
    scoped=True,
    read_only=True,
    idempotent=True,
    time_limit_s=120,
    examples=(
        "Explain why Caroline wanted to become a counselor.",
        "Summarize what you know about my travel plans.",
        "Why did Melanie start running?",
        "Based on what you know about me, what should I cook for dinner?",
        "Summarise everything I've told you about my health.",
        "Give me an overview of my upcoming appointments from your notes.",
        "Considering what you know about my schedule, when could I fit in a haircut?",
        "Using my notes, work out whether I can make the Friday meeting.",
        "Why did I switch to the new bank? Explain from what I told you.",
        "Think about what you remember of my family and suggest a gift for my brother.",
        "Put together a short summary of what I've said about the renovation.",
        "From your memory, what's coming up for me next week?",
        "Reason about which of my friends lives closest to the airport.",
        "List the people I've mentioned who live abroad.",
        "Given my routine, is Monday morning a good time for a call?",
        "Go through what I've told you and list my pending errands.",
    ),
    extract=_extract_query,
)
def reason(args: RecallInput, ctx: OperationContext) -> ReasonOutput:
    """Answer a question from long-term memory: with a model, an answer citing the items it
    used; offline, the ranked items without an answer."""
    assert args.namespace is not None
    mem = open_memory(ctx, args.namespace)
    r = mem.reason(args.query, k=args.k, budget_tokens=args.budget_tokens or 1500)
    return ReasonOutput(
        query=r.query, answer=r.answer, cited=list(r.cited), items=list(r.items), model=r.model
    )


OPERATIONS: list[Operation] = [remember, recall, forget, reason]
