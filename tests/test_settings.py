from __future__ import annotations

from pathlib import Path

import pytest

from lemmata.errors import ConfigError, SettingsFileError
from lemmata.settings import Settings


def test_defaults_need_no_file_and_no_model(settings: Settings) -> None:
    assert settings.model is None
    assert settings.torch_threads == 2
    assert settings.embedder == "minilm"
    assert settings.source_file is None


def test_default_data_dir_is_under_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LEMMATA_DATA_DIR")
    s = Settings.load(config_file=None)
    assert s.data_dir == Path.home() / ".local" / "share" / "lemmata"


def test_precedence_override_env_file_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('model = "openai/from-file"\ntorch_threads = 1\nllm_timeout_s = 9\n')
    monkeypatch.setenv("LEMMATA_MODEL", "openai/from-env")
    monkeypatch.setenv("LEMMATA_TORCH_THREADS", "3")
    s = Settings.load(cfg, torch_threads=4)
    assert s.torch_threads == 4  # keyword beats env
    assert s.model == "openai/from-env"  # env beats file
    assert s.llm_timeout_s == 9  # file beats default
    assert s.source_file == cfg


def test_file_found_in_working_directory_and_by_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("lemmata.toml").write_text('model = "openai/cwd"\n')
    assert Settings.load().model == "openai/cwd"
    other = tmp_path / "other.toml"
    other.write_text('model = "openai/named"\n')
    monkeypatch.setenv("LEMMATA_CONFIG", str(other))
    assert Settings.load().model == "openai/named"


def test_missing_named_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingsFileError, match="no such file"):
        Settings.load(tmp_path / "absent.toml")
    monkeypatch.setenv("LEMMATA_CONFIG", str(tmp_path / "absent.toml"))
    with pytest.raises(ConfigError, match="LEMMATA_CONFIG"):
        Settings.load()


def test_broken_toml_names_file_and_line(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('model = "openai/x"\n\ntorch_threads = = 2\n')
    with pytest.raises(SettingsFileError) as info:
        Settings.load(cfg)
    assert info.value.line == 3
    assert f"{cfg}:3" in str(info.value)
    assert "TOML" in str(info.value)


def test_unknown_key_in_file_names_its_line(tmp_path: Path) -> None:
    cfg = tmp_path / "typo.toml"
    cfg.write_text('model = "openai/x"\ntorch_thread = 2\n')
    with pytest.raises(SettingsFileError) as info:
        Settings.load(cfg)
    assert info.value.line == 2
    assert "unknown setting 'torch_thread'" in str(info.value)


def test_invalid_value_in_file_names_its_line(tmp_path: Path) -> None:
    cfg = tmp_path / "v.toml"
    cfg.write_text('# comment\nmodel = "openai/x"\ntorch_threads = 0\n')
    with pytest.raises(SettingsFileError) as info:
        Settings.load(cfg)
    assert info.value.line == 3
    assert "torch_threads" in str(info.value)


def test_invalid_variable_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEMMATA_TORCH_THREADS", "many")
    with pytest.raises(ConfigError, match=r"LEMMATA_TORCH_THREADS='many'"):
        Settings.load(config_file=None)
    monkeypatch.delenv("LEMMATA_TORCH_THREADS")
    monkeypatch.setenv("LEMMATA_API_BASE", "localhost:8000")
    with pytest.raises(ConfigError, match=r"LEMMATA_API_BASE=.*http://"):
        Settings.load(config_file=None)


def test_unknown_keyword_is_rejected() -> None:
    with pytest.raises(ConfigError, match="unknown setting 'modle'"):
        Settings.load(config_file=None, modle="x")


def test_embedder_spec_is_checked() -> None:
    with pytest.raises(ConfigError, match="embedder"):
        Settings.load(config_file=None, embedder="word2vec")
    with pytest.raises(ConfigError, match="needs a model name"):
        Settings.load(config_file=None, embedder="litellm:")
    assert Settings.load(config_file=None, embedder="litellm:text-embedding-3-small").embedder


def test_api_key_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEMMATA_API_KEY", "sk-very-secret-value-123")
    s = Settings.load(config_file=None)
    assert s.api_key is not None and s.api_key.get_secret_value() == "sk-very-secret-value-123"
    for text in (repr(s), str(s), str(s.describe())):
        assert "sk-very-secret" not in text


def test_settings_are_frozen_and_copied_with_validation(settings: Settings) -> None:
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen error type is internal
        settings.model = "x"  # type: ignore[misc]
    changed = settings.with_overrides(model="openai/y")
    assert changed.model == "openai/y" and settings.model is None
    with pytest.raises(ConfigError, match="torch_threads"):
        settings.with_overrides(torch_threads=-1)


def test_data_dir_expands_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEMMATA_DATA_DIR", "~/lm")
    assert Settings.load(config_file=None).data_dir == Path.home() / "lm"
