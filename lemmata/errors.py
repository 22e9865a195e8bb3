"""Lemmata's errors: one hierarchy, each class with a stable ``code`` and a message that says
what to do.

Exceptions are for things the caller has to fix or cannot go on without (a broken settings
file, a missing package, a model that cannot be reached). Outcomes of the work itself (a proof
that failed, an insight that did not hold) are values, never exceptions.

=============================  ===========================  =====================================
class                          code                         raised when
=============================  ===========================  =====================================
``LemmataError``               ``lemmata_error``            base class; never raised itself
``UsageError``                 ``usage``                    a command was given bad arguments
``ConfigError``                ``config``                   a setting has a bad value
``SettingsFileError``          ``settings_file``            the TOML settings file is broken
``MissingDependency``          ``missing_dependency``       an optional package is not installed
``ToolNotFound``               ``tool_not_found``           a system program (coqc, tesseract...)
                                                            is not on PATH
``ConfinementUnavailable``     ``confinement_unavailable``  untrusted input must run confined
                                                            (lemmata.confine) and bubblewrap is
                                                            missing or cannot work here
``DataSourceError``            ``data_source``              a database or data folder cannot be
                                                            opened or read
``ImageError``                 ``image``                    an image is missing, corrupt, empty
                                                            or too large to ground on
``UnknownTask``                ``unknown_task``             an environment has no task by that
                                                            name, variation or split
``SnapshotError``              ``snapshot``                 an environment state cannot be
                                                            restored (or restored a different one)
``ModelError``                 ``model``                    base class of the LLM layer's errors
``ModelNotConfigured``         ``model_not_configured``     a feature needs a model, none is set
``UnknownModel``               ``unknown_model``            the model name is not one the
                                                            provider or litellm knows
``MissingApiKey``              ``missing_api_key``          the provider needs a key, none given
``AuthenticationFailed``       ``authentication_failed``    the provider rejected the key
``ModelUnreachable``           ``model_unreachable``        the API base does not answer
``RateLimited``                ``rate_limited``             still rate limited after the retries
``ModelCallFailed``            ``model_call_failed``        any other failure of the model call
``ModelOutputError``           ``model_output``             the reply could not be parsed or
                                                            validated, even after the retry
``ProverError``                ``prover``                   base class of the proof checkers'
                                                            process and session errors
``ProverTimeout``              ``prover_timeout``           a prover (coqtop, the Lean REPL) gave
                                                            no answer within its time limit and
                                                            was stopped
``ProverCrashed``              ``prover_crashed``           a prover exited, closed its pipes or
                                                            answered what cannot be read
``HeaderFailed``               ``header_failed``            a header (imports) does not load;
                                                            also a ``ValueError``
``StatementFailed``            ``statement_failed``         a statement does not parse or
                                                            elaborate; also a ``ValueError``
``InputRefused``               ``input_refused``            input was refused before it reached
                                                            the prover (it would write or load
                                                            files, run code, switch a checker
                                                            off); also a ``ValueError``
=============================  ===========================  =====================================

Every message is one line that names the setting, file or command to change, so the CLI can
print it as it is (``lemmata: error[unknown_model]: ...``) and exit with status 2.
"""

from __future__ import annotations

__all__ = [
    "AuthenticationFailed",
    "ConfigError",
    "ConfinementUnavailable",
    "DataSourceError",
    "HeaderFailed",
    "ImageError",
    "InputRefused",
    "LemmataError",
    "MissingApiKey",
    "MissingDependency",
    "ModelCallFailed",
    "ModelError",
    "ModelNotConfigured",
    "ModelOutputError",
    "ModelUnreachable",
    "ProverCrashed",
    "ProverError",
    "ProverTimeout",
    "RateLimited",
    "SettingsFileError",
    "SnapshotError",
    "StatementFailed",
    "ToolNotFound",
    "UnknownModel",
    "UnknownTask",
    "UsageError",
]


class LemmataError(Exception):
    """Base class of every error Lemmata raises on purpose."""

    code = "lemmata_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(LemmataError):
    """A command (in the CLI or the shell) was given arguments it cannot use."""

    code = "usage"


class ConfigError(LemmataError):
    """A setting has a value Lemmata cannot use; the message names the setting."""

    code = "config"


class SettingsFileError(ConfigError):
    """The settings file cannot be read or holds an invalid entry.

    ``path`` and ``line`` (1-based, or ``None`` when unknown) say where.
    """

    code = "settings_file"

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"settings file {where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


class MissingDependency(LemmataError):
    """An optional Python package is missing; ``install`` is the command that adds it."""

    code = "missing_dependency"

    def __init__(self, feature: str, install: str) -> None:
        super().__init__(f"{feature} needs a package that is not installed: run `{install}`")
        self.feature = feature
        self.install = install


class ToolNotFound(LemmataError):
    """A system program is not on PATH; ``install`` says how to get it."""

    code = "tool_not_found"

    def __init__(self, tool: str, install: str, setting: str | None = None) -> None:
        hint = f" or point {setting} at it" if setting else ""
        super().__init__(f"`{tool}` was not found on PATH: {install}{hint}")
        self.tool = tool
        self.install = install
        self.setting = setting


class DataSourceError(LemmataError):
    """A database file or data folder given as input cannot be opened or read.

    The message names the file and what to give instead; the source is never modified.
    """

    code = "data_source"


class ImageError(LemmataError):
    """An image cannot be decoded, is empty, or exceeds the pixel limit."""

    code = "image"


class UnknownTask(LemmataError):
    """An environment has no task by that name, variation or split; the message lists valid ones."""

    code = "unknown_task"


class SnapshotError(LemmataError):
    """An environment state could not be restored, or the replay reached a different state."""

    code = "snapshot"


class ModelError(LemmataError):
    """Base class of the LLM layer's errors."""

    code = "model"


class ModelNotConfigured(ModelError):
    code = "model_not_configured"

    def __init__(self, feature: str = "this command") -> None:
        super().__init__(
            f"{feature} needs a model: set LEMMATA_MODEL (for example "
            "'openai/gpt-4o-mini', or 'openai/NAME' with LEMMATA_API_BASE for a local "
            "OpenAI-compatible server)"
        )


class UnknownModel(ModelError):
    code = "unknown_model"


class MissingApiKey(ModelError):
    code = "missing_api_key"


class AuthenticationFailed(ModelError):
    code = "authentication_failed"


class ModelUnreachable(ModelError):
    code = "model_unreachable"


class RateLimited(ModelError):
    code = "rate_limited"


class ModelCallFailed(ModelError):
    code = "model_call_failed"


class ModelOutputError(ModelError):
    """The model's reply did not parse into what was asked for, even after the retry.

    ``raw`` keeps the last reply so that a caller can log or show it.
    """

    code = "model_output"

    def __init__(self, message: str, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class ConfinementUnavailable(LemmataError):
    """Untrusted input must run confined (:mod:`lemmata.confine`) and it cannot be here: the
    message says why (bubblewrap missing, no user namespaces) and how to fix it."""

    code = "confinement_unavailable"


class ProverError(LemmataError):
    """Base class of what escapes a proof checker's process or session (Coq's ``CoqTop``,
    Lean's ``LeanRepl``); mapped once, in :mod:`lemmata.provers.process`. A check turns each
    into a verdict; ``open`` and the process layer raise them."""

    code = "prover"


class ProverTimeout(ProverError):
    """The prover gave no answer within its time limit; it was stopped (the next request
    starts a fresh one). Give a longer time limit, or a smaller problem."""

    code = "prover_timeout"


class ProverCrashed(ProverError):
    """The prover exited, closed its pipes, or answered what cannot be read; the next request
    starts a fresh one."""

    code = "prover_crashed"


class HeaderFailed(ProverError, ValueError):
    """A header (``Require Import ...``, ``import Mathlib``) does not load: the message says
    why, ``sentence`` names the header's sentence that failed when the prover says which.
    A ``ValueError`` too, as sessions raised before."""

    code = "header_failed"

    def __init__(self, message: str, sentence: str | None = None) -> None:
        super().__init__(message)
        self.sentence = sentence


class StatementFailed(ProverError, ValueError):
    """A statement does not parse or does not elaborate under its header; ``kind`` is the
    failure kind's value (``"syntax_error"``, ``"unknown_identifier"``...). A ``ValueError``
    too, as sessions raised before."""

    code = "statement_failed"

    def __init__(self, message: str, kind: str = "syntax_error") -> None:
        super().__init__(message)
        self.kind = kind


class InputRefused(ProverError, ValueError):
    """Input was refused before it reached the prover: it would write or load files, run
    code, or switch a checker off, or it is not what the call takes (a query that is not one
    read-only query). ``stage`` is the part refused (``"header"``, ``"statement"``,
    ``"proof"``). Mark a header you wrote yourself trusted to send it as it is."""

    code = "input_refused"

    def __init__(self, message: str, stage: str = "proof") -> None:
        super().__init__(message)
        self.stage = stage
