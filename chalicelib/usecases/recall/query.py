"""What a recall searches for: the user's new message read with its recent turns, and split
into its intents (ST-BME reads the current message with the last reply and the previous user
message, and searches several intents separately).

- Recent turns: "When was that?" names nothing; the turns before it do. The query's embedding
  is the message's own plus the recent turns' with smaller weights (`recent_weights`, most
  recent first: the last reply, then the previous user message), normalised. Keywords stay the
  message's own unless it has fewer than `recent_keyword_min_terms` content terms, then the
  recent user turn's words are searched too.
- Intents: "奶糖体检结果怎么样？还有小明的吉他课呢？" asks two things. A message is split at
  question ends and at "also / 还有 / 另外 …" when at least two parts each carry
  `min_intent_terms` content terms; each part is searched on its own (at most `max_intents`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from chalicelib.domain.models import RecallRequest
from chalicelib.domain.names import strip_names
from chalicelib.domain.textproc import query_terms
from chalicelib.ports import Services
from chalicelib.usecases.recall.recipes import RecallRecipe

_BOUNDARY = re.compile(
    r"(?<=[?？])\s*"
    r"|\s*(?:[,，;；。.]\s*)?(?:还有|另外|顺便问一下|顺便|以及|再问一下)\s*"
    r"|\s*(?:[,;.]\s*)?\b(?:also|and also|besides|by the way|another thing)\b[,:]?\s*",
    re.IGNORECASE)


@dataclass(frozen=True)
class Intent:
    text: str  # what the intent says (names kept): the gate and the trace read it
    keywords: str  # what is searched by keyword
    vector: np.ndarray  # what is searched by meaning


def split_intents(query: str, recipe: RecallRecipe) -> list[str]:
    """The parts of a message that each ask something; the whole message when it asks one."""
    if not recipe.split_intents:
        return [query]
    parts = [p.strip(" ,，;；") for p in _BOUNDARY.split(query) if p and p.strip(" ,，;；")]
    asking = [p for p in parts if len(query_terms(p)) >= recipe.min_intent_terms]
    if len(asking) < 2:
        return [query]
    return asking[: recipe.max_intents]


def intents(services: Services, request: RecallRequest, recipe: RecallRecipe,
            named: set[str]) -> list[Intent]:
    recent = [t.content for t in reversed(request.recent)]  # most recent first
    recent_vectors = [services.embedder.embed_query(text)
                      for text, weight in zip(recent, recipe.recent_weights, strict=False)
                      if weight > 0]
    out = []
    for text in split_intents(request.query, recipe):
        search = strip_names(text, named) or text if named and recipe.strip_names else text
        vector = services.embedder.embed_query(search)
        if recent_vectors:
            mixed = vector + sum(w * v for w, v in zip(recipe.recent_weights, recent_vectors,
                                                       strict=False))
            vector = (mixed / max(float(np.linalg.norm(mixed)), 1e-12)).astype(np.float32)
        keywords = search
        if len(query_terms(search)) < recipe.recent_keyword_min_terms:
            user_turns = [t.content for t in reversed(request.recent) if t.role == "user"]
            if user_turns:
                keywords = f"{search} {user_turns[0]}"
        out.append(Intent(text=text, keywords=keywords, vector=vector))
    return out
