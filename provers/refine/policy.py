"""Repair policies: which local edits to try at a node, chosen from the verifier's failure.

A policy sees one node (the goal there, parsed by :mod:`.goal`, and the failure that stopped
the proof at that point) and proposes :class:`Action` s: tactics to run *at that position*,
each with a family and a prior. When an action fails, :meth:`Policy.react` gets the failure
and proposes follow-ups conditioned on it: the arithmetic cascade after ``lra`` fails, ``nia``
after ``lia``, a narrower tactic after a timeout, a fresh name after a name clash, lemma
substitutes after an unknown reference. That reaction is what makes the search
failure-conditioned; :class:`FixedOrderPolicy` tries the very same action set in one fixed
order and never reacts, the ablation it is compared with.

Every action a policy may *propose* for a goal comes from :func:`action_set`, shared with the
ablation and the one-shot portfolio. What only a failure calls for is not in it: after a
decision procedure fails on a goal, :func:`repairs` builds from that goal a case analysis on
a remainder (``a mod m`` split into its ``m`` residues), a bounded enumeration of a nat
variable, the laws of ``ln`` applied everywhere, the square a quadratic completes to, a case
split on a variable being zero (else cancelled from the equation), ``sqrt E = c`` as
``c * c = E``, ``Rpower`` of literals computed (and inverted for ``v = n``), the bounds of
``PI``, Coquelicot's ``floor`` taken apart and pinned, a function witness read off its
defining equation (also after a number failed as the witness), and a ``SearchPattern`` for
lemmas whose conclusion has the goal's shape (then ``apply``/``rewrite`` with the best).
Those are the search's own reach.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from lemmata.provers.refine.goal import Goal
from lemmata.provers.refine.lemmas import goal_pattern, unknown_name
from lemmata.provers.result import FailureKind, FailureMode

__all__ = [
    "ASK",
    "FAMILIES",
    "GOAL_LEMMAS",
    "LEMMAS",
    "Action",
    "Asking",
    "FixedOrderPolicy",
    "NodeView",
    "OfflinePolicy",
    "Policy",
    "action_set",
    "completed_squares",
    "constant_bounds",
    "enumerations",
    "floor_bounds",
    "function_witnesses",
    "log_laws",
    "mod_cases",
    "repairs",
    "rpower_literals",
    "sqrt_equations",
    "stuck_lemmas",
    "zero_products",
]

# The families of local edits, in the fixed order the unconditioned ablation uses.
FAMILIES = (
    "intro",
    "split",
    "destruct",
    "subst",
    "rewrite",
    "close",
    "simplify",
    "hint",
    "witness",
    "induction",
    "automation",
    "search",
    "repair",
    "model",
)

K = FailureKind


@dataclass(frozen=True)
class Action:
    """A local edit: run ``tactic`` at the node's position. ``prior`` in (0, 1] is the
    policy's preference; ``reacting_to`` names the failed tactic a follow-up answers."""

    tactic: str
    family: str
    prior: float = 0.5
    reacting_to: str | None = None

    @property
    def head(self) -> str:
        m = re.match(r"\s*([A-Za-z_][\w']*)", self.tactic)
        return m.group(1) if m else self.tactic[:12]


@dataclass
class NodeView:
    """What a policy may look at: the backend, the first goal, how many goals are open, the
    failure that conditions this node, the tactics already tried here, and the local text:
    up to three steps before the position, the failing draft sentence (if a draft failed
    here) and up to three after it. No history of earlier attempts elsewhere."""

    backend: str
    goal: Goal
    n_goals: int = 1
    failure: FailureMode | None = None
    tried: set[str] = field(default_factory=set)
    automation: bool = True  # Hammer and Interval are loaded (Coq)
    before: tuple[str, ...] = ()
    failing: str | None = None
    after: tuple[str, ...] = ()
    goals: tuple[str, ...] = ()
    statement: str = ""
    # Tactics that failed on these very goals at another node of the search (a repair node
    # shares its parent's goals): the same position, so no history from elsewhere.
    failed_here: frozenset[str] = frozenset()


@runtime_checkable
class Policy(Protocol):
    name: str

    def propose(self, node: NodeView) -> list[Action]: ...

    def react(self, node: NodeView, action: Action, failure: FailureMode) -> list[Action]: ...


# A policy that asks something costly (a model) proposes ``Action(ASK, "model", prior)``;
# the search calls its ``ask`` only when that action comes to its turn, so the cheap
# actions ranked above it (automation) run first.
ASK = "<ask>"
# ``LEMMAS + name``: look up names near an unknown one (one verifier query), then try them in
# the failing sentence; the search carries it out.
LEMMAS = "<lemmas>"
# ``GOAL_LEMMAS + "SearchPattern (...)."``: a goal automation could not close; look up lemmas
# whose conclusion has its shape (one verifier query), then ``apply``/``rewrite`` the best.
GOAL_LEMMAS = "<goal-lemmas>"


@runtime_checkable
class Asking(Protocol):
    def ask(self, node: NodeView) -> list[Action]: ...


# -- the action set ---------------------------------------------------------------------------

# Closers either close the goal or fail: ``now`` makes ``auto`` and ``intuition`` fail
# rather than succeed with nothing done (a call spent on a duplicate state).
_CLOSERS: dict[str, tuple[str, ...]] = {
    "R": ("lra", "nra", "field", "ring", "now auto"),
    "Q": ("field", "ring", "lra", "now auto"),
    "Z": ("lia", "nia", "ring", "now auto"),
    "nat": ("lia", "nia", "now auto", "ring"),
    "Prop": ("tauto", "now intuition", "firstorder", "congruence", "now auto", "easy"),
}
_GENERIC = ("reflexivity", "easy", "congruence", "now auto", "tauto", "now intuition")


def _squares(goal: Goal, limit: int = 4) -> list[str]:
    vs = list(goal.variables)[:limit]
    return [f"pow2_ge_0 ({a} - {b})" for i, a in enumerate(vs) for b in vs[i + 1 :]] + [
        f"pow2_ge_0 {v}" for v in vs
    ]


def _hints(goal: Goal) -> list[str]:
    """``nra`` with products the goal suggests: squares of the variables and of their
    differences, and products of positive hypotheses (Psatz multiplies only pairs)."""
    out = []
    squares = _squares(goal)
    if squares:
        out.append("; ".join(f"pose proof ({s})" for s in squares) + "; nra")
    positive = [
        h.name
        for h in goal.hypotheses
        if re.fullmatch(r"0\s*<=?\s*[\w' ]+|[\w' ]+\s*>=?\s*0", h.type.strip())
    ][:4]
    products = [
        f"pose proof (Rmult_le_pos _ _ (Rlt_le _ _ {a}) (Rlt_le _ _ {b}))"
        for i, a in enumerate(positive)
        for b in positive[i + 1 :]
    ]
    if products:
        out.append("; ".join(f"try {p}" for p in products) + "; nra")
    return out


def _denominators(text: str) -> list[str]:
    """The expressions divided by in ``text``: ``(x - 1)`` in ``a / (x - 1)``, or a name."""
    found = re.findall(r"/\s*(\([^()]+\)|[A-Za-z_][\w']*)", text)
    return list(dict.fromkeys(d for d in found if not re.fullmatch(r"\(?\s*\d+\s*\)?", d)))[:3]


def _sqrt_args(text: str) -> list[str]:
    """The arguments of ``sqrt`` in ``text`` (a name, a number or a parenthesised term)."""
    found = re.findall(r"sqrt\s+(\([^()]*\)|[\w']+)", text)
    return list(dict.fromkeys(a.strip("()").strip() for a in found))[:3]


def _witnesses(goal: Goal) -> list[str]:
    numbers = re.findall(r"(?<![\w.])\d+(?![\w.])", goal.text)
    values = list(dict.fromkeys([*numbers[:6], "0", "1", "2", "3"]))
    return [f"exists {v}" for v in values] + ["eexists"]


def _coq_actions(goal: Goal, automation: bool) -> list[Action]:
    """Every Coq action that makes sense for ``goal``, family by family."""
    acts: list[Action] = []
    add = acts.append
    head, dom, f = goal.head, goal.domain, goal.features
    if head in ("forall", "->", "~"):
        add(Action("intros", "intro", 0.95))
    if head in ("/\\", "<->"):
        add(Action("repeat split", "split", 0.8))
        add(Action("split", "split", 0.5))
    if head == "\\/":
        add(Action("left", "split", 0.3))
        add(Action("right", "split", 0.3))
    if f.get("hyp_conj") or f.get("hyp_exists") or f.get("hyp_disj"):
        add(
            Action(
                "repeat match goal with H : _ /\\ _ |- _ => destruct H "
                "| H : exists _, _ |- _ => destruct H end",
                "destruct",
                0.6,
            )
        )
        for h in goal.hypotheses_with(r"\\/"):
            add(Action(f"destruct {h.name}", "destruct", 0.4))
    if f.get("hyp_eq_var"):
        add(Action("subst", "subst", 0.5))
    # Hypotheses that define a function (``forall x, f x = ...``): rewrite with them
    # everywhere, and in the goal alone (a conditional one leaves its side conditions as
    # goals of their own, which the search then closes one by one).
    defs = [
        h.name
        for h in goal.hypotheses
        if re.match(r"forall\b[^,]*,.*=", h.type) and "<->" not in h.type
    ][:4]
    if defs:
        add(Action(f"repeat rewrite {', '.join(defs)} in *", "rewrite", 0.7))
        for d in defs:
            add(Action(f"rewrite {d}", "rewrite", 0.5))
            add(Action(f"rewrite {d} in *", "rewrite", 0.4))
    for h in goal.hypotheses:
        if "/" in h.type and dom in ("R", "Q") and not h.type.startswith("forall"):
            add(Action(f"field_simplify in {h.name}", "simplify", 0.4))
            # Clearing denominators needs them nonzero: state that first (lra proves it from
            # hypotheses such as x <> 1), then the side conditions are goals of their own.
            nonzero = "; ".join(f"assert ({d} <> 0) by lra" for d in _denominators(h.type))
            if nonzero and "=" in h.type:
                add(Action(f"{nonzero}; field_simplify_eq in {h.name}", "simplify", 0.5))
    roots = _sqrt_args(goal.text)
    if dom == "R" and roots:
        # What sqrt means to lra/nra: it is nonnegative and squares back.
        facts = "; ".join(
            f"pose proof (sqrt_pos ({e})); try pose proof (sqrt_sqrt ({e}) ltac:(lra))"
            for e in roots
        )
        add(Action(facts, "hint", 0.6))
    if dom in ("R", "Q") and "PI" in goal.text:
        add(Action("pose proof PI2_3_2; pose proof PI_4", "hint", 0.6))
    for closer in _CLOSERS.get(dom, _GENERIC):
        add(Action(closer, "close", 0.9 if closer in ("lra", "lia", "tauto") else 0.6))
    for closer in _GENERIC:
        add(Action(closer, "close", 0.3))
    if dom in ("R", "Q"):
        if f.get("abs"):
            add(Action("split_Rabs; lra", "simplify", 0.8))
            add(Action("split_Rabs; nra", "simplify", 0.5))
        if f.get("division"):
            add(Action("field_simplify; lra", "simplify", 0.5))
            add(Action("field_simplify; nra", "simplify", 0.4))
            add(Action("field_simplify", "simplify", 0.3))
        add(Action("subst; lra", "subst", 0.4))
        add(Action("subst; nra", "subst", 0.3))
        for hint in _hints(goal):
            add(Action(hint, "hint", 0.4))
        add(Action("psatz R 2", "hint", 0.4))
        if automation and f.get("transcendental"):
            add(Action("interval", "automation", 0.6))
    if dom in ("Z", "nat"):
        add(Action("subst; lia", "subst", 0.4))
        if dom == "Z":
            add(Action("psatz Z 2", "hint", 0.3))
        add(Action("subst; nia", "subst", 0.3))
        add(Action("simpl in *; lia", "simplify", 0.4))
        add(Action("vm_compute; reflexivity", "simplify", 0.5 if f.get("numeric_only") else 0.2))
        add(Action("compute; lia", "simplify", 0.2))
    if head == "exists":
        for w in _witnesses(goal):
            add(Action(w, "witness", 0.5))
    if dom == "nat":
        for v in goal.variables[:2]:
            for after in ("auto", "lia", "nia"):
                add(Action(f"induction {v}; simpl; {after}", "induction", 0.3))
    if automation:
        add(Action("sauto", "automation", 0.3))
        add(Action("qsimpl", "automation", 0.2))
    return _unique(acts)


def _lean_actions(goal: Goal, automation: bool) -> list[Action]:
    """The Lean 4 / Mathlib counterparts, same families."""
    acts: list[Action] = []
    add = acts.append
    head, dom, f = goal.head, goal.domain, goal.features
    if head in ("forall", "->", "~"):
        add(Action("intro", "intro", 0.9))
        add(Action("intros", "intro", 0.6))
    if head in ("/\\", "<->"):
        add(Action("constructor", "split", 0.8))
        add(Action("refine ⟨?_, ?_⟩", "split", 0.5))
    if head == "\\/":
        add(Action("left", "split", 0.3))
        add(Action("right", "split", 0.3))
    if f.get("hyp_conj") or f.get("hyp_exists"):
        for h in goal.hypotheses_with(r"∧|∃|/\\|exists"):
            add(Action(f"obtain ⟨_, _⟩ := {h.name}", "destruct", 0.5))
    if f.get("hyp_eq_var"):
        add(Action("subst_vars", "subst", 0.5))
    closers = {
        "R": ("linarith", "nlinarith", "norm_num", "field_simp", "ring", "positivity"),
        "Q": ("linarith", "norm_num", "field_simp", "ring"),
        "Z": ("omega", "linarith", "nlinarith", "norm_num", "ring", "decide"),
        "nat": ("omega", "linarith", "norm_num", "simp", "decide", "nlinarith"),
        "Prop": ("tauto", "simp_all", "aesop", "trivial", "exact?"),
    }[dom]
    for c in closers:
        add(Action(c, "close", 0.9 if c in ("linarith", "omega", "tauto") else 0.6))
    for c in ("rfl", "simp", "norm_num", "decide", "trivial"):
        add(Action(c, "close", 0.3))
    if dom in ("R", "Q"):
        vs = list(goal.variables)[:4]
        sq = [f"sq_nonneg ({a} - {b})" for i, a in enumerate(vs) for b in vs[i + 1 :]]
        sq += [f"sq_nonneg {v}" for v in vs]
        if sq:
            add(Action(f"nlinarith [{', '.join(sq)}]", "hint", 0.5))
        if f.get("abs"):
            add(Action("rcases abs_cases _ with h | h <;> linarith", "simplify", 0.5))
        if f.get("division"):
            add(Action("field_simp", "simplify", 0.4))
            add(Action("field_simp; ring_nf; nlinarith", "simplify", 0.3))
    if head == "exists":
        numbers = re.findall(r"(?<![\w.])\d+(?![\w.])", goal.text)
        for v in dict.fromkeys([*numbers[:6], "0", "1", "2"]):
            add(Action(f"use {v}", "witness", 0.5))
    if dom == "nat":
        for v in goal.variables[:2]:
            add(Action(f"induction {v} <;> simp_all <;> omega", "induction", 0.3))
    if automation:
        add(Action("aesop", "automation", 0.3))
    return _unique(acts)


def _unique(actions: Iterable[Action]) -> list[Action]:
    seen: dict[str, Action] = {}
    for a in actions:
        if a.tactic not in seen or seen[a.tactic].prior < a.prior:
            seen[a.tactic] = a
    return list(seen.values())


def action_set(backend: str, goal: Goal, automation: bool = True) -> list[Action]:
    """Every action either policy may propose for ``goal`` on ``backend``."""
    if backend == "coq":
        return _coq_actions(goal, automation)
    if backend == "lean":
        return _lean_actions(goal, automation)
    raise ValueError(f"no actions for backend {backend!r}")


# -- repairs only a failure calls for -----------------------------------------------------------
#
# These are not in :func:`action_set`: each answers a decision procedure that failed on a goal
# of a particular shape, and is built from that goal (its variables, moduli and bounds). The
# fixed-order ablation and the one-shot portfolio, which draw on the action set, never see them.

# The tactics whose failure means "automation cannot close this goal as it stands".
_STUCK = frozenset(
    ("lia", "nia", "lra", "nra", "ring", "field", "psatz", "auto", "tauto", "intuition")
    + ("easy", "congruence", "firstorder", "reflexivity", "sauto", "qsimpl", "interval")
)
_MOD = re.compile(r"\bmod\s+\(?\s*(\d+)\s*\)?|Nat\.modulo\s+.+?\s(\d+)\b")
_BOUND = re.compile(r"^\(?\s*([A-Za-z_][\w']*)\s*(<=?)\s*(\d+)\s*\)?(?:%nat)?$")


def _nat_mod_step(where: str) -> str:
    return (
        f'{where} => let r := fresh "r" in let q := fresh "q" in '
        "pose proof (Nat.div_mod x m ltac:(lia)); pose proof (Nat.mod_upper_bound x m ltac:(lia)); "
        "set (r := Nat.modulo x m) in *; set (q := Nat.div x m) in *; clearbody r q"
    )


# nat's counterpart of ``Z.div_mod_to_equations``: every ``x mod m`` and ``x / m`` becomes a
# variable, with ``x = m * q + r`` and ``r < m`` (lia and zify leave nat remainders opaque).
_NAT_MOD_EQS = (
    "repeat match goal with "
    + _nat_mod_step("| H : context [Nat.modulo ?x ?m] |- _")
    + " "
    + _nat_mod_step("| |- context [Nat.modulo ?x ?m]")
    + " end"
)


def _moduli(goal: Goal) -> list[int]:
    """The small literal moduli (2 to 12) the goal and its hypotheses take remainders by."""
    text = " ".join([goal.conclusion, *(h.type for h in goal.hypotheses)])
    found = [int(a or b) for a, b in _MOD.findall(text)]
    return list(dict.fromkeys(m for m in found if 2 <= m <= 12))[:2]


def mod_cases(goal: Goal) -> list[Action]:
    """Case analysis on a remainder: write a variable ``v`` as ``m * q + r`` with
    ``0 <= r < m``, split on the ``m`` values of ``r`` and close each case by arithmetic
    (Coq's ``Z.div_mod_to_equations``, then ``nia``). A case it cannot close is left as a goal
    of its own.

    Proves ``a ^ 2 mod 3 = 0 \\/ a ^ 2 mod 3 = 1`` (Z), which no closer does alone.
    """
    if goal.domain not in ("Z", "nat"):
        return []
    moduli = _moduli(goal)
    if not moduli:
        return []
    # Remainders and quotients as variables with their defining equations, then arithmetic.
    eqs = "Z.div_mod_to_equations" if goal.domain == "Z" else _NAT_MOD_EQS
    out: list[Action] = [
        Action(f"{eqs}; lia", "destruct", 0.8),
        Action(f"{eqs}; nia", "destruct", 0.6),
    ]
    for m in moduli:
        for v in goal.variables[:2]:
            if not re.search(rf"(?<![\w.']){re.escape(v)}(?![\w'])", goal.text):
                continue
            cases = " \\/ ".join(f"rm0 = {r}" for r in range(m))
            pattern = "[" + "|[".join("Hc0" for _ in range(m - 1)) + "|Hc0" + "]" * (m - 1)
            if goal.domain == "Z":
                facts = (
                    f"pose proof (Z.div_mod {v} {m}%Z ltac:(lia)) as Hdm0; "
                    f"pose proof (Z.mod_pos_bound {v} {m}%Z ltac:(lia)) as Hmb0; "
                    f"set (rm0 := Z.modulo {v} {m}%Z) in *; set (qm0 := Z.div {v} {m}%Z) in *"
                )
                cases = f"({cases})%Z"
                close = "try (Z.div_mod_to_equations; nia)"
            else:
                facts = (
                    f"pose proof (Nat.div_mod {v} {m}%nat ltac:(lia)) as Hdm0; "
                    f"pose proof (Nat.mod_upper_bound {v} {m}%nat ltac:(lia)) as Hmb0; "
                    f"set (rm0 := Nat.modulo {v} {m}%nat) in *; set (qm0 := Nat.div {v} {m}%nat) in *"
                )
                cases = f"({cases})%nat"
                close = f"try (cbn [Nat.pow] in *; {_NAT_MOD_EQS}; nia)"
            out.append(
                Action(
                    f"{facts}; clearbody rm0 qm0; subst {v}; assert {cases} as Hc0 by lia; "
                    f"destruct Hc0 as {pattern}; subst rm0; {close}",
                    "destruct",
                    0.75,
                )
            )
    return out[:5]


def _isqrt(n: int) -> int:
    r = int(n**0.5)
    while r * r > n:
        r -= 1
    while (r + 1) * (r + 1) <= n:
        r += 1
    return r


def enumerations(goal: Goal, most: int = 30) -> list[Action]:
    """Bounded enumeration in nat: bound a variable (a hypothesis ``v < N``, or ``nia``
    from the goal's numbers: their square root, for a product of two variables, or the
    number itself), then take it apart ``N + 1`` times, each case closed by ``nia`` on the
    literal values. Cases ``nia`` cannot close stay goals of their own."""
    if goal.domain != "nat" or not goal.variables:
        return []
    numbers = [int(n) for n in re.findall(r"(?<![\w.])\d+(?![\w.])", goal.text)]
    big = max(numbers, default=0)
    out: list[Action] = []
    for v in goal.variables[:3]:
        bounds: list[int] = []
        for h in goal.hypotheses:
            m = _BOUND.match(h.type.strip())
            if m and m.group(1) == v:
                bounds.append(int(m.group(3)) - (1 if m.group(2) == "<" else 0))
        if big >= 4:
            bounds += [_isqrt(big), big]
        for b in dict.fromkeys(x for x in bounds if 0 <= x <= most):
            out.append(
                Action(
                    f"assert (Hbd0 : ({v} <= {b})%nat) by nia; "
                    f"do {b + 1} (try (destruct {v} as [|{v}]; [try nia|])); try nia",
                    "destruct",
                    0.65 if b <= 12 else 0.5,
                )
            )
    return out[:4]


def stuck_lemmas(goal: Goal) -> list[Action]:
    """Lemma retrieval for a goal automation left: ``SearchPattern`` on its conclusion
    (local names and numbers as holes), then the best names applied or rewritten with."""
    if goal.head in ("forall", "->", "exists", "/\\", "\\/", "<->", "~"):
        return []  # a connective: opened or split first, each part then searched for
    local = (*goal.variables, *(h.name for h in goal.hypotheses))
    command = goal_pattern(goal.conclusion, local)
    return [Action(GOAL_LEMMAS + command, "search", 0.45)] if command else []


def log_laws(goal: Goal) -> list[Action]:
    """``ln`` of products, quotients and powers taken apart everywhere (the side conditions,
    positivity, by ``lra`` after ``pow_lt`` or ``Rinv_0_lt_compat``), so that arithmetic sees ``ln x`` and ``ln y`` as
    unknowns: ``ln (x * y ^ 3) = 1`` becomes ``ln x + 3 * ln y = 1``."""
    if goal.domain != "R" or not re.search(r"\bln\b", goal.text):
        return []
    side = "(try apply pow_lt; try apply Rinv_0_lt_compat; lra)"
    laws = (
        f"unfold Rdiv in *; repeat ((rewrite ln_mult in * by {side}) || "
        f"(rewrite ln_Rinv in * by {side})); repeat rewrite ln_pow in * by lra; simpl INR in *"
    )
    return [Action(f"{laws}; lra", "rewrite", 0.75), Action(laws, "rewrite", 0.5)]


def completed_squares(goal: Goal) -> list[Action]:
    """``nra`` with the square a quadratic in one variable completes to: for
    ``A * v ^ 2 + B * v`` in the goal or its hypotheses, ``(2 * A * v + B) ^ 2 >= 0`` (and
    with ``- B``), the fact behind every bound on a quadratic's minimum."""
    if goal.domain not in ("R", "Q"):
        return []
    out: list[Action] = []
    for v in goal.variables[:3]:
        name = re.escape(v)
        square = re.search(rf"(?:(\d+)\s*\*\s*)?(?<![\w.']){name}\s*\^\s*2\b", goal.text)
        linear = re.search(rf"(\d+)\s*\*\s*{name}(?![\w'])(?!\s*\^)", goal.text)
        if not square:
            continue
        a = square.group(1) or "1"
        b = linear.group(1) if linear else "1"
        facts = "; ".join(
            f"pose proof (pow2_ge_0 (2 * {a} * {v} {sign} {b}))" for sign in ("+", "-")
        )
        out.append(Action(f"{facts}; nra", "hint", 0.8))
    return out[:2]


# ``Rpower A e`` with a literal base and a literal (or a variable a hypothesis fixes) exponent.
_RPOWER = re.compile(r"Rpower\s+(\d+|\([^()]*\))\s+(\d+|[A-Za-z_][\w']*)")


def _rpower_literal(base: str, n: str) -> str:
    """``Rpower base n`` replaced everywhere by ``base ^ n`` (``Rpower_pow``, base > 0)."""
    return (
        f"replace (Rpower {base} {n}) with ({base} ^ {n}) in * by "
        f"(rewrite <- (Rpower_pow {n}%nat {base}) by lra; f_equal; simpl; lra)"
    )


def rpower_literals(goal: Goal) -> list[Action]:
    """``Rpower`` of literals as powers arithmetic can compute: ``Rpower 2 3`` becomes
    ``2 ^ 3`` (an exponent a hypothesis ``y = 2`` fixes is substituted first); and for a goal
    ``v = n`` whose hypotheses hold ``Rpower A v``, the exponent read off through
    ``Rpower``'s injectivity (``exp`` is injective, ``ln A > 0``)."""
    if goal.domain != "R" or "Rpower" not in goal.text:
        return []
    fixed = {}
    for h in goal.hypotheses:
        m = re.fullmatch(r"([A-Za-z_][\w']*)\s*=\s*(\d+)", h.type.strip())
        if m:
            fixed[m.group(1)] = m.group(2)
    literal: list[str] = []
    substs: list[str] = []
    unknown: list[tuple[str, str]] = []
    for base, exp in dict.fromkeys(_RPOWER.findall(goal.text)):
        if not re.fullmatch(r"\(?\s*\d+\s*\)?", base) or int(base.strip("() ")) < 1:
            continue
        if exp.isdigit():
            literal.append(_rpower_literal(base, exp))
        elif exp in fixed:
            substs.append(exp)
            literal.append(_rpower_literal(base, fixed[exp]))
        else:
            unknown.append((base, exp))
    prefix = [f"subst {v}" for v in dict.fromkeys(substs)] + literal
    out: list[Action] = []
    if prefix:
        out.append(Action("; ".join(prefix), "rewrite", 0.8))
    target = re.fullmatch(r"([A-Za-z_][\w']*)\s*=\s*(\d+)", goal.conclusion.strip())
    for base, exp in unknown:
        if not target or target.group(1) != exp or int(base.strip("() ")) < 2:
            continue
        n = target.group(2)
        steps = [
            *prefix,
            f"assert (HRp0 : Rpower {base} {exp} = Rpower {base} {n}) by "
            f"({_rpower_literal(base, n)}; nra)",
            "unfold Rpower in HRp0; apply exp_inv, Rmult_eq_reg_r in HRp0; [lra|]",
            f"assert (0 < ln {base}) by (rewrite <- ln_1; apply ln_increasing; lra); lra",
        ]
        out.append(Action("; ".join(steps), "rewrite", 0.75))
    return out[:3]


def sqrt_equations(goal: Goal) -> list[Action]:
    """``sqrt E = c`` (either way round) as ``c * c = E`` with ``E`` and ``c`` nonnegative
    (``sqrt_lem_1``): the three goals are then arithmetic, each closed on its own."""
    if goal.domain != "R":
        return []
    concl = goal.conclusion.strip()
    if re.match(r"sqrt\b", concl) and "=" in concl and not re.search(r"[<>]", concl):
        flip = ""
    elif re.search(r"=\s*sqrt\b", concl) and not re.search(r"[<>]", concl):
        flip = "symmetry; "
    else:
        return []
    return [
        Action(f"{flip}apply sqrt_lem_1; nra", "rewrite", 0.8),
        Action(f"{flip}apply sqrt_lem_1", "rewrite", 0.6),
    ]


def zero_products(goal: Goal) -> list[Action]:
    """Case analysis on a variable being zero, for an equation in R whose hypotheses are
    polynomial: ``v = 0`` (substituted, often contradicting a hypothesis) or the goal
    multiplied through by ``v <> 0`` (``Rmult_eq_reg_l``), where a hypothesis
    ``v * (...) = 0`` becomes usable by ``nra``."""
    concl = goal.conclusion.strip()
    if goal.domain != "R" or not re.search(r"(?<![<>])=", concl) or re.search(r"[<>]", concl):
        return []
    polynomial = [
        h
        for h in goal.hypotheses
        if "=" in h.type and re.search(r"\^\s*2|[\w')]\s*\*\s*[A-Za-z_(]", h.type)
    ]
    if not polynomial:
        return []
    out: list[Action] = []
    for v in goal.variables[:3]:
        out.append(
            Action(
                f"destruct (Req_dec {v} 0) as [Hz0|Hz0]; "
                f"[subst {v}; try (exfalso; nra); try nra "
                f"| apply (Rmult_eq_reg_l {v}); [try nra | exact Hz0]]",
                "destruct",
                0.6,
            )
        )
    return out


def function_witnesses(goal: Goal) -> list[Action]:
    """A function asked for by its defining equation: for ``exists g : A -> B,
    (forall x, g x = E) -> ...``, the witness ``fun x : A => E``."""
    m = re.match(
        r"exists\s+([A-Za-z_][\w']*)\s*:\s*([\w]+)\s*->\s*\w+\s*,\s*\(\s*forall\s+"
        r"([A-Za-z_][\w']*)\s*(?::\s*\w+\s*)?,\s*\1\s+\3\s*=\s*(.+?)\)\s*->",
        goal.conclusion.strip(),
        re.S,
    )
    if not m or m.group(4).count("(") != m.group(4).count(")"):
        return []
    _, dom, x, body = m.groups()
    return [Action(f"exists (fun {x} : {dom} => {body.strip()})", "witness", 0.85)]


def constant_bounds(goal: Goal) -> list[Action]:
    """What arithmetic must be told about ``PI``: ``0 < PI``, ``3/2 < PI/2`` and
    ``PI <= 4``, then ``lra`` (or ``nra``)."""
    if goal.domain not in ("R", "Q") or not re.search(r"\bPI\b", goal.text):
        return []
    facts = "pose proof PI_RGT_0; pose proof PI2_3_2; pose proof PI_4"
    return [Action(f"{facts}; lra", "hint", 0.8), Action(f"{facts}; nra", "hint", 0.5)]


def floor_bounds(goal: Goal) -> list[Action]:
    """Coquelicot's ``floor E`` taken apart into an integer ``n0`` with
    ``IZR n0 <= E < IZR n0 + 1``; for ``floor E = k``, ``n0 = k`` is then pinned from both
    sides (``n0 < k + 1`` and ``k < n0 + 1`` through ``lt_IZR``, each by ``lra``)."""
    if not re.search(r"(?<![\w.])floor\s", goal.conclusion):
        return []
    take = (
        "unfold floor; match goal with |- context [proj1_sig (floor_ex ?e)] => "
        "destruct (floor_ex e) as [n0 [Hf0 Hf1]] end; simpl"
    )
    pin = "apply Z.le_antisymm; apply Z.lt_succ_r, lt_IZR; rewrite ?succ_IZR; lra"
    out = [Action(take, "destruct", 0.6)]
    if re.match(r"\(?\s*floor\b.*=", goal.conclusion.strip()):
        out.insert(0, Action(f"{take}; {pin}", "destruct", 0.8))
    return out


def repairs(node: NodeView, word: str) -> list[Action]:
    """What only a failure calls for: after a decision procedure (``word``) failed on the
    node's goal, the repairs its shape admits (see the module docstring), each built from it;
    after a witness (``exists``) failed, a function witness for a function asked for by its
    defining equation."""
    if node.backend != "coq" or node.goal.head in ("forall", "->"):
        return []
    goal = node.goal
    if word in ("exists", "eexists"):  # a witness that does not type: a function, maybe
        return function_witnesses(goal)
    if word not in _STUCK:
        return []
    return [
        *function_witnesses(goal),
        *sqrt_equations(goal),
        *rpower_literals(goal),
        *constant_bounds(goal),
        *floor_bounds(goal),
        *mod_cases(goal),
        *enumerations(goal),
        *log_laws(goal),
        *completed_squares(goal),
        *zero_products(goal),
        *stuck_lemmas(goal),
    ]


# -- policies ---------------------------------------------------------------------------------

# What to try after a tactic failed, by its head word: the arithmetic cascade and its
# neighbours. Each follow-up must also be in action_set (filtered below), so the ablation can
# reach it too.
_AFTER: dict[str, tuple[str, ...]] = {
    "lra": (
        "nra",
        "rewrite",
        "split_Rabs; lra",
        "field_simplify; lra",
        "subst; lra",
        "hint",
        "interval",
    ),
    "nra": (
        "psatz R 2",
        "hint",
        "field_simplify; nra",
        "split_Rabs; nra",
        "subst; nra",
        "interval",
    ),
    "lia": (
        "nia",
        "rewrite",
        "subst; lia",
        "simpl in *; lia",
        "vm_compute; reflexivity",
        "induction",
    ),
    "nia": ("subst; nia", "psatz Z 2", "induction", "compute; lia", "vm_compute; reflexivity"),
    "ring": ("field", "lra", "lia", "nra", "nia"),
    "field": ("field_simplify; lra", "field_simplify; nra", "lra", "nra"),
    "reflexivity": ("vm_compute; reflexivity", "lra", "lia", "ring", "field"),
    "tauto": ("now intuition", "firstorder", "sauto", "congruence"),
    "intuition": ("firstorder", "sauto", "qsimpl"),
    "auto": ("now intuition", "sauto", "firstorder", "lia", "lra"),
    "linarith": ("nlinarith", "hint", "norm_num", "positivity", "field_simp"),
    "nlinarith": ("hint", "field_simp; ring_nf; nlinarith", "norm_num"),
    "omega": ("nlinarith", "decide", "norm_num", "induction", "simp_all"),
    "norm_num": ("simp", "decide", "linarith", "nlinarith"),
    "simp": ("simp_all", "norm_num", "aesop"),
}


# Tactics that open no search: each waits for the failure of a cheaper one (the cascade).
_HELD = frozenset(
    t
    for after in _AFTER.values()
    for t in after
    if t
    not in {
        "lra",
        "lia",
        "tauto",
        "reflexivity",
        "ring",
        "field",
        "congruence",
        "linarith",
        "omega",
        "norm_num",
        "simp",
        "decide",
        "vm_compute; reflexivity",
        "split_Rabs; lra",
        "now auto",
        "now intuition",
    }
)


class OfflinePolicy:
    """The embedded default: goal-conditioned proposals and failure-conditioned follow-ups.

    ``propose`` orders the action set by the goal's shape: an introduction when the goal is
    a product, splitting a conjunction, then the closers of the goal's domain. ``react``
    answers a failure by its class (see the module docstring).
    """

    name = "offline"

    def __init__(self, width: int = 12) -> None:
        self.width = width

    def propose(self, node: NodeView) -> list[Action]:
        acts = action_set(node.backend, node.goal, node.automation)
        structural = [a for a in acts if a.family in ("intro", "split") and a.prior >= 0.5]
        if structural and node.goal.head in ("forall", "->", "~", "/\\", "<->"):
            # A product or a conjunction is opened first; closing it whole rarely works.
            rest = [a for a in acts if a not in structural and a.family == "close"][:3]
            return structural + [Action(a.tactic, a.family, a.prior * 0.3) for a in rest]
        acts = [a for a in acts if a.tactic not in node.tried]
        first = {
            "close": 1.0,
            "simplify": 0.9,
            "destruct": 0.9,
            "subst": 0.8,
            "witness": 0.9,
            "automation": 0.7,
        }
        ranked = sorted(acts, key=lambda a: -a.prior * first.get(a.family, 0.6))
        # The cascade's later steps wait for the failure that calls for them.
        opening = [
            a for a in ranked if a.family not in ("hint", "induction") and a.tactic not in _HELD
        ]
        return opening[: self.width]

    def react(self, node: NodeView, action: Action, failure: FailureMode) -> list[Action]:
        available = {a.tactic: a for a in action_set(node.backend, node.goal, node.automation)}
        by_family: dict[str, list[Action]] = {}
        for a in available.values():
            by_family.setdefault(a.family, []).append(a)
        out: list[Action] = []

        def want(name: str, prior: float) -> None:
            if name in by_family:  # a family: all its actions
                for a in by_family[name]:
                    out.append(Action(a.tactic, a.family, prior * a.prior, action.tactic))
            elif name in available:
                a = available[name]
                out.append(Action(a.tactic, a.family, prior, action.tactic))

        kind = failure.kind
        last = action.tactic.split(";")[-1].strip().removeprefix("now ")
        head = re.match(r"[A-Za-z_]\w*", last)
        word = head.group(0) if head else action.head
        if kind is K.NOT_A_PRODUCT:
            for a in available.values():
                if a.family == "close":
                    want(a.tactic, 0.6)
        elif kind is K.NAME_CLASH:
            want("intros", 0.8)
        elif kind is K.TIMEOUT:
            # A narrower tactic: the linear or Presburger version, or prepared hypotheses.
            for name in ("lra", "lia", "subst; lra", "subst; lia", "field_simplify; lra"):
                want(name, 0.5)
        elif kind is K.UNKNOWN_IDENTIFIER:
            # A missing lemma: the nearest real names (Coq's Search, ranked), and automation
            # that needs no names.
            missing = unknown_name(failure.message)
            if missing and node.backend == "coq":
                out.append(Action(LEMMAS + missing, "search", 0.7, action.tactic))
            for name in ("automation", "close"):
                want(name, 0.4)
        elif kind is K.STRUCTURE:
            # Coq names the bullet it expects ("Focus next goal with bullet -").
            bullet = re.search(r"bullet\s+([-+*]+)", failure.message)
            if bullet and node.backend == "coq":
                out.append(Action(bullet.group(1), "repair", 0.9, action.tactic))
            want("intros", 0.3)
        else:  # tactic failure, unification, goals left: the cascade for this tactic
            for i, name in enumerate(_AFTER.get(word, ())):
                want(name, 0.9 - 0.1 * i)
            if not out:
                for a in available.values():
                    if a.family in ("close", "simplify") and a.tactic not in node.tried:
                        out.append(Action(a.tactic, a.family, 0.3 * a.prior, action.tactic))
            # and the repairs that only this failure calls for (not in the action set), first
            # so that the width never cuts them
            out[:0] = [
                Action(a.tactic, a.family, a.prior, action.tactic) for a in repairs(node, word)
            ]
        seen = set(node.tried) | {action.tactic}
        uniq: list[Action] = []
        for a in out:
            if a.tactic not in seen:
                seen.add(a.tactic)
                uniq.append(a)
        return uniq[: self.width]


class FixedOrderPolicy:
    """The ablation: the same action set, in one fixed order (family, then the action's
    place in the set), blind to the failure. ``react`` proposes nothing."""

    name = "fixed"

    def propose(self, node: NodeView) -> list[Action]:
        acts = action_set(node.backend, node.goal, node.automation)
        order = {f: i for i, f in enumerate(FAMILIES)}
        ranked = sorted(enumerate(acts), key=lambda ia: (order.get(ia[1].family, 99), ia[0]))
        n = len(ranked)
        return [Action(a.tactic, a.family, 1.0 - i / (n + 1)) for i, (_, a) in enumerate(ranked)]

    def react(self, node: NodeView, action: Action, failure: FailureMode) -> list[Action]:
        return []
