"""What may reach coqtop: an allowlist for proofs, a blocklist for headers.

A proof is tactics and nothing else. Each sentence must be one of: a tactic (a sentence whose
first word starts with a lower-case letter, ``(`` or ``[``, possibly after a goal selector
such as ``2:`` or ``all:``), a bullet or brace, ``Proof`` (also ``Proof using ...`` and
``Proof with ...``), ``Qed``/``Defined`` as the last sentence, or a read-only query
(``Check``, ``Search``, ``About``, ``Print``, ``Show``...). ``Fail tac.`` and ``Succeed tac.``
are proof steps whose inner sentence is screened the same way. Anything else (``Definition``,
``Require``, ``Add LoadPath``, ``Cd``, an attribute ``#[...]``) is refused before it is sent.

A header is the problem's own context, so it may declare things; it is refused only for
sentences that reach outside Coq or switch a checker off (:func:`unsafe_command`):
``Redirect``, ``Load``, ``Cd``, ``Pwd``, ``Drop``, ``Declare ML Module``, ``Add [Rec]
LoadPath``, ``Add [Rec] ML Path``, ``Unset Guard/Positivity/Universe Checking`` (with any
locality or attribute before them), ``Set Definitional UIP``, ``#[bypass_check(...)]``, and
extraction to files (``Extraction "f.ml" ...``, ``Separate Extraction``, ``Extraction
Library``, ``Extraction TestCompile``...). A caller that wrote the header itself passes
``trusted_header=True`` to :class:`~lemmata.provers.coq.CoqTop` and skips this screen.

>>> from lemmata.provers.coq.sentences import split_sentences
>>> screen_proof(split_sentences("intros n. Cd \\"/tmp\\". lia."), "").kind.value
'unsafe_input'
>>> screen_header("Require Import Reals.\\nOpen Scope R_scope.") is None
True
>>> screen_header("Local Unset Guard Checking.").kind.value
'unsafe_input'
"""

from __future__ import annotations

import re

from lemmata.provers.base import position_of
from lemmata.provers.coq.sentences import (
    Sentence,
    SentenceError,
    _skip_comment,
    _skip_string,
    head_word,
    split_sentences,
)
from lemmata.provers.failure import tactic_name
from lemmata.provers.result import FailureKind, FailureMode

__all__ = [
    "THEOREM_KEYWORDS",
    "screen_header",
    "screen_proof",
    "strip_comments",
    "unsafe_command",
]

THEOREM_KEYWORDS = frozenset(
    {"Theorem", "Lemma", "Fact", "Remark", "Corollary", "Proposition", "Example"}
)
ENDS = frozenset({"Qed", "Defined"})
# Control commands that run the command after them and revert its effects: ``Fail tac.``
# succeeds exactly when ``tac`` fails, ``Succeed tac.`` when it succeeds.
CONTROL = frozenset({"Fail", "Succeed"})
_SORRY = re.compile(r"\b(admit|give_up)\b")
_STRUCTURAL = re.compile(r"[-+*]+|[{}]|(\d+|all|par|!)\s*:\s*\{")
# Goal selectors before a tactic: ``2:``, ``1-3:``, ``1,3:``, ``all:``, ``par:``, ``!:``,
# ``[name]:`` (not ``:=``).
_SELECTOR = re.compile(
    r"\s*(?:\d+(?:\s*-\s*\d+)?(?:\s*,\s*\d+(?:\s*-\s*\d+)?)*|all|par|!|\[[A-Za-z_][\w']*\])"
    r"\s*:(?!=)"
)
# Read-only commands a proof may use to look around; their second words that reveal the
# file system are refused below.
_QUERIES = frozenset(
    {
        "Check",
        "Search",
        "SearchPattern",
        "SearchRewrite",
        "SearchHead",
        "About",
        "Locate",
        "Print",
        "Show",
        "Compute",
        "Eval",
        "Guarded",
        "Info",
    }
)
_PATH_QUERIES = frozenset({"File", "Library", "LoadPath", "ML"})
# Prefixes that change how or where a command applies, not what it is.
_PREFIXES = frozenset(
    {
        "Local",
        "Global",
        "Export",
        "Polymorphic",
        "Monomorphic",
        "Cumulative",
        "NonCumulative",
        "Private",
        "Program",
        "Fail",
        "Succeed",
        "Time",
        "Instructions",
        "Profile",
    }
)
_ATTRIBUTE = re.compile(r"\s*#\[")
_WORD = re.compile(r'"(?:[^"]|"")*"|[^\s"]+')


def strip_comments(text: str) -> str:
    """``text`` with its comments ``(* ... *)`` (which nest) replaced by a space, read as
    :func:`~lemmata.provers.coq.sentences.split_sentences` reads them (an unclosed comment
    or string runs to the end)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("(*", i):
            try:
                i = _skip_comment(text, i)
            except SentenceError:
                i = n
            out.append(" ")
        elif text[i] == '"':
            try:
                end = _skip_string(text, i)
            except SentenceError:
                end = n
            out.append(text[i:end])
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _attributes(text: str) -> tuple[str, str]:
    """``(attributes, rest)``: the ``#[...]`` groups at the start of a sentence, and what
    follows them."""
    attrs = []
    while m := _ATTRIBUTE.match(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"[": 1, "]": -1}.get(text[i], 0)
            i += 1
        attrs.append(text[m.end() : i - 1])
        text = text[i:]
    return " ".join(attrs), text


def unsafe_command(sentence: str) -> str | None:
    """Why ``sentence`` may not run on untrusted input (it writes or loads files, leaves Coq,
    or switches a checker off); ``None`` when it does none of that.

    >>> unsafe_command('Redirect "out" Print nat.')
    'Redirect writes a file'
    >>> unsafe_command("#[bypass_check(guard)] Fixpoint f (n : nat) : False := f n.")
    'bypass_check switches a checker off'
    >>> unsafe_command("Add Field Rfield : Rfield_theory.") is None
    True
    """
    attrs, rest = _attributes(strip_comments(sentence))
    if "bypass_check" in attrs:
        return "bypass_check switches a checker off"
    words = [w.rstrip(".") for w in _WORD.findall(rest)]
    while words:
        if words[0] in _PREFIXES:
            words.pop(0)
        elif words[0] == "Timeout" and len(words) > 1:
            del words[:2]
        elif words[0].startswith("#["):
            attrs, tail = _attributes(" ".join(words))
            if "bypass_check" in attrs:
                return "bypass_check switches a checker off"
            words = [w.rstrip(".") for w in _WORD.findall(tail)]
        else:
            break
    if not words:
        return None
    head, rest_words = words[0], words[1:]
    second = rest_words[0] if rest_words else ""
    phrase = " ".join(words[:4])
    if head == "Redirect":
        return "Redirect writes a file"
    if head in {"Cd", "Pwd", "Load", "Drop"}:
        return f"{head} reaches the file system or leaves Coq"
    if phrase.startswith("Declare ML Module"):
        return "Declare ML Module loads a plugin"
    if head == "Add" and re.match(r"(Rec\s+)?(LoadPath|ML\s+Path)\b", " ".join(rest_words)):
        return f"Add {' '.join(rest_words[:2])} changes where Coq loads files from"
    if head == "Unset" and re.fullmatch(
        r"(Guard|Positivity|Universe) Checking", " ".join(rest_words[:2])
    ):
        return f"Unset {' '.join(rest_words[:2])} switches a checker off"
    if head == "Set" and " ".join(rest_words[:2]) == "Definitional UIP":
        return "Set Definitional UIP adds a principle beyond Coq's logic"
    if head == "Set" and rest_words[:1] == ["Extraction"] and "Directory" in rest_words:
        return "the extraction output directory writes files"
    extraction = {"Extraction", "Separate", "Recursive"}
    if head in extraction and "Extraction" in words[:2]:
        if head == "Separate" or any(w in {"Library", "TestCompile"} for w in words[:3]):
            return f"{head} {second} writes files"
        if second.startswith('"'):
            return "Extraction to a file writes it"
    return None


def _is_allowed(inner: str) -> bool:
    """Whether a proof sentence (``Fail``/``Succeed`` taken off) is on the allowlist."""
    if _STRUCTURAL.fullmatch(inner):
        return True
    text = strip_comments(inner).strip()
    selector = _SELECTOR.match(text)
    if selector:
        text = text[selector.end() :].lstrip()
    if not text:
        return False
    first = text[0]
    if first.islower() or first in "_([":
        return True
    if selector:
        return False
    words = text.rstrip(".").split()
    word = head_word(text)
    if word == "Proof":
        return len(words) == 1 or words[1] in {"using", "with"}
    if word in _QUERIES:
        return len(words) < 2 or words[1] not in _PATH_QUERIES
    return False


def screen_proof(sentences: list[Sentence], proof: str) -> FailureMode | None:
    """The first sentence of a proof that is not allowed, as a :class:`FailureMode`;
    ``None`` when every sentence is. Giving up (``admit``, ``Admitted``, ``give_up``) is
    ``uses_sorry``; ``Qed`` anywhere but at the end, or under ``Fail``/``Succeed``, is
    ``statement_changed``; a sentence that reaches outside Coq or switches a checker off is
    ``unsafe_input``; anything else off the allowlist is ``statement_changed``."""
    for i, s in enumerate(sentences):
        word, inner, control = head_word(s.text), s.text, None
        while word in CONTROL:
            control = control or word
            inner = inner.lstrip()[len(word) :]
            word = head_word(inner)
        problem: tuple[FailureKind, str] | None = None
        unsafe = unsafe_command(s.text)
        if word == "Admitted" or _SORRY.search(strip_comments(inner)):
            problem = (FailureKind.USES_SORRY, f"the proof gives up: {s.text!r}")
        elif word in ENDS and (control or i != len(sentences) - 1):
            where = f"under {control}" if control else "before the end of the proof"
            problem = (FailureKind.STATEMENT_CHANGED, f"{word} {where}")
        elif unsafe is not None:
            problem = (FailureKind.UNSAFE_INPUT, f"refused in a proof: {unsafe}")
        elif word not in ENDS and not _is_allowed(inner):
            shown = word or inner.strip()[:20]
            problem = (
                FailureKind.STATEMENT_CHANGED,
                f"{shown} may not appear in a proof (only tactics, bullets, braces, Proof, "
                "Qed/Defined and read-only queries may)",
            )
        if problem is not None:
            line, col = position_of(proof, s.start)
            return FailureMode(*problem, line, col, tactic_name(s.text), s.text, i)
    return None


def screen_header(header: str) -> FailureMode | None:
    """The first sentence of ``header`` that :func:`unsafe_command` refuses, as an
    ``unsafe_input`` failure that says how to pass a header one trusts; ``None`` when there is
    none (or the header does not split into sentences: loading it will say where)."""
    try:
        sentences = split_sentences(header)
    except SentenceError:
        return None
    for s in sentences:
        reason = unsafe_command(s.text)
        if reason is not None:
            line, col = position_of(header, s.start)
            return FailureMode(
                FailureKind.UNSAFE_INPUT,
                f"the header is refused: {reason} ({s.text[:80]!r}); "
                "a header you wrote yourself can be marked trusted (trusted_header=True)",
                line,
                col,
                sentence=s.text,
            )
    return None
