"""Lean 4 through the leanprover-community REPL."""

from lemmata.provers.lean.protocol import (
    CommandResponse,
    LeanMessage,
    ProtocolError,
    ReplError,
    ResponseReader,
    Sorry,
    TacticResponse,
    encode_request,
    parse_response,
    split_transcript,
)
from lemmata.provers.lean.repl import (
    ALLOWED_AXIOMS,
    LeanCrashed,
    LeanProcess,
    LeanRepl,
    LeanSession,
    LeanTimeout,
    find_repl,
    parse_axioms,
    screen_lean_proof,
)

__all__ = [
    "ALLOWED_AXIOMS",
    "CommandResponse",
    "LeanCrashed",
    "LeanMessage",
    "LeanProcess",
    "LeanRepl",
    "LeanSession",
    "LeanTimeout",
    "ProtocolError",
    "ReplError",
    "ResponseReader",
    "Sorry",
    "TacticResponse",
    "encode_request",
    "find_repl",
    "parse_axioms",
    "parse_response",
    "screen_lean_proof",
    "split_transcript",
]

# The batch runner: a pool of REPLs, Kimina-style input and output, PutnamBench's files.
from lemmata.provers.lean.kimina import (  # noqa: E402
    KiminaItem,
    KiminaResult,
    KiminaRun,
    check_kimina,
    read_kimina,
    run_kimina,
)
from lemmata.provers.lean.pool import LeanPool, PoolStats  # noqa: E402
from lemmata.provers.lean.putnam import PutnamProblem, putnam_batch, read_putnam  # noqa: E402

__all__ += [
    "KiminaItem",
    "KiminaResult",
    "KiminaRun",
    "LeanPool",
    "PoolStats",
    "PutnamProblem",
    "check_kimina",
    "putnam_batch",
    "read_kimina",
    "read_putnam",
    "run_kimina",
]
