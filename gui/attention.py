"""The attention anchor: where a vision-language model looks when it reads the instruction.

A Qwen2-VL / Qwen2.5-VL model (transformers, loaded locally, eager attention) reads the
screenshot and the instruction; a forward hook on every decoder layer's self-attention keeps
only the rows of the instruction's tokens and the columns of the image's tokens (never the
full ``seq x seq`` matrices of all layers), averaged over the instruction's tokens: one map per
(layer, head) on the model's patch grid. Heads are chosen by **spatial entropy**: the ``heads``
maps whose attention is most concentrated (lowest Shannon entropy of the map as a
distribution over patches), skipping sink heads that put most of their mass on one patch. Their
mean, scaled to [0, 1] and by its own concentration (``gain`` x (1 - normalised entropy), at
most 1: uniform attention is no evidence), is resized to the screen's grid. ``gain`` is a guess
until it is calibrated with real weights.

>>> anchor = AttentionAnchor.from_pretrained("Qwen/Qwen2.5-VL-7B-Instruct")  # doctest: +SKIP

No weights can be downloaded on the machines this project is built on; the tests build a tiny,
randomly initialised model from a config and check the extraction, not the accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lemmata.errors import MissingDependency

if TYPE_CHECKING:
    import torch
    from PIL import Image as PILImage

    from lemmata.gui.anchors import Screen
    from lemmata.gui.instruction import Query

__all__ = ["AttentionAnchor", "select_heads", "spatial_entropy"]


def spatial_entropy(maps: torch.Tensor) -> torch.Tensor:
    """Normalised Shannon entropy (0: one patch, 1: uniform) of each map over its last two
    dimensions."""
    flat = maps.flatten(-2).clamp(min=0)
    p = flat / flat.sum(-1, keepdim=True).clamp(min=1e-12)
    h = -(p * (p + 1e-12).log()).sum(-1)
    return h / math.log(max(2, flat.shape[-1]))


def select_heads(maps: torch.Tensor, k: int, sink: float = 0.5) -> list[tuple[int, int]]:
    """(layer, head) of the ``k`` most concentrated maps in ``maps`` (layers x heads x h x w),
    leaving out sinks (a head with more than ``sink`` of its mass on one patch)."""
    flat = maps.flatten(-2)
    share = flat.max(-1).values / flat.sum(-1).clamp(min=1e-12)
    ent = spatial_entropy(maps).masked_fill(share > sink, float("inf"))
    order = ent.flatten().argsort()
    heads = maps.shape[1]
    picked = [divmod(int(i), heads) for i in order[:k] if math.isfinite(float(ent.flatten()[i]))]
    if not picked:  # every head a sink: take the least concentrated of them rather than none
        picked = [divmod(int(i), heads) for i in spatial_entropy(maps).flatten().argsort()[:k]]
    return picked


class AttentionAnchor:
    """Attention of a Qwen2(.5)-VL model from the instruction to the image.

    ``tokenize`` maps text to token ids (the model's tokenizer); ``max_pixels`` bounds the
    image the model sees (1,024 patches of 28 x 28 px by default), hence memory.
    """

    name = "attention"

    def __init__(
        self,
        model: Any,
        tokenize: Callable[[str], list[int]],
        *,
        image_processor: Any = None,
        max_pixels: int = 1024 * 28 * 28,
        heads: int = 8,
        gain: float = 3.0,
        prompt: str = "Where should I click to: {instruction}",
    ) -> None:
        try:
            from transformers import Qwen2VLImageProcessorPil
        except ImportError:
            raise MissingDependency(
                "the attention anchor", "pip install 'lemmata[gui]' transformers"
            ) from None
        self.model = model.eval()
        self.tokenize = tokenize
        self.processor = image_processor or Qwen2VLImageProcessorPil(
            min_pixels=56 * 56, max_pixels=max_pixels
        )
        self.heads, self.gain, self.prompt = heads, gain, prompt
        cfg = model.config
        self.image_token = cfg.image_token_id
        self.vision_start = cfg.vision_start_token_id
        self.vision_end = cfg.vision_end_token_id
        self.merge = cfg.vision_config.spatial_merge_size
        self.last: dict[str, Any] = {}  # the latest extraction: chosen heads, grid, entropy

    @classmethod
    def from_pretrained(cls, path: str, **kwargs: Any) -> AttentionAnchor:
        """Load a local Qwen2-VL / Qwen2.5-VL checkpoint (folder or hub id already cached)."""
        import transformers

        processor = transformers.AutoProcessor.from_pretrained(path)
        config = transformers.AutoConfig.from_pretrained(path)
        model_cls = (
            transformers.Qwen2_5_VLForConditionalGeneration
            if config.model_type == "qwen2_5_vl"
            else transformers.Qwen2VLForConditionalGeneration
        )
        model = model_cls.from_pretrained(path, attn_implementation="eager")
        tok = processor.tokenizer
        return cls(
            model,
            lambda text: list(tok(text, add_special_tokens=False).input_ids),
            image_processor=processor.image_processor,
            **kwargs,
        )

    def _decoder_attention_modules(self) -> list[Any]:
        inner = getattr(self.model, "model", self.model)
        lm = getattr(inner, "language_model", inner)
        return [layer.self_attn for layer in lm.layers]

    def attention_maps(self, image: PILImage.Image, instruction: str) -> torch.Tensor:
        """(layers x heads x h x w) attention from the instruction's tokens to the image's."""
        import torch

        pix = self.processor(images=[image], return_tensors="pt")
        t, gh, gw = (int(v) for v in pix["image_grid_thw"][0])
        h, w = gh // self.merge, gw // self.merge
        n_image = t * h * w
        text = self.tokenize(self.prompt.format(instruction=instruction))
        if not text:
            raise ValueError("the instruction tokenised to nothing")
        ids = [self.vision_start, *([self.image_token] * n_image), self.vision_end, *text]
        image_cols = slice(1, 1 + n_image)
        text_rows = slice(2 + n_image, len(ids))
        kept: list[torch.Tensor] = []

        def hook(_module: Any, _args: Any, output: Any) -> None:
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if weights is None:
                raise RuntimeError(
                    "the model returned no attention weights: load it with "
                    "attn_implementation='eager'"
                )
            # instruction rows x image columns, mean over the instruction: heads x patches
            kept.append(weights[0, :, text_rows, image_cols].float().mean(1).detach())

        handles = [m.register_forward_hook(hook) for m in self._decoder_attention_modules()]
        try:
            with torch.no_grad():
                input_ids = torch.tensor([ids])
                self.model(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    pixel_values=pix["pixel_values"],
                    image_grid_thw=pix["image_grid_thw"],
                )
        finally:
            for hd in handles:
                hd.remove()
        maps = torch.stack(kept)  # layers x heads x patches
        return maps.reshape(maps.shape[0], maps.shape[1], t, h, w).mean(2)

    def heatmap(self, image: Screen | PILImage.Image, instruction: str | Query) -> torch.Tensor:
        import torch.nn.functional as F

        from lemmata.gui.anchors import Screen, _as_query

        screen = image if isinstance(image, Screen) else Screen(image)
        query = _as_query(instruction)
        maps = self.attention_maps(screen.image, query.instruction)
        picked = select_heads(maps, self.heads)
        chosen = maps[[lh[0] for lh in picked], [lh[1] for lh in picked]]
        chosen = chosen / chosen.flatten(1).max(1).values.clamp(min=1e-12)[:, None, None]
        mean = chosen.mean(0)
        concentration = 1.0 - float(spatial_entropy(mean))
        heat = (mean / mean.max().clamp(min=1e-12)) * min(1.0, self.gain * concentration)
        grid = F.interpolate(
            heat[None, None], size=screen.grid, mode="bilinear", align_corners=False
        )
        self.last = {
            "heads": picked,
            "patch_grid": tuple(maps.shape[-2:]),
            "concentration": concentration,
        }
        return grid[0, 0].clamp(0, 1)
