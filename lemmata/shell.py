"""``lemmata shell``: an interactive REPL over Lemmata's capabilities.

Type a command (``help`` lists them; ``:model``, ``:quit`` and the other ``:`` commands belong to
the shell itself) or plain text, which goes to the configured model as a chat turn. Editing and
history come from readline (history is kept in ``data_dir/shell_history``); Tab completes
command names and their arguments. A line that ends with ``\\`` continues on the next line, and
a block between two lines of ``\"\"\"`` is read as one input.

Capabilities add commands through the ``lemmata.shell_commands`` entry-point group (see
:mod:`lemmata.commands`). Replies of a scripted model are always labelled ``[scripted]``.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from lemmata.commands import ENTRY_POINT_GROUP, ShellCommand
from lemmata.errors import LemmataError, ModelNotConfigured

if TYPE_CHECKING:
    from rich.console import Console

    from lemmata.llm.base import ChatModel
    from lemmata.llm.types import Message
    from lemmata.settings import Settings

__all__ = ["Shell", "load_commands"]

PROMPT = "lemmata> "
CONTINUE = "....... "
BLOCK = '"""'


def load_commands(warn: Callable[[str], None] = lambda _msg: None) -> list[ShellCommand]:
    """Every command that installed packages declare under ``lemmata.shell_commands``."""
    out: list[ShellCommand] = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
            commands = list(loaded)
            if not all(isinstance(c, ShellCommand) for c in commands):
                raise TypeError("expected a list of lemmata.commands.ShellCommand")
        except Exception as exc:  # a broken plug-in must not take the shell down
            warn(f"shell commands {ep.name!r} ({ep.value}) not loaded: {type(exc).__name__}: {exc}")
            continue
        out.extend(commands)
    return out


class Shell:
    """The REPL. ``run()`` reads until ``:quit`` or end of input; ``handle(text)`` runs one
    input, which is how the SDK and the tests drive it without a terminal."""

    def __init__(
        self,
        settings: Settings,
        *,
        console: Console | None = None,
        model: ChatModel | None = None,
        commands: Iterable[ShellCommand] | None = None,
        history_file: Path | None = None,
    ) -> None:
        from rich.console import Console

        self.settings = settings
        self.console = console or Console(highlight=False)
        self._model = model
        self._model_loaded = model is not None
        self.history_file = history_file
        self.conversation: list[Message] = []
        self.running = True
        self.commands: dict[str, ShellCommand] = {}
        for command in self._builtins():
            self._register(command)
        extra = load_commands(self._warn) if commands is None else list(commands)
        for command in extra:
            self._register(command)

    # -- the CommandContext seen by commands ----------------------------------------------

    @property
    def model(self) -> ChatModel | None:
        if not self._model_loaded:
            from lemmata.llm import get_model

            self._model = get_model(self.settings)
            self._model_loaded = True
        return self._model

    # -- commands -------------------------------------------------------------------------

    def _register(self, command: ShellCommand) -> None:
        for name in (command.name, *command.aliases):
            if name in self.commands:
                self._warn(f"shell command {name!r} is defined twice; keeping the first")
                continue
            self.commands[name] = command

    def _builtins(self) -> list[ShellCommand]:
        return [
            ShellCommand(
                "help",
                "list commands, or show one: help NAME",
                self._help,
                usage="help [NAME]",
                aliases=(":help", "?"),
                complete=lambda p: [n for n in self.commands if n.startswith(p)],
            ),
            ShellCommand(
                ":model",
                "show the model, switch to another, or go offline",
                self._model_cmd,
                usage=":model [NAME | off]",
            ),
            ShellCommand(
                ":settings", "show the settings in effect (secrets hidden)", self._settings_cmd
            ),
            ShellCommand(
                ":usage", "tokens and cost of this session's model calls", self._usage_cmd
            ),
            ShellCommand(":reset", "forget the chat so far", self._reset_cmd),
            ShellCommand(
                ":quit",
                "leave the shell (Ctrl-D works too)",
                self._quit_cmd,
                aliases=(":exit", ":q"),
            ),
        ]

    def _help(self, _ctx: Any, args: str) -> None:
        name = args.strip()
        if name:
            command = self.commands.get(name) or self.commands.get(f":{name}")
            if command is None:
                raise LemmataError(f"no command {name!r}; type 'help' to list them")
            self.console.print(
                f"[bold]{escape(command.usage or command.name)}[/]  {escape(command.help)}"
            )
            return
        from rich.table import Table

        table = Table(show_header=False, box=None, pad_edge=False)
        seen: set[str] = set()
        for command in sorted(
            self.commands.values(), key=lambda c: (c.name.startswith(":"), c.name)
        ):
            if command.name in seen:
                continue
            seen.add(command.name)
            table.add_row(f"[bold]{escape(command.usage or command.name)}[/]", escape(command.help))
        self.console.print(table)
        self.console.print(
            "Other text is sent to the model as a chat turn. End a line with \\ to continue it; "
            'put a multi-line block between two """ lines.'
        )

    def _model_cmd(self, _ctx: Any, args: str) -> None:
        name = args.strip()
        if not name:
            model = self.model
            if model is None:
                self.console.print(
                    "model: none (offline). Set one with ':model NAME' or LEMMATA_MODEL."
                )
            else:
                label = " [scripted]" if model.is_scripted else ""
                where = f" at {self.settings.api_base}" if self.settings.api_base else ""
                self.console.print(f"model: {model.name}{where}{label}")
            return
        if name == "off":
            self._model, self._model_loaded = None, True
            self.console.print("model: none (offline)")
            return
        from lemmata.llm import LiteLLMModel

        settings = self.settings.with_overrides(model=name)
        candidate = LiteLLMModel.from_settings(settings)
        candidate.check()  # an unknown name or a missing key fails here, and nothing changes
        self.settings = settings
        self._model, self._model_loaded = candidate, True
        self.console.print(f"model: {candidate.name}")

    def _settings_cmd(self, _ctx: Any, _args: str) -> None:
        for key, value in self.settings.describe().items():
            self.console.print(f"{key:20} {value}")

    def _usage_cmd(self, _ctx: Any, _args: str) -> None:
        model = self.model
        if model is None:
            self.console.print("no model calls: no model is configured")
            return
        label = " (scripted, token counts estimated)" if model.is_scripted else ""
        self.console.print(f"{model.name}: {model.usage.summary()}{label}")

    def _reset_cmd(self, _ctx: Any, _args: str) -> None:
        self.conversation.clear()
        self.console.print("chat forgotten")

    def _quit_cmd(self, _ctx: Any, _args: str) -> None:
        self.running = False

    # -- one input ------------------------------------------------------------------------

    def handle(self, text: str) -> None:
        """Run one input: a command, or a chat turn. Errors are printed, never raised."""
        text = text.strip()
        if not text:
            return
        word, _, rest = text.partition(" ")
        command = self.commands.get(word)
        try:
            if command is not None:
                command.run(self, rest.strip())
            else:
                self._chat(text)
        except LemmataError as exc:
            code = getattr(exc, "code", "lemmata_error")
            self.console.print(f"[red]error[/]{escape(f'[{code}]')}: {escape(str(exc))}")
        except KeyboardInterrupt:
            self.console.print("interrupted")
        except Exception as exc:  # a bug in a command must not end the session
            self.console.print(
                f"[red]internal error[/] in {escape(repr(word))}: {type(exc).__name__}: {escape(str(exc))}"
            )

    def _chat(self, text: str) -> None:
        model = self.model
        if model is None:
            raise ModelNotConfigured("chat")
        from lemmata.prompts import load_prompt

        if not self.conversation:
            self.conversation.append(
                {"role": "system", "content": load_prompt("shell")["system"].strip()}
            )
        turn: Message = {"role": "user", "content": text}
        with self.console.status(f"{model.name} is thinking...", spinner="dots"):
            reply = model.chat([*self.conversation, turn])
        self.conversation += [turn, reply.to_message()]
        label = "[scripted] " if reply.scripted or model.is_scripted else ""
        self.console.print(f"{label}{reply.content or ''}", markup=False)

    # -- the loop -------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        self.console.print(f"[yellow]warning[/]: {escape(message)}")

    def read_input(self, read: Callable[[str], str] = input) -> str | None:
        """One logical input (joining continued lines and blocks), or ``None`` at end of input."""
        interactive = sys.stdin.isatty()
        try:
            line = read(PROMPT if interactive else "")
        except EOFError:
            return None
        if line.strip() == BLOCK:
            lines: list[str] = []
            while True:
                try:
                    more = read(CONTINUE if interactive else "")
                except EOFError:
                    break
                if more.strip() == BLOCK:
                    break
                lines.append(more)
            return "\n".join(lines)
        parts = []
        while line.endswith("\\"):
            parts.append(line[:-1])
            try:
                line = read(CONTINUE if interactive else "")
            except EOFError:
                line = ""
                break
        parts.append(line)
        return "\n".join(parts)

    def run(self) -> None:
        """Read and run inputs until ``:quit`` or end of input."""
        readline = self._setup_readline()
        model = self.model
        state = (
            f"model {model.name}" + (" [scripted]" if model.is_scripted else "")
            if model
            else "offline (no model)"
        )
        self.console.print(f"Lemmata shell, {state}. Type 'help' for commands, ':quit' to leave.")
        try:
            while self.running:
                try:
                    text = self.read_input()
                except KeyboardInterrupt:
                    self.console.print("")
                    continue
                if text is None:
                    break
                self.handle(text)
        finally:
            if readline is not None and self.history_file is not None:
                try:
                    self.history_file.parent.mkdir(parents=True, exist_ok=True)
                    readline.write_history_file(str(self.history_file))
                except OSError as exc:
                    self._warn(f"history not saved to {self.history_file}: {exc}")

    def _setup_readline(self) -> Any:
        if not sys.stdin.isatty():
            return None
        try:
            import readline
        except ImportError:  # some Pythons are built without it: no editing, still usable
            return None
        readline.set_history_length(5000)
        if self.history_file is not None and self.history_file.is_file():
            with contextlib.suppress(OSError):  # an unreadable history is not worth a warning
                readline.read_history_file(str(self.history_file))
        readline.set_completer_delims(" \t\n")
        readline.set_completer(self._completer(readline))
        binding = (
            "bind ^I rl_complete" if "libedit" in (readline.__doc__ or "") else "tab: complete"
        )
        readline.parse_and_bind(binding)
        return readline

    def _completer(self, readline: Any) -> Callable[[str, int], str | None]:
        matches: list[str] = []

        def complete(text: str, state: int) -> str | None:
            nonlocal matches
            if state == 0:
                buffer = readline.get_line_buffer()
                before = buffer[: readline.get_begidx()]
                if not before.strip():
                    matches = sorted(n + " " for n in self.commands if n.startswith(text))
                else:
                    command = self.commands.get(before.split()[0])
                    matches = command.complete(text) if command and command.complete else []
            return matches[state] if state < len(matches) else None

        return complete
