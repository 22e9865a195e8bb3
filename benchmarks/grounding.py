"""GUI grounding accuracy offline: each anchor alone and fused (the ablation), and seconds per
query with OCR cached per image.

    python benchmarks/grounding.py [--data DIR] [--n 60] [--seed 1000] [--splits ...]
                                   [--configs fused-old,fused-new] [--weights W] [--json]
    python benchmarks/grounding.py --calibrate [--seed 1] [--n 24] --splits fontawesome,seen

Without --data, screens are generated (headless Chromium, ScreenSpot-Pro format) from --seed;
seeds 1000 and up were not used while the grounder was built (development used seeds 0-9).
Printed per configuration: accuracy on text targets, icon targets, negative instructions (a
correct abstention) and overall, by target size, and the median seconds per query once each
screenshot's OCR is cached (OCR itself is timed per image, separately). Configurations
(``--configs`` picks some, on a busy machine): ``ocr`` (text anchor alone), ``icons-old`` (the
Font Awesome shape match alone), ``icons-new`` (the icon encoder alone), ``fused-old`` and
``fused-new`` (OCR text with either, Consensus-SinglePeak, crop-and-zoom). Splits: screens whose
icons are Font Awesome glyphs, from the seen sets (trained on), or from the unseen sets
(:data:`~lemmata.gui.icon_library.HELD_OUT`, never trained or tuned on), and ``realapp``: real
web applications (TensorBoard, Netron, Bokeh, Datasette, Material for MkDocs, Streamlit; ``pip install
'lemmata[realapps]'``) started on 127.0.0.1 and captured in Chromium at 1920x1080 and 1366x768 by
:mod:`lemmata.gui.realapps`, with the hand-written functional instructions of
``gui/data/realapps.toml``. Its held-out applications (``held_out`` there: mkdocs-material, chosen
before the grounder saw any real-application screen, and streamlit, added later with its items
written before the grounder ran on it) are reported apart, each as totals only; the development
applications' misses of fused-new are listed.

    python benchmarks/grounding.py --splits realapp --configs fused-old [--realapp-dir DIR]

A --realapp-dir that holds a harvest is read as it is; applications of the data file that it
lacks are harvested and added to it first (so one harvest is reused as applications are added).

--calibrate grounds a development set once with no threshold and sweeps the abstention
threshold, printing accuracy at each value and the one that maximises the mean of the text,
icon and negative accuracies, per split and over the splits together (the grounder's
DEFAULT_THRESHOLD comes from the latter); it refuses the unseen split.
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
from lemmata.gui.icon_library import HELD_OUT

SEEN_SETS = ("tabler", "mdi", "phosphor", "bootstrap")  # trained on, besides Font Awesome
SPLITS: dict[str, Any] = {
    "fontawesome": None,
    "seen": SEEN_SETS,
    "unseen": HELD_OUT,
    "realapp": "realapp",  # real applications' screens (lemmata.gui.realapps), not generated
}
CONFIGS = ("ocr", "icons-old", "icons-new", "fused-old", "fused-new")


def _realapp_data(args: argparse.Namespace, tmp: str) -> Path:
    """The real applications' screens: harvested now (each application started on 127.0.0.1,
    its pages captured in Chromium), or read from --realapp-dir when it holds a harvest."""
    from lemmata.gui.realapps import harvest, load_data

    data = load_data()
    out = Path(args.realapp_dir or Path(tmp) / "screens-realapp")
    only = None
    if (out / "annotations.json").is_file():
        have = {row["app"] for row in json.loads((out / "annotations.json").read_text())}
        only = [p.app for p in data.pages if p.app not in have]
        if not only:
            return out
    started = time.monotonic()
    into = out if only is None else Path(tmp) / "screens-realapp-added"
    report = harvest(
        data,
        into,
        only=only,
        progress=lambda tag: print(f"  [realapp] captured {tag}", end="\r", file=sys.stderr),
    )
    if only is not None:
        _merge_harvest(into, out)
    print(
        f"[realapp] captured {report.screens} screens ({report.items} instructions) in "
        f"{time.monotonic() - started:.1f} s; held out: {data.held_out}",
        file=sys.stderr,
    )
    # the held-out applications' instructions are never shown, only counted
    held = [u for u in report.unresolved if u.startswith(tuple(f"{a}-" for a in data.held_out))]
    for line in report.unresolved:
        if line not in held:
            print(f"  [realapp] target not on the screen, left out: {line}", file=sys.stderr)
    if held:
        print(
            f"  [realapp] {len(held)} held-out instruction(s) left out: target not on the screen",
            file=sys.stderr,
        )
    return out


def _merge_harvest(added: Path, into: Path) -> None:
    """Add the harvest in ``added`` (other applications) to the one in ``into``."""
    import shutil

    for name in ("annotations.json", "elements.json"):
        old = json.loads((into / name).read_text()) if (into / name).is_file() else None
        new = json.loads((added / name).read_text())
        if old is None:
            merged = new
        elif isinstance(old, list):
            merged = old + new
        else:
            merged = {**old, **new}
        (into / name).write_text(json.dumps(merged, indent=1))
    for png in (added / "images").glob("*.png"):
        shutil.copy(png, into / "images" / png.name)


def _data(args: argparse.Namespace, tmp: str, split: str) -> Path:
    if args.data:
        return Path(args.data)
    if split == "realapp":
        return _realapp_data(args, tmp)
    from lemmata.gui.synthetic import generate
    from lemmata.settings import Settings

    out = Path(tmp) / f"screens-{split}"
    started = time.monotonic()
    generate(
        out,
        n=args.n,
        seed=args.seed,
        icon_sets=SPLITS[split],
        cache_dir=Settings.load().data_dir / "icon-library",
        progress=lambda k, n: print(f"  [{split}] rendered {k}/{n}", end="\r", file=sys.stderr),
    )
    print(
        f"[{split}] rendered {args.n} screens in {time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    return out


THRESHOLDS = [x / 100 for x in range(20, 91, 5)]


def _sweep(rows: list[tuple[Any, float, bool]]) -> dict[str, Any]:
    """Accuracy of text, icon and negative items at each threshold, and the best threshold (the
    highest mean of the three)."""
    sweep = []
    for t in THRESHOLDS:
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
    return {**_sweep(rows), "rows": rows}


def _run_split(
    args: argparse.Namespace, tmp: str, split: str, anchors: dict[str, Any]
) -> dict[str, Any]:
    folder = _data(args, tmp, split)
    items = load_annotations(folder, args.format)
    if split != "realapp":
        return _run_items(args, split, items, anchors)
    if args.calibrate:
        raise SystemExit("--calibrate does not read the real applications' screens")
    from lemmata.gui.realapps import load_data

    dev = [it for it in items if not it.extra.get("held_out")]
    if args.apps:
        dev = [it for it in dev if it.extra.get("app") in args.apps]
    out = {"development": _run_items(args, f"{split}-dev", dev, anchors)}
    if args.development_only:
        return out
    for app in load_data().held_out:
        sealed = [it for it in items if it.extra.get("held_out") and it.extra.get("app") == app]
        if not sealed:
            continue
        closed = _run_items(args, f"{split}-held-out", sealed, anchors)
        for res in closed["configs"].values():
            res.pop("misses")  # a held-out application is read as totals only
            res.pop("rows")
        out[f"held out ({app})"] = closed
    return out


def _run_items(
    args: argparse.Namespace, split: str, items: list[Any], anchors: dict[str, Any]
) -> dict[str, Any]:
    text, old, new = anchors["text"], anchors["old"], anchors["new"]
    images = sorted({it.image for it in items})
    ocr_s = []
    fused = Grounder([text, new])
    for k, path in enumerate(images):
        started = time.perf_counter()
        fused.screen(path).ocr(text.ocr)
        ocr_s.append(time.perf_counter() - started)
        print(f"  [{split}] OCR {k + 1}/{len(images)}", end="\r", file=sys.stderr)
    if args.calibrate:
        return {"calibration": _calibrate(items, fused)}
    configs = {
        "ocr": Grounder([text]),
        "icons-old": Grounder([old]),
        "icons-new": Grounder([new]),
        "fused-old": Grounder([text, old]),
        "fused-new": fused,
    }
    configs = {k: v for k, v in configs.items() if k in args.configs}
    results: dict[str, Any] = {}
    for name, grounder in configs.items():
        times: list[float] = []

        def predict(it: Any, _g: Grounder = grounder, _t: list[float] = times) -> Any:
            started = time.perf_counter()
            out = _g.ground(it.image, it.instruction)
            _t.append(time.perf_counter() - started)
            return out

        def shown(k: int, n: int, _name: str = f"{split}/{name}") -> None:
            print(f"  [{_name}] {k}/{n}", end="\r", file=sys.stderr)

        res = evaluate(items, predict, progress=shown)
        for row, it in zip(res.rows, items, strict=True):
            row.update({k: it.extra[k] for k in ("app", "page", "target") if k in it.extra})
        big = [t for it, t in zip(items, times, strict=True) if (it.img_size or (0, 0))[0] == 1920]
        results[name] = {
            **res.to_dict(),
            "counts": res.counts,
            "seconds_per_query_median": statistics.median(times),
            "seconds_per_query_p95": sorted(times)[int(0.95 * (len(times) - 1))],
            "seconds_per_query_1920x1080_median": statistics.median(big) if big else None,
            "misses": [r for r in res.rows if not r["correct"]],
            "rows": res.rows,
        }
    return {
        "screens": len(images),
        "items": len(items),
        "ocr_seconds_per_image_median": statistics.median(ocr_s),
        "configs": results,
    }


def _print_split(split: str, summary: dict[str, Any]) -> None:
    results = summary["configs"]
    print(
        f"\n[{split}] {summary['screens']} screens, {summary['items']} instructions; OCR "
        f"{summary['ocr_seconds_per_image_median']:.2f} s per image (median)"
    )
    names = list(results)
    print(f"{'':20}" + "".join(f"{n:>12}" for n in names))
    for row in ("text", "icon", "negative", "overall"):
        vals = [results[n][row] for n in names]
        print(f"{row:20}" + "".join(f"{'-' if v is None else f'{v:.3f}':>12}" for v in vals))
    sizes = sorted(
        {s for r in results.values() for s in r["by_size"]},
        key=["tiny", "small", "medium", "large"].index,
    )
    for s in sizes:
        print(
            f"  size {s:14}" + "".join(f"{results[n]['by_size'].get(s, 0):>12.3f}" for n in names)
        )
    for key in (
        "seconds_per_query_median",
        "seconds_per_query_p95",
        "seconds_per_query_1920x1080_median",
    ):
        vals = [results[n][key] for n in names]
        print(
            f"{key.replace('seconds_per_query', 's/query'):20}"
            + "".join(f"{'-' if v is None else f'{v:.3f}':>12}" for v in vals)
        )
    c = results["fused-new"]["counts"]
    print(
        f"items: {c.get('text', 0)} text, {c.get('icon', 0)} icon, {c.get('negative', 0)} negative"
    )


def _print_by_app(summary: dict[str, Any]) -> None:
    """fused-new's right / all by development application and kind of target."""
    rows = summary["configs"]["fused-new"].get("rows", [])
    apps = sorted({r.get("app", "?") for r in rows})
    print("fused-new by development application (right / all):")
    for app in apps:
        cells = []
        for kind in ("text", "icon", "negative"):
            mine = [
                r
                for r in rows
                if r.get("app", "?") == app
                and ("negative" if r["negative"] else r["ui_type"]) == kind
            ]
            right = sum(r["correct"] for r in mine)
            cells.append(f"{kind} {right}/{len(mine)}" if mine else f"{kind} -")
        print(f"  {app:18}" + "  ".join(cells))


def _print_misses(summary: dict[str, Any]) -> None:
    for name, res in summary["configs"].items():
        if name != "fused-new":
            continue
        print(f"misses of {name} on the development applications:")
        for r in res["misses"]:
            kind = "negative" if r["negative"] else r["ui_type"]
            got = "abstained" if r["abstained"] else f"point {r['point']}"
            print(
                f"  {r.get('app', '?')}/{r.get('page', '?')} {kind:8} {r['instruction']!r} "
                f"(target {r.get('target')!r}): {got}, score {r['score']:.2f} [{r['id']}]"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", help="a ScreenSpot-Pro style folder (annotations.json, images/)")
    ap.add_argument("--format", default="screenspot-pro")
    ap.add_argument("--n", type=int, default=60, help="screens to generate per split")
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument(
        "--splits",
        default="fontawesome,seen,unseen",
        help="splits: fontawesome, seen, unseen (generated screens) and realapp (real "
        "applications, `pip install 'lemmata[realapps]'`), comma-separated",
    )
    ap.add_argument(
        "--realapp-dir",
        help="realapp: a folder to harvest the screens into, or to read them from when it "
        "already holds annotations.json (default: a temporary folder)",
    )
    ap.add_argument("--weights", help="icon encoder weights (default: the shipped ones)")
    ap.add_argument(
        "--configs",
        default=",".join(CONFIGS),
        help="configurations to run (comma-separated; fused-new always runs), default: all",
    )
    ap.add_argument(
        "--development-only",
        action="store_true",
        help="realapp: ground only the development applications (while iterating: the held-out "
        "ones are run once per final candidate)",
    )
    ap.add_argument(
        "--apps",
        help="realapp: the development applications to ground (comma-separated; default: all)",
    )
    ap.add_argument(
        "--ocr-cache",
        help="keep each screen's OCR reading in this folder and reuse it in later runs (while "
        "iterating; the OCR seconds printed are then those of reading the cache)",
    )
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    splits = [s.strip() for s in args.splits.split(",") if s.strip()]
    args.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    args.apps = [a.strip() for a in args.apps.split(",") if a.strip()] if args.apps else None
    unknown = sorted(set(args.configs) - set(CONFIGS))
    if unknown:
        ap.error(f"--configs: unknown {unknown}; choose among {', '.join(CONFIGS)}")
    args.configs.append("fused-new")
    bad = [s for s in splits if s not in SPLITS]
    if bad or not splits:
        ap.error(f"--splits: unknown {bad}; choose among {', '.join(SPLITS)}")
    if args.data:
        splits = ["data"]
        SPLITS["data"] = None
    if args.calibrate and "unseen" in splits:
        ap.error("--calibrate never looks at the unseen sets: they are the held-out evaluation")
    harvested = args.realapp_dir and (Path(args.realapp_dir) / "annotations.json").is_file()
    if "realapp" in splits and not args.data and not harvested:
        from lemmata.gui.realapps import APPS, INSTALL

        missing = sorted({m for app in APPS.values() for m in app.missing()})
        if missing:
            print(
                f"the realapp split needs the real applications ({', '.join(missing)} missing): "
                f"run `{INSTALL}`",
                file=sys.stderr,
            )
            return 2
    text, old = Grounder.offline_anchors(icons="glyphs")
    _, new = Grounder.offline_anchors(icons="encoder", weights=args.weights)
    if getattr(new, "inactive", None):
        print(f"icon encoder inactive: {new.inactive}", file=sys.stderr)
    new.ocr = text.ocr
    # time OCR for real, once per image, in this run (unless --ocr-cache asks to reuse readings)
    text.ocr.cache_dir = Path(args.ocr_cache) if args.ocr_cache else None
    text.ocr._cache_size = 10_000  # and keep every reading for the configurations below
    anchors = {"text": text, "old": old, "new": new}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="grounding-bench-") as tmp:
        for split in splits:
            res = _run_split(args, tmp, split, anchors)
            if split == "realapp" and not args.data:
                for part, summary in res.items():
                    out[f"realapp {part}"] = summary
            else:
                out[split] = res
    if args.calibrate:
        if len(out) > 1:  # the splits together: one threshold serves every screen
            every = [r for res in out.values() for r in res["calibration"]["rows"]]
            out["all"] = {"calibration": _sweep(every)}
        for res in out.values():
            res["calibration"].pop("rows", None)
    if args.json:
        print(json.dumps(out))
        return 0
    if args.calibrate:
        for split, res in out.items():
            result = res["calibration"]
            print(f"[{split}]")
            print(f"{'threshold':>9} {'text':>6} {'icon':>6} {'neg':>6} {'mean':>6}")
            for r in result["sweep"]:
                print(
                    f"{r['threshold']:>9.2f} {r.get('text', 0):>6.3f} {r.get('icon', 0):>6.3f} "
                    f"{r.get('negative', 0):>6.3f} {r['mean']:>6.3f}"
                )
            print(f"best threshold: {result['best']['threshold']:.2f}")
        return 0
    for split, summary in out.items():
        _print_split(split, summary)
        if split == "realapp development":  # held-out applications are read as totals only
            _print_by_app(summary)
            _print_misses(summary)
    print(
        "\nsummary (fused = OCR text + icon anchor; old = Font Awesome shape match, new = icon encoder)"
    )
    shown = [n for n in ("fused-old", "fused-new", "icons-old", "icons-new") if n in args.configs]
    print(f"{'split':36}{'row':10}" + "".join(f"{n:>11}" for n in shown))
    for split, summary in out.items():
        r = summary["configs"]
        for row in ("text", "icon", "negative"):
            vals = [r[n][row] for n in shown]
            print(
                f"{split:36}{row:10}"
                + "".join(f"{'-' if v is None else f'{v:.3f}':>11}" for v in vals)
            )
        vals = [r[n]["seconds_per_query_median"] for n in shown]
        print(
            f"{split:36}{'s/q med':10}"
            + "".join(f"{'-' if v is None else f'{v:.3f}':>11}" for v in vals)
        )
        vals = [r[n]["seconds_per_query_1920x1080_median"] for n in shown]
        print(
            f"{split:36}{'s/q 1080p':10}"
            + "".join(f"{'-' if v is None else f'{v:.3f}':>11}" for v in vals)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
