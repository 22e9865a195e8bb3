"""A small torch policy over admissible actions, trained three ways on the same expert
demonstrations: imitation (``il``), imitation with implicit world modelling (``iwm``) and
imitation with a self-reflection-style objective (``sr``).

The policy reads the instruction, the current observation, the last few observations and the
actions taken so far, and scores each admissible action; it acts by taking the best. Every text
is a bag of word embeddings from one table, so the model trains in minutes on two cores. A word
the training texts never held is unknown to that table, so two actions that differ only in such
words (``put yogurt in fridge``, ``put yogurt in wardrobe`` with "yogurt" unseen) differ only by
their other words; with ``phrases="minilm"`` each action also carries frozen MiniLM sentence
embeddings of its object and its destination (:func:`action_parts`) and their product, through
a learned projection, so that what the demonstrations and the rollouts say about placing a
sweater reaches a coat. All three methods read the same representation.

* ``il``: cross-entropy over the admissible actions with the expert's action as the target.
* ``iwm``: the same, plus next-state prediction on the rollouts' transitions (the expert's and
  the K alternatives'): from the representation of (state, action) the model predicts the words
  of the observation the action led to, through a decoder tied to the input embeddings (untied,
  the objective shapes nothing the policy reads). Error transitions are capped at
  ``invalid_cap`` of the set, as the method advises; with ``cap_unchanged`` the transitions
  whose next observation shows no word the current one lacked (an action that changed nothing
  visible) are capped with them; with ``iwm_balance`` each outcome class of :func:`outcome_class`
  weighs the same in the set instead (the few transitions that made progress or failed are
  repeated up to the commonest class's count). ``iwm_target`` is the next state's words
  (``"all"``), the words it has that the current observation lacks (``"new"``), or half of each
  (``"mixed"``). ``iwm_schedule`` is ``"joint"`` (both losses at every update,
  the world-model loss's weight falling linearly to 0 with ``iwm_decay``) or ``"stage"``
  (next-state prediction first, for ``iwm_stage`` of the updates, then imitation); both keep
  IL's total number of updates.
* ``sr``: the same imitation, plus an outcome head trained on every tried action of every
  expert state (the expert's and the alternatives'): it predicts the outcome class of
  :func:`outcome_class` (progress, new, stale, invalid, failure) observed in the rollouts; and the
  policy acts on its own score plus ``sr_weight`` times the predicted log-probability that the
  action's outcome is none of ``sr_avoid``; ``sr_rank_weight`` adds a pairwise loss ranking
  tried actions with an avoided outcome below the other tried ones; ``sr_contrast_weight`` adds
  a pairwise loss between the expert's action and each tried alternative whose outcome was
  worse than the expert's (a later class, the margin ``sr_margin`` per class apart); and
  ``sr_accept`` names outcome classes (e.g. ``"progress"``) whose tried alternatives join the
  expert's action in the imitation target at ``sr_accept_weight`` each (another way forward
  where the demonstration took one); ``sr_recover`` names outcome classes whose alternatives,
  when their observation still shows every word of the state they left (a look, an inventory,
  a failed tactic: nothing moved away), give imitation examples at the alternative's next
  state, the detour and its outcome in the history and the expert's action as the target (half
  of each batch, the number of updates unchanged). *How this differs from the paper:* the paper fine-tunes a
  language model on chain-of-thought reflections written by a model (why the expert's action
  beats the alternatives, given their observed outcomes) and the policy generates such a
  thought before each action. No model writes text here; the "reflection" is the predicted
  outcome class of each candidate, learned from the same observed outcomes and consulted
  before acting. It keeps the method's grounding (only outcomes actually observed are
  targets) but none of its free-form reasoning.

Three options of the config change only how a trained policy acts (decoding), not its
training, to break the loops a greedy policy falls into (repeating an action that changed
nothing): ``repeat_penalty`` lowers an action's score by that much for each time the episode
already took it from the same observation, and ``stale_penalty`` lowers it once when its last
try from the same observation was stale (it showed nothing the episode had not shown); both
apply to every method alike. ``sr_stale_weight`` is ``sr``'s own: it adds that weight times the
log-probability, by the outcome head, that the action is not ``stale``. ``loop_penalty`` (every
method alike) reads the episode's own states (:func:`looped`): an action whose last try from the
state the episode stands in now lowered the score, or led back to this state with no score
gained since (at once, or through a cycle of actions: ``open box`` then ``close box``, ``take
mug`` then ``put mug in sink``), is lowered by that much until the state changes. States are
compared by the observation's ``view`` (what the agent sees of the world, without the action's
answer; see :mod:`lemmata.environments.text`) where the environment gives one.

Training is deterministic for a seed (on one thread; the callers of this module set
``torch.set_num_threads(1)``, which is also the fastest on a busy 2-core machine).

>>> policy = train_policy(steps, "sr", seed=0, updates=600)         # doctest: +SKIP
>>> policy.act(instruction, observation, history, admissible)        # doctest: +SKIP
'open door to west'
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from lemmata.agents.experience.records import ExpertStep, Outcome
from lemmata.environments.text import Task, TextEnvironment
from lemmata.errors import DataSourceError, MissingDependency, UsageError

__all__ = [
    "METHODS",
    "OUTCOMES",
    "EvalResult",
    "Method",
    "Policy",
    "PolicyConfig",
    "TaskResult",
    "action_parts",
    "evaluate",
    "looped",
    "outcome_class",
    "train_policy",
]

Method = Literal["il", "iwm", "sr"]
METHODS: tuple[Method, ...] = ("il", "iwm", "sr")
#: Outcome classes of the ``sr`` head, in index order (see :func:`outcome_class`).
OUTCOMES = ("progress", "new", "stale", "invalid", "failure")
_FORMAT = "lemmata-experience-policy"
_VERSION = 1
_TOKEN = re.compile(r"[a-z]+|\d+")
_PAD, _UNK = 0, 1
_FEATURES = 4
_PHRASE_DIM = 384  # all-MiniLM-L6-v2


def _torch() -> Any:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a core dependency here
        raise MissingDependency("the experience policy", "pip install torch") from None
    return torch


@dataclass(frozen=True)
class PolicyConfig:
    """The model's size and the training budget; the three methods share it."""

    dim: int = 64
    hidden: int = 128
    recent: int = 2
    updates: int = 1500
    batch: int = 16
    lr: float = 3e-3
    weight_decay: float = 1e-4
    iwm_schedule: Literal["joint", "stage"] = "joint"
    iwm_weight: float = 1.0
    iwm_stage: float = 0.3
    invalid_cap: float = 0.2
    cap_unchanged: bool = False
    iwm_decay: bool = False
    iwm_target: Literal["all", "new", "mixed"] = "all"
    sr_weight: float = 1.0
    sr_loss_weight: float = 1.0
    sr_rank_weight: float = 0.0
    sr_avoid: str = "stale,invalid,failure"
    sr_accept: str = ""
    sr_accept_weight: float = 0.5
    sr_contrast_weight: float = 0.0
    sr_margin: float = 0.5
    sr_recover: str = ""
    iwm_balance: bool = False
    negatives: int = 0
    history: Literal["bag", "gru"] = "bag"
    history_len: int = 12
    phrases: Literal["", "minilm"] = ""
    # decoding only (training ignores them): loop-breaking, the same for every method
    repeat_penalty: float = 0.0
    stale_penalty: float = 0.0
    sr_stale_weight: float = 0.0
    loop_penalty: float = 0.0


def _words(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


_PARTS = re.compile(r"^\s*(\S+)\s+(.+?)\s+(?:in|into|on|onto|to|from|with|at)\s+(.+?)\s*$", re.I)


def action_parts(action: str) -> tuple[str, str]:
    """The object and the destination of an action, by its form: ``verb OBJECT prep
    DESTINATION`` (a preposition such as in, on, to, from, with), else ``verb OBJECT`` with no
    destination; an action of one word is its own object.

    >>> action_parts("put dirty mug in dishwasher")
    ('dirty mug', 'dishwasher')
    >>> action_parts("take box of Q-tips")
    ('box of Q-tips', '')
    """
    m = _PARTS.match(action)
    if m:
        return m[2], m[3]
    verb, _, rest = action.strip().partition(" ")
    return (rest.strip() or verb), ""


class _Phrases:
    """Frozen sentence embeddings of each action's object and destination (see
    :func:`action_parts`), so that an action about an item or a place the demonstrations never
    named still lands near the ones they did: ``put dirty mug in dishwasher`` beside ``put dirty
    saucepan in dishwasher``. Each action becomes ``[object, destination, object * destination]``
    (the product scaled to the size of the others), computed once per phrase; the policy learns
    what to read from it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._embedder: Any = None
        self._vectors: dict[str, Any] = {}
        self._rows: dict[str, Any] = {}
        self.dim = 0

    def _embed(self, phrases: list[str]) -> None:
        torch = _torch()
        todo = sorted({p for p in phrases if p not in self._vectors})
        if not todo:
            return
        if self._embedder is None:
            from lemmata.embeddings import SentenceTransformerEmbedder

            # one thread: the policy's callers run one torch thread each
            self._embedder = SentenceTransformerEmbedder.minilm(threads=1, batch_size=128)
        got = torch.tensor(self._embedder.embed(todo), dtype=torch.float32)
        for phrase, row in zip(todo, got, strict=True):
            self._vectors[phrase] = row

    def rows(self, actions: Sequence[str]) -> Any:
        """One row of ``3 * dim`` features per action."""
        torch = _torch()
        todo = [a for a in dict.fromkeys(actions) if a not in self._rows]
        if todo:
            parts = [action_parts(a) for a in todo]
            self._embed([p for pair in parts for p in pair if p])
            any_vec = next(iter(self._vectors.values()))
            zero = torch.zeros_like(any_vec)
            scale = math.sqrt(any_vec.shape[0])
            for a, (obj, dest) in zip(todo, parts, strict=True):
                o = self._vectors[obj] if obj else zero
                d = self._vectors[dest] if dest else zero
                self._rows[a] = torch.cat([o, d, o * d * scale])
            self.dim = int(any_vec.shape[0])
        return torch.stack([self._rows[a] for a in actions])


def outcome_class(outcome: Outcome, score_before: float, seen: set[str] | None = None) -> int:
    """The index in :data:`OUTCOMES` of what an action led to, from its observed outcome.

    ``failure`` (the task failed or the score fell), ``invalid``, ``progress`` (success or the
    score rose), then, for an action that changed no score: ``new`` when its observation holds a
    word the episode had not shown yet (``seen``: the words of the instruction and of every
    observation so far; a new room, an opened container's contents), ``stale`` when it showed
    nothing new (a step back into a room already seen, an item taken that the task does not
    need). Without ``seen`` every such action is ``new``.

    >>> outcome_class(Outcome("You are in the kitchen."), 0.0, {"you", "are", "in", "the", "kitchen"})
    2
    """
    if outcome.failure or outcome.score < score_before - 1e-9:
        return 4
    if outcome.invalid:
        return 3
    if outcome.success or outcome.score > score_before + 1e-9:
        return 0
    if seen is not None and set(_words(outcome.observation)) <= seen:
        return 2
    return 1


@dataclass
class _State:
    instruction: list[int]
    observation: list[int]
    recent: list[int]
    last: list[int]
    past: list[int]
    history_actions: list[str]
    steps: list[tuple[list[int], list[int]]]  # (action, observation) ids, oldest first


class _Encoder:
    """Words to ids, with a cache: the same texts recur at every step of every episode."""

    def __init__(
        self, vocab: list[str], recent: int, history_len: int = 12, phrases: str = ""
    ) -> None:
        self.vocab = vocab
        self.index = {w: i for i, w in enumerate(vocab)}
        self.recent = recent
        self.history_len = history_len
        self._cache: dict[str, list[int]] = {}
        self.phrases = _Phrases(phrases) if phrases else None

    @classmethod
    def build(
        cls, texts: Sequence[str], recent: int, history_len: int = 12, phrases: str = ""
    ) -> _Encoder:
        seen: dict[str, None] = {}
        for text in texts:
            for w in _words(text):
                seen.setdefault(w, None)
        return cls(["<pad>", "<unk>", *sorted(seen)], recent, history_len, phrases)

    def phrase_rows(self, groups: Sequence[Sequence[str]]) -> Any:
        """The actions' phrase features padded like :func:`_pad3` (``[groups, actions,
        features]``), or ``None`` when the policy reads no phrase embeddings."""
        if self.phrases is None:
            return None
        torch = _torch()
        rows = [self.phrases.rows(g) for g in groups]
        count = max(len(g) for g in groups)
        out = torch.zeros((len(groups), count, rows[0].shape[-1]))
        for i, r in enumerate(rows):
            out[i, : len(r)] = r
        return out

    def ids(self, text: str) -> list[int]:
        got = self._cache.get(text)
        if got is None:
            got = [self.index.get(w, _UNK) for w in _words(text)] or [_PAD]
            if len(self._cache) < 200_000:
                self._cache[text] = got
        return got

    def state(
        self, instruction: str, observation: str, history: Sequence[tuple[str, str]]
    ) -> _State:
        earlier = [obs for _, obs in history[:-1]][-self.recent :] if self.recent else []
        actions = [a for a, _ in history]
        return _State(
            instruction=self.ids(instruction),
            observation=self.ids(observation),
            recent=[i for obs in earlier for i in self.ids(obs)] or [_PAD],
            last=self.ids(actions[-1]) if actions else [_PAD],
            past=[i for a in actions for i in self.ids(a)] or [_PAD],
            history_actions=actions,
            steps=[(self.ids(a), self.ids(o)) for a, o in history[-self.history_len :]],
        )

    def features(self, state: _State, action: str) -> list[float]:
        """What the history and the texts say about one action: taken before, just taken,
        and how many of its words the observation and the instruction mention."""
        words = set(self.ids(action))
        count = state.history_actions.count(action)
        return [
            min(count, 3) / 3.0,
            float(bool(state.history_actions) and state.history_actions[-1] == action),
            len(words & set(state.observation)) / max(len(words), 1),
            len(words & set(state.instruction)) / max(len(words), 1),
        ]


def _net(vocab: int, cfg: PolicyConfig) -> Any:
    torch = _torch()
    nn = torch.nn

    class Net(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            d, h = cfg.dim, cfg.hidden
            self.emb = nn.Embedding(vocab, d, padding_idx=_PAD)
            self.state = nn.Sequential(nn.Linear(5 * d, d), nn.Tanh())
            self.pair = nn.Sequential(nn.Linear(3 * d + _FEATURES, h), nn.ReLU())
            self.score = nn.Linear(h, 1)
            self.next = nn.Linear(h, d)  # next-state decoder, read out through emb (tied)
            self.outcome = nn.Linear(h, len(OUTCOMES))
            if cfg.phrases:
                # the action's object and destination as sentence embeddings (see _Phrases)
                self.phrase = nn.Linear(3 * _PHRASE_DIM, d)
            if cfg.history == "gru":
                # the whole recent history, (action, observation) step by step, in place of
                # the bag of the latest observations
                self.steps = nn.GRU(2 * d, d, batch_first=True)

        def bag(self, ids: Any) -> Any:
            mask = (ids != _PAD).unsqueeze(-1).float()
            return (self.emb(ids) * mask).sum(-2) / mask.sum(-2).clamp(min=1.0)

        def encode_state(self, segments: list[Any]) -> Any:
            return self.state(torch.cat([self.summary(s) for s in segments], -1))

        def summary(self, segment: Any) -> Any:
            if not isinstance(segment, tuple):
                return self.bag(segment)
            actions, observations, lengths = segment  # [B, T, W], [B, T, W], [B]
            if actions.shape[1] == 0:
                return torch.zeros((actions.shape[0], cfg.dim))
            out, _ = self.steps(torch.cat([self.bag(actions), self.bag(observations)], -1))
            last = (lengths - 1).clamp(min=0)
            picked = out[torch.arange(out.shape[0]), last]
            return picked * (lengths > 0).unsqueeze(-1).float()

        def pairs(self, s: Any, actions: Any, feats: Any, phrases: Any = None) -> Any:
            a = self.bag(actions)  # [B, A, d]
            if phrases is not None:
                a = a + self.phrase(phrases)
            s = s.unsqueeze(1).expand_as(a)
            return self.pair(torch.cat([s, a, s * a, feats], -1))

        def next_logits(self, z: Any) -> Any:
            return self.next(z) @ self.emb.weight.t()

    return Net()


def _pad(rows: Sequence[Sequence[int]]) -> Any:
    torch = _torch()
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [_PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def _pad3(groups: Sequence[Sequence[Sequence[int]]]) -> Any:
    torch = _torch()
    width = max(len(r) for g in groups for r in g)
    count = max(len(g) for g in groups)
    out = torch.zeros((len(groups), count, width), dtype=torch.long)
    for i, g in enumerate(groups):
        for j, r in enumerate(g):
            out[i, j, : len(r)] = torch.tensor(r, dtype=torch.long)
    return out


def _segments(states: Sequence[_State], history: str = "bag") -> list[Any]:
    recent: Any = _pad([s.recent for s in states])
    if history == "gru":
        torch = _torch()
        empty: list[Sequence[int]] = [[_PAD]]
        recent = (
            _pad3([[a for a, _ in s.steps] or empty for s in states]),
            _pad3([[o for _, o in s.steps] or empty for s in states]),
            torch.tensor([len(s.steps) for s in states], dtype=torch.long),
        )
    return [
        _pad([s.instruction for s in states]),
        _pad([s.observation for s in states]),
        recent,
        _pad([s.last for s in states]),
        _pad([s.past for s in states]),
    ]


@dataclass
class _Example:
    state: _State
    actions: list[str]
    target: int
    classes: list[int]  # outcome class per action, -1 where untried
    # (action, next observation, invalid, unchanged: no word the observation lacked) transitions
    nexts: list[tuple[str, str, bool, bool]]


class Policy:
    """A trained policy: :meth:`act` picks one of the admissible actions."""

    def __init__(
        self,
        method: Method,
        config: PolicyConfig,
        vocab: list[str],
        net: Any,
        phrases: _Phrases | None = None,
    ) -> None:
        self.method = method
        self.config = config
        self._enc = _Encoder(vocab, config.recent, config.history_len, config.phrases)
        if phrases is not None and self._enc.phrases is not None:
            self._enc.phrases = phrases  # the embeddings training already computed
        self._net = net
        self._net.eval()

    def scores(
        self,
        instruction: str,
        observation: str,
        history: Sequence[tuple[str, str]],
        admissible: Sequence[str],
        trace: Sequence[tuple[str, float]] | None = None,
    ) -> list[float]:
        """The policy's score of each admissible action (higher is preferred). ``trace`` is the
        episode's (view, score) before its first action and after each action of ``history``
        (see :func:`looped`; :func:`evaluate` passes it), read only by ``loop_penalty``."""
        torch = _torch()
        if not admissible:
            raise UsageError("the policy needs at least one admissible action to choose from")
        state = self._enc.state(instruction, observation, history)
        with torch.no_grad():
            s = self._net.encode_state(_segments([state], self.config.history))
            acts = _pad3([[self._enc.ids(a) for a in admissible]])
            feats = torch.tensor([[self._enc.features(state, a) for a in admissible]])
            z = self._net.pairs(s, acts, feats, self._enc.phrase_rows([admissible]))
            logits = self._net.score(z).squeeze(-1)[0]
            if self.method == "sr" and self.config.sr_weight:
                probs = torch.softmax(self._net.outcome(z)[0], -1)
                bad = probs[:, _avoided(self.config)].sum(-1)
                logits = logits + self.config.sr_weight * torch.log1p(-bad.clamp(max=1 - 1e-6))
            if self.method == "sr" and self.config.sr_stale_weight:
                stale = torch.softmax(self._net.outcome(z)[0], -1)[:, OUTCOMES.index("stale")]
                logits = logits + self.config.sr_stale_weight * torch.log1p(
                    -stale.clamp(max=1 - 1e-6)
                )
        out = [float(x) for x in logits]
        cfg = self.config
        if cfg.repeat_penalty or cfg.stale_penalty:
            repeats, stale = _loops(instruction, observation, history)
            for i, a in enumerate(admissible):
                out[i] -= cfg.repeat_penalty * repeats.get(a, 0)
                out[i] -= cfg.stale_penalty * (a in stale)
        if cfg.loop_penalty:
            avoid = looped([a for a, _ in history], _trace(observation, history, trace))
            for i, a in enumerate(admissible):
                out[i] -= cfg.loop_penalty * (a in avoid)
        return out

    def act(
        self,
        instruction: str,
        observation: str,
        history: Sequence[tuple[str, str]],
        admissible: Sequence[str],
        trace: Sequence[tuple[str, float]] | None = None,
    ) -> str:
        """The admissible action the policy prefers (the first of equals); ``trace`` as in
        :meth:`scores`."""
        scores = self.scores(instruction, observation, history, admissible, trace)
        return admissible[max(range(len(scores)), key=scores.__getitem__)]

    def save(self, path: str | Path) -> None:
        """Write the policy to ``path`` (a torch file that :meth:`load` checks)."""
        torch = _torch()
        torch.save(
            {
                "format": _FORMAT,
                "version": _VERSION,
                "method": self.method,
                "config": asdict(self.config),
                "vocab": self._enc.vocab,
                "weights": self._net.state_dict(),
            },
            Path(path),
        )

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """Read a policy written by :meth:`save`; anything else raises
        :class:`~lemmata.errors.DataSourceError` saying what is wrong."""
        torch = _torch()
        path = Path(path)
        if not path.is_file():
            raise DataSourceError(f"no policy file at {path}: train one with train_policy first")
        try:
            data = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise DataSourceError(
                f"{path} is not a readable policy file ({type(exc).__name__}); "
                "it may be truncated or not written by Policy.save"
            ) from None
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise DataSourceError(f"{path} is a torch file but not a policy written by Policy.save")
        if data.get("version") != _VERSION:
            raise DataSourceError(
                f"{path} is policy format version {data.get('version')!r}; this version reads {_VERSION}"
            )
        try:
            method = data["method"]
            if method not in METHODS:
                raise ValueError(f"unknown method {method!r}")
            config = PolicyConfig(**data["config"])
            vocab = [str(w) for w in data["vocab"]]
            net = _net(len(vocab), config)
            net.load_state_dict(data["weights"])
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise DataSourceError(f"{path} is a damaged policy file: {exc}") from None
        return cls(method, config, vocab, net)


def _loops(
    instruction: str, observation: str, history: Sequence[tuple[str, str]]
) -> tuple[dict[str, int], set[str]]:
    """What the episode so far says about repeating each action from the current observation:
    how many times it was taken from this same observation, and the actions whose last try
    from it was stale (its outcome showed no word the episode had not shown before, or left the
    observation as it was). The observation before the first action is not in ``history``, so
    only the later steps count."""
    repeats: dict[str, int] = {}
    last_stale: dict[str, bool] = {}
    seen = set(_words(instruction))
    before: str | None = None
    for action, after in history:
        words = set(_words(after))
        if before is not None:
            seen |= set(_words(before))
            if before == observation:
                repeats[action] = repeats.get(action, 0) + 1
                last_stale[action] = after == before or words <= seen
        before = after
    return repeats, {a for a, flag in last_stale.items() if flag}


def looped(actions: Sequence[str], trace: Sequence[tuple[str, float]]) -> set[str]:
    """The actions to avoid from the state an episode stands in now, by its own experience.

    ``trace`` holds the episode's (view, score) before its first action and after each of
    ``actions`` (one more entry than ``actions``); the current state is its last. An action
    taken earlier from a state with the current view is avoided when its last try from there
    lowered the score, or when the episode has come back to this view since with no score
    gained (the try led back at once, or through a cycle of actions that undid each other).

    >>> looped(["open box", "close box"], [("a closed box", 0.0), ("an open box", 0.0), ("a closed box", 0.0)])
    {'open box'}
    """
    if len(trace) != len(actions) + 1:
        raise UsageError(
            f"a trace holds one (view, score) more than the actions: {len(trace)} for "
            f"{len(actions)} actions"
        )
    view, score = trace[-1]
    avoid: set[str] = set()
    for i, action in enumerate(actions):
        here, before = trace[i]
        if here != view:
            continue
        if trace[i + 1][1] < before - 1e-9 or score <= before + 1e-9:
            avoid.add(action)
        else:
            avoid.discard(action)
    return avoid


def _trace(
    observation: str,
    history: Sequence[tuple[str, str]],
    trace: Sequence[tuple[str, float]] | None,
) -> list[tuple[str, float]]:
    """``trace`` checked against ``history``, or, without one, the observations as views with
    no score (the state before the first action unknown: it matches nothing)."""
    if trace is not None:
        if len(trace) != len(history) + 1:
            raise UsageError(
                f"the trace holds {len(trace)} (view, score) pairs for {len(history)} actions: "
                "give one before the first action and one after each"
            )
        return list(trace)
    views = [o for _, o in history] or [observation]
    return [("\0", 0.0), *((v, 0.0) for v in views)][-(len(history) + 1) :]


def _avoided(cfg: PolicyConfig) -> list[int]:
    return _classes(cfg.sr_avoid, "sr_avoid")


def _classes(text: str, field: str = "sr_accept") -> list[int]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in OUTCOMES]
    if unknown:
        raise UsageError(f"{field} names unknown outcome classes {unknown}: choose from {OUTCOMES}")
    return [OUTCOMES.index(n) for n in names]


def _with_context(steps: Sequence[ExpertStep]) -> Iterator[tuple[ExpertStep, float, set[str]]]:
    """Each expert step with the score the episode had before it and the words the agent has
    seen by then (the instruction, the first and the current observation, the history's)."""
    score_after = {(s.task.id, s.index): s.expert.score for s in steps}
    first = {s.task.id: s.observation for s in steps if s.index == 0}
    for step in steps:
        before = score_after.get((step.task.id, step.index - 1), 0.0)
        texts = [step.instruction, step.observation, first.get(step.task.id, "")]
        seen = {w for t in [*texts, *(o for _, o in step.history)] for w in _words(t)}
        yield step, before, seen


def _recovery(steps: Sequence[ExpertStep], enc: _Encoder, recover: list[int]) -> list[_Example]:
    """Imitation examples at the alternatives' next states: where an alternative's outcome is
    of a ``recover`` class and its observation still shows every word of the state it left
    (the alternative moved nothing away: a look, an inventory, a failed tactic), the episode
    stands where the expert stood, one observed detour later, and the expert's action is the
    target; the detour's outcome is in the history, as a reflection's would be."""
    out = []
    for step, before, seen in _with_context(steps):
        now = set(_words(step.observation))
        actions = list(step.admissible) if step.admissible else []
        if step.action not in actions:
            actions.append(step.action)
        for b in step.alternatives:
            if outcome_class(b.outcome, before, seen) not in recover:
                continue
            if not now <= set(_words(b.outcome.observation)):
                continue
            history = (*step.history, (b.action, b.outcome.observation))
            out.append(
                _Example(
                    state=enc.state(step.instruction, b.outcome.observation, history),
                    actions=actions,
                    target=actions.index(step.action),
                    classes=[-1] * len(actions),
                    nexts=[],
                )
            )
    return out


def _examples(steps: Sequence[ExpertStep], enc: _Encoder) -> list[_Example]:
    out = []
    for step, before, seen in _with_context(steps):
        tried = {step.action: step.expert, **{b.action: b.outcome for b in step.alternatives}}
        actions = list(step.admissible) if step.admissible else list(tried)
        if step.action not in actions:
            actions.append(step.action)
        state = enc.state(step.instruction, step.observation, step.history)
        now = set(_words(step.observation))
        out.append(
            _Example(
                state=state,
                actions=actions,
                target=actions.index(step.action),
                classes=[
                    outcome_class(tried[a], before, seen) if a in tried else -1 for a in actions
                ],
                nexts=[
                    (a, o.observation, o.invalid, set(_words(o.observation)) <= now)
                    for a, o in tried.items()
                ],
            )
        )
    return out


def _transitions(
    examples: list[_Example],
    cap: float,
    rng: random.Random,
    unchanged: bool = False,
    balance: bool = False,
) -> list[tuple[int, str, str]]:
    """(example index, action, next observation), with error transitions (and, with
    ``unchanged``, those whose next observation shows no word the current one lacked) at most
    ``cap`` of all. With ``balance`` every outcome class of :data:`OUTCOMES` weighs the same
    (each class's transitions repeated up to the largest class's count), so that the few
    transitions that made progress or failed are not drowned by the many that changed little."""
    if balance:
        groups: dict[int, list[tuple[int, str, str]]] = {}
        for i, e in enumerate(examples):
            for a, o, _, _ in e.nexts:
                c = e.classes[e.actions.index(a)] if a in e.actions else 1
                groups.setdefault(c, []).append((i, a, o))
        most = max((len(g) for g in groups.values()), default=0)
        return [g[j % len(g)] for g in (groups[c] for c in sorted(groups)) for j in range(most)]
    flat = [
        (i, a, o, bad or (unchanged and same))
        for i, e in enumerate(examples)
        for a, o, bad, same in e.nexts
    ]
    ok = [(i, a, o) for i, a, o, drop in flat if not drop]
    bad = [(i, a, o) for i, a, o, drop in flat if drop]
    keep = min(len(bad), int(cap / max(1e-9, 1.0 - cap) * len(ok))) if cap < 1 else len(bad)
    return ok + rng.sample(bad, keep)


def train_policy(
    steps: Sequence[ExpertStep],
    method: Method,
    *,
    seed: int = 0,
    updates: int | None = None,
    config: PolicyConfig | None = None,
    progress: Callable[[int, int, float], None] | None = None,
) -> Policy:
    """Train a policy on ``steps`` (collected by :func:`~lemmata.agents.experience.rollouts.roll_out`).

    ``method`` picks the objective (see the module's documentation); every method makes the same
    number of ``updates`` (default ``config.updates``) on batches of the same expert states.
    ``iwm`` and ``sr`` also read the alternatives' outcomes; with K = 0 they have only the
    expert's own transitions. ``progress(update, total, loss)`` is called every 50 updates.
    """
    torch = _torch()
    if method not in METHODS:
        raise UsageError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    if not steps:
        raise UsageError("no expert steps to train on: collect some rollouts first")
    cfg = config or PolicyConfig()
    total = cfg.updates if updates is None else updates
    if total < 1:
        raise UsageError(f"updates must be 1 or more, not {total}")
    if method == "sr":
        _avoided(cfg)  # an unknown class name fails here, before any training
        _classes(cfg.sr_accept)
        _classes(cfg.sr_recover, "sr_recover")
    rng = random.Random(seed)
    torch.manual_seed(seed)
    texts = [t for s in steps for t in _texts(s)]
    enc = _Encoder.build(texts, cfg.recent, cfg.history_len, cfg.phrases)
    examples = _examples(steps, enc)
    recovery = (
        _recovery(steps, enc, _classes(cfg.sr_recover, "sr_recover")) if method == "sr" else []
    )
    net = _net(len(enc.vocab), cfg)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    trans = (
        _transitions(examples, cfg.invalid_cap, rng, cfg.cap_unchanged, cfg.iwm_balance)
        if method == "iwm"
        else []
    )
    stage = int(total * cfg.iwm_stage) if method == "iwm" and cfg.iwm_schedule == "stage" else 0
    net.train()
    for update in range(total):
        batch = [examples[rng.randrange(len(examples))] for _ in range(cfg.batch)]
        if recovery:
            # the same budget: half of each batch from the detours, half from expert states
            half = cfg.batch // 2
            batch[half:] = [recovery[rng.randrange(len(recovery))] for _ in batch[half:]]
        loss = torch.zeros(())
        if update >= stage:
            loss = loss + _imitation_loss(net, enc, batch, method, cfg, rng)
        if method == "iwm" and trans and (update < stage or cfg.iwm_schedule == "joint"):
            picked = [trans[rng.randrange(len(trans))] for _ in range(cfg.batch * 2)]
            weight = 1.0 if update < stage else cfg.iwm_weight
            if cfg.iwm_decay and update >= stage:
                weight *= 1.0 - (update - stage) / max(total - stage, 1)
            loss = loss + weight * _world_loss(net, enc, examples, picked, cfg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if progress is not None and (update + 1) % 50 == 0:
            progress(update + 1, total, float(loss))
    return Policy(method, cfg, enc.vocab, net, enc.phrases)


def _texts(step: ExpertStep) -> list[str]:
    out = [step.instruction, step.observation, step.action, step.expert.observation]
    out += [t for pair in step.history for t in pair]
    out += list(step.admissible or ())
    out += [t for b in step.alternatives for t in (b.action, b.outcome.observation)]
    return out


def _candidates(e: _Example, negatives: int, rng: random.Random) -> list[int]:
    """The indices of ``e.actions`` one update scores: all of them, or with ``negatives`` > 0
    the expert's and the tried ones plus at most ``negatives`` others drawn at random (a state
    with hundreds of admissible actions then costs what one with a few dozen does)."""
    if not negatives or len(e.actions) <= negatives + 1:
        return list(range(len(e.actions)))
    keep = [i for i, c in enumerate(e.classes) if c >= 0 or i == e.target]
    rest = [i for i in range(len(e.actions)) if i not in set(keep)]
    room = max(negatives + 1 - len(keep), 0)
    return sorted(keep + rng.sample(rest, min(room, len(rest))))


def _imitation_loss(
    net: Any,
    enc: _Encoder,
    batch: list[_Example],
    method: Method,
    cfg: PolicyConfig,
    rng: random.Random,
) -> Any:
    torch = _torch()
    f = torch.nn.functional
    s = net.encode_state(_segments([e.state for e in batch], cfg.history))
    chosen = [_candidates(e, cfg.negatives, rng) for e in batch]
    acts = _pad3([[enc.ids(e.actions[j]) for j in js] for e, js in zip(batch, chosen, strict=True)])
    width = acts.shape[1]
    feats = torch.zeros((len(batch), width, _FEATURES))
    mask = torch.zeros((len(batch), width), dtype=torch.bool)
    classes = torch.full((len(batch), width), -1, dtype=torch.long)
    targets = []
    for i, (e, js) in enumerate(zip(batch, chosen, strict=True)):
        feats[i, : len(js)] = torch.tensor([enc.features(e.state, e.actions[j]) for j in js])
        mask[i, : len(js)] = True
        classes[i, : len(js)] = torch.tensor([e.classes[j] for j in js])
        targets.append(js.index(e.target))
    phrases = enc.phrase_rows(
        [[e.actions[j] for j in js] for e, js in zip(batch, chosen, strict=True)]
    )
    z = net.pairs(s, acts, feats, phrases)
    logits = net.score(z).squeeze(-1).masked_fill(~mask, -math.inf)
    accept = _classes(cfg.sr_accept) if method == "sr" else []
    if accept:
        loss = _accepting_loss(logits, classes, targets, accept, cfg.sr_accept_weight)
    else:
        loss = f.cross_entropy(logits, torch.tensor(targets))
    if method == "sr" and cfg.sr_contrast_weight:
        loss = loss + cfg.sr_contrast_weight * _contrast_loss(
            logits, classes, targets, cfg.sr_margin
        )
    if method == "sr" and bool((classes >= 0).any()):
        out = net.outcome(z).reshape(-1, len(OUTCOMES))
        sr = f.cross_entropy(out, classes.reshape(-1), ignore_index=-1)
        loss = loss + cfg.sr_loss_weight * sr
        if cfg.sr_rank_weight:
            loss = loss + cfg.sr_rank_weight * _rank_loss(logits, classes, _avoided(cfg))
    return loss


def _accepting_loss(
    logits: Any, classes: Any, targets: list[int], accept: list[int], weight: float
) -> Any:
    """Imitation whose target also holds, at ``weight`` each, the tried alternatives whose
    observed outcome is of an ``accept`` class (another action that made progress where the
    demonstration made it one way): a soft cross-entropy over the admissible actions."""
    torch = _torch()
    target = torch.zeros_like(logits).masked_fill(~torch.isfinite(logits), 0.0)
    for c in accept:
        target = target + weight * (classes == c).float()
    rows = torch.arange(len(targets))
    target[rows, torch.tensor(targets)] = 1.0
    target = target / target.sum(-1, keepdim=True)
    logp = torch.log_softmax(logits, -1).masked_fill(target == 0, 0.0)
    return -(target * logp).sum(-1).mean()


def _contrast_loss(logits: Any, classes: Any, targets: list[int], margin: float) -> Any:
    """A pairwise hinge between the expert's action and each tried alternative whose observed
    outcome was worse (a later class of :data:`OUTCOMES` than the expert's own), with a margin
    that grows with how much worse: ``margin`` per class apart."""
    torch = _torch()
    rows = torch.arange(len(targets))
    index = torch.tensor(targets)
    mine = classes[rows, index].clamp(min=0)
    gap = (classes - mine.unsqueeze(1)).float()
    worse = (classes >= 0) & (gap > 0)
    worse[rows, index] = False
    if not bool(worse.any()):
        return torch.zeros(())
    safe = logits.masked_fill(classes < 0, 0.0)
    diff = safe[rows, index].unsqueeze(1) - safe
    return torch.nn.functional.softplus(margin * gap - diff)[worse].mean()


def _rank_loss(logits: Any, classes: Any, avoided: list[int]) -> Any:
    """A pairwise (listwise) loss over the tried actions of each state: every action whose
    observed outcome is one to avoid scores below every tried action whose outcome is not."""
    torch = _torch()
    bad = torch.zeros_like(classes, dtype=torch.bool)
    for c in avoided:
        bad |= classes == c
    good = (classes >= 0) & ~bad
    pairs = good.unsqueeze(2) & bad.unsqueeze(1)  # [B, good i, bad j]
    if not bool(pairs.any()):
        return torch.zeros(())
    safe = logits.masked_fill(classes < 0, 0.0)
    margin = safe.unsqueeze(2) - safe.unsqueeze(1)
    return torch.nn.functional.softplus(-margin)[pairs].mean()


def _world_loss(
    net: Any,
    enc: _Encoder,
    examples: list[_Example],
    picked: list[tuple[int, str, str]],
    cfg: PolicyConfig,
) -> Any:
    torch = _torch()
    states = [examples[i].state for i, _, _ in picked]
    s = net.encode_state(_segments(states, cfg.history))
    acts = _pad3([[enc.ids(a)] for _, a, _ in picked])
    feats = torch.tensor(
        [[enc.features(st, a)] for st, (_, a, _) in zip(states, picked, strict=True)]
    )
    z = net.pairs(s, acts, feats, enc.phrase_rows([[a] for _, a, _ in picked]))[:, 0]
    logp = torch.log_softmax(net.next_logits(z), -1)
    target = torch.zeros_like(logp)
    for row, (state, (_, _, nxt)) in enumerate(zip(states, picked, strict=True)):
        ids = set(enc.ids(nxt)) - {_PAD}
        # what the action changed: the words of the next observation the current one lacks
        new = (ids - set(state.observation)) or ids
        if cfg.iwm_target == "new":
            ids = new
        if cfg.iwm_target == "mixed" and ids:
            # half the mass on every word of the next state, half on the changed ones (the
            # game's answer: "you put the mug in the fridge", a score line), so that the few
            # words that tell outcomes apart are not a hundredth of the target
            target[row, sorted(ids)] += 0.5 / len(ids)
            target[row, sorted(new)] += 0.5 / len(new)
        elif ids:
            target[row, sorted(ids)] = 1.0 / len(ids)
    return -(target * logp).sum(-1).mean()


@dataclass(frozen=True)
class TaskResult:
    """One evaluation episode: whether it succeeded, its final score, its length and how many
    of its actions the environment found invalid."""

    task: Task
    success: bool
    score: float
    steps: int
    invalid: int


@dataclass
class EvalResult:
    """A policy's results on a set of tasks."""

    tasks: list[TaskResult] = field(default_factory=list)

    @property
    def success_rate(self) -> float:
        return sum(t.success for t in self.tasks) / len(self.tasks) if self.tasks else 0.0

    @property
    def invalid_rate(self) -> float:
        """Invalid actions over all actions taken."""
        steps = sum(t.steps for t in self.tasks)
        return sum(t.invalid for t in self.tasks) / steps if steps else 0.0

    @property
    def mean_score(self) -> float:
        return sum(t.score for t in self.tasks) / len(self.tasks) if self.tasks else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "success_rate": self.success_rate,
            "invalid_rate": self.invalid_rate,
            "mean_score": self.mean_score,
            "tasks": [
                {
                    "task": t.task.id,
                    "success": t.success,
                    "score": t.score,
                    "steps": t.steps,
                    "invalid": t.invalid,
                }
                for t in self.tasks
            ],
        }


def _view(obs: Any) -> tuple[str, float]:
    """The (view, score) of an observation for :func:`looped`: the environment's ``view``
    where it gives one, else the observation's text."""
    p = obs.payload
    view = p.get("view")
    return (str(view) if view is not None else obs.text, float(p.get("score", 0.0) or 0.0))


def evaluate(
    policy: Policy | Callable[[str, str, Sequence[tuple[str, str]], Sequence[str]], str],
    env: TextEnvironment,
    tasks: Sequence[Task],
    *,
    max_steps: int = 50,
) -> EvalResult:
    """Run ``policy`` (a :class:`Policy` or any ``act``-like function) on each task for at
    most ``max_steps`` actions, choosing among the environment's admissible actions."""
    result = EvalResult()
    for task in tasks:
        obs = env.reset(task)
        instruction = str(obs.payload.get("task", ""))
        history: list[tuple[str, str]] = []
        trace = [_view(obs)]
        invalid = steps = 0
        while not obs.done and steps < max_steps:
            admissible = env.admissible_actions()
            if not admissible:
                raise UsageError(
                    f"{env.name} gives no admissible actions: the policy cannot choose"
                )
            if isinstance(policy, Policy):
                action = policy.act(instruction, obs.text, history, admissible, trace)
            else:
                action = policy(instruction, obs.text, history, admissible)
            obs = env.step(action)
            steps += 1
            invalid += bool(obs.payload.get("invalid", False))
            history.append((action, obs.text))
            trace.append(_view(obs))
        p = obs.payload
        result.tasks.append(
            TaskResult(
                task,
                bool(p.get("success", False)),
                float(p.get("score", 0.0) or 0.0),
                steps,
                invalid,
            )
        )
    return result
