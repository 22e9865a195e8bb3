"""GUI grounding: images and instructions in, anchors, fusion, abstention, loaders, the screen
generator, the CLI, the shell, the attention anchor and the agent step.

Screens are rendered by real headless Chromium and read by real tesseract (CI installs both);
the attention anchor runs a tiny, randomly initialised Qwen2.5-VL built from a config here,
which tests the extraction, not the accuracy (no weights can be downloaded).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
import torch

from lemmata.errors import ImageError, UsageError

FA_GEAR, FA_TRASH, FA_FLOPPY = 0xF013, 0xF1F8, 0xF0C7

PAGE = """<!doctype html><html><head><title>Settings</title><style>
@font-face {{ font-family: FA; src: url('{fa}'); }}
body {{ font-family: 'DejaVu Sans'; font-size: 15px; margin: 0; background: #fff; }}
.fa {{ font-family: FA; font-weight: 900; font-size: 22px; }}
button {{ font: inherit; padding: 7px 14px; margin: 6px; }}
.bar {{ display: flex; gap: 18px; align-items: center; padding: 12px 20px; background: #eef; }}
input {{ font: inherit; padding: 6px; width: 260px; margin: 16px 20px; display: block; }}
</style></head><body>
<div class="bar"><b>Workspace</b><span style="flex:1"></span>
<span class="fa" data-target="gear">&#x{gear:x};</span>
<span class="fa" data-target="trash">&#x{trash:x};</span></div>
<input data-target="email" placeholder="Email address">
<div style="display:flex;align-items:center;margin-left:20px">
<span class="fa" data-target="floppy">&#x{floppy:x};</span>
<button data-target="save" id="save" onclick="document.getElementById('status').textContent='saved'">Save</button>
<button data-target="cancel" id="cancel" onclick="document.getElementById('status').textContent='cancelled'">Cancel</button>
</div><p id="status" style="margin:20px">idle</p>
<p style="margin:20px">Changes are kept for thirty days before they are archived.</p>
</body></html>"""


def _need(tool: str, package: str) -> None:
    if shutil.which(tool) is None:
        if os.environ.get("CI"):
            pytest.fail(
                f"{tool} is missing in CI: scripts/setup.sh should have installed {package}"
            )
        pytest.skip(f"needs {tool}: apt-get install {package}")


def _page_html() -> str:
    from lemmata.gui.icons import _package_dir

    fa = (_package_dir() / "webfonts" / "fa-solid-900.woff2").as_uri()
    return PAGE.format(fa=fa, gear=FA_GEAR, trash=FA_TRASH, floppy=FA_FLOPPY)


@pytest.fixture(scope="session")
def gui_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder shared by the session: the embedder's cache of the 2,049 glyph captions is
    computed once, not in every test."""
    return tmp_path_factory.mktemp("gui-data")


@pytest.fixture(scope="session")
def screen(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[float, ...]]]:
    """The test page rendered by Chromium at 1280 x 720: (png path, DOM boxes)."""
    _need("chromium", "chromium")
    from lemmata.gui.render import Browser

    work = tmp_path_factory.mktemp("screen")
    with Browser() as browser:
        shot = browser.render(_page_html(), width=1280, height=720, workdir=work)
    path = work / "screen.png"
    path.write_bytes(shot.png)
    return path, shot.boxes


@pytest.fixture(scope="session")
def grounder(gui_data: Path):
    _need("tesseract", "tesseract-ocr")
    from lemmata.gui.ground import Grounder
    from lemmata.settings import Settings

    return Grounder(settings=Settings.load(config_file=None, data_dir=gui_data))


def _inside(point: tuple[float, float] | None, box: tuple[float, ...]) -> bool:
    return point is not None and box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


# -- images and instructions -------------------------------------------------------------------


def test_bad_images_get_clear_errors(tmp_path: Path) -> None:
    from PIL import Image

    from lemmata.gui.image import load_image

    with pytest.raises(ImageError, match="does not exist"):
        load_image(tmp_path / "missing.png")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ImageError, match="empty"):
        load_image(empty)
    (tmp_path / "notes.png").write_text("not an image")
    with pytest.raises(ImageError, match="not an image"):
        load_image(tmp_path / "notes.png")
    buf = io.BytesIO()
    Image.new("RGB", (400, 300), "white").save(buf, "PNG")
    (tmp_path / "cut.png").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    with pytest.raises(ImageError, match="corrupt or truncated"):
        load_image(tmp_path / "cut.png")
    with pytest.raises(ImageError, match="over the limit"):
        load_image(Image.new("RGB", (4000, 3000)), max_pixels=10_000_000)
    with pytest.raises(ImageError, match="H x W x 3"):
        import numpy as np

        load_image(np.zeros((10, 10, 3), dtype=np.float32))
    assert load_image(buf.getvalue()).size == (400, 300)


def test_instructions_are_parsed_into_phrase_kind_and_relation() -> None:
    from lemmata.gui.instruction import parse_instruction

    q = parse_instruction("click the icon left of Save")
    assert (q.phrase, q.kind, q.relation) == ("", "icon", ("left", "Save"))
    q = parse_instruction('type into the "Email address" field')
    assert (q.phrase, q.kind) == ("Email address", "text")
    assert parse_instruction("open the settings").phrase == "settings"
    assert parse_instruction("tap the text button").phrase == "text"
    q = parse_instruction("click the trash icon right of Invoices")
    assert (q.phrase, q.kind, q.relation) == ("trash", "icon", ("right", "Invoices"))
    for bad in ("", "   "):
        with pytest.raises(UsageError, match="instruction is empty"):
            parse_instruction(bad)


# -- anchors -----------------------------------------------------------------------------------


def test_ocr_reads_words_with_boxes_and_caches_per_image(screen, tmp_path: Path) -> None:
    _need("tesseract", "tesseract-ocr")
    from lemmata.gui.image import load_image
    from lemmata.gui.ocr import OcrEngine

    path, boxes = screen
    engine = OcrEngine(cache_dir=tmp_path / "cache")
    image = load_image(path)
    words = engine.read(image).words
    save = [w for w in words if w.text == "Save"]
    assert save and _inside(
        ((save[0].box[0] + save[0].box[2]) / 2, (save[0].box[1] + save[0].box[3]) / 2),
        boxes["save"],
    )
    assert all(0 <= w.conf <= 1 for w in words)
    assert any(w.text == "archived." or w.text == "archived" for w in words)
    engine.read(image)
    assert engine.calls == 1  # the second read came from memory
    fresh = OcrEngine(cache_dir=tmp_path / "cache")
    assert [w.text for w in fresh.read(image).words] == [w.text for w in words]
    assert fresh.calls == 0  # and a new engine reads it from disk


def test_icon_set_knows_font_awesome_and_matches_a_rendered_glyph() -> None:
    from PIL import Image, ImageDraw, ImageFont

    from lemmata.gui.icons import IconSet, _package_dir

    icons = IconSet.fontawesome()
    assert len(icons.glyphs) > 2000
    gear = next(g for g in icons.glyphs if g.name == "gear")
    assert "settings" in gear.caption and "cog" in gear.caption
    font = ImageFont.truetype(str(_package_dir() / "webfonts" / "fa-solid-900.ttf"), 18)
    for colour, bg, char, name in [
        ((30, 30, 30), (250, 250, 250), FA_GEAR, "gear"),
        ((240, 240, 240), (20, 40, 90), FA_TRASH, "trash"),  # light on dark
    ]:
        crop = Image.new("RGB", (30, 30), bg)
        ImageDraw.Draw(crop).text((5, 5), chr(char), fill=colour, font=font)
        best = icons.match([crop], top=1)[0][0]
        assert best[0].name == name and best[1] > 0.85


def test_text_anchor_scores_the_label_and_draws_it_on_the_grid(grounder, screen) -> None:
    from lemmata.gui.anchors import TextAnchor
    from lemmata.gui.instruction import parse_instruction

    path, boxes = screen
    text = next(a for a in grounder.anchors if isinstance(a, TextAnchor))
    scr = grounder.screen(path)
    found = text.candidates(scr, parse_instruction("click Cancel"))
    assert found[0].label == "cancel" and found[0].score > 0.9
    assert _inside(found[0].centre, boxes["cancel"])
    heat = text.heatmap(scr, "click Cancel")
    assert heat.shape == scr.grid and float(heat.min()) >= 0 and float(heat.max()) <= 1
    r, c = divmod(int(heat.argmax()), heat.shape[1])
    assert _inside(((c + 0.5) * scr.stride, (r + 0.5) * scr.stride), boxes["cancel"])


# -- fusion ------------------------------------------------------------------------------------


def _blob(shape: tuple[int, int], at: tuple[int, int], value: float, r: int = 2) -> torch.Tensor:
    m = torch.zeros(shape)
    m[at[0] - r : at[0] + r + 1, at[1] - r : at[1] + r + 1] = value
    return m


def test_consensus_adds_up_where_anchors_agree() -> None:
    from lemmata.gui.fusion import consensus_single_peak

    shape = (40, 60)
    a = _blob(shape, (10, 10), 0.5) + _blob(shape, (30, 50), 0.45)
    b = _blob(shape, (10, 10), 0.5) + _blob(shape, (30, 20), 0.45)
    out = consensus_single_peak({"a": a, "b": b})
    assert out.argmax() == (8, 8) or out.fused[10, 10] == out.fused.max()
    assert float(out.fused[10, 10]) > 0.5  # agreement beats either anchor alone
    assert not out.single_peaks  # neither is sure of one place


def test_a_sharp_single_peak_survives_disagreement() -> None:
    from lemmata.gui.fusion import consensus_single_peak

    shape = (40, 60)
    sure = _blob(shape, (20, 30), 0.9)
    vague = _blob(shape, (5, 5), 0.4) + _blob(shape, (35, 55), 0.4) + _blob(shape, (5, 55), 0.4)
    out = consensus_single_peak({"sure": sure, "vague": vague})
    assert out.single_peaks == ["sure"]
    assert out.argmax()[0] in range(18, 23) and abs(out.score - 0.9) < 1e-6


def test_fusion_of_cold_maps_is_cold_and_shapes_must_match() -> None:
    from lemmata.gui.fusion import consensus_single_peak

    out = consensus_single_peak({"a": torch.full((10, 10), 0.1), "b": torch.zeros(10, 10)})
    assert out.score == 0.0 and out.active == []
    with pytest.raises(ValueError, match="differ in shape"):
        consensus_single_peak({"a": torch.zeros(4, 4), "b": torch.zeros(5, 4)})


# -- the grounder -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instruction", "target"),
    [
        ("click Save", "save"),
        ("press the Cancel button", "cancel"),
        ('type into the "Email address" field', "email"),
        ("open the settings", "gear"),
        ("click the trash icon", "trash"),
        ("the icon left of Save", "floppy"),
    ],
)
def test_ground_points_inside_the_target(grounder, screen, instruction: str, target: str) -> None:
    path, boxes = screen
    g = grounder.ground(path, instruction)
    assert not g.abstained, g.anchors
    assert _inside(g.point, boxes[target]), (g.point, boxes[target], g.anchors)
    assert g.bbox is not None and g.score >= grounder.threshold


@pytest.mark.parametrize(
    "instruction", ["click the Export button", "open the shopping cart", "click Publish"]
)
def test_ground_abstains_when_nothing_matches(grounder, screen, instruction: str) -> None:
    path, _ = screen
    g = grounder.ground(path, instruction)
    assert g.abstained and g.point is None and g.bbox is None
    assert g.to_dict()["abstained"] is True


def test_grounding_reports_each_anchor(grounder, screen) -> None:
    path, _ = screen
    g = grounder.ground(path, "open the settings")
    assert set(g.anchors) == {"ocr", "icons"}
    assert g.anchors["icons"]["label"] == "gear" and g.anchors["icons"]["single_peak"]
    d = g.to_dict()
    assert set(d) >= {"point", "bbox", "score", "abstained", "anchors"}
    assert g.heatmap is not None and g.heatmap.shape == grounder.screen(path).grid


def test_a_4k_screenshot_stays_on_a_bounded_grid(grounder, tmp_path: Path) -> None:
    _need("chromium", "chromium")
    from lemmata.gui.render import Browser

    with Browser() as browser:
        shot = browser.render(_page_html(), width=1920, height=1080, scale=2.0, workdir=tmp_path)
    assert shot.size == (3840, 2160)
    g = grounder.ground(shot.png, "click Save")
    assert _inside(g.point, shot.boxes["save"])
    assert g.heatmap is not None and g.heatmap.numel() <= 480 * 270  # 8 px cells at 4K


def test_the_same_screenshot_is_read_once(grounder, screen) -> None:
    from lemmata.gui.anchors import TextAnchor

    path, _ = screen
    ocr = next(a for a in grounder.anchors if isinstance(a, TextAnchor)).ocr
    grounder.ground(path, "click Save")
    before = ocr.calls
    for ins in ("click Cancel", "open the settings", "click the Export button"):
        grounder.ground(path, ins)
    assert ocr.calls == before


def test_heatmap_is_drawn_over_the_screenshot(grounder, screen) -> None:
    from lemmata.gui.draw import draw_grounding
    from lemmata.gui.image import load_image

    path, _ = screen
    g = grounder.ground(path, "click Save")
    img = draw_grounding(path, g)
    assert img.size == load_image(path).size
    assert img.tobytes() != load_image(path).tobytes()


# -- datasets ------------------------------------------------------------------------------------


def _folder(tmp_path: Path, rows: list[dict], size: tuple[int, int] = (200, 100)) -> Path:
    from PIL import Image

    (tmp_path / "images").mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, "white").save(tmp_path / "images" / "a.png")
    (tmp_path / "annotations.json").write_text(json.dumps(rows))
    return tmp_path


def test_screenspot_boxes_are_xywh_and_pro_boxes_are_corners(tmp_path: Path) -> None:
    from lemmata.gui.datasets import load_annotations

    row = {
        "img_filename": "a.png",
        "bbox": [10, 20, 30, 40],
        "instruction": "x",
        "data_type": "icon",
    }
    v2 = load_annotations(_folder(tmp_path / "v2", [row]), "screenspot")
    assert v2[0].bbox == (10, 20, 40, 60) and v2[0].ui_type == "icon"
    pro_rows = [
        {"img_filename": "a.png", "bbox": [10, 20, 30, 40], "instruction": "x", "ui_type": "text"},
        {
            "img_filename": "a.png",
            "bbox": None,
            "instruction": "y",
            "ui_type": "icon",
            "gt_type": "negative",
        },
    ]
    pro = load_annotations(_folder(tmp_path / "pro", pro_rows), "screenspot-pro")
    assert pro[0].bbox == (10, 20, 30, 40) and not pro[0].negative
    assert pro[1].negative and pro[1].bbox is None


@pytest.mark.parametrize(
    ("rows", "fmt", "message"),
    [
        (
            [
                {
                    "img_filename": "b.png",
                    "bbox": [0, 0, 1, 1],
                    "instruction": "x",
                    "ui_type": "text",
                }
            ],
            "screenspot-pro",
            "item 0: its image",
        ),
        (
            [
                {
                    "img_filename": "a.png",
                    "bbox": [0, 0, 1, 1],
                    "instruction": " ",
                    "ui_type": "text",
                }
            ],
            "screenspot-pro",
            "item 0: needs a non-empty instruction",
        ),
        (
            [
                {
                    "img_filename": "a.png",
                    "bbox": [50, 50, 10, 10],
                    "instruction": "x",
                    "ui_type": "text",
                }
            ],
            "screenspot-pro",
            "use --format screenspot",
        ),
        (
            [
                {
                    "img_filename": "a.png",
                    "bbox": None,
                    "instruction": "x",
                    "ui_type": "text",
                    "gt_type": "negative",
                }
            ],
            "screenspot",
            "ScreenSpot-Pro feature",
        ),
        (
            [{"img_filename": "a.png", "bbox": [0, 0, 1], "instruction": "x", "ui_type": "text"}],
            "screenspot-pro",
            "four numbers",
        ),
        (
            [
                {
                    "img_filename": "a.png",
                    "bbox": [0, 0, 1, 1],
                    "instruction": "x",
                    "ui_type": "button",
                }
            ],
            "screenspot-pro",
            "'text' or 'icon'",
        ),
        ({"not": "a list"}, "screenspot-pro", "JSON list"),
    ],
)
def test_bad_annotations_name_the_item(tmp_path: Path, rows, fmt: str, message: str) -> None:
    from lemmata.gui.datasets import load_annotations

    with pytest.raises(UsageError, match=message):
        load_annotations(_folder(tmp_path, rows), fmt)  # type: ignore[arg-type]


def test_accuracy_counts_points_in_boxes_and_abstentions_on_negatives(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from lemmata.gui.datasets import evaluate, load_annotations

    rows = [
        {"img_filename": "a.png", "bbox": [0, 0, 50, 50], "instruction": "hit", "ui_type": "text"},
        {
            "img_filename": "a.png",
            "bbox": [100, 0, 150, 50],
            "instruction": "miss",
            "ui_type": "icon",
        },
        {
            "img_filename": "a.png",
            "bbox": None,
            "instruction": "none",
            "ui_type": "text",
            "gt_type": "negative",
        },
    ]
    items = load_annotations(_folder(tmp_path, rows), "screenspot-pro")
    answers = {
        "hit": SimpleNamespace(
            point=(50, 50), abstained=False, score=0.9, size=(200, 100)
        ),  # on the edge
        "miss": SimpleNamespace(point=(10, 10), abstained=False, score=0.9, size=(200, 100)),
        "none": SimpleNamespace(point=None, abstained=True, score=0.1, size=(200, 100)),
    }
    res = evaluate(items, lambda it: answers[it.instruction])
    assert (res.text, res.icon, res.negative) == (1.0, 0.0, 1.0)
    assert abs(res.overall - 2 / 3) < 1e-9
    assert set(res.to_dict()) == {"n", "overall", "text", "icon", "negative", "by_size"}


def test_generator_writes_screenspot_pro_that_loads(tmp_path: Path) -> None:
    _need("chromium", "chromium")
    from lemmata.gui.datasets import load_annotations
    from lemmata.gui.synthetic import generate

    path = generate(tmp_path / "gen", n=4, seed=3)
    rows = json.loads(path.read_text())
    items = load_annotations(tmp_path / "gen", "screenspot-pro")
    assert len(items) == len(rows) > 12
    assert {r["layout"].split("-")[0] for r in rows} == {"form", "toolbar", "dense", "dialog"}
    assert any(r["gt_type"] == "negative" and r["bbox"] is None for r in rows)
    assert any(r["relation"] for r in rows) and {r["ui_type"] for r in rows} == {"text", "icon"}
    for r in rows:
        if r["bbox"]:
            x1, y1, x2, y2 = r["bbox"]
            assert 0 <= x1 < x2 <= r["img_size"][0] and 0 <= y1 < y2 <= r["img_size"][1]
    again = generate(tmp_path / "again", n=4, seed=3)
    assert json.loads(again.read_text()) == rows  # a seed is a data set


# -- interfaces ----------------------------------------------------------------------------------


def test_cli_ground_json_and_heatmap(run_cli, screen, gui_data: Path, tmp_path: Path) -> None:
    _need("tesseract", "tesseract-ocr")
    path, boxes = screen
    env = {"LEMMATA_DATA_DIR": str(gui_data)}
    heat = tmp_path / "heat.png"
    r = run_cli("ground", str(path), "click Save", "--json", "--heatmap", str(heat), env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) >= {"point", "bbox", "score", "abstained", "anchors"}
    assert _inside(tuple(out["point"]), boxes["save"]) and heat.stat().st_size > 0
    r = run_cli("ground", str(path), "click the Export button", "--json", env=env)
    assert json.loads(r.stdout)["abstained"] is True
    r = run_cli("ground", str(tmp_path / "none.png"), "click Save", env=env)
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = run_cli("ground", str(path), "  ", env=env)
    assert r.returncode == 2 and "instruction is empty" in r.stderr


def test_cli_ground_eval_prints_accuracy_json(
    run_cli, screen, gui_data: Path, tmp_path: Path
) -> None:
    _need("tesseract", "tesseract-ocr")
    path, boxes = screen
    (tmp_path / "set" / "images").mkdir(parents=True)
    shutil.copy(path, tmp_path / "set" / "images" / "s.png")
    rows = [
        {
            "img_filename": "s.png",
            "bbox": list(boxes["save"]),
            "instruction": "click Save",
            "ui_type": "text",
        },
        {
            "img_filename": "s.png",
            "bbox": list(boxes["gear"]),
            "instruction": "open the settings",
            "ui_type": "icon",
        },
        {
            "img_filename": "s.png",
            "bbox": None,
            "instruction": "click Export",
            "ui_type": "text",
            "gt_type": "negative",
        },
    ]
    (tmp_path / "set" / "annotations.json").write_text(json.dumps(rows))
    env = {"LEMMATA_DATA_DIR": str(gui_data)}
    r = run_cli(
        "ground-eval", str(tmp_path / "set"), "--format", "screenspot-pro", "--json", env=env
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["n"] == 3 and out["overall"] == 1.0 and out["negative"] == 1.0
    r = run_cli("ground-eval", str(tmp_path / "set"), "--format", "pascal", env=env)
    assert r.returncode == 2 and "unknown format" in r.stderr
    r = run_cli("ground-eval", str(tmp_path / "set"), "--limit", "0", env=env)
    assert r.returncode == 2 and "--limit must be at least 1" in r.stderr
    r = run_cli("ground", str(path), "click Save", "--threshold", "1.5", env=env)
    assert r.returncode == 2 and "--threshold must lie in [0, 1]" in r.stderr


def test_shell_ground_command(screen, gui_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _need("tesseract", "tesseract-ocr")
    from rich.console import Console

    from lemmata.gui.shell import COMMANDS
    from lemmata.settings import Settings

    path, _ = screen
    console = Console(file=io.StringIO(), width=200)
    ctx = type(
        "Ctx",
        (),
        {
            "settings": Settings.load(config_file=None, data_dir=gui_data),
            "console": console,
            "model": None,
        },
    )()
    (cmd,) = COMMANDS
    cmd.run(ctx, f"{path} open the settings")
    cmd.run(ctx, f"{path} click the Export button")
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "click (" in text and "gear" in text and "abstained" in text


def test_agent_grounds_and_clicks_and_abstains_without_clicking(grounder) -> None:
    _need("chromium", "chromium")
    from lemmata.agents.gui import gui_agent
    from lemmata.environments.screen import ScreenEnvironment

    with ScreenEnvironment(_page_html(), width=1280, height=720) as env:
        env.reset()
        out = gui_agent(env, grounder).invoke(
            {"instructions": ["click Save", "click the Export button"]}
        )
        first, second = out["log"]
        assert first["hit"]["text"] == "Save" and env.query("#status") == "saved"
        assert second["abstained"] and "hit" not in second
        snap = env.snapshot()
        env.step({"type": "click", "x": first["point"][0] + 90, "y": first["point"][1]})
        assert env.query("#status") == "cancelled"
        env.restore(snap)
        assert env.query("#status") == "saved"
        with pytest.raises(UsageError, match="outside"):
            env.step({"type": "click", "x": 5000, "y": 5})


# -- the attention anchor -------------------------------------------------------------------------


def _tiny_qwen():
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    torch.manual_seed(0)
    cfg = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": 151700,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [2, 1, 1],
            },
        },
        vision_config={
            "depth": 1,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "out_hidden_size": 32,
            "fullatt_block_indexes": [0],
        },
    )
    cfg._attn_implementation = "eager"
    return Qwen2_5_VLForConditionalGeneration(cfg)


def test_attention_anchor_extracts_instruction_to_patch_maps(screen) -> None:
    from lemmata.gui.anchors import Screen
    from lemmata.gui.attention import AttentionAnchor
    from lemmata.gui.image import load_image

    path, _ = screen
    anchor = AttentionAnchor(
        _tiny_qwen(), lambda s: [ord(c) % 500 + 10 for c in s], heads=3, max_pixels=128 * 28 * 28
    )
    img = load_image(path)
    maps = anchor.attention_maps(img, "click Save")
    layers, heads, h, w = maps.shape
    assert (layers, heads) == (2, 4) and h * w <= 128
    # each head's map is its attention over the image tokens: positive, at most all of it
    assert float(maps.min()) >= 0 and float(maps.flatten(2).sum(-1).max()) <= 1 + 1e-5
    scr = Screen(img)
    heat = anchor.heatmap(scr, "click Save")
    assert heat.shape == scr.grid and float(heat.min()) >= 0 and float(heat.max()) <= 1
    assert len(anchor.last["heads"]) == 3


def test_heads_are_chosen_by_spatial_entropy_and_sinks_are_skipped() -> None:
    from lemmata.gui.attention import select_heads, spatial_entropy

    maps = torch.full((2, 3, 6, 6), 1.0)  # uniform
    maps[0, 1] = 0.01
    maps[0, 1, 2:4, 2:4] = 1.0  # concentrated on four patches
    maps[1, 2] = 0.0
    maps[1, 2, 0, 0] = 1.0  # a sink: all mass on one patch
    assert float(spatial_entropy(maps)[0, 0]) == pytest.approx(1.0)
    assert float(spatial_entropy(maps)[1, 2]) == pytest.approx(0.0, abs=1e-6)
    assert select_heads(maps, 1) == [(0, 1)]


def test_grounder_fuses_the_attention_anchor(grounder, screen) -> None:
    from lemmata.gui.attention import AttentionAnchor
    from lemmata.gui.ground import Grounder

    path, boxes = screen
    attention = AttentionAnchor(
        _tiny_qwen(), lambda s: [ord(c) % 500 + 10 for c in s], max_pixels=128 * 28 * 28
    )
    g = Grounder([*grounder.anchors, attention]).ground(path, "click Save")
    assert set(g.anchors) == {"ocr", "icons", "attention"}
    # random weights attend nearly uniformly: no evidence, so OCR decides
    assert g.anchors["attention"]["score"] < 0.3 and _inside(g.point, boxes["save"])


def test_icons_captioned_by_a_model_through_litellm(grounder, screen) -> None:
    """The LLM path, against the scripted OpenAI-compatible server on 127.0.0.1 (a test
    device that replies from a script, not a model)."""
    from scripted_server import ScriptedOpenAIServer

    from lemmata.gui.anchors import IconAnchor, TextAnchor
    from lemmata.gui.ground import Grounder
    from lemmata.gui.icons import Element, IconSet, ModelCaptioner
    from lemmata.llm import LiteLLMModel

    path, boxes = screen
    text = next(a for a in grounder.anchors if isinstance(a, TextAnchor))
    elements = [Element(boxes["gear"], "dom"), Element(boxes["trash"], "dom")]
    script = [
        {"content": "Settings."},
        {"content": "this is a rubbish bin that deletes things, I think"},
    ]
    with ScriptedOpenAIServer(script) as srv:
        model = LiteLLMModel("openai/scripted-model", api_base=srv.base_url, backoff_s=0.01)
        captioner = ModelCaptioner(model)
        icons = IconAnchor(IconSet.fontawesome(), text.embedder, captioner=captioner)
        g = Grounder([text, icons]).ground(path, "open the settings", elements=elements)
        parts = srv.requests[0]["messages"][0]["content"]
    assert _inside(g.point, boxes["gear"]) and g.anchors["icons"]["label"] == "settings"
    assert any(
        p["type"] == "image_url" and p["image_url"]["url"].startswith("data:image/png;base64,")
        for p in parts
    )
    assert len(srv.requests) == 2 and captioner.rejected == 1  # the rambling reply is no caption


def test_icon_descriptors_are_cached_on_disk_and_a_damaged_cache_is_rebuilt(tmp_path: Path) -> None:
    from lemmata.gui.icons import IconSet

    built = IconSet.fontawesome(tmp_path)
    (cached,) = tmp_path.glob("*.npz")
    IconSet.fontawesome.cache_clear()
    loaded = IconSet.fontawesome(tmp_path)
    assert [g.caption for g in loaded.glyphs] == [g.caption for g in built.glyphs]
    assert (loaded.matrix == built.matrix).all()
    cached.write_bytes(b"garbage")
    IconSet.fontawesome.cache_clear()
    assert len(IconSet.fontawesome(tmp_path).glyphs) == len(built.glyphs)
    assert cached.stat().st_size > 1000  # written again


def test_cli_ground_generate_writes_a_loadable_set(run_cli, tmp_path: Path) -> None:
    _need("chromium", "chromium")
    from lemmata.gui.datasets import load_annotations

    r = run_cli("ground-generate", str(tmp_path / "set"), "--n", "2", "--seed", "5")
    assert r.returncode == 0, r.stderr
    assert "instructions on 2 screens" in r.stdout
    assert len(list((tmp_path / "set" / "images").glob("*.png"))) == 2
    assert load_annotations(tmp_path / "set", "screenspot-pro")
    r = run_cli("ground-generate", str(tmp_path / "none"), "--n", "0")
    assert r.returncode == 2 and "--n must be at least 1" in r.stderr
    before = (tmp_path / "set" / "annotations.json").read_text()
    r = run_cli("ground-generate", str(tmp_path / "set"), "--n", "1", "--seed", "6")
    assert r.returncode == 2 and "already holds a data set" in r.stderr
    assert (tmp_path / "set" / "annotations.json").read_text() == before  # nothing lost
    r = run_cli("ground-generate", str(tmp_path / "set"), "--n", "1", "--seed", "6", "--overwrite")
    assert r.returncode == 0 and (tmp_path / "set" / "annotations.json").read_text() != before
