"""Rebuild the icon library and the icon encoder's package data from the registries.

    python scripts/build_icon_library.py [--cache DIR] [--train STEPS | --prototypes]
                                         [--out gui/data/icon_encoder.pt]

Fetches every set of ``lemmata.gui.icon_library.SETS`` (npm: ``npm pack``; Font Awesome from the
installed ``fontawesomefree``) into ``--cache`` (outside the repository), records each set's
licence, rasterises the glyphs, and writes the compact package data: ``gui/data/icon_sets.json``
(sets, versions, licences, which are held out, glyph and concept counts) and
``gui/data/ICON_LICENSES.md`` (the attributions). With ``--train`` it also trains the encoder on
the sets not held out and writes the weights (``--out``), printing the zero-shot accuracy on seen
and held-out sets. With ``--prototypes`` it only recomputes the concept prototypes that the
weights carry (the mean embedding of each functional concept's glyphs in the seen sets), which
is all that concepts newly added to ``gui/data/icon_concepts.json`` need.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from lemmata.gui.icon_library import HELD_OUT, SETS, build_library

DATA = Path(__file__).resolve().parents[1] / "gui" / "data"


def write_attributions(
    licences: dict[str, dict[str, str]], counts: Counter[str], out: Path
) -> None:
    """``icon_sets.json`` and ``ICON_LICENSES.md`` under ``out``."""
    rows = {
        s: {**lic, "glyphs": counts[s], "held_out": s in HELD_OUT}
        for s, lic in sorted(licences.items())
    }
    (out / "icon_sets.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = [
        "# Icon sets used by the icon encoder",
        "",
        "The icon encoder's weights (`icon_encoder.pt`) were trained on rasterised glyphs of the sets",
        "below that are not held out; held-out sets were used only to evaluate it. No glyph is",
        "shipped: `scripts/build_icon_library.py` fetches the sets from their registries.",
        "",
        "| set | package | version | licence | glyphs | use | home |",
        "|---|---|---|---|---|---|---|",
    ]
    for s, r in rows.items():
        use = "evaluation only (held out)" if r["held_out"] else "training"
        lines.append(
            f"| {s} | {r['package']} ({r['registry']}) | {r['version']} | {r['license']} | "
            f"{r['glyphs']} | {use} | {r['url']} |"
        )
    lines += ["", "Notices, as each package states them:", ""]
    lines += [f"- {s}: {r['notice']}" for s, r in rows.items() if r["notice"]]
    (out / "ICON_LICENSES.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cache", type=Path, default=None, help="default: DATA_DIR/icon-library")
    ap.add_argument("--train", type=int, default=0, help="train the encoder for this many steps")
    ap.add_argument(
        "--prototypes",
        action="store_true",
        help="recompute the prototypes of the weights at --out from the library (after concepts "
        "were added to data/icon_concepts.json), without training",
    )
    ap.add_argument("--out", type=Path, default=DATA / "icon_encoder.pt")
    ap.add_argument("--data", type=Path, default=DATA, help="where the package data goes")
    args = ap.parse_args(argv)
    from lemmata.settings import Settings

    settings = Settings.load()
    cache = args.cache or settings.data_dir / "icon-library"
    lib = build_library(cache, tuple(SETS), progress=lambda m: print(m, file=sys.stderr))
    write_attributions(lib.licences, Counter(lib.sets), args.data)
    print(f"{len(lib.sets)} glyphs of {len(lib.licences)} sets; attributions in {args.data}")
    if args.prototypes and not args.train:
        from lemmata.gui.icon_model import load_encoder
        from lemmata.gui.icon_train import refresh_prototypes

        encoder = load_encoder(args.out)
        if "text_concepts" not in encoder.meta and encoder.prototypes is not None:
            # the concepts it had prototypes for are those it was trained on with their texts
            encoder.meta["text_concepts"] = list(encoder.prototypes[0])
        encoder = refresh_prototypes(encoder, lib)
        encoder.meta["prototype_concepts"] = len(encoder.prototypes[0]) if encoder.prototypes else 0
        encoder.save(args.out)
        print(f"{encoder.meta['prototype_concepts']} concept prototypes written to {args.out}")
    if args.train:
        from lemmata.embeddings import get_embedder
        from lemmata.gui.icon_model import TrainConfig
        from lemmata.gui.icon_train import train_icons

        report = train_icons(
            cache,
            args.out,
            embedder=get_embedder(settings),
            library=lib,
            config=TrainConfig(steps=args.train),
            progress=lambda m: print(m, file=sys.stderr),
        )
        report.pop("licences", None)
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
