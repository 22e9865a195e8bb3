"""``%%lemmata`` in Jupyter and IPython: hand a cell to :class:`lemmata.Agent`.

Load it with ``%load_ext lemmata`` (or ``%load_ext lemmata.jupyter``), then::

    %%lemmata
    Prove in Coq: forall n : nat, n + 0 = n

The cell's text goes to one agent per kernel (per memory user), in one thread per kernel, so
that cells continue the conversation as a chat does. ``{name}`` is replaced by the value of
``name`` from the notebook's namespace, as in jupyter-ai's ``%%ai`` (only placeholders that
are identifiers bound in the namespace; anything else, ``{x : nat}`` or ``{{name}}``, is kept
as typed). Options: ``--thread T`` (run in thread T), ``--user U`` (U's memory),
``--allow forget`` (run that destructive operation without asking; repeatable, or ``all``).

The cell returns the :class:`~lemmata.agents.agent.AgentResult` (``_`` holds it), shown as a
rich view: a proof's verdict, the proof and the failure; memory items with the episodes they
came from; a grounding with its heatmap; research insights; a decline with its reason; an
approval request with the line that answers it (``%lemmata_approve THREAD`` or
``%lemmata_approve --deny THREAD``). ``%lemmata_threads`` lists the threads.
"""

from __future__ import annotations

import base64
import html
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.agents.agent import AgentResult

if TYPE_CHECKING:
    from lemmata.agents.agent import Agent, ThreadInfo
    from lemmata.operations import Envelope
    from lemmata.settings import Settings

__all__ = [
    "NotebookResult",
    "ThreadsView",
    "interpolate",
    "load_ipython_extension",
    "unload_ipython_extension",
]

_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
_GOOD = {"proved", "ok", "answered"}


def interpolate(text: str, namespace: Mapping[str, Any]) -> str:
    """Replace each ``{name}`` whose name is bound in ``namespace`` by ``str(value)``.

    >>> interpolate("Prove {goal} {x : nat} {missing} {{goal}}", {"goal": "1 = 1"})
    'Prove 1 = 1 {x : nat} {missing} {{goal}}'
    """

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(namespace[name]) if name in namespace else match.group(0)

    return _PLACEHOLDER.sub(value, text)


def _typed(env: Envelope[Any]) -> Any:
    """The envelope's payload as its operation's output model (the dict when that fails)."""
    if env.payload is None or not isinstance(env.payload, dict):
        return env.payload
    from lemmata.operations import load_registry

    op = load_registry().find(env.operation)
    if op is None:
        return env.payload
    try:
        return op.output.model_validate(env.payload)
    except Exception:  # a partial payload still shows as JSON
        return env.payload


def _badge(label: str) -> str:
    colour = "#1a7f37" if label in _GOOD else "#9a6700" if label == "needs_approval" else "#cf222e"
    return (
        f'<span style="background:{colour};color:#fff;border-radius:4px;padding:1px 6px;'
        f'font-weight:bold">{html.escape(label)}</span>'
    )


def _pre(text: str) -> str:
    return f"<pre><code>{html.escape(text)}</code></pre>"


def _fence(text: str, lang: str = "") -> str:
    return f"```{lang}\n{text.rstrip()}\n```"


def _image_html(path: str) -> str:
    """The heatmap as an inline image (read through IPython's ``Image``); '' when unreadable."""
    from IPython.display import Image

    try:
        image = Image(filename=path)
    except (OSError, ValueError):
        return ""
    data = image.data if isinstance(image.data, bytes) else b""
    if not data:
        return ""
    mime = "image/jpeg" if image.format == "jpeg" else "image/png"
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="heatmap" style="max-width:480px" src="data:{mime};base64,{encoded}"/>'


def _items(items: list[Any]) -> tuple[str, str]:
    rows_html, rows_md = [], []
    for item in items:
        sources = ", ".join(item.provenance) or "no recorded episode"
        rows_html.append(
            f"<li>{html.escape(item.text)} <small><code>{html.escape(item.id)}</code> "
            f"from {html.escape(sources)}</small></li>"
        )
        rows_md.append(f"- {item.text} (`{item.id}`, from {sources})")
    if not items:
        return "<p>Nothing in memory matches.</p>", "Nothing in memory matches."
    return "<ul>" + "".join(rows_html) + "</ul>", "\n".join(rows_md)


def _render(env: Envelope[Any]) -> tuple[str, str]:
    """One operation's result as (HTML, markdown)."""
    payload = _typed(env)
    head_html = f"<p><b>{html.escape(env.operation)}</b> {_badge(env.status)}</p>"
    head_md = f"**{env.operation}**: {env.status}"
    body_html: list[str] = []
    body_md: list[str] = []
    if hasattr(payload, "verdict"):  # a proof
        head_html = (
            f"<p><b>{html.escape(env.operation)}</b> {_badge(payload.verdict)} "
            f"<small>{html.escape(payload.method)}, {html.escape(payload.backend)}, "
            f"{payload.elapsed_s:.1f} s</small></p>"
        )
        head_md = (
            f"**{env.operation}**: **{payload.verdict}** "
            f"({payload.method}, {payload.backend}, {payload.elapsed_s:.1f} s)"
        )
        if payload.proof:
            body_html.append(_pre(payload.proof))
            body_md.append(_fence(payload.proof, "coq" if payload.backend == "coq" else "lean"))
        if payload.failure:
            kind = str(payload.failure.get("kind") or payload.failure.get("class") or "failure")
            message = str(payload.failure.get("message") or "")
            body_html.append(f"<p>failure: <code>{html.escape(kind)}</code></p>")
            body_md.append(f"failure: `{kind}`")
            if message:
                body_html.append(_pre(message))
                body_md.append(_fence(message))
            goals = [str(g) for g in payload.failure.get("goals") or []]
            if goals:
                text = "\n".join(f"⊢ {g}" for g in goals)
                body_html.append(f"<p>goals there:</p>{_pre(text)}")
                body_md.append("goals there:\n\n" + _fence(text))
    elif isinstance(getattr(payload, "items", None), list) and all(
        hasattr(i, "provenance") for i in payload.items
    ):  # memory items (a forget's items are bare ids: shown as text below)
        answer = getattr(payload, "answer", None)
        if answer:
            body_html.append(f"<p>{html.escape(answer)}</p>")
            body_md.append(answer)
        episode = getattr(payload, "episode", None)
        if episode:
            body_html.append(f"<p>stored as episode <code>{html.escape(episode)}</code></p>")
            body_md.append(f"stored as episode `{episode}`")
        items_html, items_md = _items(payload.items)
        body_html.append(items_html)
        body_md.append(items_md)
    elif hasattr(payload, "abstained"):  # a grounding
        body_html.append(f"<p>{html.escape(payload.describe())}</p>")
        body_md.append(payload.describe())
        if payload.bbox:
            box = ", ".join(f"{v:.0f}" for v in payload.bbox)
            body_html.append(f"<p>box: ({html.escape(box)})</p>")
            body_md.append(f"box: ({box})")
        if payload.heatmap:
            image = _image_html(payload.heatmap) if Path(payload.heatmap).is_file() else ""
            body_html.append(
                image or f"<p>heatmap: <code>{html.escape(payload.heatmap)}</code></p>"
            )
            body_md.append(f"heatmap: `{payload.heatmap}`")
    elif hasattr(payload, "insights"):  # research
        body_html.append(
            f"<p>{payload.total} insights; report in <code>{html.escape(payload.report)}</code></p>"
        )
        body_md.append(f"{payload.total} insights; report in `{payload.report}`")
        statements = [str(i.get("statement", i)) for i in payload.insights]
        body_html.append(
            "<ol>" + "".join(f"<li>{html.escape(t)}</li>" for t in statements) + "</ol>"
        )
        body_md.append("\n".join(f"{n}. {t}" for n, t in enumerate(statements, 1)))
    elif payload is not None:
        text = env.text()
        body_html.append(_pre(text))
        body_md.append(_fence(text))
    if not env.ok and (env.reason or env.hint):
        for label, text in (("reason", env.reason), ("hint", env.hint)):
            if text and text not in "".join(body_md):  # not the failure message again
                body_html.append(f"<p><i>{label}</i>: {html.escape(text)}</p>")
                body_md.append(f"*{label}*: {text}")
    return head_html + "".join(body_html), "\n\n".join([head_md, *body_md])


class NotebookResult(AgentResult):
    """An :class:`~lemmata.agents.agent.AgentResult` that notebooks show richly (HTML and
    markdown): what ``%%lemmata`` returns."""

    @classmethod
    def of(cls, result: AgentResult) -> NotebookResult:
        """The same result, with the notebook view."""
        return cls(**{name: getattr(result, name) for name in result.__dataclass_fields__})

    def _parts(self) -> tuple[list[str], list[str]]:
        html_parts = [
            f"<p>{_badge(self.status)} <small>thread <code>{html.escape(self.thread)}</code>"
            "</small></p>"
        ]
        md_parts = [f"**{self.status}** (thread `{self.thread}`)"]
        if self.status == "needs_approval":
            calls = [c for req in self.pending or [] for c in req.get("calls", [])]
            listed = "; ".join(f"{c['tool']}({c['args']})" for c in calls)
            how = f"%lemmata_approve {self.thread}"
            deny = f"%lemmata_approve --deny {self.thread}"
            html_parts.append(
                f"<p>Waiting for approval: <code>{html.escape(listed)}</code>. "
                f"Run <code>{html.escape(how)}</code> to go ahead, or "
                f"<code>{html.escape(deny)}</code>.</p>"
            )
            md_parts.append(f"Waiting for approval: `{listed}`. Run `{how}` or `{deny}`.")
            return html_parts, md_parts
        if not self.results:  # declined, cancelled, or a model's own answer
            html_parts.append(f"<p>{html.escape(self.answer)}</p>")
            md_parts.append(self.answer)
        for env in self.results:
            part_html, part_md = _render(env)
            html_parts.append(part_html)
            md_parts.append(part_md)
        if self.results and (self.status not in ("answered", "failed")):
            html_parts.append(f"<p>{html.escape(self.answer)}</p>")
            md_parts.append(self.answer)
        return html_parts, md_parts

    def _repr_html_(self) -> str:
        return '<div class="lemmata-result">' + "".join(self._parts()[0]) + "</div>"

    def _repr_markdown_(self) -> str:
        return "\n\n".join(self._parts()[1])

    def __repr__(self) -> str:
        return f"[{self.status}] {self.answer}"


class ThreadsView:
    """The agent's threads, for ``%lemmata_threads``."""

    def __init__(self, threads: list[ThreadInfo], current: str) -> None:
        self.threads = threads
        self.current = current

    def _rows(self) -> list[tuple[str, str, int, str]]:
        return [
            (
                "*" if t.thread == self.current else "",
                t.thread,
                t.messages,
                t.first.splitlines()[0] if t.first else "",
            )
            for t in self.threads
        ]

    def _repr_html_(self) -> str:
        if not self.threads:
            return "<p>No threads yet.</p>"
        rows = "".join(
            f"<tr><td>{mark}</td><td><code>{html.escape(thread)}</code></td><td>{n}</td>"
            f"<td>{html.escape(first)}</td></tr>"
            for mark, thread, n, first in self._rows()
        )
        return (
            f"<table><tr><th></th><th>thread</th><th>messages</th><th>first</th></tr>{rows}</table>"
        )

    def __repr__(self) -> str:
        if not self.threads:
            return "No threads yet."
        return "\n".join(
            f"{mark or ' '} {thread}  {n:3d} messages  {first}"
            for mark, thread, n, first in self._rows()
        )


def _checkpoint(settings: Settings, user: str) -> Path | None:
    """Each memory user's threads apart (the default user's are the shell's)."""
    if user == "default":
        return None
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", user)
    return settings.data_dir / "agent" / f"threads-{safe}.sqlite"


def _allow(agent: Agent, names: list[str]) -> set[str] | bool:
    """``--allow`` values as the agent's allow-list (qualified names), or True for ``all``."""
    from IPython.core.error import UsageError

    if any(n.strip().lower() == "all" for n in names):
        return True
    allowed: set[str] = set()
    for name in names:
        op = agent.registry.find(name)
        if op is None:
            raise UsageError(f"--allow {name}: no such operation")
        allowed.add(op.qualified_name)
    return allowed


def _magics_class() -> type:
    from IPython.core.error import UsageError
    from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
    from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

    from lemmata.errors import LemmataError

    @magics_class
    class LemmataMagics(Magics):
        """``%%lemmata``, ``%lemmata_threads`` and ``%lemmata_approve``."""

        def __init__(self, shell: Any) -> None:
            super().__init__(shell)
            self.agents: dict[str, Agent] = {}
            self.thread = f"nb-{uuid.uuid4().hex[:10]}"
            self._settings: Settings | None = None

        def agent(self, user: str = "default") -> Agent:
            if user not in self.agents:
                from lemmata.agents.agent import Agent
                from lemmata.llm import get_model
                from lemmata.settings import Settings

                if self._settings is None:
                    self._settings = Settings.load()
                settings = self._settings
                self.agents[user] = Agent(
                    model=get_model(settings),
                    settings=settings,
                    user=user,
                    checkpoint=_checkpoint(settings, user),
                )
            return self.agents[user]

        def close(self) -> None:
            """Close the agents; the next cell makes new ones from the settings then in effect."""
            for agent in self.agents.values():
                agent.close()
            self.agents.clear()
            self._settings = None

        @magic_arguments()
        @argument("--thread", "-t", help="the thread to run in (default: this kernel's)")
        @argument("--user", "-u", default="default", help="whose memory (default: default)")
        @argument(
            "--allow",
            action="append",
            default=[],
            help="a destructive operation to run without asking (e.g. forget), or all",
        )
        @cell_magic
        def lemmata(self, line: str, cell: str) -> NotebookResult | None:
            """Run the cell through the agent; ``{name}`` takes ``name`` from the namespace."""
            args = parse_argstring(self.lemmata, line)
            task = interpolate(cell, self.shell.user_ns if self.shell is not None else {})
            try:
                agent = self.agent(args.user)
                thread = args.thread or self.thread
                before = agent.allow
                if args.allow:
                    agent.allow = _allow(agent, args.allow)
                try:
                    result = agent.run(task, thread=thread)
                except KeyboardInterrupt:  # the agent closed the turn: show it as cancelled
                    result = agent.result(thread)
                finally:
                    agent.allow = before
            except LemmataError as exc:
                raise UsageError(f"[{exc.code}] {exc}") from None
            return NotebookResult.of(result)

        @magic_arguments()
        @argument("--user", "-u", default="default", help="whose threads (default: default)")
        @line_magic
        def lemmata_threads(self, line: str) -> ThreadsView:
            """List the threads, most recent first (* marks this kernel's)."""
            args = parse_argstring(self.lemmata_threads, line)
            return ThreadsView(self.agent(args.user).threads(), self.thread)

        @magic_arguments()
        @argument("thread", help="the thread waiting for approval")
        @argument("--deny", action="store_true", help="deny instead of approving")
        @argument("--user", "-u", default="default")
        @line_magic
        def lemmata_approve(self, line: str) -> NotebookResult:
            """Approve (or ``--deny``) the operations a thread is waiting for."""
            args = parse_argstring(self.lemmata_approve, line)
            try:
                result = self.agent(args.user).approve(args.thread, not args.deny)
            except LemmataError as exc:
                raise UsageError(f"[{exc.code}] {exc}") from None
            return NotebookResult.of(result)

    return LemmataMagics


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%lemmata``, ``%lemmata_threads`` and ``%lemmata_approve`` (``%load_ext
    lemmata``). Loading it again keeps the agents and the thread."""
    if "LemmataMagics" in ipython.magics_manager.registry:
        return
    ipython.register_magics(_magics_class())


def unload_ipython_extension(ipython: Any) -> None:
    """Close the agents' thread databases (``%unload_ext lemmata.jupyter``)."""
    magics = ipython.magics_manager.registry.get("LemmataMagics")
    if magics is not None:
        magics.close()
