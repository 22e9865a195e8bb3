"""A replay program that speaks the Lean REPL's protocol from a recorded transcript.

It is a stand-in for `lake exe repl` in tests, where no Lean toolchain exists, and it says so:
it reads requests framed as the REPL reads them (JSON, then a blank line) from stdin and
answers each with the next recorded reply, framed as the REPL writes them.

    python lean_replay.py TRANSCRIPT.expected.out [--requests TRANSCRIPT.in] [--hang-at N] [--exit-at N]

With --requests, each request must equal the recorded one (else it exits with status 3);
--hang-at N sleeps forever on the N-th request (1-based); --exit-at N exits before answering it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def blocks(text: str) -> list[str]:
    out, cur = [], []
    for line in text.splitlines():
        if line.strip():
            cur.append(line)
        elif cur:
            out.append("\n".join(cur))
            cur = []
    if cur:
        out.append("\n".join(cur))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("replies")
    ap.add_argument("--requests")
    ap.add_argument("--hang-at", type=int, default=0)
    ap.add_argument("--exit-at", type=int, default=0)
    args = ap.parse_args()
    replies = blocks(Path(args.replies).read_text(encoding="utf-8"))
    expected = (
        [
            json.loads(b, strict=False)
            for b in blocks(Path(args.requests).read_text(encoding="utf-8"))
        ]
        if args.requests
        else None
    )
    lines: list[str] = []
    served = 0
    for line in sys.stdin:
        if line.strip():
            lines.append(line)
            continue
        if not lines:
            continue
        request = json.loads("".join(lines), strict=False)
        lines = []
        served += 1
        if served == args.exit_at:
            return 1
        if served == args.hang_at:
            time.sleep(3600)
        if expected is not None and (served > len(expected) or request != expected[served - 1]):
            print(f"unexpected request {served}: {request}", file=sys.stderr)
            return 3
        if served > len(replies):
            return 4
        sys.stdout.write(replies[served - 1] + "\n\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
