"""WZ: Zeilberger certificates, checked symbolic proofs of sum identities, Lean 4 sketches.

>>> from lemmata.provers.wz import parse_identity, prove_identity
>>> ident = parse_identity({"id": "row", "lhs": "Sum(binomial(n, k), (k, 0, n))", "rhs": "2**n", "n_min": 0})
>>> prove_identity(ident).verdict
'proved'

``lemmata prove FILE --method wz --out-dir DIR`` runs a JSONL batch.
"""

from lemmata.provers.wz.identity import IdentityError, WZIdentity, parse_identity, read_identities
from lemmata.provers.wz.lean_sketch import lean_sketch, obligation_report
from lemmata.provers.wz.prove import Check, WZResult, prove_identity
from lemmata.provers.wz.runner import WZSummary, run_wz
from lemmata.provers.wz.zeilberger import NotHypergeometric, Recurrence, gosper, zeilberger

__all__ = [
    "Check",
    "IdentityError",
    "NotHypergeometric",
    "Recurrence",
    "WZIdentity",
    "WZResult",
    "WZSummary",
    "gosper",
    "lean_sketch",
    "obligation_report",
    "parse_identity",
    "prove_identity",
    "read_identities",
    "run_wz",
    "zeilberger",
]
