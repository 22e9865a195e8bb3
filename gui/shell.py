"""The ``ground`` command in ``lemmata shell``: ``ground IMAGE INSTRUCTION [--heatmap OUT]``.

It grounds with the offline anchors (OCR text and icons), keeping one grounder for the
session so that a second instruction on the same screenshot costs no OCR.
"""

from __future__ import annotations

import shlex
from typing import Any

from lemmata.commands import CommandContext, CommandParser, ShellCommand
from lemmata.errors import UsageError

__all__ = ["COMMANDS"]

_GROUNDERS: dict[int, Any] = {}


def _ground(ctx: CommandContext, args: str) -> None:
    from lemmata.gui.ground import Grounder

    p = CommandParser(prog="ground", add_help=False)
    p.add_argument("image")
    p.add_argument("instruction", nargs="+")
    p.add_argument("--heatmap", default=None)
    try:
        words = shlex.split(args)
    except ValueError as exc:
        raise UsageError(f"ground: {exc}") from None
    ns = p.parse_args(words)
    key = id(ctx.settings)
    if key not in _GROUNDERS:
        _GROUNDERS[key] = Grounder(settings=ctx.settings)
    g = _GROUNDERS[key].ground(ns.image, " ".join(ns.instruction))
    if g.abstained:
        ctx.console.print(
            f"abstained (score {g.score:.2f}): nothing on the screen matches", markup=False
        )
    else:
        x, y = g.point or (0.0, 0.0)
        ctx.console.print(f"click ({x:.0f}, {y:.0f}), score {g.score:.2f}", markup=False)
    for name, a in g.anchors.items():
        ctx.console.print(f"  {name:10} {a['score']:.2f}  {a['label'] or ''}", markup=False)
    if ns.heatmap:
        from lemmata.gui.draw import draw_grounding

        draw_grounding(ns.image, g).save(ns.heatmap)
        ctx.console.print(f"heatmap: {ns.heatmap}", markup=False)


COMMANDS = [
    ShellCommand(
        "ground",
        "find where to click on a screenshot for an instruction (or abstain)",
        _ground,
        usage='ground IMAGE "click Submit" [--heatmap OUT.png]',
    ),
]
