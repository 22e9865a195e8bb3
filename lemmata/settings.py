"""Settings: one class, read from keyword overrides, ``LEMMATA_*`` variables and a TOML file.

Precedence, highest first: keyword arguments to :meth:`Settings.load`, environment variables
(``LEMMATA_MODEL``, ``LEMMATA_API_BASE``, ...), the settings file, the defaults. The settings
file is the first of these that exists: the ``config_file`` argument, ``$LEMMATA_CONFIG``,
``./lemmata.toml``, ``~/.config/lemmata/config.toml``. It holds the same names as the
variables, in lower case and without the prefix::

    model = "openai/qwen2.5-7b-instruct"
    api_base = "http://127.0.0.1:8000/v1"
    torch_threads = 2

A value that does not validate is reported with where it came from: the variable's name, or
the file and line. Settings are passed down explicitly; nothing reads them behind the
caller's back.

>>> s = Settings.load(model="openai/gpt-4o-mini", config_file=None)
>>> s.model
'openai/gpt-4o-mini'
"""

from __future__ import annotations

import os
import re
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from lemmata.errors import ConfigError, SettingsFileError

__all__ = ["ENV_PREFIX", "Settings", "default_config_paths"]

ENV_PREFIX = "LEMMATA_"

_file_values: ContextVar[dict[str, Any] | None] = ContextVar("_file_values", default=None)
_NOT_GIVEN: Any = object()


def default_config_paths() -> list[Path]:
    """The settings files looked for, in order, when none is named."""
    paths = []
    if os.environ.get(f"{ENV_PREFIX}CONFIG"):
        paths.append(Path(os.environ[f"{ENV_PREFIX}CONFIG"]).expanduser())
    paths.append(Path.cwd() / "lemmata.toml")
    paths.append(Path.home() / ".config" / "lemmata" / "config.toml")
    return paths


class _FileSource(PydanticBaseSettingsSource):
    """Hands pydantic-settings the values read from the TOML file for this load."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        values = _file_values.get() or {}
        return values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_file_values.get() or {})


class Settings(BaseSettings):
    """Everything Lemmata can be configured with. Build it with :meth:`load`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        extra="forbid",
        validate_default=True,
        frozen=True,
    )

    _source_file: Path | None = PrivateAttr(default=None)

    model: str | None = Field(
        default=None,
        description="litellm model string, e.g. 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', "
        "'ollama/llama3', or 'openai/NAME' with api_base for an OpenAI-compatible server. "
        "Unset: every capability runs its offline path.",
    )
    api_base: str | None = Field(
        default=None, description="Base URL of the model's API, e.g. http://127.0.0.1:8000/v1."
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="API key for the model; unset, litellm reads the provider's own variable "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...).",
    )
    data_dir: Path = Field(
        default=Path("~/.local/share/lemmata"),
        description="Where memories, caches, checkpoints and shell history are kept.",
    )
    torch_threads: int = Field(default=2, ge=1, le=512, description="CPU threads for torch.")
    llm_timeout_s: float = Field(default=120.0, gt=0, description="Timeout of one model call.")
    llm_max_retries: int = Field(
        default=4, ge=0, le=20, description="Retries on rate limits and transient errors."
    )
    llm_backoff_s: float = Field(
        default=1.0, ge=0, description="First backoff delay; it doubles each retry (with jitter)."
    )
    verifier_timeout_s: float = Field(
        default=60.0, gt=0, description="Default time limit of one proof check."
    )
    embedder: str = Field(
        default="minilm",
        description="'minilm' (bundled all-MiniLM-L6-v2, offline), "
        "'sentence-transformers:NAME_OR_PATH', or 'litellm:MODEL'.",
    )
    untrusted_input: bool | None = Field(
        default=None,
        description="Treat statements, proofs and headers as untrusted: verifiers run confined "
        "(bubblewrap: a scratch folder, no network, the file system read-only) and refuse to "
        "start where that cannot work. Unset (the default), input is untrusted where it comes "
        "from others (`lemmata.Agent`, the MCP server) and trusted in `lemmata prove` and the "
        "SDK (`--untrusted` there); true or false decides for every surface.",
    )
    coqtop: str | None = Field(default=None, description="The coqtop program (default: from PATH).")
    lean_repl: str | None = Field(
        default=None, description="Command line of the Lean REPL (default: `repl` from PATH)."
    )
    lean_project: Path | None = Field(
        default=None, description="A Lean project whose `lake exe repl` runs the REPL."
    )
    embed_batch_size: int = Field(default=64, ge=1, le=4096)
    embed_cache: bool = Field(default=True, description="Cache embeddings on disk by text hash.")
    mcp_token: SecretStr | None = Field(
        default=None,
        description="Bearer token that `lemmata mcp --transport http` requires of every request "
        "(clients send `Authorization: Bearer <token>`); the server refuses to start over HTTP "
        "without one.",
    )
    mcp_user: str | None = Field(
        default=None,
        max_length=200,
        description="The memory user that mcp_token stands for: memory tools over HTTP read and "
        "write only this user's namespace (`lemmata mcp --user NAME` overrides it).",
    )

    trace: bool = Field(
        default=False,
        description="OpenTelemetry spans for agent steps, operations, model and verifier calls "
        "(needs the otel extra); see lemmata.tracing.",
    )
    trace_content: bool = Field(
        default=False,
        description="Let spans carry prompt text, tool arguments, statements and replies (off: "
        "only names, statuses, models, token counts and timings).",
    )
    trace_file: Path | None = Field(
        default=None,
        description="Where spans go as JSON lines when no OpenTelemetry exporter is set up "
        "(default data_dir/traces.jsonl).",
    )

    @field_validator("model", "api_base")
    @classmethod
    def _no_blank(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value:
            return None
        if any(c.isspace() for c in value):
            raise ValueError("must not contain spaces")
        return value

    @field_validator("mcp_token")
    @classmethod
    def _token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None  # an empty token is no token: HTTP then refuses to start
        if any(c.isspace() for c in value.get_secret_value()):
            raise ValueError("must not contain spaces")
        return value

    @field_validator("mcp_user")
    @classmethod
    def _user(cls, value: str | None) -> str | None:
        return (value.strip() or None) if value is not None else None

    @field_validator("api_base")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value):
            raise ValueError("must be an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1")
        return value

    @field_validator("data_dir", "lean_project")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("embedder")
    @classmethod
    def _embedder(cls, value: str) -> str:
        kind = value.split(":", 1)[0]
        if kind not in {"minilm", "sentence-transformers", "litellm"}:
            raise ValueError(
                "must be 'minilm', 'sentence-transformers:NAME_OR_PATH' or 'litellm:MODEL'"
            )
        if kind != "minilm" and (":" not in value or not value.split(":", 1)[1]):
            raise ValueError(f"'{kind}:' needs a model name after the colon")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _FileSource(settings_cls))

    @classmethod
    def load(cls, config_file: str | Path | None = _NOT_GIVEN, **overrides: Any) -> Settings:
        """Read the settings. ``config_file=None`` reads no file; omitted, the usual places.

        Raises :class:`ConfigError` (a variable or argument is invalid) or
        :class:`SettingsFileError` (the file is unreadable, not TOML, has an unknown key or
        an invalid value), each naming what to fix.
        """
        unknown = sorted(set(overrides) - set(cls.model_fields))
        if unknown:
            raise ConfigError(
                f"unknown setting {unknown[0]!r}; known: {', '.join(cls.model_fields)}"
            )
        path: Path | None
        if config_file is _NOT_GIVEN:
            path = next((p for p in default_config_paths() if p.is_file()), None)
            env_path = os.environ.get(f"{ENV_PREFIX}CONFIG")
            if env_path and not Path(env_path).expanduser().is_file():
                raise ConfigError(f"{ENV_PREFIX}CONFIG={env_path!r}: no such file")
        elif config_file is None:
            path = None
        else:
            path = Path(config_file).expanduser()
            if not path.is_file():
                raise SettingsFileError(str(path), None, "no such file")
        file_values, text = _read_file(path) if path else ({}, "")
        token = _file_values.set(file_values)
        try:
            settings = cls(**overrides)
        except ValidationError as exc:
            raise _explain(exc, overrides, file_values, path, text) from None
        finally:
            _file_values.reset(token)
        settings._source_file = path
        return settings

    @property
    def source_file(self) -> Path | None:
        """The settings file these settings were read from, if any."""
        return self._source_file

    def with_overrides(self, **changes: Any) -> Settings:
        """A copy with some settings changed, validated like the rest."""
        data = self.model_dump()
        data.update(changes)
        try:
            new = type(self).model_validate(data)
        except ValidationError as exc:
            raise _explain(exc, changes, {}, None, "") from None
        new._source_file = self._source_file
        return new

    def for_input_from_others(self) -> Settings:
        """These settings for a surface whose input comes from others (the agent, the MCP
        server): input is untrusted unless ``untrusted_input`` was set either way."""
        if self.untrusted_input is not None:
            return self
        return self.with_overrides(untrusted_input=True)

    def describe(self) -> dict[str, str]:
        """Each setting as text, secrets masked: for ``doctor`` and the shell."""
        out: dict[str, str] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                out[name] = "set (hidden)"
            elif value is None:
                out[name] = "-"
            else:
                out[name] = str(value)
        return out


def _read_file(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsFileError(str(path), None, f"cannot be read ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's TOMLDecodeError only carries the position in its message.
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line = int(m.group(1)) if m else None
        problem = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise SettingsFileError(str(path), line, f"not valid TOML: {problem}") from None
    for key, value in data.items():
        if key not in Settings.model_fields:
            raise SettingsFileError(
                str(path),
                _line_of(text, key),
                f"unknown setting {key!r}; known: {', '.join(Settings.model_fields)}",
            )
        if isinstance(value, dict):
            raise SettingsFileError(
                str(path), _line_of(text, key), f"{key!r} must be a value, not a table"
            )
    return data, text


def _line_of(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*(\[\s*)?[\"']?{re.escape(key)}[\"']?\s*[=\]]")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return None


def _explain(
    exc: ValidationError,
    overrides: dict[str, Any],
    file_values: dict[str, Any],
    path: Path | None,
    text: str,
) -> ConfigError:
    """Turn pydantic's report into one message that names the place to fix."""
    err = exc.errors()[0]
    field = str(err["loc"][0]) if err["loc"] else "?"
    problem = err["msg"].removeprefix("Value error, ")
    env_name = f"{ENV_PREFIX}{field.upper()}"
    if field in overrides:
        return ConfigError(f"setting {field}={overrides[field]!r}: {problem}")
    if env_name in os.environ:
        shown = "(hidden)" if field in ("api_key", "mcp_token") else repr(os.environ[env_name])
        return ConfigError(f"{env_name}={shown}: {problem}")
    if field in file_values and path is not None:
        return SettingsFileError(str(path), _line_of(text, field), f"{field}: {problem}")
    return ConfigError(f"setting {field}: {problem}")
