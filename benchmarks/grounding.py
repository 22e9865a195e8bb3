"""GUI grounding accuracy offline: each anchor alone and fused (the ablation), and seconds per
query with OCR cached per image.

    python benchmarks/grounding.py [--data DIR] [--n 60] [--seed 1000] [--json]
    python benchmarks/grounding.py --calibrate [--seed 1] [--n 24]

Without --data, screens are generated (headless Chromium, ScreenSpot-Pro format) from --seed;
seeds 1000 and up were not used while the grounder was built (development used seeds 0-9).
Printed per configuration: accuracy on text targets, icon targets, negative instructions (a
correct abstention) and overall, by target size, and the median seconds per query once each
screenshot's OCR is cached (OCR itself is timed per image, separately). Configurations:
``ocr`` (text anchor alone), ``icons`` (icon anchor alone), ``fused`` (both, Consensus-SinglePeak,
crop-and-zoom) and ``fused-no-zoom``. Targets: text >= 0.9, icons >= 0.6, negatives >= 0.8,
<= 1 s per query at 1920 x 1080.

--calibrate grounds a development set once with no threshold and sweeps the abstention
threshold, printing accuracy at each value and the one that maximises the mean of the text,
icon and negative accuracies (the grounder's DEFAULT_THRESHOLD comes from this).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lemmata.gui.datasets import evaluate, load_annotations
from lemmata.gui.ground import Grounder


def _data(args: argparse.Namespace, tmp: str) -> Path:
    if args.data:
        return Path(args.data)
    from lemmata.gui.synthetic import generate

    out = Path(tmp) / "screens"
    started = time.monotonic()
    generate(
        out,
        n=args.n,
        seed=args.seed,
        progress=lambda k, n: print(f"  rendered {k}/{n}", end="\r", file=sys.stderr),
    )
    print(f"rendered {args.n} screens in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return out


def _calibrate(items: list[Any], grounder: Grounder) -> dict[str, Any]:
    rows = []
    for k, it in enumerate(items):
        g = grounder.ground(it.image, it.instruction, threshold=0.0)
        inside = (
            g.point is not None
            and it.bbox is not None
            and it.bbox[0] <= g.point[0] <= it.bbox[2]
            and it.bbox[1] <= g.point[1] <= it.bbox[3]
        )
        rows.append((it, g.score if g.point is not None else 0.0, inside))
        print(f"  grounded {k + 1}/{len(items)}", end="\r", file=sys.stderr)
    sweep = []
    for t in [x / 100 for x in range(30, 91, 5)]:
        acc: dict[str, list[bool]] = {"text": [], "icon": [], "negative": []}
        for it, score, inside in rows:
            if it.negative:
                acc["negative"].append(score < t)
            else:
                acc[it.ui_type].append(score >= t and inside)
        shares = {k: sum(v) / len(v) for k, v in acc.items() if v}
        sweep.append({"threshold": t, **shares, "mean": statistics.mean(shares.values())})
    best = max(sweep, key=lambda r: r["mean"])
    return {"sweep": sweep, "best": best}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", help="a ScreenSpot-Pro style folder (annotations.json, images/)")
    ap.add_argument("--format", default="screenspot-pro")
    ap.add_argument("--n", type=int, default=60, help="screens to generate")
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="grounding-bench-") as tmp:
        folder = _data(args, tmp)
        items = load_annotations(folder, args.format)
        text, icons = Grounder.offline_anchors()
        text.ocr.cache_dir = None  # time OCR for real, once per image, in this run
        text.ocr._cache_size = 10_000  # and keep every reading for the configurations below
        images = sorted({it.image for it in items})
        ocr_s = []
        fused = Grounder([text, icons])
        for k, path in enumerate(images):
            started = time.perf_counter()
            fused.screen(path).ocr(text.ocr)
            ocr_s.append(time.perf_counter() - started)
            print(f"  OCR {k + 1}/{len(images)}", end="\r", file=sys.stderr)
        if args.calibrate:
            result = _calibrate(items, fused)
            if args.json:
                print(json.dumps(result))
                return 0
            print(f"{'threshold':>9} {'text':>6} {'icon':>6} {'neg':>6} {'mean':>6}")
            for r in result["sweep"]:
                print(
                    f"{r['threshold']:>9.2f} {r.get('text', 0):>6.3f} {r.get('icon', 0):>6.3f} "
                    f"{r.get('negative', 0):>6.3f} {r['mean']:>6.3f}"
                )
            print(f"best threshold: {result['best']['threshold']:.2f}")
            return 0
        configs = {
            "ocr": Grounder([text]),
            "icons": Grounder([icons]),
            "fused": fused,
            "fused-no-zoom": Grounder([text, icons], zoom=False),
        }
        results: dict[str, Any] = {}
        for name, grounder in configs.items():
            times: list[float] = []

            def predict(it: Any, _g: Grounder = grounder, _t: list[float] = times) -> Any:
                started = time.perf_counter()
                out = _g.ground(it.image, it.instruction)
                _t.append(time.perf_counter() - started)
                return out

            res = evaluate(
                items,
                predict,
                progress=lambda k, n, _name=name: print(
                    f"  [{_name}] {k}/{n}", end="\r", file=sys.stderr
                ),
            )
            by_res: dict[str, list[float]] = {}
            for it, t in zip(items, times, strict=True):
                w = (it.img_size or (0, 0))[0]
                by_res.setdefault("1920x1080" if w == 1920 else f"{w}px wide", []).append(t)
            results[name] = {
                **res.to_dict(),
                "counts": res.counts,
                "seconds_per_query_median": statistics.median(times),
                "seconds_per_query_p95": sorted(times)[int(0.95 * (len(times) - 1))],
                "seconds_per_query_1920x1080_median": statistics.median(by_res["1920x1080"])
                if "1920x1080" in by_res
                else None,
            }
        summary = {
            "screens": len(images),
            "items": len(items),
            "ocr_seconds_per_image_median": statistics.median(ocr_s),
            "configs": results,
        }
    if args.json:
        print(json.dumps(summary))
        return 0
    print(
        f"{summary['screens']} screens, {summary['items']} instructions; OCR "
        f"{summary['ocr_seconds_per_image_median']:.2f} s per image (median, two passes)"
    )
    names = list(results)
    print(f"{'':20}" + "".join(f"{n:>15}" for n in names))
    rows = ["text", "icon", "negative", "overall"]
    sizes = sorted(
        {s for r in results.values() for s in r["by_size"]},
        key=["tiny", "small", "medium", "large"].index,
    )
    for row in rows:
        vals = [results[n][row] for n in names]
        print(f"{row:20}" + "".join(f"{'-' if v is None else f'{v:.3f}':>15}" for v in vals))
    for s in sizes:
        print(
            f"  size {s:14}" + "".join(f"{results[n]['by_size'].get(s, 0):>15.3f}" for n in names)
        )
    for key in (
        "seconds_per_query_median",
        "seconds_per_query_p95",
        "seconds_per_query_1920x1080_median",
    ):
        vals = [results[n][key] for n in names]
        print(
            f"{key.replace('seconds_per_query', 's/query'):20}"
            + "".join(f"{'-' if v is None else f'{v:.3f}':>15}" for v in vals)
        )
    c = results["fused"]["counts"]
    print(f"items: {c['text']} text, {c['icon']} icon, {c['negative']} negative")
    return 0


if __name__ == "__main__":
    sys.exit(main())
