"""A small CNN that maps an icon crop into the text embedding space, trained contrastively.

The encoder reads an icon's ink (distance from the crop's background, so dark-on-light and
light-on-dark alike), cut to the ink and scaled to 32 x 32, and returns a unit vector in the
space of our MiniLM text embeddings (:mod:`lemmata.embeddings`), passed through a small learned
adapter. A functional instruction ("open the settings") is embedded by MiniLM and scored against
every icon crop on a screen: zero-shot, for icons of any set.

Training (:func:`train`) draws concepts of the icon library (:mod:`~lemmata.gui.icon_library`),
two glyphs of each (from different sets and styles where the concept has them), and degrades
each view as screens do: 10 to 40 px before scaling (anti-aliasing), thicker or thinner
strokes, gamma, blur, noise and JPEG-like blocking. Two InfoNCE losses: image to concept text
and view to view (the same concept in two sets lands close). The run ends at ``steps`` or at
``time_limit_s`` (25 minutes by default), whichever comes first, with the learning rate annealed
either way; one thread, since on a shared 2-core machine two threads stalled each other (a step
took 5x longer). The weights (float16, under a megabyte) ship as ``data/icon_encoder.pt``.

Errors: a missing or damaged weights file raises :class:`IconModelError` naming the file and
how to rebuild it; the icon anchor catches it and says it is inactive.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lemmata.errors import LemmataError

if TYPE_CHECKING:
    import torch

    from lemmata.gui.icon_library import Library

__all__ = [
    "INPUT",
    "WEIGHTS",
    "IconEncoder",
    "IconModelError",
    "TrainConfig",
    "augment",
    "ink_square",
    "load_encoder",
    "prepare_crops",
    "toolbar_views",
    "train",
]

INPUT = 32
WEIGHTS = Path(__file__).parent / "data" / "icon_encoder.pt"
FORMAT = 1


class IconModelError(LemmataError):
    """The icon encoder's weights are missing, damaged or of another format."""

    code = "icon_model"


def _net(dim: int = 384, width: int = 16) -> Any:
    import torch
    from torch import nn

    def conv(cin: int, cout: int) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            w = width
            # one convolution at full size (the cost is there), more at the smaller ones
            self.features = nn.Sequential(
                *conv(1, w),
                nn.MaxPool2d(2),
                *conv(w, 2 * w),
                *conv(2 * w, 2 * w),
                nn.MaxPool2d(2),
                *conv(2 * w, 4 * w),
                *conv(4 * w, 4 * w),
                nn.MaxPool2d(2),
                *conv(4 * w, 8 * w),
            )
            self.head = nn.Linear(16 * w, dim)
            self.adapter = nn.Linear(dim, dim)  # text side: MiniLM vector -> shared space
            nn.init.zeros_(self.adapter.weight)
            nn.init.zeros_(self.adapter.bias)
            self.logit_scale = nn.Parameter(torch.tensor(math.log(20.0)))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            f = self.features(x)
            pooled = torch.cat([f.mean((2, 3)), f.amax((2, 3))], 1)
            return nn.functional.normalize(self.head(pooled), dim=1)

        def text(self, t: torch.Tensor) -> torch.Tensor:
            t = nn.functional.normalize(t, dim=1)
            return nn.functional.normalize(t + self.adapter(t), dim=1)

    return Encoder()


class IconEncoder:
    """The trained encoder: :meth:`images` for crops' ink squares, :meth:`texts` for MiniLM
    vectors; both unit vectors in one space, so their dot product scores an icon for a text."""

    def __init__(
        self,
        net: Any,
        meta: dict[str, Any] | None = None,
        prototypes: tuple[list[str], np.ndarray] | None = None,
    ) -> None:
        self.net = net.eval()
        self.meta = meta or {}
        # (concepts, unit vectors): the mean image embedding of each functional concept's
        # training glyphs, a second reading of a crop beside the concept texts
        self.prototypes = prototypes

    def images(self, squares: np.ndarray) -> np.ndarray:
        """(N, INPUT, INPUT) float ink in [0, 1] -> (N, dim) unit vectors."""
        import torch

        if len(squares) == 0:
            return np.zeros((0, self.net.head.out_features), dtype=np.float32)
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(squares, dtype=np.float32))[:, None]
            out: np.ndarray = self.net(x).numpy()
        return out

    def texts(self, vectors: np.ndarray) -> np.ndarray:
        """MiniLM vectors (N, dim) -> the shared space (N, dim)."""
        import torch

        with torch.inference_mode():
            out: np.ndarray = self.net.text(
                torch.from_numpy(np.asarray(vectors, np.float32))
            ).numpy()
        return out

    def save(self, path: Path) -> None:
        import torch

        state = {
            k: v.half() if v.is_floating_point() else v for k, v in self.net.state_dict().items()
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(".part")
        blob: dict[str, Any] = {"format": FORMAT, "state": state, "meta": self.meta}
        if self.prototypes is not None:
            names, vectors = self.prototypes
            blob["prototypes"] = {
                "concepts": list(names),
                "vectors": torch.from_numpy(np.asarray(vectors, np.float32)).half(),
            }
        torch.save(blob, part)
        part.replace(path)


def load_encoder(path: Path | None = None) -> IconEncoder:
    """The encoder from ``path`` (default: the weights shipped in the package)."""
    import torch

    path = Path(path or WEIGHTS)
    fix = "rebuild it with `lemmata gui train-icons` (or reinstall lemmata)"
    if not path.is_file():
        raise IconModelError(f"the icon encoder's weights {path} are missing: {fix}")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a damaged file raises several types, all meaning "unreadable"
        raise IconModelError(
            f"the icon encoder's weights {path} cannot be read (damaged, or not a weights file: "
            f"{type(exc).__name__}): {fix}"
        ) from exc
    if not isinstance(blob, dict) or blob.get("format") != FORMAT or "state" not in blob:
        raise IconModelError(f"{path} is not an icon encoder of format {FORMAT}: {fix}")
    meta = blob.get("meta") or {}
    net = _net(int(meta.get("dim", 384)), int(meta.get("width", 16)))
    try:
        net.load_state_dict(
            {k: v.float() if v.is_floating_point() else v for k, v in blob["state"].items()}
        )
    except (RuntimeError, KeyError) as exc:
        raise IconModelError(f"{path} does not fit the icon encoder ({exc}): {fix}") from exc
    protos = blob.get("prototypes")
    prototypes = None
    if isinstance(protos, dict) and "concepts" in protos and "vectors" in protos:
        vectors = protos["vectors"].float().numpy()
        if vectors.shape != (len(protos["concepts"]), net.head.out_features):
            raise IconModelError(f"{path} holds prototypes of the wrong shape: {fix}")
        prototypes = (list(protos["concepts"]), vectors)
    return IconEncoder(net, meta, prototypes)


# ---------------------------------------------------------------------------------------------
# Crops in


def prepare_crops(crops: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """PIL crops -> ((N, INPUT, INPUT) ink squares, (N,) bool: had ink)."""
    from lemmata.gui.icons import ink_of

    out = np.zeros((len(crops), INPUT, INPUT), dtype=np.float32)
    ok = np.zeros(len(crops), dtype=bool)
    for i, crop in enumerate(crops):
        sq = ink_square(ink_of(crop))
        if sq is not None:
            out[i], ok[i] = sq, True
    return out, ok


def ink_square(ink: np.ndarray) -> np.ndarray | None:
    """An ink map cut to its ink, padded square, scaled to INPUT (1 px margin), max 1."""
    import torch

    from lemmata.gui.icons import ink_square_of

    sq = ink_square_of(ink)
    if sq is None:
        return None
    t = _fit(torch.from_numpy(sq)[None, None])
    res: np.ndarray = t[0, 0].numpy()
    return res


def _fit(x: torch.Tensor) -> torch.Tensor:
    """(B, 1, s, s) ink -> (B, 1, INPUT, INPUT): scaled to INPUT - 2 and padded by one pixel,
    then scaled so each image's maximum is 1."""
    import torch
    from torch.nn import functional as F

    inner = INPUT - 2
    x = F.interpolate(
        x, size=(inner, inner), mode="bilinear", antialias=x.shape[-1] > inner, align_corners=False
    )
    x = F.pad(x, (1, 1, 1, 1))
    peak = x.amax((2, 3), keepdim=True).clamp(min=1e-3)
    out: torch.Tensor = (x / peak).clamp(0, 1)
    return torch.nan_to_num(out)


# ---------------------------------------------------------------------------------------------
# Training


@dataclass
class TrainConfig:
    steps: int = 1500
    concepts_per_batch: int = 128
    lr: float = 2e-3
    weight_decay: float = 1e-4
    width: int = 16
    seed: int = 0
    threads: int = 1  # on a shared 2-core machine two threads stall each other (5x slower)
    multi_set_share: float = 0.7  # share of a batch's concepts drawn among those in >= 2 sets
    time_limit_s: float = 25 * 60  # the schedule ends at this time even if steps remain
    # share of a batch's concepts drawn among the focus concepts (the functional ones the icon
    # anchor scores): among 12,000 names they would otherwise turn up once in a hundred batches
    focus_share: float = 0.4
    checkpoint: Path | None = None  # written every ``checkpoint_every_s`` while training
    checkpoint_every_s: float = 300.0
    # share of each batch's views drawn as a real toolbar shows a glyph (:func:`toolbar_views`)
    toolbar_share: float = 0.0


def augment(base: torch.Tensor, gen: torch.Generator, *, toolbar: float = 0.0) -> torch.Tensor:
    """(B, 1, S, S) clean ink squares in [0, 1] -> degraded model inputs (B, 1, INPUT, INPUT).

    ``toolbar`` is the share of views drawn as a real toolbar shows a glyph
    (:func:`toolbar_views`); the others are degraded the same way without it."""
    import torch
    from torch.nn import functional as F

    b = base.shape[0]
    x = base
    bar = torch.zeros(b, dtype=torch.bool)
    if toolbar > 0:
        bar = torch.rand(b, generator=gen) < toolbar
        if bar.any():
            x = x.clone()
            x[bar] = toolbar_views(x[bar], gen, others=base)

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(*shape, generator=gen)

    # stroke width: dilate or erode a third of the time each
    r = rand(b)
    thick = F.max_pool2d(x, 3, 1, 1)
    thin = -F.max_pool2d(-x, 3, 1, 1)
    x = torch.where((r < 0.2)[:, None, None, None], thick, x)
    x = torch.where((r > 0.85)[:, None, None, None], torch.maximum(thin, 0.5 * x), x)
    # heavier strokes (bold sets, small icons drawn thick) and soft edges (blurry screenshots)
    r = rand(b)
    x = torch.where((r < 0.1)[:, None, None, None], F.max_pool2d(x, 5, 1, 2), x)
    blur = F.conv2d(x, _gauss(1.2).to(x.dtype), padding=2)
    x = torch.where(
        (r > 0.8)[:, None, None, None], blur / blur.amax((2, 3), keepdim=True).clamp(min=1e-3), x
    )
    # small shift and scale inside the box (detected boxes are not cut to the ink)
    theta = torch.zeros(b, 2, 3)
    s = 1.0 + 0.15 * (rand(b) - 0.3)
    theta[:, 0, 0] = s
    theta[:, 1, 1] = s
    theta[:, :, 2] = 0.08 * (rand(b, 2) - 0.5)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, align_corners=False, padding_mode="zeros")
    # screen size: 10 to 40 px, a few sizes so a batch needs few resizes
    out = torch.empty(b, 1, INPUT, INPUT)
    choices = torch.tensor([10, 12, 14, 16, 20, 24, 32, 40])
    sizes = choices[torch.randint(0, len(choices), (b,), generator=gen)]
    # a toolbar's glyphs are small: 16 to 24 px
    small_sizes = torch.tensor([16, 18, 20, 24])
    sizes = torch.where(
        bar, small_sizes[torch.randint(0, len(small_sizes), (b,), generator=gen)], sizes
    )
    for px in sizes.unique().tolist():
        idx = (sizes == px).nonzero().flatten()
        small = F.interpolate(
            x[idx], size=(px, px), mode="bilinear", antialias=True, align_corners=False
        )
        # a grey level per icon, as on a coloured screen: ink is the distance from the background
        small = small * (0.35 + 0.65 * rand(len(idx), 1, 1, 1))
        small = small + 0.06 * rand(len(idx), 1, 1, 1) * torch.randn(small.shape, generator=gen)
        if rand(1).item() < 0.5:  # JPEG-like 2x2 blocking
            small = F.interpolate(
                F.avg_pool2d(small, 2, ceil_mode=True), size=(px, px), mode="nearest"
            )
            small = 0.5 * small + 0.5 * F.interpolate(x[idx], size=(px, px), mode="area")
        small = small.clamp(0, 1).abs()
        # the crop's ink is measured against the strongest pixel; weak ink is dropped (< 0.2)
        peak = small.amax((2, 3), keepdim=True).clamp(min=1e-3)
        small = small / peak
        small = torch.where(small > 0.2, small, torch.zeros_like(small))
        on_bar = bar[idx]
        out[idx] = _fit(small)
        if on_bar.any():  # cut to the ink as the anchor cuts a crop (a plate, a neighbour's edge)
            out[idx[on_bar]] = _recut(small[on_bar])
    gamma = torch.exp(0.5 * (rand(b, 1, 1, 1) - 0.5))
    return out.clamp(0, 1) ** gamma


def _recut(small: torch.Tensor) -> torch.Tensor:
    """(B, 1, s, s) ink -> (B, 1, INPUT, INPUT): each cut to its ink (> 0.2), padded square with
    the ink centred and fitted, as :func:`ink_square` reads a crop on a screen."""
    import torch

    out = torch.zeros(small.shape[0], 1, INPUT, INPUT)
    for i in range(small.shape[0]):
        ink = small[i, 0]
        ys, xs = torch.nonzero(ink > 0.2, as_tuple=True)
        if len(xs) < 4:
            continue
        cut = ink[int(ys.min()) : int(ys.max()) + 1, int(xs.min()) : int(xs.max()) + 1]
        h, w = cut.shape
        side = max(h, w)
        sq = torch.zeros(side, side)
        sq[(side - h) // 2 : (side - h) // 2 + h, (side - w) // 2 : (side - w) // 2 + w] = cut
        out[i] = _fit(sq[None, None])[0]
    return out


def toolbar_views(x: torch.Tensor, gen: torch.Generator, *, others: torch.Tensor) -> torch.Tensor:
    """(B, 1, S, S) clean ink squares -> the same glyphs as a real toolbar's crop holds them:
    the glyph at 55-80 % of the crop, off centre, with one or more of a hover or selection plate
    behind it (its ink a fraction of the glyph's, or the glyph cut out of a solid plate), a
    button's thin outline, the interior filled in a second tone (a colour fill, a duotone), thin
    strokes, and the edge of a neighbouring glyph from ``others`` at a side of the crop."""
    import torch
    from torch.nn import functional as F

    b, _, size, _ = x.shape

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(*shape, generator=gen)

    def pick(p: float) -> torch.Tensor:
        return (rand(b) < p)[:, None, None, None]

    # interior filled in a second tone: the glyph closed (dilated, then eroded), weaker ink
    closed = -F.max_pool2d(-F.max_pool2d(x, 9, 1, 4), 9, 1, 4)
    x = torch.where(pick(0.15), torch.maximum(x, (0.3 + 0.4 * rand(b, 1, 1, 1)) * closed), x)
    # thin strokes: eroded at full size, so a 16-24 px glyph has 1-1.5 px lines
    thin = -F.max_pool2d(-x, 3, 1, 1)
    x = torch.where(pick(0.3), torch.maximum(thin, 0.35 * x), x)
    # the glyph at 55-80 % of the crop, shifted off centre
    s = 1.0 / (0.55 + 0.25 * rand(b))
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0] = s
    theta[:, 1, 1] = s
    theta[:, :, 2] = (s[:, None] - 1) * 0.6 * (rand(b, 2) - 0.5)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, align_corners=False, padding_mode="zeros")
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    yy = yy[None, None].float()
    xx = xx[None, None].float()
    # a plate (rounded square) around the glyph: the whole crop or a margin inside it
    m = (size * 0.12 * rand(b))[:, None, None, None]
    plate = ((xx >= m) & (xx < size - m) & (yy >= m) & (yy < size - m)).float()
    level = (0.1 + 0.45 * rand(b))[:, None, None, None]
    kind = rand(b)[:, None, None, None]
    x = torch.where(kind < 0.25, torch.maximum(x, level * plate), x)  # hover plate behind
    x = torch.where(
        (kind >= 0.25) & (kind < 0.32), plate * (1 - x) * (0.6 + 0.4 * level), x
    )  # selected: the glyph is the plate's hole
    outline = plate - (-F.max_pool2d(-plate, 3, 1, 1))
    x = torch.where(
        (kind >= 0.32) & (kind < 0.45), torch.maximum(x, (0.3 + 0.5 * level) * outline), x
    )  # a button's border
    # a neighbour's edge: another glyph shifted so 10-35 % of it shows at one side
    near = pick(0.25)
    if near.any():
        other = others[torch.randint(0, others.shape[0], (b,), generator=gen)]
        shift = ((0.65 + 0.25 * rand(b)) * size).long()
        side = torch.randint(0, 4, (b,), generator=gen)
        frag = torch.zeros_like(x)
        for i in range(b):
            k = int(shift[i])
            if side[i] == 0:
                frag[i, :, :, : size - k] = other[i, :, :, k:]
            elif side[i] == 1:
                frag[i, :, :, k:] = other[i, :, :, : size - k]
            elif side[i] == 2:
                frag[i, :, : size - k] = other[i, :, k:]
            else:
                frag[i, :, k:] = other[i, :, : size - k]
        x = torch.where(near, torch.maximum(x, frag), x)
    return x.clamp(0, 1)


def _gauss(sigma: float) -> torch.Tensor:
    """A (1, 1, 5, 5) Gaussian kernel summing to one."""
    import torch

    g = torch.exp(-((torch.arange(5) - 2.0) ** 2) / (2 * sigma**2))
    k = g[:, None] * g[None, :]
    return (k / k.sum())[None, None]


def train(
    library: Library,
    text_vectors: np.ndarray,
    config: TrainConfig | None = None,
    *,
    focus: Iterable[str] = (),
    progress: Callable[[int, float, float], None] | None = None,
    start: IconEncoder | None = None,
) -> IconEncoder:
    """Train an encoder on ``library`` (its images and concepts); ``text_vectors`` holds one
    MiniLM vector per distinct concept, in the order of ``sorted(set(library.concepts))``.
    ``focus`` names concepts drawn into every batch (``config.focus_share`` of it). ``start``
    (an encoder of the same shape) is trained on from its weights instead of from scratch."""
    import torch
    from torch.nn import functional as F

    cfg = config or TrainConfig()
    torch.set_num_threads(max(1, min(cfg.threads, 2)))
    gen = torch.Generator().manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    names = sorted(set(library.concepts))
    if len(names) < 2:
        raise ValueError("training the icon encoder needs at least two concepts")
    if len(text_vectors) != len(names):
        raise ValueError(f"{len(text_vectors)} text vectors for {len(names)} concepts")
    cid = {c: i for i, c in enumerate(names)}
    members: list[list[int]] = [[] for _ in names]
    sets_of: list[set[str]] = [set() for _ in names]
    for i, (c, s) in enumerate(zip(library.concepts, library.sets, strict=True)):
        members[cid[c]].append(i)
        sets_of[cid[c]].add(s)
    focused = np.array(sorted({cid[c] for c in focus if c in cid}), dtype=int)
    rest = set(range(len(names))) - set(focused.tolist())
    multi = np.array([i for i in sorted(rest) if len(sets_of[i]) >= 2], dtype=int)
    single = np.array([i for i in sorted(rest) if len(sets_of[i]) < 2], dtype=int)
    images = torch.from_numpy(library.images.astype(np.float32) / 255.0)[:, None]
    texts = torch.from_numpy(np.asarray(text_vectors, dtype=np.float32))
    net = _net(texts.shape[1], cfg.width)
    if start is not None:
        try:
            net.load_state_dict(start.net.state_dict())
        except RuntimeError as exc:
            raise ValueError(f"the starting encoder does not fit this one: {exc}") from exc
        cfg_steps_done = int(start.meta.get("steps", 0))
    else:
        cfg_steps_done = 0
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    k = min(cfg.concepts_per_batch, len(names))
    started = time.monotonic()
    saved = started
    net.train()
    step = 0

    def snapshot() -> IconEncoder:
        meta = {
            "dim": int(texts.shape[1]),
            "width": cfg.width,
            "steps": cfg_steps_done + step,
            "toolbar_share": cfg.toolbar_share,
            "sets": sorted(set(library.sets)),
            "concepts": len(names),
            "focus_concepts": len(focused),
            # the concepts trained on their own texts: the icon anchor reads any other concept
            # of the table (one added later) by its prototype alone
            "text_concepts": [names[i] for i in focused],
            "glyphs": len(library.concepts),
            "seconds": round(time.monotonic() - started, 1),
        }
        return IconEncoder(net, meta)

    while True:
        # progress is steps or time, whichever runs out first: on a busy machine the learning
        # rate still anneals to zero by the time limit (warm-up 5 %, then a cosine)
        p = max(step / cfg.steps, (time.monotonic() - started) / cfg.time_limit_s)
        if p >= 1.0:
            break
        lr = cfg.lr * (p / 0.05 if p < 0.05 else 0.5 * (1 + math.cos(math.pi * (p - 0.05) / 0.95)))
        for group in opt.param_groups:
            group["lr"] = lr
        n_focus = min(len(focused), int(round(k * cfg.focus_share)))
        n_multi = min(len(multi), int(round((k - n_focus) * cfg.multi_set_share)))
        n_single = min(len(single), k - n_focus - n_multi)
        chosen = np.concatenate(
            [
                rng.choice(focused, n_focus, replace=False),
                rng.choice(multi, n_multi, replace=False),
                rng.choice(single, n_single, replace=False),
            ]
        ).astype(int)
        if len(chosen) < 2:
            chosen = rng.choice(len(names), k, replace=False)
        a_idx, b_idx = [], []
        for c in chosen:
            m = members[c]
            pair = rng.choice(m, 2, replace=len(m) < 2)
            a_idx.append(int(pair[0]))
            b_idx.append(int(pair[1]))
        batch = images[a_idx + b_idx]
        x = augment(batch, gen, toolbar=cfg.toolbar_share)
        emb = net(x)
        txt = net.text(texts[chosen])
        scale = net.logit_scale.exp().clamp(max=100)
        target = torch.arange(len(chosen)).repeat(2)
        logits = scale * emb @ txt.T
        loss_it = F.cross_entropy(logits, target) + 0.5 * F.cross_entropy(
            logits.T.reshape(len(chosen), 2, len(chosen)).transpose(0, 1).reshape(-1, len(chosen)),
            torch.arange(len(chosen)).repeat(2),
        )
        ea, eb = emb[: len(chosen)], emb[len(chosen) :]
        sim = scale * ea @ eb.T
        diag = torch.arange(len(chosen))
        loss_ii = 0.5 * (F.cross_entropy(sim, diag) + F.cross_entropy(sim.T, diag))
        loss = loss_it + 0.5 * loss_ii
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if progress is not None and step % 50 == 1:
            progress(step, float(loss.detach()), time.monotonic() - started)
        if cfg.checkpoint is not None and time.monotonic() - saved >= cfg.checkpoint_every_s:
            net.eval()
            snapshot().save(Path(cfg.checkpoint))
            net.train()
            saved = time.monotonic()
    return snapshot()
