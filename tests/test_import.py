"""Importing lemmata is cheap and has no side effects."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_import_loads_no_heavy_package_and_touches_nothing(tmp_path) -> None:
    data = tmp_path / "never-created"
    code = (
        "import json, os, sys; before = dict(os.environ); import lemmata, lemmata.llm, lemmata.settings;"
        "heavy = [m for m in ('torch', 'litellm', 'chromadb', 'numpy', 'sentence_transformers',"
        " 'langgraph', 'transformers') if m in sys.modules];"
        "print(json.dumps({'heavy': heavy, 'env_changed': dict(os.environ) != before}))"
    )
    env = {**os.environ, "LEMMATA_DATA_DIR": str(data)}
    env.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    result = json.loads(out.stdout)
    assert result == {"heavy": [], "env_changed": False}
    assert not data.exists()


def test_lazy_top_level_names() -> None:
    import lemmata

    assert lemmata.ScriptedModel(["x"]).chat("y").content == "x"
    assert set(lemmata.__all__) <= set(dir(lemmata))
