"""GUI operations (see :mod:`lemmata.operations`): ``ground`` an instruction on a screenshot,
and ``act`` on a page (ground the instruction on its rendering in headless Chromium, then
click there or type into it).

>>> from lemmata.gui.operations import ground                              # doctest: +SKIP
>>> ground(image="shot.png", instruction="open the settings").payload.point  # doctest: +SKIP
[1204.0, 38.5]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from lemmata.gui.instruction import _ICON_WORDS, _ROLE_WORDS
from lemmata.operations import Operation, OperationContext, Outcome, operation

if TYPE_CHECKING:
    from lemmata.gui.ground import Grounder, Grounding

__all__ = ["ActInput", "ActOutput", "GroundInput", "GroundOutput", "OPERATIONS", "act", "ground"]


class GroundInput(BaseModel):
    image: str = Field(min_length=1, description="path of the screenshot (PNG, JPEG, WebP)")
    instruction: str = Field(min_length=1, max_length=500, description="what to find or click")
    heatmap: str | None = Field(
        None, description="write the fused heatmap over the screenshot here (PNG)"
    )


class GroundOutput(BaseModel):
    instruction: str
    point: list[float] | None = Field(description="where to click, in image pixels")
    bbox: list[float] | None
    score: float
    abstained: bool
    anchors: dict[str, Any] = Field(default_factory=dict)
    size: list[int]
    heatmap: str | None = None

    def describe(self) -> str:
        if self.abstained or self.point is None:
            return f"No element matches {self.instruction!r} (best score {self.score:.2f})."
        x, y = self.point
        return f"{self.instruction!r} is at ({x:.0f}, {y:.0f}) (score {self.score:.2f})."


class ActInput(BaseModel):
    page: str = Field(
        min_length=1,
        description="an .html file, its address (http, https or file URL), or the page's HTML itself",
    )
    instruction: str = Field(min_length=1, max_length=500, description="what to click or type into")
    action: Literal["click", "type"] = "click"
    text: str | None = Field(None, max_length=10_000, description="for type: the text to type")
    width: int = Field(1280, ge=200, le=4000)
    height: int = Field(800, ge=200, le=4000)
    screenshot: str | None = Field(None, description="save the page after the action here (PNG)")


class ActOutput(BaseModel):
    instruction: str
    action: str
    point: list[float] | None
    score: float
    hit: dict[str, Any] | None = Field(description="the element the click landed on")
    observation: str
    screenshot: str | None = None

    def describe(self) -> str:
        return f"{self.action} for {self.instruction!r}: {self.observation}"


def _grounder(ctx: OperationContext) -> Grounder:
    from lemmata.gui.ground import Grounder

    grounder: Grounder = ctx.resource(("grounder",), lambda: Grounder(settings=ctx.settings))
    return grounder


def _output(g: Grounding, heatmap: str | None = None) -> GroundOutput:
    d = g.to_dict()
    return GroundOutput(instruction=g.instruction, heatmap=heatmap, **d)


_IMAGE = re.compile(
    r"[\"'“`](?P<qpath>[^\"'”`]+\.(?:png|jpe?g|webp|bmp))[\"'”`]|(?P<path>(?:[A-Za-z]:[\\/])?(?:[\w./~-]|\\ |\\(?=[\w.]))+\.(?:png|jpe?g|webp|bmp))\b",
    re.I,
)
_PAGE = re.compile(
    r"[\"'“`](?P<qpath>[^\"'”`]+\.html?)[\"'”`]|"
    # a page by its address: "http://localhost:8000/login", "file:///home/tom/site/a.html"
    r"(?P<url>\b(?:https?|file)://[^\s\"'<>]+?)(?=[\s\"'<>,;)]|[.!?:](?:\s|$)|$)|"
    r"(?P<path>(?:[A-Za-z]:[\\/])?(?:[\w./~-]|\\(?=[\w.]))+\.html?)\b",
    re.I,
)
# the page's HTML itself, pasted into the request ("click the button in this page: <html>...")
_MARKUP = re.compile(r"<(?P<tag>[A-Za-z][\w-]*)\b[^>]*>.*</(?P=tag)\s*>", re.S)
# where an output goes: "and save the heatmap to out/heat.png", "save a screenshot as after.png"
_SAVE = re.compile(
    r"\s*,?\s*(?:and\s+)?(?:then\s+)?(?:also\s+)?(?:save|write|put|store|grab|take|capture|snap)\s+"
    r"(?:the\s+|a\s+)?"
    r"(?P<what>heat\s?map|screenshot|screen\s?shot|picture|image|it|that)\s+(?:to|as|in|at|under)\s+"
    r"[\"'“`]?(?P<path>(?:[A-Za-z]:\\)?(?:[\w./~-]|\\(?=[\w.]))+\.(?:png|jpe?g|webp))[\"'”`]?",
    re.I,
)
_FILLER = re.compile(
    r"\b(?:on|in|of|at|from|for|within)\s+(?:the\s+)?(?:screenshot|screen|image|page|file)?\s*$",
    re.I,
)
_LEAD = re.compile(
    r"^\s*(?:(?:please|pls|plz)\s+)?(?:using\s+(?:the\s+)?(?:grounder|gui\s+tools?|grounding)\s*,?\s*)?"
    r"(?:(?:in|on)\s+(?:the\s+)?(?:screenshot|screen|image|page)\s*,?\s*)?",
    re.I,
)
# the words that name the file a path is ("the screenshot is at", "html page at")
_NAMED_FILE = (
    r"(?:(?:the\s+|this\s+|my\s+|a\s+)?(?:html\s+|web\s+)?(?:screenshot|screen\s?shot|screen|image|"
    r"picture|file(?!\s+on\b)|page)\s+(?:is\s+|'s\s+|was\s+)?(?:saved\s+|stored\s+)?)?"
)
# the prepositions of German, French, Spanish and Portuguese that govern a path ("dans x.png",
# "auf login.html", "de chat_es.html")
_FOREIGN_AT = r"|dans|sur|de|del|en|em|no|na|auf|im|aus"


def _instruction(text: str, path: str, *, peel: bool = True) -> str:
    """``text`` without ``path`` and the words that governed it; with ``peel``, without the
    asking before the target too (for :func:`_tidy`; :func:`_target` reads the asking)."""
    at = re.escape(path)
    # a leading clause that only says the person has the file: "I've got a screenshot at x.png and"
    text = re.sub(
        rf"^\s*(?:i(?:'ve|\s+have)?\s+got|i\s+have|here(?:'s|\s+is))\s+(?:a|the|this|my)\s+"
        rf"(?:screenshot|screen\s?shot|screen|image|picture|page|file)\s+(?:at\s+|in\s+)?{at}\s*"
        rf"(?:,|\.|and|then|and then)?\s*",
        "",
        text,
        flags=re.I,
    )
    # the file named after the request: ", page is form.html", "- the screenshot is at a.png"
    text = re.sub(
        rf"\s*[,;-]?\s*(?:and\s+)?(?:the\s+|my\s+|this\s+)?(?:html\s+|web\s+)?(?:page|screenshot|"
        rf"screen\s?shot|image|picture|file)(?:\s+(?:is|was|'s)\s+|\s*:\s*)(?:at\s+|in\s+|called\s+)?{at}",
        " ",
        text,
        flags=re.I,
    )
    text = re.sub(
        rf"\s*[,;]\s*(?:the\s+)?(?:page|screenshot|screen\s?shot|image|file)\s+{at}",
        " ",
        text,
        flags=re.I,
    )
    # a path given as a keyword argument: "image=tabs.png"
    text = re.sub(rf"\b(?:image|screenshot|page|file|path)\s*=\s*{at}", " ", text, flags=re.I)
    # the words that governed the path go with it: "in the screenshot shot.png", "open page.html and"
    rest = re.sub(
        rf"(?:\b{_NAMED_FILE})?\b(?:in|on|of|at|from|inside|within|using{_FOREIGN_AT})\s+"
        # (the article and the file's noun in another language: "auf der Seite x.html", "sur la
        # page x.html", "na imagem x.png")
        rf"(?:(?:the|der|die|dem|la|le|el|a|o)\s+)?"
        rf"(?:(?:screenshot|screen|image|page|file|seite|bild|imagem|imagen|página|pagina|captura)\s+)?"
        rf"(?:at\s+)?{at}",
        " ",
        text,
        flags=re.I,
    )
    rest = re.sub(
        rf"\b(?:open|load|go to|visit|render)\s+(?:the\s+)?(?:page\s+)?{at}\s*(?:,|and|then|and then)?",
        " ",
        rest,
        flags=re.I,
    )
    rest = rest.replace(path, " ")
    rest = re.sub(r"\b(?:screenshot|screen shot|image)\s*(?=[,:]|$)", " ", rest, flags=re.I)
    rest = _LEAD.sub("", rest)
    rest = re.sub(r"[ \t]+", " ", rest).strip(" ,:;.-\n")
    rest = _FILLER.sub("", rest).strip(" ,:;.")
    if not peel:
        return rest
    rest = _ASKING.sub("", rest).strip(" ,:;.?")
    rest = re.sub(r"^(?:where?\s+is|locate|find|ground)\s*:?\s+", "", rest, flags=re.I)
    rest = re.sub(r"\s+(?:is|are|sits|lives)$", "", rest, flags=re.I)  # "where the Bold button is"
    return rest


# The asking around an element: "show me where the X is", "I need the location of the X"
_ASKING = re.compile(
    r"^(?:(?:please|pls|plz)\s+)?(?:(?:can|could|would)\s+you\s+)?(?:(?:look(?:\s+at)?|open|check)\s+(?:it\s+)?and\s+)?"
    r"(?:(?:show|tell)\s+me\s+where(?:\s+(?:is|are))?|where?(?:'s|\s+is|\s+are|\s+can\s+i\s+find)?|"
    r"make\s+(?:a\s+|the\s+)?heat\s?map\s+(?:for|of)|"
    r"the\s+(?:thing|one|element|bit)\s+i(?:\s+need|\s+want|'m\s+looking\s+for|\s+am\s+looking\s+for)\s+is|"
    r"identify|locate|find|spot|pinpoint|point\s+(?:me\s+)?(?:to|at|out)|highlight|"
    r"(?:i\s+need|give\s+me|what(?:'s|\s+is))\s+the\s+(?:location|position|coordinates|place)\s+of)\s+"
    r"(?:the\s+)?",
    re.I,
)


# "The thing I need is the gear icon": what the person names after it is the target
_THE_ONE = re.compile(
    r"^the\s+(?:thing|one|element|bit)\s+i(?:\s+need|\s+want|'m\s+looking\s+for|"
    r"\s+am\s+looking\s+for)\s+is\s+",
    re.I,
)


# File chores on an image or page are not grounding: nothing on the screen is to be found.
_FILE_CHORE = re.compile(
    r"^\s*(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:convert|rename|remove the background|resize|"
    r"crop|compress|delete|upload|download|send|e-?mail|print|save|copy|move|share|attach|rotate|blur|"
    r"open\s+\S+\s+in|sharpen|edit|watermark|minify|beautify|format|validate|lint|translate|"
    r"take\s+a\s+screenshot|screenshot(?!\s*[:,-]|\s*[\"'“`]|\s+(?:is|was|at)\b))\b",
    re.I,
)


_POLITE = re.compile(
    r"^\s*(?:(?:please|pls|plz)\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|"
    r"i(?:'d| would)?\s+(?:want|need|like)\s+you\s+to\s+)?(?:(?:please|pls|plz)\s+)?",
    re.I,
)
# a field label before the instruction ("instruction: the Bold button")
_LABEL = re.compile(
    r"^(?:instruction|task|target|element|goal|action|query|act|ground)\s*:\s*", re.I
)
# a sentence that only says where the screenshot is ("I attached it.", "Here is the image.")
_ABOUT_FILE = re.compile(
    r"^(?:i(?:'ve| have)?\s+(?:attached|uploaded|added|took|sent)|here(?:'s| is)|this is|see|"
    r"(?:the\s+)?(?:screenshot|image|picture|file)\s+is|"
    r"(?:[\w']+\s+){1,3}(?:sent|gave|shared|forwarded|attached|uploaded)\s+(?:me\s+|us\s+)?"
    r"(?:this|the|a|that)\b)[^.?!]*$",
    re.I,
)
_TYPED = re.compile(
    r"^(?:type|enter|write|put|input|fill\s+in)\s+(?P<text>.+?)\s+(?:into|in|in to|inside)\s+"
    r"(?P<target>.+)$",
    re.I,
)


# a later sentence that is an aside, not the target: the person's reasons or thanks ("I want to
# be sure I don't click it by accident.", "Thanks!") or a question that only points back ("Where
# is it?")
_ASIDE = re.compile(
    r"^(?:i|i'm|i am|i'd|i've|we|we're|thanks?|thank\s+you|cheers|so\s+that|because|help|any\s+ideas|"
    r"(?:where|what)(?:'s|\s+is|\s+are)\s+(?:it|that|this|they|them)|(?:it|that)(?:'s|\s+is)\s+"
    r"(?:urgent|important))\b",
    re.I,
)
# a leading clause of the person's situation: "I'm looking at it and can't find ...", "I can't see"
_SEARCHING = re.compile(
    r"^(?:i(?:'m| am)\s+\w+ing\b[^,.]*?\s+(?:and|but)\s+)?(?:(?:i|she|he|they|we|my\s+\w+)\s+)?"
    r"(?:(?:really|just|still|simply)\s+)?(?:can(?:'t|not| not)|cant|could(?:n't| not)|couldnt|do(?:n't| not)|dont|does(?:n't| not)|doesnt)"
    r"\s+(?:for\s+the\s+life\s+of\s+me\s+|seem\s+to\s+|really\s+)?(?:find|see|locate|spot)\s+",
    re.I,
)
# what asks for the target: a request to find or act, or the person saying what they cannot find
_REQUEST = re.compile(
    r"^(?:(?:please|pls|plz)\s+)?(?:(?:can|could|would|will)\s+you|where|find|locate|identify|spot|"
    r"point|show\s+me|highlight|click|tap|press|hit|select|choose|open|type|enter|write|fill|tick|"
    r"check|toggle)\b",
    re.I,
)
# the verb of a click-like action that the grounder's reader (lemmata.gui.instruction) does not
# know: it drops "click", "press", "check", "toggle" and the like itself, but would look for
# "tick" or "expand" on the screen, where no such word is written
_CLICK_VERB = re.compile(
    r"^(?:tick|untick|expand|collapse|coche|cochez|décoche|décochez|marca|marque|desmarca|"
    r"desmarque)\s+(?:on\s+)?(?=\S)",
    re.I,
)
_TRAILING = re.compile(
    r"\s*,?\s*(?:(?:and\s+)?nothing\s+else|by\s+(?:clicking|tapping|pressing)(?:\s+on)?\s+"
    r"(?:it|that|this|them)|for\s+me|please|pls|plz|thanks?(?:\s+you)?|thx|"
    # (chat's and other languages' thanks, a word of their own: "City" keeps its "ty")
    r"(?<!\w)(?:ty|tysm|thank\s+u|gracias|merci|danke|obrigad[oa])|"
    # the file pointed back at after the target: "the Redeem voucher button on it", "the link there"
    r"(?<=\w)\s+(?:(?:on|in)\s+(?:it|there)|there)|"
    # a question that only points back at it: "..., where is it?"
    r",\s*(?:where|what)(?:'s|\s+is|\s+are)\s+(?:it|that|this|they)\b[^,]*|"
    # what the person means to do after it: "so I can edit it", "so that we could check"
    r"so(?:\s+that)?\s+(?:i|we)\s+(?:can|could|may|might)\b[^,]*|in\s+order\s+to\b[^,]*|if\s+you\s+(?:can|could|would|don't"
    r"\s+mind)|when\s+you\s+(?:can|get\s+a\s+chance)|"
    # an aside after a comma: the person's guess or why ("settings I guess", "it keeps popping up")
    r",\s*(?:[\w'-]+\s+){0,3}i\s+(?:guess|think|suppose|believe)|"
    # asking again after the target: ", can you show me?"
    r",\s*(?:(?:can|could|would|will)\s+you\s+)?(?:show|tell|point)\s+(?:me|us)\b[^,]*|"
    r",\s*(?:it|this|that)(?:\s+(?:keeps|always|never|[a-z]+s)|'s|\s+is)\s+[^,]*|"
    # the person's own trouble with it: "but I honestly cannot see it", ", I always forget"
    r"(?:,\s*|\s+but\s+)i\s+(?:\w+\s+)?(?:can'?t|cannot|could\s*n'?t|don'?t|always|never|keep)\b[^,]*|"
    # where it is shown, said after it: "(click Careers in that snippet)"
    r"\s+(?:in|on)\s+(?:that|this|the)\s+(?:snippet|screenshot|page|image|picture|markup|html)\)?"
    r")\s*[.!?]*\s*$",
    re.I,
)


def _tidy(instruction: str) -> str:
    """An instruction without the asking around it: the sentences that only say where the
    screenshot is or that are asides after the target, the request clauses before it ("could
    you", "I can't find", "tick") and the asides after it ("please", "and nothing else", "by
    clicking it")."""
    text = re.sub(r"\s+([.!?,])", r"\1", instruction)
    # what a removed path left: ",," or ". ," between clauses
    text = re.sub(r"(?:,\s*)+,", ",", text)
    text = re.sub(r"([.!?])\s*,", r"\1", text)
    sentences = [_clauses(s) for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip(" .!?,")]
    kept = [s for s in sentences if not _ABOUT_FILE.match(s.strip(" .!?,"))] or sentences
    kept = kept[:1] + [s for s in kept[1:] if not _ASIDE.match(s.strip())]
    # context first, the request after it ("We're testing the flow. Can you find Skip?"): the
    # sentence that asks is the instruction
    if len(kept) > 1 and not _asks(kept[0]):
        asking = [s for s in kept if _asks(s)][:1]
        # the asking is read off it as off a first sentence
        kept = [_ASKING.sub("", _POLITE.sub("", asking[0]).strip(" ,"))] if asking else kept
    rest = " ".join(kept)
    for _ in range(3):  # the clauses come in any order: "please, could you tick ..."
        before = rest
        rest = _POLITE.sub("", rest).strip(" ,")
        rest = _LABEL.sub("", rest)
        rest = _THE_ONE.sub("", rest)
        rest = re.sub(r"^(?:this|the)\s+instruction\s*:?\s*", "", rest, flags=re.I)
        rest = _SEARCHING.sub("", rest)
        rest = _CLICK_VERB.sub("", rest)
        # "hey so there's some kind of help icon": the opening words and "there's" only lead in
        rest = re.sub(
            r"^(?:(?:hey|hi|ok(?:ay)?|so|um+|uh+|well)\b[\s,]*)+(?=\S)", "", rest, flags=re.I
        )
        rest = re.sub(
            r"^there(?:'s|\s+is|\s+are)\s+(?:(?:some|a)\s+(?:kind|sort)\s+of\s+|an?\s+)?(?=\S)",
            "",
            rest,
            flags=re.I,
        )
        rest = _TRAILING.sub("", rest)
        if rest == before:
            break
    return rest.strip(" ,:;.?") or instruction


def _asks(sentence: str) -> bool:
    s = _LABEL.sub("", sentence.strip(" ,"))
    return bool(_REQUEST.match(s) or _SEARCHING.match(s) or _LABEL.match(sentence.strip(" ,")))


def _clauses(sentence: str) -> str:
    """``sentence`` without the clauses that only say where the file came from ("My grandma
    sent me this screenshot, ...") or that a removed path left empty."""
    parts = [p for p in re.split(r",\s*", sentence) if p.strip(" .!?")]
    kept = [p for p in parts if not _ABOUT_FILE.match(p.strip(" .!?"))]
    return ", ".join(kept) if kept else sentence


# typing said in Spanish, French, Portuguese and German: "escribe 'hola' en el campo ...",
# "tape 'bonjour' dans le champ ...", "digite 'oi' no campo ...", "gib 'max' in das Feld ... ein"
_FOREIGN_TYPE = (
    r"escribe|escriba|introduce|introduzca|teclea|tape|tapez|saisis|saisissez|écris|écrivez|entre|"
    r"entrez|digite|digita|escreva|escreve|insira|gib|geben\s+sie|schreib|schreibe|trag|trage|"
    r"ingresa|ingrese|rellena|coloca|coloque|mets|mettez|insère|insérez|pon|ponga|põe|ponha"
)
# an article of those languages before the field's name (the grounder reads English ones)
_FOREIGN_ARTICLE = re.compile(r"^(?:el|la|los|las|le|les|l'|der|die|das|den|dem|o|os|as)\s+", re.I)
# "fill the search box with wireless headphones", "in the new task box write: Buy batteries",
# "fill in 1990-05-17 as the date of birth"
_TYPED_MORE = (
    re.compile(
        r"^(?:fill\s+in|enter|type|put|input)\s+(?P<text>\S+(?:\s+\S+){0,3}?)\s+as\s+(?:the\s+|my\s+|your\s+)?"
        r"(?P<target>\S.*)$",
        re.I | re.S,
    ),
    re.compile(
        r"^fill(?:\s+in|\s+out)?\s+(?P<target>.+?)\s+with(?P<colon>\s*:)?\s+(?P<text>.+)$",
        re.I | re.S,
    ),
    re.compile(
        r"^(?:in|into|inside)\s+(?P<target>.+?)\s*,?\s+(?:type|write|enter|put|input)\s*(?P<colon>:)?\s+"
        r"(?P<text>.+)$",
        re.I,
    ),
)


def _typed(instruction: str) -> dict[str, Any] | None:
    """``type X into Y`` with X unquoted: what it types and where ("Enter 42 in the age
    field", "type my username, kmorales, into the login box")."""
    m = _TYPED.match(instruction)
    if not m:
        for form in _TYPED_MORE:
            m = form.match(instruction)
            if m:
                break
    if not m:
        return None
    typed = m["text"].strip(" ,")
    if "colon" in m.groupdict() and m["colon"]:  # "with: Hi, I'd like ..." types it all
        pass
    elif "," in typed:  # "my username, kmorales," names what it types
        typed = typed.split(",")[-1].strip() or typed
    elif re.match(r"(?:my|our|the|your)\s+\S+\s+\S", typed, re.I):
        typed = typed.split()[-1]  # "my gift card number GC-7781"
    return {
        "instruction": re.sub(
            r"^(?:the|my|our)\s+", "", _FIELD_END.sub("", m["target"]).strip(), flags=re.I
        ),
        "action": "type",
        "text": typed.strip("'\""),
    }


# A typing request, read by what its verb governs rather than by its phrasings: the value is the
# typing verb's object (quoted in any style, or bare up to the preposition that names where it
# goes), the field is the phrase after that preposition ("into", "in", "dans", "en", "no", ...),
# or the phrase set off before the verb ("Search box: enter 'X'", "In the notes field, write X").
# The verb may open any clause ("Test payment, please enter 4111 1111 in the Card number field").
_ANY_QUOTE = (
    r"(?:\"(?P<q1>[^\"]+)\"|“(?P<q2>[^”]+)”|„(?P<q3>[^“”]+)[“”]|«\s*(?P<q4>[^»]+?)\s*»|"
    r"‘(?P<q5>[^’]+)’|'(?P<q6>[^']+)'(?!\w)|`(?P<q7>[^`]+)`)"
)
_TYPE_VERB = (
    rf"(?:type|enter|write|put|input|key\s+in|paste|fill\s+in|{_FOREIGN_TYPE}|tippe|tipp|digitar|"
    r"escribir|introducir)"
)
_INTO = (
    r"(?:into|in\s+to|inside|in|dans|en|no|na|em|nos|nas|ins|in\s+das|in\s+die|in\s+den|im|"
    r"sur\s+le|sur\s+la)"
)
_CLAUSE_START = r"(?:^|(?<=[,:;.!?])\s*|\b(?:please|pls|plz|and|then|now|just|also)\s+)"
_TYPING = (
    # the verb first: "enter 4111 1111 in the Card number field", "tape 75011 dans le champ X"
    re.compile(
        rf"{_CLAUSE_START}{_TYPE_VERB}\s*:?\s+(?:{_ANY_QUOTE}|(?P<bare>[^\s'\"“„«‘`].*?))\s+"
        rf"{_INTO}\s+(?P<field>.+?)\s*$",
        re.I | re.S,
    ),
    # the field first, set off by a colon, comma or dash: "Search box: enter 'Gödel Escher Bach'"
    re.compile(
        r"^(?:(?:in|into|on)\s+)?(?P<field>[^:,;\-—–]+?)\s*(?::|,|;|\s[-—–]+)\s*"
        rf"(?:(?:please|pls|just|now|then)\s+)?{_TYPE_VERB}\s*:?\s+"
        rf"(?:{_ANY_QUOTE}|(?P<bare>.+?))\s*[.!]*$",
        re.I | re.S,
    ),
    # the field as the subject, its value before the typing: "the outbound date field needs
    # 2026-12-24 typed in", "the Quantity box should read 12, fill it in"
    re.compile(
        rf"{_CLAUSE_START}(?P<field>(?:the|my|our|your)\s+[^,;:]*?\b(?:field|box|input|textbox|"
        r"text\s+box|bar|area)s?)\s+(?:needs?|should\s+(?:read|say|have|contain|show|be)|"
        r"must\s+(?:read|say|have|contain|be)|has\s+to\s+(?:read|say|be)|wants|gets)\s+"
        rf"(?:{_ANY_QUOTE}|(?P<bare>[^\s,;]+(?:\s+[^\s,;]+){{0,4}}?))"
        r"(?:\s+(?:typed|entered|filled|put|written)(?:\s+in(?:to\s+it)?)?)?"
        r"(?:\s*[,;]\s*(?:(?:so|please|pls|and)\s+)*(?:fill|type|enter|put)\s+(?:it|that)\b.*)?"
        r"\s*[.!]*$",
        re.I | re.S,
    ),
    # a field set to a value: "set the nickname field to Bobby" (the field named by its noun)
    re.compile(
        rf"{_CLAUSE_START}(?:set|change|update|fill)\s+(?P<field>.+?\b(?:field|box|input|textbox|"
        r"text\s+box|bar|area)s?)\s+(?:to|with)\s*:?\s+"
        rf"(?:{_ANY_QUOTE}|(?P<bare>.+?))\s*[.!]*$",
        re.I | re.S,
    ),
)
# what ends a field's name: a second action ("... in the coupon box and press Apply"), German's
# separable prefix after it ("Geben Sie 42 in das Feld Alter ein")
_FIELD_END = re.compile(
    r"\s*(?:,\s*)?\b(?:and|then|und|et|y|e)\s+(?:then\s+)?(?:press|click|hit|tap|submit|select|choose|"
    r"send|drück|klick|appuie|clique|pulsa|haz|aperte|clica)\b.*$|\s+ein\s*[.!]*$",
    re.I | re.S,
)


def _typing(instruction: str) -> dict[str, Any] | None:
    """What a typing request types and where, by its verb's object and the field named by a
    preposition after it or set off before it (see the section's comment); None when no
    typing verb governs a value and a field."""
    for form in _TYPING:
        m = form.search(instruction)
        if not m:
            continue
        value = next((m[f"q{i}"] for i in range(1, 8) if m[f"q{i}"]), None) or m["bare"]
        field = _FOREIGN_ARTICLE.sub("", _tidy(_FIELD_END.sub("", m["field"]).strip(" ,.;:")))
        if not value or not field or len(field.split()) > 8:
            continue
        return {"instruction": field, "action": "type", "text": value.strip()}
    return None


# -- the target: the noun phrase a request points at ---------------------------------------
#
# A request names its target as the object of a verb that points ("click the X", "find X",
# "where is the X", "which pixel is the X at", "the position of the X"), or, without such a
# verb, as a noun phrase whose head is an element's kind ("the 'Retry' button doesn't look
# clickable"), or as a quoted label. Whatever surrounds it (politeness, the person's situation,
# asides) is left where it is rather than peeled off phrase by phrase.

# the nouns that head an element's description: the grounder's own role and icon words, and
# the everyday names of the same things
_HEADS = sorted(
    _ROLE_WORDS
    | _ICON_WORDS
    | {
        "btn", "bar", "searchbar", "toolbar", "avatar", "arrow", "banner", "slider", "radio",
        "logo", "section", "thumbnail", "tile", "card", "badge", "chip", "pill", "picker",
        "textarea", "area", "combobox", "dialog", "popup", "modal", "widget", "bubble", "knob",
    },
    key=len,
    reverse=True,
)  # fmt: skip
_HEAD = r"(?:" + "|".join(re.escape(h) for h in _HEADS) + r")(?:e?s)?"
_QUOTED = r"(?:\"[^\"]+\"|“[^”]+”|'[^']+'(?!\w)|‘[^’]+’|`[^`]+`)"
# "the 'Retry' button", "a small red trash can icon", "your upload btn"
_HEADED = re.compile(
    rf"\b(?:the|a|an|this|that|your|my|our)\s+(?:(?:{_QUOTED}|[\w'’-]+)\s+){{0,6}}?{_HEAD}\b"
    rf"(?:\s+{_QUOTED})?",
    re.I,
)
# where a described element is, said after it: "the toggle to the right of 'Wi-Fi'", "the 'Retry'
# link above the error banner", "the hamburger menu in the top left"
_RELATION = re.compile(
    r"\s+(?:(?:just|right|directly|immediately)\s+)?(?:(?:to\s+the\s+)?(?:right|left)\s+of|next\s+to|"
    r"beside|above|below|under(?:neath)?|beneath|on\s+top\s+of|near|in\s+the|at\s+the)\b",
    re.I,
)
# the words that end the phrase a relation points to: a verb or a new clause
_RELATION_END = re.compile(
    r"\s+(?:is|are|was|were|isn'?t|aren'?t|doesn'?t|does|do|don'?t|looks?|seems?|keeps?|has|have|"
    r"should|can|could|will|won'?t|would|that|which|and|but|so|where|when|because|please)\b|"
    r"\s*[,.;:!?](?:\s|$)|\s*[,;:!?]",
    re.I,
)
# a pointing verb or question that points at what follows it
_POINTING = re.compile(
    r"\b(?:(?:double|right)[\s-]?)?(?:click(?:ing)?|tap(?:ping)?)(?:\s+(?:on|to))?\b|"
    r"\b(?:press(?:ing)?|hit(?:ting)?|select(?:ing)?|choos(?:e|ing)|pick(?:ing)?|find(?:ing)?|"
    r"locat(?:e|ing)|spot(?:ting)?|identify(?:ing)?|ground|highlight(?:ing)?|toggl(?:e|ing)|pinpoint(?:ing)?|"
    r"tick(?:ing)?|untick(?:ing)?|check(?:ing)?|uncheck(?:ing)?|expand(?:ing)?|collaps(?:e|ing)|"
    r"enabl(?:e|ing)|disabl(?:e|ing)|activat(?:e|ing)|mark)\b|\bfocus(?:\s+on)?\b|"
    r"\bpoint\s+(?:me\s+|us\s+)?(?:to|at|out)\b|\bshow\s+me\b|"
    # the same in German, French, Spanish and Portuguese: "Trouve le bouton Envoyer", "Wo ist ..."
    r"\b(?:trouve[rz]?|montre(?:-moi|z-moi)?|finde|zeig(?:e)?(?:\s+mir)?|"
    # a click verb of another language, with the preposition it takes: "Clique em", "clique sur",
    # "haz clic en", "klick auf", "appuie sur", "pulsa en", "toque no"
    r"(?:clique[rz]?|cliquea|clica[rz]?|klicke?|tippe|drücke?|appuie[rz]?|pulsa|toca|toque|"
    r"(?:haz|haga|faça|faz)\s+(?:clic|click|clique))(?:\s+(?:sur|em|en|no|na|auf|on))?|"
    r"encuentra|busca|muéstrame|muestra|encontre|encontra|mostra|mostre|"
    r"localiza|localise[rz]?)(?=\s)|\b(?:où\s+(?:est|sont|se\s+trouve)|wo\s+(?:ist|sind|finde\s+ich)|"
    r"dónde\s+(?:está|están)|onde\s+(?:está|fica))\b|"
    r"\b(?:switch|turn|flip)\s+(?:on|off)\b|\blooking\s+for\b|\bi\s+(?:need|want)(?!\s+(?:you|it|to)\b)|"
    r"\bwhere(?:'s|’s|s\b|\s+(?:is|are|was|does|do|did|would|should|can|could|might|will)\b)?|"
    r"\bwhich\s+(?:pixel|element|part|spot|point|control|one|thing|item|widget)s?\s+(?:is|are)\b|"
    # "which part lets me change the language": the element described by what it lets one do
    r"\bwhich\s+(?:pixel|element|part|spot|point|control|one|thing|item|widget|area|bit|place)s?"
    r"(?=\s+(?:lets|allows|helps)\s)|"
    # "which icon opens the calendar": the element is described by what it does
    rf"\bwhich\b(?=\s+{_HEAD}\s+(?!(?:of|is|are|in|on|at|should|do|does|would|can)\b)[a-z]+s\b)|"
    r"\b(?:position|location|coordinates|coords|place|spot|whereabouts|pixels?)\s+of\b|"
    r"\bheat\s?map\s+(?:for|of)\b",
    re.I,
)
# what may stand between two pointing words: "show me where I should click to ...", "where
# would I click to ...", "I need you to select ..."
_BETWEEN = re.compile(
    r"^\s*(?:(?:you\s+)?to\s+|(?:exactly|precisely)\s+|(?:(?:i|we|you|one)\s+)?"
    r"(?:(?:should|would|could|can|do|must|might|will|have\s+to|need\s+to|ought\s+to|am\s+supposed\s+to)"
    r"\s+)?(?:(?:i|we|you|one)\s+)?(?:(?:have|need)\s+to\s+)?)"
    # "where do I go to change ...": the moving is not the target
    r"(?:(?:go|head|look|navigate)\s+(?:to\s+)?(?=\w+\s))?",
    re.I,
)
# a request that leaves the target to a pronoun ("where is it?"), or names nothing
_EMPTY_TARGET = re.compile(
    r"^(?:it|that|this|them|they|one|those|these|here|there|me|out|up|exactly|precisely|on|to|"
    r"at|for)?\s*(?:exactly|precisely|again|please|now)?$",
    re.I,
)
# what a where-question leaves after its target: "where does the X sit", "which pixel is the X at"
_WHERE_TAIL = re.compile(
    r"\s+(?:(?:is|are)\s+)?(?:sit|sits|sitting|is|are|live|lives|located|go|goes|appear|appears|"
    r"show\s+up|shows\s+up|be|at|located\s+at|found)\s*$",
    re.I,
)
# the file named again after the pointing verb: "find in picture the ...", "locate on the screen"
_ON_FILE = re.compile(
    r"^(?:(?:in|on|inside|within|from)\s+(?:the\s+|this\s+|my\s+)?(?:picture|screenshot|screen\s?shot|"
    r"screen|image|page|file|capture)\b\s*,?\s*)",
    re.I,
)
# "instruction: ..." / 'instruction="play button"': the target given as a field
_FIELD = re.compile(
    r"\b(?:instruction|target|element)\s*[=:]\s*(?:\"(?P<a>[^\"]+)\"|'(?P<b>[^']+)'|(?P<c>[^|\n]+))",
    re.I,
)
_WH = ("where", "which", "position", "location", "coordinates", "place", "spot ", "whereabouts")
_CLAUSE = re.compile(r"(?<=[.!?])\s+|\s+--?\s+|\s+[—–]\s+|\s*[|;]\s*|\n+")


def _pointed(clause: str) -> str | None:
    """The phrase after the first pointing words of ``clause`` that point at something (None
    when none do, or only at a pronoun, then the phrase the pronoun stands for)."""
    # "the field where the IBAN goes": a "where" after an element's name describes the element
    found = [
        m
        for m in _POINTING.finditer(clause)
        if not (m.group(0).lower().startswith("where") and _RELATIVE.search(clause[: m.start()]))
        and not (
            _ARTICLE_BEFORE.search(clause[: m.start()])
            and not re.search(r"\s(?:of|for)$", m.group(0), re.I)  # "the position of" points
        )
    ]
    # a question about where a thing is says what it is after, whatever the person did before
    # ("I've been clicking around, where do I ...")
    asked = [m for m in found if m.group(0).lower().startswith(_WH)]
    for m in asked + [m for m in found if m not in asked]:
        said = _pointed_at(clause, m)
        # "check x.png and show me where ...": the verb's object was the file
        if said and not re.match(r"(?:and|then|but|so|or)\b", said, re.I):
            return said
    for m in asked:  # "the basket in the top corner, where is it?": what "it" stands for
        before = _BEFORE_IT.sub("", clause[: m.start()].strip(" ,:;-")).strip(" ,:;-")
        before = _SOMEWHERE.sub("", before).strip(" ,:;-")
        # "a bell icon somewhere at the top": "somewhere" only says it is there
        before = re.sub(r"\s+somewhere\b", "", before, flags=re.I)
        if before and len(before.split()) <= 8 and not _POINTING.search(before):
            return before
    return None


_RELATIVE = re.compile(rf"\b{_HEAD}\s*$", re.I)
# a pointing word right after an article names a thing: "the toggle", "a check mark"
_ARTICLE_BEFORE = re.compile(r"\b(?:the|a|an|this|that|your|my|our)\s+$", re.I)
# what stands before a phrase that a later "where is it?" points back to
_BEFORE_IT = re.compile(
    r"^(?:(?:ok(?:ay)?|so|and|but|well|um|hmm|hey)\b\s*,?\s*)*(?:there(?:'s|’s|\s+is|\s+are)\s+|"
    r"i\s+(?:see|know\s+there(?:'s|\s+is))\s+)?",
    re.I,
)
_SOMEWHERE = re.compile(
    r"\s+(?:somewhere|in\s+there|on\s+(?:the\s+|this\s+)?(?:screen|page|screenshot))(?:\s+(?:here|there))?$",
    re.I,
)
# "the phrase "Continue with Google"": the words that only say a label follows
_LABEL_WORDS = re.compile(
    rf"^(?:the\s+)?(?:phrase|text|words?|label|string|caption|wording)\s+(?={_QUOTED}$)", re.I
)


def _pointed_at(clause: str, m: re.Match[str]) -> str | None:
    where = m.group(0).lower().startswith(_WH)
    rest = clause[m.end() :]
    for _ in range(4):  # "show me" "where" "I should click to" ...
        gap = _BETWEEN.match(rest)
        after = rest[gap.end() :] if gap else rest
        after = re.sub(r"^[\s:,]*(?:the\s+(?=\w+\s+of\b))?", "", after, flags=re.I)
        nxt = _POINTING.match(after)
        if nxt is None:
            break
        where = where or nxt.group(0).lower().startswith(_WH)
        rest = after[nxt.end() :]
    if where:  # "where do I go to change ...", "where can you change the font"
        gap = _BETWEEN.match(rest)
        rest = rest[gap.end() :] if gap else rest
    rest = rest.strip(" :,-")
    rest = _ON_FILE.sub("", rest).strip(" :,-")
    rest = re.sub(r"^(?:me\s+|exactly\s+|precisely\s+)+", "", rest, flags=re.I)
    # "where exactly is it", "the one I want is the X"
    rest = re.sub(r"^(?:is|are|was|were)\s+", "", rest, flags=re.I)
    # "which spot lets me change my avatar": what it lets one do names it
    rest = re.sub(
        r"^(?:lets|let|allows|helps)\s+(?:me|you|us|one|the\s+user)\s+(?:to\s+)?(?=\w)",
        "",
        rest,
        flags=re.I,
    )
    rest = _FILLER.sub("", rest.strip(" ?.!,")).strip(" ,:;.?!")
    for _ in range(2):
        rest = _TRAILING.sub("", rest).strip(" ,:;.?!")
    if where:
        rest = _FILLER.sub("", _WHERE_TAIL.sub("", rest)).strip(" ,:;.?!")
    if _EMPTY_TARGET.match(rest):
        return None
    return rest


def _target(text: str) -> str | None:
    """The element ``text`` points at, as the person described it (see above); None when no
    clause names one."""
    field = _FIELD.search(text)
    if field:
        said = (field["a"] or field["b"] or field["c"] or "").strip(" ,;.")
        if said:
            return said
    clauses = [c.strip(" ,") for c in _CLAUSE.split(text) if c and c.strip(" .!?,")]
    # a question of where a thing is names the target, whatever the sentences before it say
    # ("users can't find how to reset the filters. Where is the reset filters control?")
    asked = [c for c in clauses if re.match(r"(?:where|which)\b", c, re.I)]
    for clause in asked + [c for c in clauses if c not in asked]:
        said = _pointed(clause)
        if said and _FOREIGN_ARTICLE.match(said):
            # "Wo ist der Button 'Weiter'": the article of another language is not on the
            # screen; a quoted label in the phrase, with its kind, says what is
            label = re.search(rf"(?:\b{_HEAD}\s+)?{_QUOTED}(?:\s+{_HEAD}\b)?", said, re.I)
            said = label.group(0) if label else said
        if said:
            return _LABEL_WORDS.sub("", said)
    for clause in clauses:  # "I need to sign out - where do I click?": the goal is the target
        goal = _GOAL.search(clause)
        if goal and not _EMPTY_TARGET.match(goal["goal"].strip(" ,.?!")):
            return _TRAILING.sub("", goal["goal"].strip(" ,.?!")).strip(" ,.?!")
    for clause in clauses:  # an element placed by a relation: "the toggle right of 'Wi-Fi'"
        placed = _placed(clause)
        if placed:
            return placed
    for clause in clauses:
        q = re.search(rf"(?:\b{_HEAD}\s+)?{_QUOTED}(?:\s+{_HEAD}\b)?", clause, re.I)
        if q:
            return q.group(0)
    for clause in clauses:
        m = _HEADED.search(clause)
        if m:
            # "could you accept the cookie banner": the verb asked for is part of the target
            verb = _ASKED_VERB.search(clause[: m.start()])
            if verb and verb["verb"].lower() not in _NOT_VERBS:
                return f"{verb['verb']} {m.group(0)}"
            return m.group(0)
    return None


def _placed(clause: str) -> str | None:
    """An element's description with the relation that places it ("the toggle to the right
    of 'Wi-Fi'", "the 'Retry' link above the error banner"), from its last article on; None
    when no described element is followed by a relation."""
    for m in _HEADED.finditer(clause):
        rel = _RELATION.match(clause, m.end())
        if rel is None:
            continue
        end = _RELATION_END.search(clause, rel.end())
        where = clause[rel.end() : end.start() if end else len(clause)].strip()
        if not where:
            continue
        # "the QA ticket says the 'Retry' link": the description starts at its last article
        phrase = m.group(0)
        quoted = [q.span() for q in re.finditer(_QUOTED, phrase)]
        articles = [
            a.start()
            for a in re.finditer(r"\b(?:the|a|an|this|that|your|my|our)\s+", phrase, re.I)
            if not any(i <= a.start() < j for i, j in quoted)
        ]
        phrase = phrase[articles[-1] :] if articles else phrase
        return f"{phrase}{clause[m.end() : rel.end()]} {where}"
    return None


# what the person says they want done, when they only ask where to click for it
_GOAL = re.compile(
    r"^(?:(?:so\s+)?i\s+(?:need|want|have|would\s+like|'d\s+like|am\s+trying|'m\s+trying)\s+to|"
    r"how\s+(?:do|can|could|would)\s+i|trying\s+to)\s+(?P<goal>\w.+)$",
    re.I,
)
# a bare verb right before the element, after the asking ("could you accept the ...")
_ASKED_VERB = re.compile(r"(?:^|\b(?:you|to|please|pls|plz|and|then)\s+)(?P<verb>[a-z]+)\s+$", re.I)
_NOT_VERBS = {
    "is", "are", "was", "be", "see", "find", "at", "in", "on", "of", "for", "with", "where", "that",
    "the", "a", "an", "me", "it", "know", "tell", "show", "need", "want", "like", "have", "get",
}  # fmt: skip


def _saved(text: str) -> tuple[str, str, str | None]:
    """``text`` without a clause that says where an output goes, what it is, and its path."""
    m = _SAVE.search(text)
    if not m:
        return text, "", None
    what = m["what"].lower()
    if what in ("it", "that"):  # "heatmap for X, write it to out.png": what the request makes
        what = "heatmap" if re.search(r"heat\s?map", text, re.I) else "screenshot"
    return text[: m.start()] + text[m.end() :], what, m["path"]


def _extract_ground(text: str) -> dict[str, Any] | None:
    if _FILE_CHORE.match(text):
        return None
    text, what, saved = _saved(text)
    m = _IMAGE.search(text)
    if not m:
        return None
    path = m["qpath"] or m["path"]
    quoted = m["qpath"] is not None
    text = text.replace(m.group(0), path) if quoted else text
    instruction = _instruction(text, path)
    if not instruction:
        return None
    said = _target(_instruction(text, path, peel=False)) or _tidy(instruction)
    out: dict[str, Any] = {"image": path, "instruction": said}
    if saved and what.startswith("heat"):
        out["heatmap"] = saved
    return out


# the viewport asked for: "(width 390, height 844)", "at 390x844", "width=1024"
_SIZE = re.compile(
    r"\s*[(,]?\s*(?:(?:at|with|in)\s+(?:a\s+)?)?(?:(?:width|w)\s*[=:]?\s*(?P<w>\d{3,4})(?:\s*px)?"
    r"(?:\s*(?:,|and|x|by)?\s*(?:height|h)\s*[=:]?\s*(?P<h>\d{3,4})(?:\s*px)?)?|(?:height|h)\s*[=:]?\s*"
    r"(?P<h2>\d{3,4})(?:\s*px)?|(?P<w3>\d{3,4})\s*[x×]\s*(?P<h3>\d{3,4})(?:\s*px)?)"
    r"(?:\s+(?:viewport|window|screen))?\s*\)?",
    re.I,
)


def _size(text: str) -> tuple[str, dict[str, int]]:
    """``text`` without the viewport size it asks for, and that size."""
    m = _SIZE.search(text)
    if not m:
        return text, {}
    size: dict[str, int] = {}
    if m["w"] or m["w3"]:
        size["width"] = int(m["w"] or m["w3"])
    if m["h"] or m["h2"] or m["h3"]:
        size["height"] = int(m["h"] or m["h2"] or m["h3"])
    return text[: m.start()] + text[m.end() :], size


# a target described again in apposition: "press Cancel, the one under the warning text" is
# "Cancel under the warning text"
_APPOSED = re.compile(
    r"\s*(?:,|\s[-—–]+)\s*(?:the|that)\s+one\s+(?=(?:just\s+|right\s+)?(?:under|below|above|beside|"
    r"next\s+to|left\s+of|right\s+of|to\s+the\s+(?:left|right)\s+of|near|by|behind|after|before|"
    r"in\s+the|on\s+the)\b)",
    re.I,
)
# a German click with its verb last, after the reason: "Der Warenkorb ist voll, also bitte den
# Knopf „Weiter zur Kasse“ anklicken"
_VERB_LAST = re.compile(
    r"^(?:[^,]*,\s*)?(?:(?:also|dann|und|bitte|jetzt|mal|einfach)\s+)*(?P<target>\S.*?)\s+"
    r"(?:an|aus)?(?:klicken|drücken|tippen|wählen)\s*[.!]*$",
    re.I | re.S,
)


def _unfold(instruction: str) -> str:
    """``instruction`` with a target in apposition joined to it and a German verb-last click
    read as its object (see above)."""
    instruction = _APPOSED.sub(" ", instruction)
    m = _VERB_LAST.match(instruction)
    return m["target"] if m else instruction


def _extract_act(text: str) -> dict[str, Any] | None:
    if _FILE_CHORE.match(text):
        return None
    text, what, saved = _saved(text)
    extra: dict[str, Any] = {"screenshot": saved} if saved and not what.startswith("heat") else {}
    if not _MARKUP.search(text):
        text, size = _size(text)
        extra |= size
    markup = _MARKUP.search(text)
    m = _PAGE.search(text if markup is None else text[: markup.start()] + text[markup.end() :])
    # a page by its address is acted on only when an action is asked ("summarise this article:
    # https://..." asks for none)
    if m and m["url"] and not _ACTS.search(text):
        return None
    if m:
        page = m["qpath"] or m["url"] or m["path"]
        text = text.replace(m.group(0), page) if m["qpath"] else text
        instruction = _instruction(text, page).strip(" —–-")
        raw = _instruction(text, page, peel=False).strip(" —–-")
    elif markup:
        page = markup.group(0)
        # "in this page: <html>...", "of this HTML: <form>..." name the pasted markup
        instruction = re.sub(
            r"\s*\b(?:(?:in|on|of|from|inside|within|into)\s+)?(?:this|the|that)\s+"
            r"(?:html\s+page|web\s+page|page|html|markup|snippet|form)\s*:?\s*$",
            "",
            (text[: markup.start()] + text[markup.end() :]).strip(),
            flags=re.I,
        ).strip(" ,:;.")
        raw = instruction
    else:
        return None
    quoted = r"(?:\"(?P<t1>[^\"]+)\"|“(?P<t2>[^”]+)”|'(?P<t3>[^']+)')"
    typed = (
        re.search(
            rf"\b(?:type|enter|write|put|input|fill\s+in|{_FOREIGN_TYPE})\s+{quoted}\s+"
            r"(?:in|into|in to|on|as|en|dans|no|na|em|ins|in\s+das|in\s+die|in\s+den)\s+(?P<target>.+)$",
            instruction,
            re.I,
        )
        or re.search(
            rf"\bfill(?:\s+in)?\s+(?P<target>.+?)\s+with\s+{quoted}\s*$", instruction, re.I
        )
        # German puts the verb last: "'max' ins Feld Benutzername eintragen"
        or re.search(
            rf"{quoted}\s+(?:in|ins|in\s+das|in\s+die|in\s+den|im)\s+(?P<target>.+?)\s+"
            r"(?:eintragen|eingeben|eintippen|tippen|schreiben|einfügen)\b",
            instruction,
            re.I,
        )
    )
    typed = (
        typed
        # the field named first, then "fill it with V": "it" is that field
        or re.search(
            r"^(?:(?:has|there(?:'s|\s+is))\s+)?(?P<target>[^;.]+?)\s*[;,.]\s*(?:and\s+)?"
            r"(?:fill|type|enter)\s+(?:it|that(?:\s+one)?)\s+(?:in\s+)?with\s+"
            rf"(?:{quoted}|(?P<t4>\S+))\s*$",
            instruction,
            re.I,
        )
        # German's separable verb around the field and the text: "Trag ins Feld X 10115 ein"
        or re.search(
            r"^(?:trag|trage|tragen\s+sie|gib|gebe|geben\s+sie|tipp|tippe)\s+"
            r"(?:in\s+das|ins|in\s+die|in\s+den)\s+(?P<target>.+?)\s+"
            rf"(?:{quoted}|(?P<t4>\S+))\s+ein\s*[.!]*$",
            instruction,
            re.I,
        )
    )
    if typed:
        target = _FOREIGN_ARTICLE.sub("", typed["target"].strip())
        return {
            "page": page,
            "instruction": _tidy(target),
            "action": "type",
            "text": typed["t1"] or typed["t2"] or typed["t3"] or typed.groupdict().get("t4"),
            **extra,
        }
    # "fill the message field with: Hi, I'd like ...": all after the colon is typed
    colon = re.search(
        r"\bfill(?:\s+in|\s+out)?\s+(?P<target>.+?)\s+with\s*:\s*(?P<text>\S.*)$",
        instruction,
        re.I | re.S,
    )
    if colon:
        target = re.sub(r"^(?:the|my|our)\s+", "", colon["target"].strip(), flags=re.I)
        return {
            "page": page,
            "instruction": target,
            "action": "type",
            "text": colon["text"],
            **extra,
        }
    # "search for 'noise cancelling headphones'": typed into the page's search field
    search = re.match(
        rf"^(?:(?:please|pls)\s+)?(?:search(?:\s+for)?|look\s+(?:for|up))\s+{quoted}\s*$",
        instruction,
        re.I,
    )
    if search:
        said = search["t1"] or search["t2"] or search["t3"]
        return {"page": page, "instruction": "search", "action": "type", "text": said, **extra}
    if not instruction:
        return None
    instruction, raw = _unfold(instruction), _unfold(raw)
    tidy = _tidy(instruction)
    said = _typed(tidy) or _typing(tidy) or {"instruction": _target(raw) or tidy}
    return {"page": page, **said, **extra}


@operation(
    "gui",
    read_only=True,
    idempotent=True,
    time_limit_s=120,
    examples=(
        "Where is the settings button in screenshot.png?",
        "In shot.png, find the search field.",
        "Ground 'close the dialog' on screen.jpg",
        "Which element of login.png is the password input?",
        "Where is the Send button on mail.png?",
        "Locate the search bar in the screenshot home.jpg.",
        "Show me where to click to open the menu in app.png.",
        "I need the position of the close icon on popup.png.",
        "Here's a screenshot, shot.png: which element is the login link?",
    ),
    extract=_extract_ground,
)
def ground(args: GroundInput, ctx: OperationContext) -> GroundOutput | Outcome:
    """Find where an instruction points on a screenshot (Trifuse: OCR text and icon anchors,
    Consensus-SinglePeak fusion); it abstains rather than guess when nothing matches."""
    from lemmata.errors import ImageError

    path = Path(args.image).expanduser()
    if not path.is_file():
        raise ImageError(f"no screenshot at {path}: give the path of a PNG, JPEG or WebP file")
    ctx.report("reading the screen (OCR, icons)", 0.2)
    g = _grounder(ctx).ground(str(path), args.instruction)
    heatmap = None
    if args.heatmap:
        from lemmata.gui.draw import draw_grounding

        draw_grounding(str(path), g).save(args.heatmap)
        heatmap = args.heatmap
    out = _output(g, heatmap)
    if g.abstained:
        return Outcome(
            out,
            "failed",
            f"nothing on the screen matches {args.instruction!r} well enough (best score {g.score:.2f})",
            "name the element by its visible text, or describe the icon",
        )
    return out


@operation(
    "gui",
    destructive=True,
    time_limit_s=180,
    examples=(
        "On form.html click the Submit button.",
        "Open page.html and press Save.",
        'In settings.html type "alice" into the user name field.',
        "Click Sign in on login.html.",
        "Type 'hello' into the search box on index.html.",
        "Go to settings.html and tick the newsletter checkbox.",
        "Enter 42 in the age field of form.html.",
        "Press the Next button in wizard.html.",
    ),
    extract=_extract_act,
)
def act(args: ActInput, ctx: OperationContext) -> ActOutput | Outcome:
    """Act on a web page: render it in headless Chromium, ground the instruction on the
    screenshot, then click there (or click and type the text)."""
    from lemmata.environments.screen import ScreenEnvironment
    from lemmata.errors import UsageError

    if args.action == "type" and not args.text:
        raise UsageError("action type needs text: the text to type")
    page = args.page.strip()
    if page.lower().startswith("file://"):  # a local page by its address
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        page = url2pathname(urlparse(page).path)
    source = Path(page).expanduser()
    html = args.page
    if re.match(r"https?://\S+$", page, re.I):
        html = _fetched(page)
    elif page.lower().endswith((".html", ".htm")) and "<" not in page:
        if not source.is_file():
            raise UsageError(f"no page at {source}: give an .html file or the HTML itself")
        html = source.read_text(encoding="utf-8", errors="replace")
    with ScreenEnvironment(html, width=args.width, height=args.height) as env:
        ctx.report("rendering the page", 0.1)
        screen = env.reset()
        g = _grounder(ctx).ground(screen.payload["image"], args.instruction)
        point = [round(v, 1) for v in g.point] if g.point else None
        if g.abstained or g.point is None:
            return Outcome(
                ActOutput(
                    instruction=args.instruction,
                    action=args.action,
                    point=point,
                    score=round(g.score, 4),
                    hit=None,
                    observation="abstained: nothing was clicked",
                ),
                "failed",
                f"nothing on the page matches {args.instruction!r} well enough",
                "name the element by its visible text",
            )
        ctx.report("acting", 0.7)
        obs = env.step({"type": "click", "x": g.point[0], "y": g.point[1]})
        hit = obs.payload.get("hit")
        if args.action == "type":
            obs = env.step({"type": "type", "text": args.text})
        shot = None
        if args.screenshot:
            Path(args.screenshot).write_bytes(obs.payload["png"])
            shot = args.screenshot
        return ActOutput(
            instruction=args.instruction,
            action=args.action,
            point=point,
            score=round(g.score, 4),
            hit=hit,
            observation=obs.text,
            screenshot=shot,
        )


_ACTS = re.compile(
    r"\b(?:(?:double|right)[\s-]?)?(?:click|tap|press|hit|type|enter|fill|select|choose|pick|check|"
    r"uncheck|tick|untick|toggle|expand|collapse|submit|dismiss|close|open|scroll|search\s+for|put|"
    r"write|input)\b",
    re.I,
)


def _fetched(url: str, timeout_s: float = 15.0) -> str:
    """The HTML at ``url``, with a ``<base>`` naming the address so that the page's own
    stylesheets, scripts and images load from where it came from."""
    from urllib.error import URLError
    from urllib.request import urlopen

    from lemmata.errors import UsageError

    try:
        with urlopen(url, timeout=timeout_s) as response:  # noqa: S310 (http(s) only, checked)
            charset = response.headers.get_content_charset() or "utf-8"
            html = response.read().decode(charset, errors="replace")
    except (URLError, OSError, ValueError) as exc:
        raise UsageError(f"cannot load {url}: {exc}; give the page's .html file instead") from None
    base = f'<base href="{url}">'
    head = re.search(r"<head\b[^>]*>", html, re.I)
    return html[: head.end()] + base + html[head.end() :] if head else base + html


OPERATIONS: list[Operation] = [ground, act]
