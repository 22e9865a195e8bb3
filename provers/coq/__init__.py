"""Coq 8.x through coqtop: whole-proof checks, tactic-level sessions, and ``.v`` files read
as batches of open theorems."""

from lemmata.provers.coq.files import read_coq_files
from lemmata.provers.coq.output import parse_assumptions, parse_output, read_assumptions
from lemmata.provers.coq.process import CoqCrashed, CoqProcess, CoqTimeout, coq_version
from lemmata.provers.coq.screen import screen_header, screen_proof, unsafe_command
from lemmata.provers.coq.sentences import Sentence, SentenceError, split_sentences
from lemmata.provers.coq.verifier import CoqSession, CoqTop

__all__ = [
    "CoqCrashed",
    "CoqProcess",
    "CoqSession",
    "CoqTimeout",
    "CoqTop",
    "Sentence",
    "SentenceError",
    "coq_version",
    "parse_assumptions",
    "parse_output",
    "read_assumptions",
    "read_coq_files",
    "screen_header",
    "screen_proof",
    "split_sentences",
    "unsafe_command",
]
