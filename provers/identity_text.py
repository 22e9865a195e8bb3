"""Reading a sum identity out of a person's words, for the WZ prover.

A sum identity is read in three steps: its notation is made plain (LaTeX, unicode, Python's
``sum(... for k in range(...))`` and words such as "n choose k" become one ASCII spelling),
the text is split at a relation ("=", "equals", "is", ...) into a sum and a right-hand side,
and the sum is read in one of the forms people write (subscripted, "sum of X for k from a to
b", "sum over k from a to b of X", "X summed over k = a..b", "sum over k of X"). Every
candidate must parse as the WZ prover's own input (:func:`lemmata.provers.wz.parse_identity`);
text that does not is no identity, so nothing is guessed.

Used by the provers' operations (:mod:`lemmata.provers.operations`) through
:mod:`lemmata.provers.tasks`, which reads Coq and Lean statements.

>>> identity_from_text("prove that sum_{k=0}^{n} binomial(n,k) = 2^n")["statement"]
'Sum(binomial(n,k), (k, 0, n)) = 2**n'
>>> split_identity("Sum(k, (k, 0, n)) = n*(n+1)/2")
('Sum(k, (k, 0, n))', 'n*(n+1)/2')
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["identity_from_text", "split_identity"]

_FUNCTIONS = frozenset(
    [
        "Sum",
        "binomial",
        "factorial",
        "ff",
        "rf",
        "gamma",
        "sqrt",
        "exp",
        "log",
        "pi",
        "harmonic",
        "fibonacci",
        "catalan",
        "Rational",
        "Abs",
        "oo",
    ]
)
_LATEX_WORDS = {
    r"\cdot": "*",
    r"\times": "*",
    r"\ast": "*",
    r"\sum": " sum",
    r"\infty": "oo",
    r"\geq": ">=",
    r"\ge": ">=",
    r"\leq": "<=",
    r"\le": "<=",
    r"\ldots": "...",
    r"\cdots": "...",
    r"\dots": "...",
    r"\pi": "pi",
}
_LATEX_TWO = re.compile(r"\\[dt]?(?P<cmd>binom|frac)\s*")
_LATEX_WORD = re.compile(r"\\[A-Za-z]+|\\[,;:! ]")
_UNICODE = str.maketrans(
    {
        "∑": " sum ",
        "Σ": " sum ",
        "×": "*",
        "·": "*",
        "⋅": "*",
        "−": "-",
        "–": "-",
        "—": " - ",
        "²": "^2",
        "³": "^3",
        "≥": ">=",
        "≤": "<=",
        "…": "...",
        "⁡": "",
    }  # fmt: skip
)


def _group(text: str, i: int) -> tuple[str, int] | None:
    """The text of the brace group opening at ``text[i]`` and the index after it."""
    if i >= len(text) or text[i] != "{":
        return None
    depth = 0
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j], j + 1
    return None


def _atom(expr: str) -> str:
    expr = expr.strip()
    return expr if re.fullmatch(r"[\w.]+|\([^()]*\)", expr) else f"({expr})"


def _latex(text: str) -> str:
    """LaTeX math as plain text: ``\\binom{n}{k}`` and ``{n \\choose k}`` as ``binomial(n, k)``,
    ``\\frac{a}{b}`` as ``a/(b)``, other groups as parentheses, ``\\cdot`` as ``*``; layout
    commands (``\\left``, ``\\displaystyle``) dropped, unknown commands kept (they then fail to
    parse)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        two = _LATEX_TWO.match(text, i)
        if two:
            a = _group(text, two.end())
            b = _group(text, a[1] + len(text[a[1] :]) - len(text[a[1] :].lstrip())) if a else None
            if a and b:
                x, y = _latex(a[0]), _latex(b[0])
                out.append(
                    f"binomial({x}, {y})" if two["cmd"] == "binom" else f"{_atom(x)}/{_atom(y)}"
                )
                i = b[1]
                continue
        if text[i] == "{":
            g = _group(text, i)
            if g:
                parts = re.split(r"\\choose\b", g[0])
                if len(parts) == 2:
                    out.append(f"binomial({_latex(parts[0]).strip()}, {_latex(parts[1]).strip()})")
                else:
                    out.append(f"({_latex(g[0])})")
                i = g[1]
                continue
        word = _LATEX_WORD.match(text, i)
        if word:
            cmd = word.group()
            if cmd in _LATEX_WORDS:
                out.append(_LATEX_WORDS[cmd])
            elif cmd in (r"\left", r"\right", r"\displaystyle", r"\limits", r"\bigl", r"\bigr"):
                out.append("")
            elif cmd[1:] in _FUNCTIONS or cmd[1:] in ("binom", "choose"):
                out.append(cmd[1:])
            elif not cmd[1:].isalpha():
                out.append(" ")  # thin spaces
            else:
                out.append(cmd)
            i = word.end()
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


_PY_SUM = re.compile(
    r"\bsum\(\s*(?P<body>.+?)\s+for\s+(?P<k>[a-z])\s+in\s+range\((?P<args>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*\)"
)
_WORD_OPS = (
    (r"\s+times\s+", "*"),
    (r"\s+plus\s+", "+"),
    (r"\s+minus\s+", "-"),
    (r"\s+divided\s+by\s+", "/"),
    (r"\s+squared\b", "^2"),
    (r"\s+cubed\b", "^3"),
)
_CHOOSE = re.compile(r"(?P<a>\w+|\([^()]*\))\s+choose\s+(?P<b>\w+|\([^()]*\))", re.I)


def _python_sum(m: re.Match[str]) -> str:
    import sympy as sp

    args = [a.strip() for a in m["args"].split(",")]
    if len(args) not in (1, 2):
        return m.group()
    lo, stop = ("0", args[0]) if len(args) == 1 else (args[0], args[1])
    try:
        hi = str(sp.sympify(stop.replace("^", "**")) - 1)
    except (sp.SympifyError, SyntaxError, TypeError):
        return m.group()
    return f"Sum({m['body']}, ({m['k']}, {lo}, {hi}))"


# Unicode sub- and superscripts ("∑ₖ₌₀ⁿ", "3ⁿ"): a run becomes "_(k=0)" or "^(n)"
_SUBSCRIPTS = dict(zip("ₖₙₘᵢⱼ₀₁₂₃₄₅₆₇₈₉₌₊₋₍₎", "knmij0123456789=+-()", strict=True))
_SUPERSCRIPTS = dict(zip("ⁿᵏᵐⁱʲ⁰¹⁴⁵⁶⁷⁸⁹⁺⁻⁽⁾", "nkmij01456789+-()", strict=True))
# Mathematica's brackets: Binomial[n, k], Sum[f, {k, 0, n}], "=="
_MMA_FUNCTION = re.compile(r"\b(Binomial|Factorial|Sum)\[")
# Maple's sum(f, k = a..b), and add(f, k = a..b), its sum of a finite range
_MAPLE_SUM = re.compile(r"\b(?:[sS]um|add)\(")
# sums said in German, French, Spanish and Portuguese: "Summe über k von 0 bis n von X",
# "la somme pour k de 0 à n de X vaut Y", "la suma de k=1 a n de X es Y"
_FOREIGN_WORDS = (
    # a verb of giving after the range, set off by a comma: "la suma de 2^k, con k desde 0 hasta
    # n, da 2^(n+1) - 1" ("with k" is "for k")
    (r"\b(?:con|mit|avec|com)\s+(?=[a-z]\s+(?:desde|von|de|da)\b)", "for "),
    (r",\s*(?:da|dá|donne|ergibt|gibt)\s+(?=\S)", " equals "),
    # the summand after the range: "von k=1 bis n über k²" ("Summe von a bis b über X")
    (r"(?<=\bbis\s)(?P<hi>\w+)\s+über\s+", r"\g<hi> of "),
    (
        r"\b(?:Summe|somme|suma|soma)\s+(?:über|für|pour|sur|de|para|sobre|en)\s+"
        r"(?=[a-z]\b)",
        "sum over ",
    ),
    (r"\b(?:Summe|somme|suma|soma)\b", "sum"),
    # "k³ summiert von k=1 bis n", "sommé pour k de 1 à n": the participle of summing
    (r"\b(?:summiert|aufsummiert|sommée?s?|sumad[oa]s?|somad[oa]s?)\b", "summed"),
    (
        r"\b(?P<k>[a-z])\s*(?:=|von|de|desde|da|do)\s*(?P<lo>[-\w()+]+)\s+(?:bis|à|a|até|hasta|au)\s+",
        r"\g<k> from \g<lo> to ",
    ),
    # "von k=1 bis n": the preposition before a range's variable says over what it runs
    (r"(?<=\s)(?:von|über|für|de|pour|para|desde|da|du)\s+(?=[a-z] from\b)", "over "),
    # (English "do" is no Portuguese "do": "can you do it", "do the sum")
    (
        r"(?<=\s)(?:von|de|da|du|do(?!\s+(?:it|this|that|you|i|we|so|not|the|a|an)\b))\s+(?=\S)",
        "of ",
    ),
    # German puts the verb of a "dass" clause last: "dass X genau Y ergibt" is "X equals Y"
    (
        r"\b(?:genau|exakt|gleich)\s+(?P<rhs>[^,;]+?)\s+(?:ergibt|ergeben|gibt|ist|sind)\b",
        r"equals \g<rhs>",
    ),
    (
        r"\b(?:vaut|ist gleich|ist|est égale? à|égale? à|égale|est égal à|est|es igual a|es|é igual a|é|ergibt|gleich)\b",
        "equals",
    ),
    # zero said in words: "est nul", "ist null", "es cero", "is zero"
    (r"(?:(?<=equals )|(?<=\bis )|(?<== ))(?:nul(?:le)?|null|zéro|cero|nulo|zero)\b", "0"),
    # the lower bound on n in words: "dès que n ≥ 2", "sobald n >= 2", "cuando n >= 2"
    (
        r"\b(?:dès que|lorsque|quand|pour tout|sobald|wenn|falls|für alle|cuando|siempre que|"
        r"para todo|quando|sempre que|se|whenever|para|pour)\s+(?=\$?\s*n\s*>=)",
        "for ",
    ),
)
# the identity said by adding: "adding up 2k - 1 for k from 1 to n gives n²"
_ADDING = re.compile(
    r"\b(?:(?:you\s+)?add\s+up|adding\s+up|adding|totalling|totaling)\s+(?=\S)", re.I
)
# "summing X over k = 0..n gives Y": as "X summed over k = 0..n"
_SUMMING = re.compile(r"\bsumming\s+(?P<body>.+?)\s+(?=over\b|for\b)", re.I | re.S)
# Python's modules before a function: "math.comb(n, k)", "sp.binomial(n, k)"
_MODULE = re.compile(r"\b(?:math|sympy|sp|scipy\.special|np|numpy)\.(?=[a-z]\w*\()")
# two Python functions and their comparison: "def lhs(n): return ...", "rhs = lambda n: ...",
# then "lhs(n) == rhs(n)"
_PY_FUNCTION = re.compile(
    r"^[ \t]*(?:def\s+(?P<name>[A-Za-z_]\w*)\s*\(\s*(?P<arg>[a-z])\s*\)\s*:\s*return\s+|"
    r"(?P<name2>[A-Za-z_]\w*)\s*=\s*lambda\s+(?P<arg2>[a-z])\s*:\s*)(?P<body>[^\n]+?)[ \t]*$",
    re.M,
)


def _scripts(text: str) -> str:
    for table, mark in ((_SUBSCRIPTS, "_"), (_SUPERSCRIPTS, "^")):
        chars = "".join(re.escape(c) for c in table)
        pieces = re.split(f"([{chars}]+)", text)
        text = "".join(
            f"{mark}({''.join(table[c] for c in piece)})" if i % 2 else piece
            for i, piece in enumerate(pieces)
        )
    return text


def _closing(text: str, start: int, opening: str, closing: str) -> int | None:
    """The index of the bracket that closes the one before ``start``."""
    depth = 1
    for i in range(start, len(text)):
        depth += {opening: 1, closing: -1}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def _mathematica(text: str) -> str:
    while m := _MMA_FUNCTION.search(text):
        end = _closing(text, m.end(), "[", "]")
        if end is None:
            return text
        inner = text[m.end() : end]
        name = m.group(1)
        if name == "Sum":
            r = re.fullmatch(
                r"(?P<body>.+),\s*\{\s*(?P<k>[a-z])\s*,(?P<lo>[^,{}]+),(?P<hi>[^,{}]+)\}\s*",
                inner,
                re.S,
            )
            if r is None:
                return text
            new = f"Sum({r['body']}, ({r['k']}, {r['lo'].strip()}, {r['hi'].strip()}))"
        else:
            new = f"{name.lower()}({inner})"
        text = text[: m.start()] + new + text[end + 1 :]
    return text


def _maple(text: str) -> str:
    out, pos = [], 0
    for m in _MAPLE_SUM.finditer(text):
        if m.start() < pos:
            continue
        end = _closing(text, m.end(), "(", ")")
        if end is None:
            break
        r = re.fullmatch(
            r"(?P<body>.+),\s*(?P<k>[a-z])\s*=\s*(?P<lo>[^,]+?)\s*\.\.\s*(?P<hi>[^,]+?)\s*",
            text[m.end() : end],
            re.S,
        )
        if r is None:
            continue
        out.append(text[pos : m.start()])
        out.append(f"Sum({r['body']}, ({r['k']}, {r['lo']}, {r['hi']}))")
        pos = end + 1
    return "".join(out) + text[pos:]


def _python_functions(text: str) -> str:
    """Two one-line Python functions compared in the text ("lhs(n) == rhs(n)"): the comparison
    with each call replaced by the function's body; the text unchanged otherwise."""
    bodies = {
        m["name"] or m["name2"]: (m["arg"] or m["arg2"], m["body"])
        for m in _PY_FUNCTION.finditer(text)
    }
    if len(bodies) < 2:
        return text
    names = "|".join(re.escape(n) for n in bodies)
    call = rf"\b(?P<f{{i}}>{names})\s*\(\s*(?P<x{{i}}>[a-z])\s*\)"
    compared = re.search(
        call.format(i=1) + r"\s*(?:==|=|equals|is)\s*" + call.format(i=2) + r"(?P<rest>[^\n]*)",
        _PY_FUNCTION.sub("", text),
    )
    if compared is None or compared["f1"] == compared["f2"]:
        return text
    sides = []
    for i in (1, 2):
        arg, body = bodies[compared[f"f{i}"]]
        sides.append(re.sub(rf"\b{arg}\b", compared[f"x{i}"], body))
    return f"{sides[0]} = {sides[1]}{compared['rest']}"


def _plain(text: str) -> str:
    """One ASCII spelling of the maths in a task (see the section's comment)."""
    text = _scripts(text).translate(_UNICODE)
    text = _python_functions(_MODULE.sub("", text))
    text = _maple(_mathematica(text))
    for word, plain in _FOREIGN_WORDS:
        text = re.sub(word, plain, text)
    text = _ADDING.sub("summing ", text)
    text = _SUMMING.sub(lambda m: f"{m['body']} summed ", text)
    if "\\" in text:  # LaTeX: "k\\binom{n}{k}" is k times the binomial, "n2^{n-1}" is n 2^{n-1}
        text = re.sub(r"(?<=[A-Za-z0-9)}])\\(?=[A-Za-z]{2})", r" \\", text)
        text = re.sub(r"(?<![A-Za-z0-9_\\])([a-z])(?=\d+\s*\^)", r"\1 ", text)
    text = _latex(text)
    text = _PY_SUM.sub(_python_sum, text)
    text = text.replace("//", "/")
    text = re.sub(r"\bbinom\(", "binomial(", text)
    text = re.sub(r"\b(?:C|comb|nCr|choose)\(", "binomial(", text)
    text = _CHOOSE.sub(lambda m: f"binomial({m['a']}, {m['b']})", text)
    for word, op in _WORD_OPS:
        text = re.sub(word, op, text, flags=re.I)
    return text


def _is_math(expr: str) -> bool:
    """Whether text is only an expression: numbers, one-letter names, the functions the prover
    knows, operators and parentheses."""
    if not expr.strip() or not re.fullmatch(r"[\w\s+\-*/^().,!]+", expr):
        return False
    return all(len(w) == 1 or w in _FUNCTIONS for w in re.findall(r"[A-Za-z_]\w*", expr))


_RHS_STOP = re.compile(
    r"(?:[.;:?]|(?<![\w)])!)(?:\s|$)|\s-{1,2}\s*(?=[A-Za-z]{2})|,\s|[=<>\"'`$\[\]{}]"
)


def _math_prefix(text: str) -> str:
    """The expression that starts a right-hand side, up to the prose after it ("3^n. prove or
    refute it", "(n+1)^2 - prove it", "n*2**(n - 1) true")."""
    end, depth = len(text), 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0 or (depth == 0 and _RHS_STOP.match(text, i)):
            end = i
            break
    for w in re.finditer(r"[A-Za-z_]\w*", text[:end]):
        if len(w.group()) > 1 and w.group() not in _FUNCTIONS:
            end = w.start()
            # a one-letter word that opens the prose is no factor: "2^n a WZ proof please",
            # "n^2 I think" (a letter joined by an operator or a bracket is: "2^n - a")
            lone = re.search(r"(?<=[\w)])\s+[A-Za-z]\s+$", text[:end])
            if lone:
                end = lone.start()
            break
    # "binomial(n + m, n) (from Mathematica)": a remark in parentheses is not the expression
    return text[:end].strip().rstrip("*+-/^,. (").strip()


_BOUND = r"[-+]?[\w()]+(?:\s*[-+*/^]\s*[\w()]+)*"
_INTRO = r"(?:,?\s*(?:for|over|with|where|as|when|and)?\s*(?:all\s+|every\s+)?)"
_RANGES = (
    rf"(?P<k>[a-z])\s*(?:=|from|in|(?:running|ranging|runs|goes|going)\s+from)\s*(?P<lo>{_BOUND})\s*"
    rf"(?:\bto\b|\bup\s+to\b|\bthrough\b|\.\.\.?|,\s*\.\.\.\s*,)\s*(?P<hi>{_BOUND})",
    rf"from\s+(?P<k>[a-z])\s*=\s*(?P<lo>{_BOUND})\s+(?:to|up\s+to|through)\s+(?P<hi>{_BOUND})",
    rf"(?P<lo>{_BOUND})\s*<=\s*(?P<k>[a-z])\s*<=\s*(?P<hi>{_BOUND})",
)
# the sum's own words after "sum": the summand and the range in either order
_AFTER_SUM = tuple(
    re.compile(form, re.I | re.S)
    for r in _RANGES
    for form in (
        rf"(?:of\s+)?(?P<body>.+?)\s*,?\s*{_INTRO}{r}",
        rf"{_INTRO}{r}\s*,?\s*of\s+(?P<body>.+)",
        # "Σ k=0..n C(n,k)/(k+1)": the range first, the summand straight after it
        rf"{r}\s*,?\s+(?P<body>.+)",
    )
)
# the range alone, after "summed"
_RANGE_ONLY = tuple(re.compile(rf"{_INTRO}{r}", re.I) for r in _RANGES)
_UNBOUNDED = (
    re.compile(r"(?:over|for)\s+(?:all\s+)?(?P<k>[a-z])\s*,?\s*of\s+(?P<body>.+)", re.I | re.S),
    re.compile(r"of\s+(?P<body>.+?)\s*,?\s*over\s+(?:all\s+)?(?P<k>[a-z])", re.I | re.S),
)
_SUBSCRIPT = re.compile(
    r"_\s*(?:\((?P<k1>[a-z])\s*(?:=\s*(?P<lo1>[^()]+?|[^()]*\([^()]*\)[^()]*?))?\s*\)|"
    r"(?P<k2>[a-z])(?:\s*=\s*(?P<lo2>-?\w+))?(?![\w]))"
    r"(?:\s*\^\s*(?:\((?P<hi1>[^()]*(?:\([^()]*\)[^()]*)*)\)|(?P<hi2>\w)))?\s*(?P<body>.+)",
    re.S,
)
_SUM_WORD = re.compile(r"(?<![A-Za-z])(?:sum|summation)(?![a-zA-Z0-9])|\bsummed\b", re.I)
# verbs that reduce or rewrite a sum to its value: "collapses to", "simplifies to", "boils down to"
_REDUCING = (
    r"(?:simplif(?:y|ies|ied)|reduc(?:e|es|ed)|collaps(?:e|es|ed)|boil(?:s|ed)?\s+down|"
    r"shrinks?|telescop(?:e|es|ed)|evaluat(?:e|es|ed)|(?:comes?|works?)\s+out)\s+to"
)
_RELATION = re.compile(
    r"(?<![<>!=])==?(?![=])|\b(?:equals|is\s+equal\s+to|is|gives|yields|evaluates\s+to|comes\s+to|"
    # what a tool gave for it: "typed add(...) and got binomial(2*n,n-1)", "it returned 2^n"
    rf"adds\s+up\s+to|sums\s+to|totals|you\s+get|(?:and\s+)?(?:got|returned|returns|gave)|{_REDUCING})\b",
    re.I,
)
# a tool or a person that rewrote the sum, with its value after "to" / "into" / "as":
# "Mathematica simplified Sum[...] to ...", "I reduced the sum ... to ...", "rewrites it as ..."
_REWROTE = re.compile(
    r"\b(?:simplif(?:y|ies|ied)|reduc(?:e|es|ed)|rewr(?:ite|ites|ote|itten)|turn(?:s|ed)?|"
    r"transform(?:s|ed)?|convert(?:s|ed)?|collaps(?:e|es|ed))\b",
    re.I,
)
_REWROTE_TO = re.compile(r"\b(?:to|into|as)\b", re.I)


def _support(summand: str, k: str) -> tuple[str, str] | None:
    """The range of ``k`` outside which a ``binomial(N, k)`` factor vanishes, ``(0, N)``: the
    bounds a sum "over k" of such a summand means. None when no such factor settles them."""
    uppers = {
        m["top"].strip()
        for m in re.finditer(rf"binomial\((?P<top>[^(),]+),\s*{k}\s*\)", summand)
        if not re.search(rf"\b{k}\b", m["top"])
    }
    return ("0", uppers.pop()) if len(uppers) == 1 else None


def _read_sum(lhs: str) -> tuple[str, str, str, str] | None:
    """``(summand, k, lo, hi)`` of the sum a text ends with, or None."""
    lhs = lhs.strip().rstrip(",").strip()
    sympy_form = re.search(
        r"Sum\((?P<body>.+),\s*\(\s*(?P<k>[a-z])\s*,(?P<lo>[^,]+),(?P<hi>[^,]+)\)\s*\)\s*$", lhs
    )
    if sympy_form:
        return sympy_form["body"], sympy_form["k"], sympy_form["lo"], sympy_form["hi"]
    words = list(_SUM_WORD.finditer(lhs))
    if not words:
        return None
    last = words[-1]
    rest = lhs[last.end() :].strip()
    if last.group().lower() == "summed":
        before = re.split(r"[:;]|\b(?:that|the|dass|daß|que)\b", lhs[: last.start()])[-1]
        for form in _RANGE_ONLY:
            m = form.fullmatch(rest)
            if m:
                return before, m["k"], m["lo"], m["hi"]
        m = re.fullmatch(r"(?:over|for)\s+(?:all\s+)?(?P<k>[a-z])", rest, re.I)
        support = _support(_sympy_text(before), m["k"]) if m else None
        return (before, m["k"], *support) if m and support else None
    sub = _SUBSCRIPT.fullmatch(rest)
    if sub:
        k, lo, hi = sub["k1"] or sub["k2"], sub["lo1"] or sub["lo2"], sub["hi1"] or sub["hi2"]
        if lo is not None and hi is not None:
            return sub["body"], k, lo, hi
        support = _support(_sympy_text(sub["body"]), k) if lo is None and hi is None else None
        return (sub["body"], k, *support) if support else None
    for pattern in _AFTER_SUM:
        m = pattern.fullmatch(rest)
        if m and _is_math(m["body"]):
            return m["body"], m["k"], m["lo"], m["hi"]
    for pattern in _UNBOUNDED:
        m = pattern.fullmatch(rest)
        if m and _is_math(m["body"]):
            support = _support(_sympy_text(m["body"]), m["k"])
            return (m["body"], m["k"], *support) if support else None
    return None


def _checked(summand: str, k: str, lo: str, hi: str, rhs: str, n_min: int) -> str | None:
    """``Sum(summand, (k, lo, hi)) = rhs`` when the WZ prover can read it, else None."""
    from lemmata.provers.wz import IdentityError, parse_identity

    parts = [summand, lo, hi, rhs]
    if not all(_is_math(p) for p in parts):
        return None
    summand, lo, hi, rhs = (_sympy_text(p) for p in parts)
    if any(re.search(rf"\b{k}\b", side) for side in (lo, hi, rhs)):
        return None  # the summation variable is bound inside the sum only
    lhs = f"Sum({summand}, ({k}, {lo}, {hi}))"
    try:
        parse_identity({"id": "task", "lhs": lhs, "rhs": rhs, "n_min": n_min})
    except (IdentityError, TypeError, ValueError):
        return None
    return f"{lhs} = {rhs}"


def _sympy_text(expr: str) -> str:
    expr = expr.strip().rstrip(".?,").strip()
    expr = re.sub(r"\^\{([^{}]*)\}", r"^(\1)", expr)
    expr = expr.replace("^", "**").replace("\\binom", "binomial").replace("·", "*")
    expr = re.sub(r"\bC\(", "binomial(", expr)
    expr = re.sub(r"binomial\{([^}]*)\}\{([^}]*)\}", r"binomial(\1,\2)", expr)
    expr = re.sub(r"(\d+)!", r"factorial(\1)", expr)
    expr = re.sub(r"\b([a-z])!", r"factorial(\1)", expr)
    expr = re.sub(r"\(([^()]+)\)!", r"factorial(\1)", expr)
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


_SUM_SYMPY = re.compile(r"(?P<lhs>Sum\(.+\))\s*(?:==|=)\s*(?P<rhs>.+)$", re.S)
_LEAD = re.compile(
    # "for every n, the sum over k of ...": the quantifier over n said first
    r"^\s*(?:for\s+(?:all|every|any|each)\s+(?:natural\s+(?:number\s+)?|integers?\s+)?n\s*[,:]\s*)?"
    r"(?:if\s+)?(?:please\s+)?(?:prove|show|verify|check|certify|establish)?\s*(?:that|the identity|"
    r"this identity|the sum identity)?\s*:?\s*",
    re.I,
)
_N_MIN = re.compile(
    r",?\s*(?:\b(?:for|when|where|with)\s+(?:all\s+|every\s+)?(?:integers?\s+|natural numbers?\s+)?|"
    r",\s*|\(\s*)\$?\s*n\s*(?:>=|=>|\bat\s+least\b)\s*(?P<n>\d+)\s*\$?\s*\)?,?",
    re.I,
)
_TAIL = re.compile(
    r"\s*(?:for (?:all|every) (?:natural )?n\b[^=]*|(?:with|using|by)\s+(?:the\s+)?(?:zeilberger|wz|"
    r"wilf|gosper|a\s+(?:wz|zeilberger))\b[^=]*|\.|\?)\s*$",
    re.I | re.S,
)


def _sentence_with_sum(text: str) -> str:
    """The sentence that holds the sum, without the person's sentences before and after it
    ("For my homework I am stuck. We need sum_{k=0}^{n} ... = 2^n. Can the prover do it?"); a
    sentence ends at a full stop followed by a capitalised word."""
    sentences = re.split(r"(?<=\.)\s+(?=[A-Z][a-z])", text)
    for sentence in sentences:
        if _SUM_WORD.search(sentence) or "Sum(" in sentence:
            return sentence.rstrip().removesuffix(".")
    return sentences[0].rstrip().removesuffix(".")


# -- a sum said as "a range, then a verb of giving" ---------------------------------------------
#
# However a person words a finite sum, it holds three things a reader can find apart, in any
# order and language: the range of its variable ("k from 1 to n", "k de 0 à n", "von k = 0 bis
# n", "i=1 até n", "1 <= k <= n"), a verb of giving or equality ("equals", "should give",
# "works out to", "ergeben", "donne", "dá", "=") with the right-hand side after it, and the
# summand: the expression in the variable before that verb ("the cubes k^3", "des C(n,k)
# multipliés par 5^k"). Once the range is set aside, the summand is the run of plain maths
# before the verb that holds the variable, so the words around it (articles, "the sum of",
# "summiert", a title) need no rule each. A word of summing must be present, and the result
# must parse as the prover's input, as for the other forms.
_ATOM = r"(?:\d+[a-z]?|[a-z]|\([^()]*\))"
_RANGE_BOUND = rf"[-+]?{_ATOM}(?:\s*[-+*/^]\s*{_ATOM})*"
_RANGE_TO = (
    r"(?:\.\.\.?|…|\bup\s+to\b|\bto\b|\bthrough\b|\bthru\b|\bbis(?:\s+(?:zu|einschließlich))?\b|"
    r"\bjusqu['’]\s*(?:à|au|a)\b|\bà\b|\bau\b|\ba\b|\baté\b|\bate\b|\bhasta\b)"
)
# "k between 0 and n", "k entre 0 y n", "k zwischen 1 und n": both bounds taken in
_BETWEEN = r"\b(?:between|entre|zwischen)\s+(?P<lo4>{b})\s+(?:and|y|e|et|und)\s+(?P<hi4>{b})"
_RANGE_FROM = (
    r"(?:=|\bfrom\b|\bde\b|\bvon\b|\bdesde\b|\bda\b|\bin\b|"
    r"\b(?:running|ranging|going|runs|goes|allant|variant|va|läuft|laufend|yendo|variando|indo|vai)"
    r"\s+(?:from|de|von|desde|da)\b)"
)
_SPOKEN_RANGE = re.compile(
    r"(?:\b(?:for|over|with|where|as|pour|für|über|con|com|para|avec|mit|quand|cuando|quando)\s+)?"
    rf"(?:(?P<k>[a-z])\s*{_RANGE_FROM}\s*(?P<lo>{_RANGE_BOUND})\s*{_RANGE_TO}\s*(?P<hi>{_RANGE_BOUND})|"
    rf"(?:\b(?:from|de|von|desde|da)\s+)(?P<k2>[a-z])\s*=\s*(?P<lo2>{_RANGE_BOUND})\s*{_RANGE_TO}\s*"
    rf"(?P<hi2>{_RANGE_BOUND})|"
    rf"(?P<lo3>{_RANGE_BOUND})\s*<=\s*(?P<k3>[a-z])\s*<=\s*(?P<hi3>{_RANGE_BOUND})|"
    rf"(?P<k4>[a-z])\s+{_BETWEEN.format(b=_RANGE_BOUND)})"
    r"(?![\w(])",
    re.I,
)
# the verbs that give a sum's value, in English, German, French, Spanish and Portuguese (the
# longer first), with the modal or adverb that may come with them
_GIVING = re.compile(
    r"(?<![<>!=])={1,2}(?!=)|\b(?:(?:should|ought\s+to|will|would|must|does|do|is\s+supposed\s+to|"
    r"sollte|sollten|soll|devrait|doit|debería|debe|deveria|deve)\s+)?"
    r"(?:is\s+equal\s+to|equals?|gives?|yields?|(?:comes?|works?\s+out|adds?\s+up|sums?|amounts?)\s+to|"
    rf"{_REDUCING}|"
    r"totals?|makes?|you\s+get|is|are|"
    r"ist\s+gleich|sind\s+gleich|ergibt|ergeben|geben|gibt|liefert|ist|sind|gleich|gleicht|"
    # "kommt (n+1)^2 heraus": the value stands between the verb and its particle
    r"kommt|kommen|"
    r"est\s+égale?\s+à|sont\s+égales?\s+à|égale?s?(?:\s+à)?|vaut|valent|donne|donnent|fait|font|"
    r"est|sont|on\s+trouve|"
    r"es\s+igual\s+a|son\s+iguales\s+a|resulta\s+en|iguala|igual\s+a|sale|salen|resulta|"
    r"da|dan|vale|es|son|"
    r"é\s+igual\s+a|são\s+iguais\s+a|resulta\s+em|dá|dão|é|são|"
    # the value one gets: "se obtiene", "on obtient", "obtém-se", "erhält man", "we get"
    r"se\s+obtiene|on\s+obtient|obtém-se|se\s+obtém|erhält\s+man|(?:we|one)\s+gets?|"
    # what a tool or a person got for it: "typed add(...) and got binomial(2*n,n-1)"
    r"(?:and\s+|i\s+)?(?:got|obtained|returned|returns|gave))\b"
    r"(?:\s+(?:exactly|precisely|just|always|genau|exakt|immer|exactement|toujours|exactamente|"
    r"siempre|exatamente|sempre|justement|precisamente))*",
    re.I,
)
_SUMMING_CUE = re.compile(
    r"\b(?:sum\w*|summ\w*|somm\w*|suma\w*|soma\w*|add(?:s|ed|ing)?|addier\w*|additionn\w*|"
    r"total\w*|Summe\w*)\b|Sum\(|∑|Σ",
    re.I,
)
# products and quotients said in words, in those languages: "k times (k+1)", "multipliés par"
_SPOKEN_OPS = (
    (
        r"\s+(?:times|mal|fois|vezes|multiplied\s+by|multipli(?:é|ée|és|ées|ziert\s+mit|"
        r"cad[oa]s?\s+por)(?:\s+par)?)\s+",
        " * ",
    ),
    (r"\s+(?:divided\s+by|geteilt\s+durch|divisée?s?\s+par|dividid[oa]s?\s+por)\s+", " / "),
    (r"\s+(?:plus|más|mais)\s+", " + "),
    (r"\s+(?:minus|moins|menos)\s+", " - "),
    (r"\s+(?:squared|au\s+carré|al\s+cuadrado|ao\s+quadrado|zum\s+quadrat|hoch\s+2)\b", "^2"),
    (r"\s+(?:cubed|au\s+cube|al\s+cubo|ao\s+cubo|hoch\s+3)\b", "^3"),
    # a power in words: "2 hoch k", "2 elevado a k", "3 to the power k", "5 à la puissance k"
    (
        r"\s+(?:hoch|elevad[oa]s?\s+(?:a|à|al)|to\s+the\s+power(?:\s+of)?|"
        r"(?:à\s+la|a\s+la)\s+puissance|à\s+potência(?:\s+de)?|a\s+la\s+potencia(?:\s+de)?)\s+",
        "^",
    ),
)
# a sum word right before the range, its variable the summand: "Summe aller k von 1 bis n",
# "a soma de k de 1 até n", "the sum of all k from 1 to n"
_SUM_OF_VARIABLE = re.compile(
    r"\b(?:sum|summe|somme|suma|soma)\s+(?:(?:of|aller|der|des|de|dos|das|del|von|all|the)\s+){0,2}$",
    re.I,
)
_MATH_RUN = re.compile(r"[\w^*/+\-().,!\s]+")


def _summand_before(text: str, k: str) -> str | None:
    """The last run of plain maths in ``text`` that holds the variable ``k`` (with its
    parentheses balanced), or None."""
    best = None
    for run in _MATH_RUN.finditer(text):
        # a run ends at the first word that is no maths, and a comma outside parentheses ends it
        words = re.split(r"(\b[A-Za-z_]\w*\b)", run.group())
        pieces: list[str] = []
        current = ""
        for i, piece in enumerate(words):
            if i % 2 and len(piece) > 1 and piece not in _FUNCTIONS:
                pieces.append(current)
                current = ""
                continue
            current += piece
        pieces.append(current)
        for piece in pieces:
            for part in _top_level_commas(piece):
                part = part.strip().strip("*+/^,.").strip()
                if (
                    part
                    and re.search(rf"(?<![A-Za-z]){k}(?![A-Za-z])", part)
                    and part.count("(") == part.count(")")
                    and _is_math(part)
                ):
                    best = part
    return best


def _top_level_commas(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    return [*out, text[start:]]


def _by_range(text: str, n_min: int) -> str | None:
    """The identity of a sum said as a range, a summand and a verb of giving, in any order
    (see the section's comment), or None."""
    if not _SUMMING_CUE.search(text):
        return None
    for word, op in _SPOKEN_OPS:
        text = re.sub(word, op, text, flags=re.I)
    for rng in _SPOKEN_RANGE.finditer(text):
        k = rng["k"] or rng["k2"] or rng["k3"] or rng["k4"]
        lo = rng["lo"] or rng["lo2"] or rng["lo3"] or rng["lo4"]
        hi = rng["hi"] or rng["hi2"] or rng["hi3"] or rng["hi4"]
        rest = text[: rng.start()] + " ; " + text[rng.end() :]
        for verb in _GIVING.finditer(rest):
            rhs = _math_prefix(rest[verb.end() :].strip())
            summand = _summand_before(rest[: verb.start()], k)
            if summand is None and _SUM_OF_VARIABLE.search(text[: rng.start()]):
                summand = k  # "die Summe aller k von 1 bis n": the variable is the summand
            if not rhs or summand is None:
                continue
            statement = _checked(summand, k, lo.strip(), hi.strip(), rhs, n_min)
            if statement:
                return statement
    return None


def identity_from_text(text: str) -> dict[str, Any] | None:
    """A sum identity, as ``Sum(summand, (k, lo, hi)) = rhs`` for the WZ prover; from sympy
    syntax, LaTeX (``\\sum_{k=0}^{n} \\binom{n}{k} = 2^n``, ``{n \\choose k}``, ``\\frac``),
    unicode (``∑``, ``×``), Python (``sum(k**2 for k in range(1, n+1))``) or words ("the sum of
    ... for k from 0 to n is ...", "the sum over k of ...", "... summed over k = 1..n"). The
    result must parse as the WZ prover's input; None otherwise.

    >>> identity_from_text(r"\\sum_{k=0}^{n} {n \\choose k}^2 = {2n \\choose n}")["statement"]
    'Sum(binomial(n, k)**2, (k, 0, n)) = binomial(2*n, n)'
    """
    out: dict[str, Any] = {"method": "wz"}
    # LaTeX's inline and display delimiters, "\\( ... \\)" and "\\[ ... \\]", are as "$ ... $"
    original = _scripts(text).translate(_UNICODE).replace("$", " ")
    text = _plain(re.sub(r"\\[()\[\]]", " $ ", text))
    lower = _N_MIN.search(text)
    if lower:
        out["n_min"] = int(lower["n"])
        text = (text[: lower.start()] + " " + text[lower.end() :]).strip(" ,")
    plain = text
    # a request or comment set off after the identity: "... -- can you prove it?", "# prove this"
    text = re.sub(r"\s+(?:--+|—|–|#)\s*[^=]*$", "", text.strip(), flags=re.S)
    # "... = n(n+1)/2? Prove it."; a question before the identity is set aside ("is there a
    # proof? sum(...) == ...")
    questions = re.split(r"\?\s*", text.strip())
    text = next((q for q in questions if _SUM_WORD.search(q) or "Sum(" in q), questions[0])
    text = text.replace("$", " ").strip()
    text = re.sub(
        r"\s+(?:please\s+)?(?:prove|show|verify|check|certify)\s+(?:it|this|that(?=\W*$))\b[^=]*$",
        "",
        text,
        flags=re.I | re.S,
    )
    text = _sentence_with_sum(text)  # "... = 2^n. Can you prove it", "I'm stuck. We need ..."
    body = _TAIL.sub("", _LEAD.sub("", text.strip(), count=1))
    said_a_sum = bool(_SUM_WORD.search(body)) or "Sum(" in body
    relations = list(_RELATION.finditer(body if said_a_sum else ""))
    if said_a_sum and _REWROTE.search(body):
        relations += [m for m in _REWROTE_TO.finditer(body) if _REWROTE.search(body[: m.start()])]
    for rel in relations:
        found = _read_sum(body[: rel.start()])
        rhs = _math_prefix(body[rel.end() :])
        if found is None or not rhs:
            continue
        statement = _checked(*found, rhs, out.get("n_min", 0))
        if statement:
            return {"statement": statement, **out}
    # the forms above read a sum by its words in their usual order; a range and a verb of
    # giving read it in any order
    for said in (plain, original):
        statement = _by_range(said, out.get("n_min", 0))
        if statement:
            return {"statement": statement, **out}
    return None
