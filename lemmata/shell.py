"""``lemmata shell``: an interactive REPL over Lemmata's capabilities.

Type a command (``help`` lists them; ``:model``, ``:quit`` and the other ``:`` commands belong to
the shell itself) or plain text, which goes to :class:`lemmata.Agent` as a turn in the current
thread: with the configured model, or offline with the router when there is none. The agent's
progress shows on a status line, destructive operations ask ``[y/N]`` first, and Ctrl-C cancels
the running turn (the thread stays valid) without leaving the shell. ``:threads`` lists the
threads, ``:resume THREAD`` continues one and ``:new`` starts another.

Editing and history come from readline (history is kept in ``data_dir/shell_history``); Tab
completes command names and their arguments. A line that ends with ``\\`` continues on the next
line, and a block between two lines of ``\"\"\"`` is read as one input.

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

from lemmata._shell_turn import describe_calls, describe_event, new_thread_id, stop_on_sigint
from lemmata.commands import ENTRY_POINT_GROUP, ShellCommand
from lemmata.errors import LemmataError, UsageError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rich.console import Console
    from rich.status import Status

    from lemmata.agents.agent import Agent, AgentResult
    from lemmata.llm.base import ChatModel
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
    input, which is how the SDK and the tests drive it without a terminal.

    ``ask(question)`` answers the agent's approval questions (default: a line read from the
    terminal or from standard input); ``thread`` is the thread to start in (default: a new one).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        console: Console | None = None,
        model: ChatModel | None = None,
        commands: Iterable[ShellCommand] | None = None,
        history_file: Path | None = None,
        ask: Callable[[str], str] | None = None,
        thread: str | None = None,
    ) -> None:
        from rich.console import Console

        self.settings = settings
        self.console = console or Console(highlight=False)
        self._model = model
        self._model_loaded = model is not None
        self.history_file = history_file
        self._ask = ask
        self.thread = thread or new_thread_id()
        self._agent: Agent | None = None
        self.allow: set[str] | bool = set()  # destructive operations that run without asking
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

    @property
    def agent(self) -> Agent:
        """The agent that plain text goes to, made on first use with the shell's model (None:
        the offline router) and settings; made again when ``:model`` switches the model."""
        model = self.model
        if self._agent is None or self._agent.model is not model:
            from lemmata.agents.agent import Agent

            if self._agent is not None:
                self._agent.close()
                self._agent = None
            self._agent = Agent(model=model, settings=self.settings, allow=self.allow)
        return self._agent

    def close(self) -> None:
        """Close the agent's thread database (the shell can still be used: it reopens it)."""
        if self._agent is not None:
            self._agent.close()
            self._agent = None

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
            ShellCommand(
                ":threads", "list the agent's threads (* marks the current one)", self._threads_cmd
            ),
            ShellCommand(
                ":resume",
                "continue a thread (an id, or its first characters; none: the latest)",
                self._resume_cmd,
                usage=":resume [THREAD]",
                complete=self._complete_thread,
            ),
            ShellCommand(
                ":new",
                "start a new thread (the others stay: :threads, :resume)",
                self._new_cmd,
                aliases=(":reset",),
            ),
            ShellCommand(
                ":allow",
                "let destructive operations run without asking (no argument: show which do)",
                self._allow_cmd,
                usage=":allow [OPERATION ... | all | none]",
                complete=lambda p: [
                    n for n in (*self._destructive(), "all", "none") if n.startswith(p)
                ],
            ),
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
            "Other text goes to the agent (it proves, remembers, recalls, grounds, researches; "
            "offline its router picks the operation) as a turn in the current thread; "
            "Ctrl-C cancels a running turn. End a line with \\ to continue it; "
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

    def _destructive(self) -> list[str]:
        from lemmata.operations import load_registry

        return sorted(op.qualified_name for op in load_registry() if op.destructive)

    def _allow_cmd(self, _ctx: Any, args: str) -> None:
        words = args.replace(",", " ").split()
        destructive = self._destructive()
        if words == ["all"]:
            self.allow = True
        elif words == ["none"]:
            self.allow = set()
        elif words:
            unknown = [w for w in words if w not in destructive]
            if unknown:
                raise LemmataError(
                    f"not a destructive operation: {', '.join(unknown)}; "
                    f"choose from {', '.join(destructive)}, or 'all' or 'none'"
                )
            self.allow = (self.allow if isinstance(self.allow, set) else set()) | set(words)
        if self._agent is not None:
            self._agent.allow = self.allow
        if self.allow is True:
            shown = "all destructive operations run without asking"
        elif self.allow:
            shown = f"run without asking: {', '.join(sorted(self.allow))}"
        else:
            shown = f"every destructive operation asks first ({', '.join(destructive)})"
        self.console.print(shown)

    def _new_cmd(self, _ctx: Any, _args: str) -> None:
        self.thread = new_thread_id()
        self.console.print(f"new thread {self.thread}")

    def _threads_cmd(self, _ctx: Any, _args: str) -> None:
        threads = self.agent.threads()
        if not threads:
            self.console.print("no threads yet: type a task to start one")
            return
        for info in threads:
            mark = "*" if info.thread == self.thread else " "
            first = info.first.splitlines()[0] if info.first else ""
            self.console.print(
                f"{mark} {info.thread}  {info.messages:3d} messages  {first}", markup=False
            )
        if all(info.thread != self.thread for info in threads):
            self.console.print(f"* {self.thread}  (current, new)", markup=False)

    def _complete_thread(self, prefix: str) -> list[str]:
        try:
            return [t.thread for t in self.agent.threads() if t.thread.startswith(prefix)]
        except Exception:  # completion must never break the line being typed
            return []

    def _resume_cmd(self, _ctx: Any, args: str) -> None:
        wanted = args.strip()
        threads = self.agent.threads()
        if not threads:
            raise UsageError("there are no threads to resume yet")
        if not wanted:
            found = [threads[0]]
        else:
            found = [t for t in threads if t.thread == wanted] or [
                t for t in threads if t.thread.startswith(wanted)
            ]
        if not found:
            raise UsageError(f"no thread {wanted!r}; ':threads' lists them")
        if len(found) > 1:
            names = ", ".join(t.thread for t in found[:5])
            raise UsageError(f"{wanted!r} could be {names}: type more of the id")
        info = found[0]
        self.thread = info.thread
        last = info.last.splitlines()[0] if info.last else ""
        self.console.print(
            f"thread {info.thread} ({info.messages} messages); last: {last}", markup=False
        )
        result = self.agent.result(self.thread)
        if result.status == "needs_approval":
            self._settle(result)

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
        """One agent turn in the current thread; Ctrl-C cancels it, and only it."""
        agent = self.agent
        try:
            self._follow(agent.stream(text, thread=self.thread))
            result = agent.result(self.thread)
            if result.status == "needs_approval":
                self._settle(result)
                return
        except KeyboardInterrupt:
            self.console.print("cancelled")
            return
        self._show(result)

    def _follow(self, events: Iterator[dict[str, Any]]) -> None:
        """Drain the agent's events onto the status line."""
        model = self.model
        thinking = f"{model.name} is thinking..." if model is not None else ""
        status: Status
        with (
            self.console.status(thinking or "recalling memory", spinner="dots") as status,
            stop_on_sigint(self._agent),
        ):
            try:
                for event in events:
                    line = describe_event(event, thinking)
                    if line:
                        status.update(escape(line))
            except KeyboardInterrupt:
                # Ctrl-C may land here rather than inside the agent's generator: hand it over,
                # so that the agent closes the turn (it raises it again).
                throw = getattr(events, "throw", None)
                if throw is not None:
                    with contextlib.suppress(KeyboardInterrupt, StopIteration, RuntimeError):
                        throw(KeyboardInterrupt())
                raise

    def _settle(self, result: AgentResult) -> None:
        """Ask about a paused turn's destructive operations, then finish the turn."""
        calls = [c for request in result.pending or [] for c in request.get("calls", [])]
        question = (result.pending or [{}])[0].get("question", "approve?")
        try:
            answer = self._ask_line(f"{question} {describe_calls(calls)} [y/N] ")
        except KeyboardInterrupt:
            answer = ""  # Ctrl-C at the question denies, and the turn still closes cleanly
            self.console.print("")
        approved = answer.strip().lower() in ("y", "yes")
        with self.console.status("running the approved operations" if approved else "denying"):
            done = self.agent.approve(result.thread, approved)
        self._show(done)

    def _ask_line(self, question: str) -> str:
        if self._ask is not None:
            return self._ask(question)
        try:
            if sys.stdin.isatty():
                return input(question)
            self.console.print(question, markup=False)  # piped: the answer is the next line
            return input("")
        except EOFError:
            return ""

    def _show(self, result: AgentResult) -> None:
        model = self.model
        answer = result.answer or f"({result.status})"
        if model is not None and model.is_scripted and not answer.startswith("[scripted]"):
            answer = f"[scripted] {answer}"
        self.console.print(answer, markup=False)
        if result.status == "declined" and model is None:
            self.console.print(
                "[dim](offline: no model is configured; for open-ended requests set one with "
                "':model NAME' or LEMMATA_MODEL)[/]"
            )

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
        self.console.print(
            f"Lemmata shell, {state}, thread {self.thread}. "
            "Type 'help' for commands, ':quit' to leave."
        )
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
            self.close()

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
