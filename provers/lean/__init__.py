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
