"""Reading a proving task out of a person's words: a Coq or Lean statement (and a proof, when
one is given), or a sum identity for the WZ prover.

Used by the agent's offline router (:mod:`lemmata.agents.router`) through the operations'
extractors. Each reader returns the arguments of an operation, or None when the text holds no
such task.

>>> identity_from_text("prove that sum_{k=0}^{n} binomial(n,k) = 2^n")["statement"]
'Sum(binomial(n,k), (k, 0, n)) = 2**n'
>>> coq_from_text("Prove in Coq: forall n : nat, n + 0 = n")["statement"]
'Theorem goal : forall n : nat, n + 0 = n.'
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["coq_from_text", "identity_from_text", "lean_from_text", "split_identity"]

_KEYWORD = r"(?:Theorem|Lemma|Example|Fact|Corollary|Proposition|Remark)"
_COQ_STATEMENT = re.compile(
    rf"(?P<stmt>{_KEYWORD}\s+[A-Za-z_][\w']*[^.]*?:\s*(?:[^.]|\.(?=[^\s]))+\.)"
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
    r"Set\s+Implicit\s+Arguments\.(?=\s|$)"
)
_BARE_TAIL = re.compile(
    r"(?:\s+(?:in|with|using)\s+(?:coq|rocq)\b.*|\s*,?\s*please\b.*|\s*\?.*|\s*\.\s*)$", re.I | re.S
)


def _bare_statement(text: str) -> str | None:
    """A ``forall``/``exists`` proposition written without a ``Theorem`` line, or an equation
    after a colon: the text from its first word to the end, without the request's tail."""
    m = re.search(r"(?<![\w'])(?:forall|exists)\s", text)
    if m:
        body = text[m.start() :]
        for _ in range(3):
            body = _BARE_TAIL.sub("", body).strip()
        return body or None
    _, _, tail = text.partition(":")
    body = re.sub(
        r"^(?:please\s+)?(?:prove|show|check|verify)\s+(?:that\s+)?",
        "",
        (tail or text).strip(),
        flags=re.I,
    )
    fm = _FORALL.search(body)
    return fm["body"].strip().rstrip(".") if fm else None


def coq_from_text(text: str) -> dict[str, Any] | None:
    """A Coq statement (``Theorem t : ... .``, or a bare ``forall ...`` when the text names
    Coq) and the proof after it, if any (a proof that ends in ``Admitted.`` is no proof)."""
    m = _COQ_STATEMENT.search(text)
    if m and not _LEAN_WORDS.search(text[: m.start()]):
        out: dict[str, Any] = {"statement": m["stmt"].strip(), "backend": "coq"}
        if m["proof"] and not m["proof"].rstrip().endswith("Admitted."):
            out["proof"] = m["proof"].strip()
        header = _HEADER_SENTENCE.findall(text[: m.start()])
        if header:
            out["header"] = "\n".join(" ".join(h.split()) for h in header)
        return out
    if not _COQ_WORDS.search(text):
        return None
    stmt = _bare_statement(text)
    return {"statement": f"Theorem goal : {stmt}.", "backend": "coq"} if stmt else None


_FENCE = re.compile(r"```[\w-]*\n?|```")
_LEAN_BARE = re.compile(
    r"(?P<stmt>(?:theorem|lemma)\s+[^\s:(]+\s*(?:[({\[][^)}\]]*[)}\]]\s*)*:\s*[^\n]+?)\s*[.?]?\s*$"
)


def _lean_proof(text: str) -> str:
    """The proof after ``:=`` as written: a ``by`` block or a term, up to the prose after it."""
    text = text.split("`")[0]  # "`theorem ... := by ring` correct?"
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
    proof = _lean_proof(m["proof"] or "")
    if proof and not re.fullmatch(r"(?:by)?\s*(?:sorry)?", proof):
        out["proof"] = proof
    return out


_SUM_LATEX = re.compile(
    r"(?:\\sum|∑|sum)\s*_\{?\s*(?P<k>[a-z])\s*=\s*(?P<lo>[^}^]+?)\s*\}?\s*\^\s*\{?\s*(?P<hi>[^}\s]+)\s*\}?\s*"
    r"(?P<body>.+?)\s*(?:==|=|equals)\s*(?P<rhs>.+)$",
    re.I | re.S,
)
_SUM_WORDS = re.compile(
    r"(?:the\s+)?(?:alternating\s+)?sum\s+(?:of\s+)?(?P<body>.+?)\s+(?:for|over)\s+(?P<k>[a-z])\s*"
    r"(?:from|=|in)\s*(?P<lo>[^\s.]+)\s*(?:\s(?:to|up to)\s|\.\.)\s*(?P<hi>[^\s,]+?)\s*,?\s*"
    r"(?:is|equals|==|=|gives)\s+(?P<rhs>.+)$",
    re.I | re.S,
)
_SUM_OVER = re.compile(
    r"(?:the\s+)?sum\s+(?:over|for)\s+(?P<k>[a-z])\s+(?:from|=)\s*(?P<lo>[^\s]+)\s+(?:to|up to|\.\.)\s+"
    r"(?P<hi>[^\s,]+?)\s*,?\s+of\s+(?P<body>.+?)\s+(?:is|equals|==|=|gives)\s+(?P<rhs>.+)$",
    re.I | re.S,
)
_SUM_SYMPY = re.compile(r"(?P<lhs>Sum\(.+\))\s*(?:==|=)\s*(?P<rhs>.+)$", re.S)
_LEAD = re.compile(
    r"^\s*(?:please\s+)?(?:prove|show|verify|check|certify|establish)?\s*(?:that|the identity|"
    r"this identity|the sum identity)?\s*:?\s*",
    re.I,
)
_N_MIN = re.compile(
    r",?\s*\b(?:for|when)\s+(?:all\s+|every\s+)?(?:integers?\s+|natural numbers?\s+)?n\s*(?:>=|≥|=>)\s*(?P<n>\d+)\s*,?",
    re.I,
)
_TAIL = re.compile(
    r"\s*(?:for (?:all|every) (?:natural )?n\b.*|(?:with|using|by)\s+(?:the\s+)?(?:zeilberger|wz|wilf|"
    r"gosper|a\s+(?:wz|zeilberger))\b.*|\.|\?)\s*$",
    re.I | re.S,
)


def _sympy_text(expr: str) -> str:
    expr = expr.strip().rstrip(".?").strip()
    expr = re.sub(r"\^\{([^{}]*)\}", r"^(\1)", expr)
    expr = expr.replace("^", "**").replace("\\binom", "binomial").replace("·", "*")
    expr = re.sub(r"\bC\(", "binomial(", expr)
    expr = re.sub(r"binomial\{([^}]*)\}\{([^}]*)\}", r"binomial(\1,\2)", expr)
    expr = re.sub(r"(\d+)!", r"factorial(\1)", expr)
    expr = re.sub(r"\b([a-z])!", r"factorial(\1)", expr)
    # implicit products as people write them: 2n, n(n+1), (n+1)(n+2)
    expr = re.sub(r"(\d)\s*([a-z(])", r"\1*\2", expr)
    expr = re.sub(r"(?<![A-Za-z_])([a-z])\s*\(", r"\1*(", expr)
    expr = re.sub(r"\)\s*([a-z(\d])", r")*\1", expr)
    # juxtaposed factors: "2**k binomial(n,k)", "k binomial(n, k)"
    expr = re.sub(r"(?<=[\w)])\s+(?=[A-Za-z_(\d])", "*", expr)
    return expr


def split_identity(statement: str) -> tuple[str, str] | None:
    """``(lhs, rhs)`` of ``Sum(...) = rhs``, or None."""
    m = _SUM_SYMPY.match(statement.strip())
    return (m["lhs"].strip(), m["rhs"].strip()) if m else None


def identity_from_text(text: str) -> dict[str, Any] | None:
    """A sum identity, as ``Sum(summand, (k, lo, hi)) = rhs`` for the WZ prover; from sympy
    syntax, LaTeX-like ``sum_{k=0}^{n} ... = ...`` or words ("the sum of ... for k from 0 to
    n is ...")."""
    out: dict[str, Any] = {"method": "wz"}
    lower = _N_MIN.search(text)
    if lower:
        out["n_min"] = int(lower["n"])
        text = (text[: lower.start()] + " " + text[lower.end() :]).strip(" ,")
    text = re.sub(r"\?.*$", "", text.strip(), flags=re.S)  # "... = n(n+1)/2? Prove it."
    text = text.replace("$", " ").strip()
    text = re.sub(
        r"\s+(?:please\s+)?(?:prove|show|verify|check|certify)\s+(?:it|this|that)\b.*$",
        "",
        text,
        flags=re.I | re.S,
    )
    text = re.sub(r"\.\s+[A-Z][a-z].*$", "", text, flags=re.S)  # "... = 2^n. Can you prove it"
    body = _TAIL.sub("", _LEAD.sub("", text.strip(), count=1))
    m = _SUM_SYMPY.search(body)
    if m:
        return {"statement": f"{m['lhs'].strip()} = {_sympy_text(m['rhs'])}", **out}
    for pattern in (_SUM_LATEX, _SUM_OVER, _SUM_WORDS):
        m = pattern.search(body)
        if m:
            summand = _sympy_text(m["body"])
            lo, hi = _sympy_text(m["lo"]), _sympy_text(m["hi"])
            rhs = _sympy_text(_TAIL.sub("", m["rhs"]))
            return {"statement": f"Sum({summand}, ({m['k']}, {lo}, {hi})) = {rhs}", **out}
    return None
