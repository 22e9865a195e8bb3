"""Reading a sum identity out of people's words: LaTeX, unicode, Python and words, checked
against the WZ prover's own parser."""

from __future__ import annotations

import pytest
import sympy as sp

from lemmata.provers.identity_text import identity_from_text, split_identity


@pytest.mark.parametrize(
    ("text", "lhs", "rhs"),
    [
        ("prove that sum_{k=0}^{n} binomial(n,k) = 2^n", "Sum(binomial(n,k), (k, 0, n))", "2**n"),
        (
            "Show that the sum of binomial(n, k) for k from 0 to n is 2^n.",
            "Sum(binomial(n, k), (k, 0, n))",
            "2**n",
        ),
        ("Sum(k, (k, 0, n)) = n*(n+1)/2", "Sum(k, (k, 0, n))", "n*(n+1)/2"),
        ("∑_{k=0}^{n} k = n(n+1)/2 for all n", "Sum(k, (k, 0, n))", "n*(n+1)/2"),
        (r"verify \sum_{k=0}^{n} \binom{n}{k}^2 = \binom{2n}{n}", None, None),
    ],
)
def test_identities_in_several_notations(text: str, lhs: str | None, rhs: str | None) -> None:
    found = identity_from_text(text)
    assert found is not None and found["method"] == "wz"
    parts = split_identity(found["statement"])
    assert parts is not None
    if lhs is not None:
        assert parts == (lhs, rhs)
    # whatever the notation, the two sides parse as sympy expressions
    n = sp.Symbol("n")
    for side in parts:
        sp.sympify(side, locals={"n": n})


def _same_identity(statement: str, want: str) -> bool:
    """Two ``Sum(...) = rhs`` statements with the same limits, summands and right-hand sides."""
    got_parts, want_parts = split_identity(statement), split_identity(want)
    assert got_parts is not None and want_parts is not None
    (gl, gr), (wl, wr) = (tuple(sp.sympify(x) for x in p) for p in (got_parts, want_parts))
    return (
        gl.limits == wl.limits
        and sp.simplify(gl.function - wl.function) == 0
        and sp.simplify(gr - wr) == 0
    )


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # LaTeX: \sum with braces or without, \binom, {n \choose k}, \frac, \cdot, ^{...}
        (r"\sum_{k=0}^{n} {n \choose k} = 2^n", "Sum(binomial(n, k), (k, 0, n)) = 2**n"),
        (
            r"Prove $\sum_{j=1}^n \frac{1}{j(j+1)} = \frac{n}{n+1}$ please",
            "Sum(1/(j*(j + 1)), (j, 1, n)) = n/(n + 1)",
        ),
        (
            r"\sum_{k=0}^{n} k \cdot \binom{n}{k} = n \cdot 2^{n-1}",
            "Sum(k*binomial(n, k), (k, 0, n)) = n*2**(n - 1)",
        ),
        (
            r"Find a WZ proof of \sum_{k=0}^n {n \choose k}^2 = {2n \choose n}",
            "Sum(binomial(n, k)**2, (k, 0, n)) = binomial(2*n, n)",
        ),
        # unicode
        ("∑_{k=0}^{n} C(n,k) × 2^k = 3^n", "Sum(binomial(n, k)*2**k, (k, 0, n)) = 3**n"),
        # words: "sum of X for k from a to b", "sum over k from a to b of X", "X summed over"
        (
            "Can you show that the sum of k^3 for k from 1 to n equals (n(n+1)/2)^2?",
            "Sum(k**3, (k, 1, n)) = (n*(n + 1)/2)**2",
        ),
        (
            "the sum over j from 0 to n of 3^j is (3^(n+1) - 1)/2, prove it",
            "Sum(3**j, (j, 0, n)) = (3**(n + 1) - 1)/2",
        ),
        (
            "k^2 summed over k = 1..n equals n(n+1)(2n+1)/6",
            "Sum(k**2, (k, 1, n)) = n*(n + 1)*(2*n + 1)/6",
        ),
        (
            "the sum of n choose k for k from 0 to n is 2^n",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
        (
            "the sum of k times binomial(n, k), for k from 0 to n, is n 2^(n-1).",
            "Sum(k*binomial(n, k), (k, 0, n)) = n*2**(n - 1)",
        ),
        # a sum over all k of a binomial in k runs where the binomial is not zero: 0..n
        (
            "sum over k of binomial(n,k)^2 is binomial(2n,n)",
            "Sum(binomial(n, k)**2, (k, 0, n)) = binomial(2*n, n)",
        ),
        # Python
        (
            "sum(2*k + 1 for k in range(n + 1)) == (n + 1)**2, prove this",
            "Sum(2*k + 1, (k, 0, n)) = (n + 1)**2",
        ),
        # prose after the right-hand side is not part of it
        (
            "my friend says the sum of binomial(n, k) over k=0..n is 4^n. prove or refute it",
            "Sum(binomial(n, k), (k, 0, n)) = 4**n",
        ),
        (
            "Is Sum(k, (k, 0, n)) == n*(n + 1)/2 true? prove it",
            "Sum(k, (k, 0, n)) = n*(n + 1)/2",
        ),
        (
            "Please prove this identity with the WZ method:\n```\nSum(k, (k, 0, n)) = n*(n+1)/2\n```",
            "Sum(k, (k, 0, n)) = n*(n + 1)/2",
        ),
    ],
)
def test_identities_in_latex_unicode_python_and_words(text: str, want: str) -> None:
    found = identity_from_text(text)
    assert found is not None, text
    assert found["method"] == "wz"
    assert _same_identity(found["statement"], want), found["statement"]


def test_the_lower_bound_of_n_is_read_and_kept_out_of_the_identity() -> None:
    found = identity_from_text(
        "For n ≥ 1, the sum of (-1)^k binomial(n, k) over k = 0..n is 0. Prove it."
    )
    assert found is not None and found["n_min"] == 1
    assert _same_identity(found["statement"], "Sum((-1)**k*binomial(n, k), (k, 0, n)) = 0")


@pytest.mark.parametrize(
    "text",
    [
        "What is the sum of 1234 and 5678?",
        "Sum up yesterday's football results.",
        "the sum of my expenses is too high",
        # no range given and nothing in the summand that bounds it
        "sum over k of k^2 is n^3",
        # a right-hand side or a summand that is not an expression
        "the sum of x for k from 1 to n is banana",
        "the sum of apples for k from 1 to n is n",
        # unknown LaTeX stays unknown rather than read as something else
        r"\sum_{k=0}^{n} \weird{k} = 2^n",
        # the right-hand side uses the summation variable
        "the sum of 1 for k from 1 to n is k",
        "Theorem t : forall n, sum n = n.",
    ],
)
def test_text_that_is_no_sum_identity_gives_nothing(text: str) -> None:
    assert identity_from_text(text) is None


@pytest.mark.parametrize(
    ("text", "statement", "n_min"),
    [
        # LaTeX run together: a factor before \binom, a coefficient before a power
        (
            r"$\sum_{k=0}^{n} k\binom{n}{k} = n2^{n-1}$ -- is that right? prove it",
            "Sum(k*binomial(n, k), (k, 0, n)) = n*2**(n-1)",
            None,
        ),
        # a comment after Python code
        (
            "sum(comb(n, k) * 2**k for k in range(n+1)) == 3**n  # would you prove this",
            "Sum(binomial(n, k)*2**k, (k, 0, n)) = 3**n",
            None,
        ),
        # the lower bound of n after a comma or in parentheses
        (
            "Sum(k**3, (k, 1, n)) = (n*(n+1)/2)**2, n >= 1",
            "Sum(k**3, (k, 1, n)) = (n*(n+1)/2)**2",
            1,
        ),
        ("Sum(k, (k, 1, n)) = n*(n+1)/2 (n >= 2)", "Sum(k, (k, 1, n)) = n*(n+1)/2", 2),
    ],
)
def test_identities_with_requests_and_bounds_set_off_after_them(
    text: str, statement: str, n_min: int | None
) -> None:
    found = identity_from_text(text)
    assert found is not None, text
    assert _same_identity(found["statement"], statement)
    assert found.get("n_min") == n_min


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # the range, the summand and the verb of giving in any order, in five languages
        ("the sum of 2k-1 for k from 1 to n works out to n^2", "Sum(2*k - 1, (k, 1, n)) = n**2"),
        (
            "for k from 0 to n, binomial(n,k) adds up to 2^n",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
        ("summing k over k=1..n ought to give n(n+1)/2", "Sum(k, (k, 1, n)) = n*(n + 1)/2"),
        (
            "über k von 0 bis n ist die Summe von binomial(n,k) gleich 2^n",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
        (
            "pour k allant de 0 à n, la somme des C(n,k) vaut 2^n",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
        (
            "la suma, con j entre 1 y n... no: j de 1 a n, de j al cuadrado da n(n+1)(2n+1)/6",
            "Sum(j**2, (j, 1, n)) = n*(n + 1)*(2*n + 1)/6",
        ),
        (
            "a soma dos termos 3^i vezes binomial(n,i), i de 0 até n, dá 4^n",
            "Sum(3**i*binomial(n, i), (i, 0, n)) = 4**n",
        ),
        ("k=1..n, k^3 sums to (n(n+1)/2)^2", "Sum(k**3, (k, 1, n)) = (n*(n + 1)/2)**2"),
        # a one-letter word that opens prose after the right-hand side is not a factor of it
        (
            "sum_{k=0}^{n} binomial(n,k) = 2^n a WZ proof please",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
        # a verb that reduces the sum to its value
        (
            "I believe sum_{j=0}^{n} binomial(n,j) simplifies to 2^n",
            "Sum(binomial(n, j), (j, 0, n)) = 2**n",
        ),
        (
            "sum_{i=1}^{n} (2i-1) boils down to n^2, right? prove it",
            "Sum(2*i - 1, (i, 1, n)) = n**2",
        ),
        ("the sum of k for k from 1 to n reduces to n(n+1)/2", "Sum(k, (k, 1, n)) = n*(n + 1)/2"),
        # a tool or a person rewrote the sum "to" / "into" / "as" its value
        (
            "sympy rewrote Sum(binomial(n, k)*k, (k, 0, n)) as n*2^(n-1); is that a theorem?",
            "Sum(k*binomial(n, k), (k, 0, n)) = n*2**(n - 1)",
        ),
        (
            "Maple turned Sum[Binomial[n, k] 3^k, {k, 0, n}] into 4^n, I want a proof",
            "Sum(3**k*binomial(n, k), (k, 0, n)) = 4**n",
        ),
        # a range said with "between ... and" or "jusqu'à"
        (
            "la somme de j^3 pour j entre 1 et n vaut (n(n+1)/2)^2",
            "Sum(j**3, (j, 1, n)) = (n*(n + 1)/2)**2",
        ),
        (
            "the sum of binomial(n,i) with i between 0 and n equals 2^n",
            "Sum(binomial(n, i), (i, 0, n)) = 2**n",
        ),
        (
            "die Summe von binomial(n,k) für k zwischen 0 und n ergibt 2^n",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
        (
            "la somme des carrés i^2, de i = 1 jusqu'à n, égale n(n+1)(2n+1)/6",
            "Sum(i**2, (i, 1, n)) = n*(n + 1)*(2*n + 1)/6",
        ),
        # summing and giving verbs in other words: "addiert", "kommt ... heraus", "sale"
        (
            "Wenn man k^3 mit k von 1 bis n addiert, kommt (n(n+1)/2)^2 heraus",
            "Sum(k**3, (k, 1, n)) = (n*(n + 1)/2)**2",
        ),
        (
            "si sumas 2^k con k de 0 a n te sale 2^(n+1)-1",
            "Sum(2**k, (k, 0, n)) = 2**(n + 1) - 1",
        ),
        (
            "en additionnant les C(n,k) pour k de 0 à n on trouve 2^n",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
    ],
)
def test_a_sum_is_read_by_its_range_summand_and_verb_of_giving(text: str, want: str) -> None:
    found = identity_from_text(text)
    assert found is not None, text
    assert _same_identity(found["statement"], want)


@pytest.mark.parametrize(
    "text",
    [
        "my loop runs for k from 1 to n and the total is wrong, why?",
        "I added k from 1 to 10 in Excel and it gives 55, is that right?",
        # the right-hand side uses the variable of the range
        "for k from 1 to n, the sum of 1 gives k",
        # a rewrite without a sum, and a range between bounds without a value
        "I rewrote my essay as a poem, can you check it?",
        "sum the column for rows between 2 and 40 please",
        "my script collapses to a single thread when n is large",
    ],
)
def test_a_range_and_a_verb_of_giving_alone_are_no_identity(text: str) -> None:
    assert identity_from_text(text) is None


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # a power said in words ("hoch", "elevado a", "to the power"), a value after "always"
        (
            "die Summe von 3 hoch k, von k = 0 bis n, ergibt (3 hoch (n+1) - 1)/2",
            "Sum(3**k, (k, 0, n)) = (3**(n + 1) - 1)/2",
        ),
        (
            "somando 2 elevado a k de k=0 até n o resultado é sempre 2 elevado a (n+1) menos 1",
            "Sum(2**k, (k, 0, n)) = 2**(n + 1) - 1",
        ),
        (
            "sumando 4 elevado a k con k de 0 a n da siempre (4^(n+1)-1)/3",
            "Sum(4**k, (k, 0, n)) = (4**(n + 1) - 1)/3",
        ),
        (
            "the sum of 5 to the power k for k from 0 to n equals (5^(n+1)-1)/4",
            "Sum(5**k, (k, 0, n)) = (5**(n + 1) - 1)/4",
        ),
        # what a tool returned for a sum it was given
        (
            "Maple: add(k^2, k=1..n) and got n*(n+1)*(2*n+1)/6, is it right?",
            "Sum(k**2, (k, 1, n)) = n*(n + 1)*(2*n + 1)/6",
        ),
        (
            "in Maple, add(binomial(n,k), k=0..n) returned 2^n, can you prove it?",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
    ],
)
def test_powers_in_words_and_a_tools_returned_value_give_the_identity(text: str, want: str) -> None:
    found = identity_from_text(text)
    assert found is not None, text
    assert _same_identity(found["statement"], want)
