"""Zeilberger's algorithm: ours against Maxima's (`load(zeilberger)`) on the bundled WZ suite.

    python benchmarks/wz_vs_maxima.py [--repeats R] [--timeout S] [--baseline DIR]

For every identity of ``provers/suites/wz_identities.jsonl`` whose summand both can read, each
side looks for a recurrence (orders 1..3). Maxima is timed two ways: one ``maxima`` process per
identity (its start-up, about a tenth of a second, included), and all identities in one Maxima
session (start-up paid once; each identity's ``Zeilberger`` call timed inside the session,
``--repeats`` calls in a loop divided by the count, since Maxima's clock ticks in 10 ms).
Ours runs in this process; its own caches (term ratios, polynomial rings) are emptied before
every timed call, so no identity profits from an earlier run of itself beyond SymPy's
internal cache. Per-process figures are medians of ``--repeats`` runs. Ours is timed twice:
the recurrence alone (what Maxima computes) and the whole checked proof (``prove_identity``).
Prints the identities each side solved, then the median and p90 seconds per identity for
ours, Maxima per process and Maxima in one session. ``--baseline DIR`` (an earlier copy of
``provers/wz``) times that copy's Zeilberger and proof too, interleaved with ours in the same
run, for before/after figures under the same load. Needs Debian's ``maxima`` and
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
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sympy as sp

from lemmata.provers.wz._ring import ring_for
from lemmata.provers.wz.identity import N, read_identities
from lemmata.provers.wz.prove import prove_identity
from lemmata.provers.wz.zeilberger import NotHypergeometric, shift_ratio, zeilberger

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


def run_maxima_in_session(
    summands: list[tuple[str, sp.Expr]], timeout: float, repeats: int
) -> dict[str, tuple[bool, float]]:
    """(found a recurrence, seconds per ``Zeilberger`` call) of each identity, all inside one
    Maxima session: start-up paid once, ``repeats`` calls per identity in a loop."""
    lines = ["load(zeilberger)$", "display2d:false$"]
    for name, summand in summands:
        lines.append(
            f"t0: elapsed_real_time()$ for i: 1 thru {repeats} do "
            f"r: Zeilberger({maxima_syntax(summand)}, k, n)$ "
            f"dt: (elapsed_real_time() - t0) / {repeats}$ "
            f'print("LEMMATA-T", "{name}", if r = [] or not listp(r) then 0 else 1, dt)$'
        )
    out = subprocess.run(
        ["maxima", "--very-quiet", "--batch-string", " ".join(lines)],
        capture_output=True,
        text=True,
        timeout=timeout * len(summands),
    )
    times = {}
    for m in re.finditer(r"LEMMATA-T (\S+) ([01]) ([0-9.eE+-]+)", out.stdout):
        times[m.group(1)] = (m.group(2) == "1", float(m.group(3)))
    return times


def load_baseline(folder: Path) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``zeilberger`` and ``prove_identity`` of an earlier copy of ``provers/wz`` (its own
    modules, not this checkout's), for before/after figures measured in one run."""
    redirect = [
        ("from lemmata.provers.wz import _ring", "import wz_baseline__ring as _ring"),
        ("lemmata.provers.wz._ring", "wz_baseline__ring"),
        ("lemmata.provers.wz.zeilberger", "wz_baseline_zeilberger"),
        ("lemmata.provers.wz.support", "wz_baseline_support"),
    ]
    modules = {}
    for name in ("_ring", "support", "zeilberger", "prove"):
        path = folder / f"{name}.py"
        if not path.exists():
            continue
        source = path.read_text(encoding="utf-8")
        for old, new in redirect:
            source = source.replace(old, new)
        module = types.ModuleType(f"wz_baseline_{name}")
        module.__file__ = str(path)
        sys.modules[module.__name__] = module
        exec(compile(source, str(path), "exec"), module.__dict__)
        modules[name] = module
    if "zeilberger" not in modules or "prove" not in modules:
        sys.exit(f"--baseline {folder}: expected zeilberger.py and prove.py there")
    return modules["zeilberger"].zeilberger, modules["prove"].prove_identity


def _clear_caches() -> None:
    shift_ratio.cache_clear()
    ring_for.cache_clear()


def _time_baseline(
    baseline: tuple[Callable[..., Any], Callable[..., Any]], ident: Any, repeats: int
) -> tuple[bool, float, float]:
    """(found a recurrence, median seconds for it, median seconds of the proof)."""
    zeil, prove = baseline
    rec, proof, found = [], [], False
    for _ in range(repeats):
        start = time.perf_counter()
        try:
            found = zeil(ident.summand, N, ident.k, max_order=3) is not None
        except ValueError:  # the baseline's NotHypergeometric
            found = False
        rec.append(time.perf_counter() - start)
        start = time.perf_counter()
        prove(ident)
        proof.append(time.perf_counter() - start)
    return found, statistics.median(rec), statistics.median(proof)


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--baseline", type=Path, help="an earlier copy of provers/wz to time too")
    args = ap.parse_args()
    baseline = load_baseline(args.baseline) if args.baseline else None
    base_rows: dict[str, tuple[bool, float, float]] = {}
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
            _clear_caches()
            start = time.perf_counter()
            try:
                found = zeilberger(ident.summand, N, ident.k, max_order=3) is not None
            except NotHypergeometric:
                found = False
            ours_rec.append(time.perf_counter() - start)
            _clear_caches()
            start = time.perf_counter()
            verdict = prove_identity(ident).verdict
            ours_proof.append(time.perf_counter() - start)
        if baseline is not None:
            base_rows[ident.id] = _time_baseline(baseline, ident, args.repeats)
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
        args.repeats,
    )
    print(
        f"{'identity':34} {'maxima':>6} {'proc s':>7} {'sess s':>8}   {'ours':>5} {'rec s':>7} "
        f"{'proof s':>8}  verdict"
    )
    for ident_id, m_ok, m_s, o_ok, o_s, verdict, p_s in rows:
        inside = in_session.get(ident_id, (False, float("nan")))[1]
        print(
            f"{ident_id:34} {'found' if m_ok else '-':>6} {m_s:7.3f} {inside:8.4f}   "
            f"{'found' if o_ok else '-':>5} {o_s:7.4f} {p_s:8.3f}  {verdict}"
        )
    m_solved = {r[0] for r in rows if r[1]}
    s_solved = {name for name, (ok, _) in in_session.items() if ok}
    o_solved = {r[0] for r in rows if r[3]}
    print()
    print(f"identities: {len(rows)} (--repeats {args.repeats})")
    print(
        f"recurrence found: ours {len(o_solved)}, Maxima per process {len(m_solved)}, "
        f"Maxima in one session {len(s_solved)}; "
        f"Maxima only: {sorted((m_solved | s_solved) - o_solved) or 'none'}; "
        f"ours only: {sorted(o_solved - m_solved) or 'none'}"
    )
    columns = [
        ("ours, recurrence", [r[4] for r in rows]),
        ("ours, whole checked proof", [r[6] for r in rows]),
        ("Maxima, one process each", [r[2] for r in rows]),
        ("Maxima, one session", [t for _, t in in_session.values()]),
    ]
    if base_rows:
        b_solved = {name for name, (ok, _, _) in base_rows.items() if ok}
        print(f"baseline ({args.baseline}): recurrence found {len(b_solved)}")
        columns += [
            ("baseline, recurrence", [r for _, r, _ in base_rows.values()]),
            ("baseline, whole proof", [p for _, _, p in base_rows.values()]),
        ]
    print("seconds per identity:")
    for label, values in columns:
        if values:
            print(f"  {label:28} median {statistics.median(values):.4f}  p90 {_p90(values):.4f}")
    if in_session:
        ours = statistics.median(r[4] for r in rows)
        theirs = statistics.median(t for _, t in in_session.values())
        print(
            f"ours/Maxima in session (medians, recurrence): {ours / theirs:.2f}x "
            f"({'ours faster or equal' if ours <= theirs else 'Maxima faster'})"
        )


if __name__ == "__main__":
    main()
