"""Early experience with a model: a litellm model as the policy, and alternatives proposed by
a model where the environment does not enumerate its actions.

- :class:`ModelPolicy` plays a text environment by ReAct: it shows the model the state as the
  training files write it (:func:`~lemmata.agents.experience.data.expert_sample`'s prompt, so a
  model fine-tuned on them is prompted as it was trained) and reads ``Thought: ... Action:
  ...``. With admissible actions the reply must name one of them (compared after
  canonicalisation); an inadmissible or missing action is asked for again once, then counted
  in :attr:`ModelPolicy.invalid` and the last action the model named is returned as written
  (``""`` if it named none), for the environment to refuse.
- :func:`propose_alternatives` asks the model once for K+2 distinct candidates (a JSON array),
  canonicalises and deduplicates them, drops the expert's action, refills from the admissible
  actions when there are any, and returns at most K.
- The training files are exported with or without a model by
  :func:`lemmata.agents.experience.data.export_sft` (reflections by the model when one is
  given).

>>> from lemmata.llm import ScriptedModel
>>> policy = ModelPolicy(ScriptedModel(["Thought: the coin is here.\\nAction: Take coin"]))
>>> policy.act("Find the coin.", "There is a coin.", [], ["take coin", "move west"])
'take coin'
>>> model = ScriptedModel(['["move west", "Move  West!", "take coin", "open door"]'])
>>> propose_alternatives(model, "Find the coin.", "A kitchen.", [], "take coin", k=2)
['move west', 'open door']
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass

from lemmata.agents.experience._format import parse_reply, prompt, render_state
from lemmata.agents.experience.rollouts import Proposer, canonical_action
from lemmata.errors import UsageError
from lemmata.llm.base import ChatModel
from lemmata.llm.json_extract import JSONNotFound, extract_json
from lemmata.llm.types import Message

__all__ = ["ModelPolicy", "PolicyStats", "propose_alternatives", "proposer"]

log = logging.getLogger("lemmata.experience")

_WRAP = "`'\"*_ \t.;,"


@dataclass
class PolicyStats:
    """What a :class:`ModelPolicy` did: ``calls`` to the model, ``actions`` returned,
    ``retries`` (replies asked for again) and ``invalid`` (actions still inadmissible or
    missing after the retry)."""

    calls: int = 0
    actions: int = 0
    retries: int = 0
    invalid: int = 0
    last_thought: str = ""


class ModelPolicy:
    """A chat model as the policy of a text environment (ReAct over the admissible actions).

    ``act(instruction, observation, history, admissible)`` has the shape of the local torch
    policy's, so the evaluation loop runs either. ``max_history`` keeps the prompt bounded on
    long episodes (the oldest steps are left out, and the prompt says how many). Errors of the
    model call itself (:class:`~lemmata.errors.ModelError`) are raised: an episode cannot go on
    without its policy.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        temperature: float | None = 0.0,
        retries: int = 1,
        max_history: int | None = None,
    ) -> None:
        if retries < 0:
            raise UsageError(f"retries must be 0 or more, not {retries}")
        self.model = model
        self.temperature = temperature
        self.retries = retries
        self.max_history = max_history
        self.stats = PolicyStats()

    @property
    def name(self) -> str:
        return f"model:{self.model.name}"

    @property
    def invalid(self) -> int:
        """Actions returned that were not admissible (or missing) after the retry."""
        return self.stats.invalid

    def messages(
        self,
        instruction: str,
        observation: str,
        history: Sequence[tuple[str, str]],
        admissible: Sequence[str] | None,
    ) -> list[Message]:
        """The conversation the model is asked to continue."""
        guide = prompt("policy")["admissible" if admissible is not None else "free"].strip()
        state = render_state(
            instruction, observation, history, admissible, max_history=self.max_history
        )
        return [
            {"role": "system", "content": f"{prompt('sft')['agent'].strip()}\n\n{guide}"},
            {"role": "user", "content": state},
        ]

    def act(
        self,
        instruction: str,
        observation: str,
        history: list[tuple[str, str]],
        admissible: list[str] | None,
    ) -> str:
        """The next action: one of ``admissible`` (its exact text) when given, else the
        model's free text. See the class's documentation for inadmissible replies."""
        convo = self.messages(instruction, observation, history, admissible)
        by_key = {canonical_action(a): a for a in admissible} if admissible is not None else {}
        action = written = ""
        for attempt in range(self.retries + 1):
            reply = self.model.chat(convo, temperature=self.temperature)
            self.stats.calls += 1
            text = reply.content or ""
            parsed = parse_reply(text)
            self.stats.last_thought = parsed.thought
            action = (parsed.action or "").strip(_WRAP)
            written = action or written
            if action and admissible is None:
                return self._done(action)
            if action and canonical_action(action) in by_key:
                return self._done(by_key[canonical_action(action)])
            if attempt < self.retries:
                self.stats.retries += 1
                follow = prompt("policy")["retry" if action else "missing"].format(action=action)
                convo = [
                    *convo,
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": follow.strip()},
                ]
        self.stats.invalid += 1
        log.info("%s: inadmissible action %r after %d tries", self.name, written, self.retries + 1)
        return self._done(written)

    def _done(self, action: str) -> str:
        self.stats.actions += 1
        return action


def _candidates(text: str) -> list[str]:
    """The candidate actions in a reply: a JSON array of strings, or an object holding one."""
    value = extract_json(text, want=(list, dict))
    if isinstance(value, dict):
        value = next((v for v in value.values() if isinstance(v, list)), [])
    out = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("action")
        if isinstance(item, str) and item.strip(_WRAP):
            out.append(" ".join(item.strip(_WRAP).split()))
    return out


def propose_alternatives(
    model: ChatModel,
    instruction: str,
    observation: str,
    history: Sequence[tuple[str, str]],
    expert_action: str,
    k: int,
    *,
    admissible: Sequence[str] | None = None,
    seed: int = 0,
    temperature: float | None = 1.0,
) -> list[str]:
    """At most ``k`` distinct alternatives to ``expert_action`` from ONE call for ``k + 2``.

    Candidates are compared by :func:`~lemmata.agents.experience.rollouts.canonical_action`
    (case, spacing and punctuation ignored); the first spelling of each is kept, tidied. The
    expert's action is removed; when fewer than ``k`` remain, admissible actions (if given)
    fill the rest by a ``seed``-ed draw. A reply with no JSON array is logged and treated as
    no candidates (the run goes on); an error of the call itself is raised.
    """
    if k < 0:
        raise UsageError(f"K (alternatives per state) must be 0 or more, not {k}")
    if k == 0:
        return []
    p = prompt("propose")
    user = p["user"].format(
        state=render_state(instruction, observation, history, admissible),
        expert_action=json.dumps(expert_action),
        n=k + 2,
    )
    reply = model.chat(
        [
            {"role": "system", "content": p["system"].strip()},
            {"role": "user", "content": user.strip()},
        ],
        temperature=temperature,
    )
    try:
        proposed = _candidates(reply.content or "")
    except JSONNotFound as exc:
        log.warning("%s proposed no usable alternatives: %s", model.name, exc)
        proposed = []
    seen = {canonical_action(expert_action)}
    chosen: list[str] = []
    for action in proposed:
        key = canonical_action(action)
        if key and key not in seen:
            seen.add(key)
            chosen.append(action)
    if len(chosen) < k and admissible:
        pool = [a for a in admissible if canonical_action(a) not in seen]
        rng = random.Random(seed)
        chosen += rng.sample(pool, min(len(pool), k - len(chosen)))
    return chosen[:k]


def proposer(model: ChatModel, *, temperature: float | None = 1.0) -> Proposer:
    """``model`` as the rollouts' :data:`~lemmata.agents.experience.rollouts.Proposer`, for
    states where the environment does not enumerate its actions."""

    def propose(
        instruction: str,
        observation: str,
        history: Sequence[tuple[str, str]],
        expert_action: str,
        k: int,
    ) -> list[str]:
        return propose_alternatives(
            model, instruction, observation, history, expert_action, k, temperature=temperature
        )

    return propose
