"""Reading a proving task out of a person's words: a Coq or Lean statement (and a proof, when
one is given), or a sum identity for the WZ prover.

Used by the agent's offline router (:mod:`lemmata.agents.router`) through the operations'
extractors. Each reader returns the arguments of an operation, or None when the text holds no
such task. Sum identities are read by :mod:`lemmata.provers.identity_text`; its readers are
re-exported here.

>>> identity_from_text("prove that sum_{k=0}^{n} binomial(n,k) = 2^n")["statement"]
'Sum(binomial(n,k), (k, 0, n)) = 2**n'
>>> coq_from_text("Prove in Coq: forall n : nat, n + 0 = n")["statement"]
'Theorem goal : forall n : nat, n + 0 = n.'
"""

from __future__ import annotations

import re
from typing import Any

from lemmata.provers.identity_text import identity_from_text, split_identity

__all__ = ["coq_from_text", "identity_from_text", "lean_from_text", "split_identity"]

_KEYWORD = r"(?:Theorem|Lemma|Example|Fact|Corollary|Proposition|Remark)"
_COQ_STATEMENT = re.compile(
    rf"(?P<stmt>{_KEYWORD}\s+[A-Za-z_][\w']*[^.?!]*?:\s*(?:[^.]|\.(?=[^\s]))+\.)"
    r"(?:\s*(?P<proof>Proof\..*?(?:Qed|Defined|Admitted)\.))?",
    re.S,
)
_LEAN_STATEMENT = re.compile(
    r"(?P<stmt>(?:(?:theorem|lemma)\s+[^\s:(]+|example)\s*[:({\[].*?:=)\s*(?P<proof>.*)$", re.S
)
_COQ_WORDS = re.compile(r"\b(?:coq|rocq|gallina)\b", re.I)
_LEAN_WORDS = re.compile(r"\b(?:lean ?4?|mathlib)\b", re.I)
_FORALL = re.compile(
    r"(?:(?<=:)|(?<=^)|(?<=\s))(?P<body>(?:forall|exists)\s.+?|\(?[\w\s()+*/^-]+(?:=|<=|<|>=|>|<>)[\w\s()+*/^-]+\)?)\s*\.?\s*$",
    re.I | re.S,
)


_HEADER_SENTENCE = re.compile(
    r"(?:From\s+[\w.]+\s+)?Require\s+(?:Import\s+|Export\s+)?[\w.\s]+?\.(?=\s|$)|"
    r"(?:Local\s+|Global\s+)?Open\s+Scope\s+\w+\.(?=\s|$)|(?<![\w.])Import\s+[\w.\s]+?\.(?=\s|$)|"
    r"Set\s+Implicit\s+Arguments\.(?=\s|$)|"
    # a definition the statement uses: "Fixpoint sum_to (n : nat) : nat := match ... end."
    r"(?<![\w.])(?:Fixpoint|Definition|Inductive)\s+[A-Za-z_][\w']*(?:[^.]|\.(?=\S))*?:=(?:[^.]|\.(?=\S))*\.(?=\s|$)"
)
_BARE_TAIL = re.compile(
    r"(?:\s*,?\s+(?:in|with|using)\s+(?:coq|rocq)\b.*|\s*,?\s*please\b.*|\s*\?.*|\s*\.\s*|"
    r"\s*,?\s+for\s+me\b.*|\s*,?\s+(?:with|using)\s+(?:a\s+)?(?:budget|\d+\s+(?:verifier\s+)?calls?)\b.*|"
    r"\s*,?\s+(?:holds|is\s+(?:true|valid|provable))\b.*|\s*,)$",
    re.I | re.S,
)
# a quantifier over typed binders, as Gallina writes it: "forall b : bool,", "exists (n : nat),"
_TYPED_BINDERS = re.compile(
    r"(?<![\w'])(?:forall|exists)\s+(?:\(\s*[A-Za-z_][\w' ]*:[^(),]+\)\s*)+,|"
    r"(?<![\w'])(?:forall|exists)\s+[A-Za-z_][\w' ]*:[^(),]+,"
)


def _bare_statement(text: str) -> str | None:
    """A ``forall``/``exists`` proposition written without a ``Theorem`` line, or an equation
    after a colon: the text from its first word to the end, without the request's tail."""
    m = re.search(r"(?<![\w'])(?:forall|exists)\s", text)
    if m:
        start = m.start()
        # "~ (exists n : nat, S n = 0)": the negation and its parenthesis belong to it
        lead = re.search(r"(?:~|¬)?\s*(?:\(\s*)+$", text[:start])
        if lead:
            start = lead.start()
        # a full stop and a space end a Gallina sentence: what follows is the person's words
        body = re.split(r"\.(?=\s)", text[start:], maxsplit=1)[0]
        # a statement set in code marks ends at the closing mark: "prove `forall ...` for me"
        if text[:start].rstrip().endswith("`") and "`" in body:
            body = body.split("`", 1)[0]
        for _ in range(3):
            body = _BARE_TAIL.sub("", body).strip()
        return body if body and body.count("(") == body.count(")") else None
    _, _, tail = text.partition(":")
    body = re.sub(
        r"^(?:please\s+)?(?:prove|show|check|verify)\s+(?:that\s+)?",
        "",
        (tail or text).strip(),
        flags=re.I,
    )
    fm = _FORALL.search(body)
    return fm["body"].strip().rstrip(".") if fm else None


# words that ask for a partial proof to be finished: its draft is the refinement's start
_FINISH = re.compile(
    r"\b(?:finish|complete|fill\s+in|continue|repair|fix)\b|\bpartial\s+proof\b", re.I
)


def coq_from_text(text: str) -> dict[str, Any] | None:
    """A Coq statement (``Theorem t : ... .``, or a bare ``forall ...`` when the text names
    Coq or quantifies over typed binders as Gallina does, ``forall b : bool, ...``) and the
    proof after it, if any (a proof that ends in ``Admitted.`` is no proof)."""
    m = _COQ_STATEMENT.search(text)
    if m and not _LEAN_WORDS.search(text[: m.start()]):
        out: dict[str, Any] = {"statement": m["stmt"].strip(), "backend": "coq"}
        # a proof that ends in Admitted is no proof, unless it is a draft to finish
        prose = text[: m.start()] + text[m.end() :]
        if m["proof"] and (not m["proof"].rstrip().endswith("Admitted.") or _FINISH.search(prose)):
            out["proof"] = m["proof"].strip()
        header = _HEADER_SENTENCE.findall(text[: m.start()])
        if header:
            out["header"] = "\n".join(" ".join(h.split()) for h in header)
        return out
    gallina = _TYPED_BINDERS.search(text) and not _LEAN_WORDS.search(text)
    if not (_COQ_WORDS.search(text) or gallina):
        return None
    stmt = _bare_statement(text)
    if not stmt:
        return None
    out = {"statement": f"Theorem goal : {stmt}.", "backend": "coq"}
    # the imports said before a bare statement: "Require Import List. Prove: forall ..."
    header = _HEADER_SENTENCE.findall(text[: text.find(stmt)] if stmt in text else "")
    if header:
        out["header"] = "\n".join(" ".join(h.split()) for h in header)
    return out


_FENCE = re.compile(r"```[\w-]*\n?|```")
_LEAN_BARE = re.compile(
    r"(?P<stmt>(?:theorem|lemma)\s+[^\s:(]+\s*(?:[({\[][^)}\]]*[)}\]]\s*)*:\s*[^\n]+?)\s*[.?]?\s*$"
)


def _lean_proof(text: str) -> str:
    """The proof after ``:=`` as written: a ``by`` block or a term, up to the prose after it."""
    text = text.split("`")[0]  # "`theorem ... := by ring` correct?"
    text = re.split(r"\s+[—–]\s+", text)[0]  # ":= by sorry — fill in the sorry": no Lean has a dash
    text = re.sub(r"^\s*--[^\n]*", "", text)  # ":= -- can you prove it?": a comment, no proof
    # ":= sorry. Fill in the sorry for me?": the hole ends the proof, the person's words follow
    text = re.sub(r"\bsorry\s*[.!?]\s+\S.*$", "sorry", text, flags=re.S)
    lines: list[str] = []
    for line in text.strip("\n").splitlines():
        if not line.strip():
            break  # a blank line ends the proof; what follows is the person's words
        lines.append(line.rstrip())
    return "\n".join(lines).strip()


def lean_from_text(text: str) -> dict[str, Any] | None:
    """A Lean 4 statement (``theorem t ... :=``) and the proof after it (a ``by`` block or a
    term), if any; a statement with ``sorry`` for its proof has none."""
    text = _FENCE.sub("\n", text)
    m = _LEAN_STATEMENT.search(text)
    if m is None:
        bare = _LEAN_BARE.search(text) if _LEAN_WORDS.search(text) else None
        if bare is None or ":=" in bare["stmt"]:
            return None
        return {"statement": bare["stmt"].strip() + " :=", "backend": "lean"}
    if not (_LEAN_WORDS.search(text) or "ℕ" in text or ":= by" in text or ":=" in m["stmt"]):
        return None
    if re.search(rf"\b{_KEYWORD}\b", text) and not re.search(r"\b(?:theorem|lemma)\b", text):
        return None
    out: dict[str, Any] = {"statement": m["stmt"].strip(), "backend": "lean"}
    imports = re.findall(r"(?<![\w.])import\s+[A-Z][\w.]*", text[: m.start()])
    if imports:
        out["header"] = "\n".join(" ".join(i.split()) for i in imports)
    # ":=" then a blank line: what follows is the person's words, not a proof
    gap = text[m.end("stmt") : m.start("proof")]
    proof = "" if re.search(r"\n[ \t]*\n", gap) else _lean_proof(m["proof"] or "")
    if proof and not re.fullmatch(r"(?:by)?\s*(?:sorry)?", proof):
        out["proof"] = proof
    return out
