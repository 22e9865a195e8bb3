"""Zeilberger's algorithm: ours against Maxima's (`load(zeilberger)`) on the bundled WZ suite.

    python benchmarks/wz_vs_maxima.py [--repeats R] [--timeout S]

For every identity of ``provers/suites/wz_identities.jsonl`` whose summand both can read, each
side looks for a recurrence (orders 1..3). Maxima runs as one ``maxima`` process per identity,
so its times include its start-up (about a tenth of a second here); ours run in this process,
so they do not. Both are medians of ``--repeats`` runs. Ours is timed twice: the recurrence
alone (what Maxima computes) and the whole checked proof (``prove_identity``). Prints the
identities each side solved and the medians side by side. Needs Debian's ``maxima`` and
``maxima-share``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import sympy as sp

from lemmata.provers.wz.identity import N, read_identities
from lemmata.provers.wz.prove import prove_identity
from lemmata.provers.wz.zeilberger import NotHypergeometric, zeilberger

SUITE = Path(__file__).resolve().parents[1] / "provers" / "suites" / "wz_identities.jsonl"


def maxima_syntax(expr: sp.Expr) -> str:
    text = sp.sstr(expr).replace("**", "^")
    return text


def run_maxima(summand: sp.Expr, timeout: float) -> tuple[bool, float]:
    """(found a recurrence, seconds including Maxima's start-up)."""
    program = (
        "load(zeilberger)$ display2d:false$ "
        f"r: Zeilberger({maxima_syntax(summand)}, k, n)$ "
        'if r = [] or not listp(r) then print("LEMMATA-NONE") else print("LEMMATA-FOUND")$'
    )
    started = time.perf_counter()
    try:
        out = subprocess.run(
            ["maxima", "--very-quiet", "--batch-string", program],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        text = out.stdout
    except subprocess.TimeoutExpired:
        text = ""
    return "LEMMATA-FOUND" in text and "LEMMATA-NONE" not in text.split("LEMMATA-FOUND")[
        -1
    ], time.perf_counter() - started


def run_maxima_in_session(summands: list[tuple[str, sp.Expr]], timeout: float) -> dict[str, float]:
    """Seconds of each Zeilberger call inside one Maxima session (no start-up)."""
    lines = ["load(zeilberger)$", "display2d:false$"]
    for name, summand in summands:
        lines.append(
            f"t0: elapsed_real_time()$ r: Zeilberger({maxima_syntax(summand)}, k, n)$ "
            f'print("LEMMATA-T", "{name}", elapsed_real_time() - t0)$'
        )
    out = subprocess.run(
        ["maxima", "--very-quiet", "--batch-string", " ".join(lines)],
        capture_output=True,
        text=True,
        timeout=timeout * len(summands),
    )
    times = {}
    for m in re.finditer(r"LEMMATA-T (\S+) ([0-9.eE+-]+)", out.stdout):
        times[m.group(1)] = float(m.group(2))
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    if shutil.which("maxima") is None:
        sys.exit("maxima is not installed: apt-get install maxima maxima-share")
    identities, _ = read_identities(SUITE)
    rows = []
    for ident in identities:
        summand = ident.summand.subs(ident.k, sp.Symbol("k")).subs(N, sp.Symbol("n"))
        if re.search(r"fibonacci|harmonic|2\*\*k \+ 1", str(summand)):
            continue  # neither side treats non-hypergeometric summands
        m_runs = [run_maxima(summand, args.timeout) for _ in range(args.repeats)]
        ours_rec, ours_proof, found = [], [], False
        for _ in range(args.repeats):
            start = time.perf_counter()
            try:
                found = zeilberger(ident.summand, N, ident.k, max_order=3) is not None
            except NotHypergeometric:
                found = False
            ours_rec.append(time.perf_counter() - start)
            start = time.perf_counter()
            verdict = prove_identity(ident).verdict
            ours_proof.append(time.perf_counter() - start)
        rows.append(
            (
                ident.id,
                m_runs[0][0],
                statistics.median(t for _, t in m_runs),
                found,
                statistics.median(ours_rec),
                verdict,
                statistics.median(ours_proof),
            )
        )
    in_session = run_maxima_in_session(
        [
            (i.id, i.summand.subs(i.k, sp.Symbol("k")).subs(N, sp.Symbol("n")))
            for i in identities
            if i.id in {r[0] for r in rows}
        ],
        args.timeout,
    )
    print(
        f"{'identity':28} {'maxima':>8} {'s':>7} {'in-sess':>8}   {'ours':>6} {'rec s':>7} {'proof s':>8}  verdict"
    )
    for ident_id, m_ok, m_s, o_ok, o_s, verdict, p_s in rows:
        inside = in_session.get(ident_id, float("nan"))
        print(
            f"{ident_id:28} {'found' if m_ok else '-':>8} {m_s:7.3f} {inside:8.3f}   {'found' if o_ok else '-':>6} "
            f"{o_s:7.3f} {p_s:8.3f}  {verdict}"
        )
    m_solved = {r[0] for r in rows if r[1]}
    o_solved = {r[0] for r in rows if r[3]}
    print()
    print(f"identities: {len(rows)} (medians of {args.repeats} runs each)")
    print(
        f"recurrence found: Maxima {len(m_solved)}, ours {len(o_solved)}; "
        f"Maxima only: {sorted(m_solved - o_solved) or 'none'}; ours only: {sorted(o_solved - m_solved) or 'none'}"
    )
    m_med = statistics.median(r[2] for r in rows)
    o_med = statistics.median(r[4] for r in rows)
    p_med = statistics.median(r[6] for r in rows)
    if in_session:
        print(
            f"Maxima inside one session (no start-up): median {statistics.median(in_session.values()):.3f} s"
        )
    print(
        f"median seconds per identity: Maxima {m_med:.3f} (with start-up), ours {o_med:.3f} (recurrence), "
        f"{p_med:.3f} (whole checked proof); Maxima/ours {m_med / o_med:.1f}x (recurrence), "
        f"{m_med / p_med:.1f}x (proof)"
    )


if __name__ == "__main__":
    main()
