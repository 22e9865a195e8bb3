"""lemmata.gui: Trifuse GUI grounding (attention, OCR and icon anchors, Consensus-SinglePeak fusion).

>>> from lemmata.gui import ground  # doctest: +SKIP
>>> g = ground("screenshot.png", "open the settings")  # doctest: +SKIP
>>> g.point, g.bbox, g.score, g.abstained  # doctest: +SKIP

The pieces: :mod:`~lemmata.gui.image` (decoding and limits), :mod:`~lemmata.gui.instruction`
(phrase, kind, relation), :mod:`~lemmata.gui.ocr` (tesseract), :mod:`~lemmata.gui.icons` (element
detection, the Font Awesome icon set), :mod:`~lemmata.gui.anchors` (text and icon anchors),
:mod:`~lemmata.gui.icon_library` (icon sets from npm and PyPI, concepts aligned across sets),
:mod:`~lemmata.gui.icon_model` (the icon encoder, a small CNN), :mod:`~lemmata.gui.icon_anchor`
(icons of any set matched by meaning), :mod:`~lemmata.gui.icon_train` (``lemmata gui
train-icons``),
:mod:`~lemmata.gui.attention` (a vision-language model's attention), :mod:`~lemmata.gui.fusion`
(Consensus-SinglePeak), :mod:`~lemmata.gui.ground` (the grounder: relations, zoom, abstention),
:mod:`~lemmata.gui.datasets` (ScreenSpot loaders, accuracy), :mod:`~lemmata.gui.synthetic`
(generated screens), :mod:`~lemmata.gui.render` (headless Chromium), :mod:`~lemmata.gui.draw`
(heatmaps over screenshots).
"""

from lemmata.gui.ground import Grounder, Grounding, ground

__all__ = ["Grounder", "Grounding", "ground"]
