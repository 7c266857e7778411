"""How an entity slot reads to the embedding model, the same in the bank and at extraction.

The bank writes {P}, {P2} (people) and {O} (an organisation); a sentence at extraction has
its mentions replaced by the same words before it is embedded, so the head sees the
relation and the stance, never a particular name. Plain words embed better than brackets
(train.py measures both: `--fillers brackets`).
"""

from __future__ import annotations

FILLERS = {"{P}": "Alex", "{P2}": "Sam", "{O}": "Acme"}
BRACKETS = {"{P}": "[PERSON]", "{P2}": "[PERSON2]", "{O}": "[ORG]"}


def fill(text: str, fillers: dict[str, str] | None = None) -> str:
    """A bank sentence with its slots written as the model will read them."""
    for slot, word in (fillers or FILLERS).items():
        text = text.replace(slot, word)
    return text
