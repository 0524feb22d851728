"""Token type ids (segment ids) of sentence pairs, for sequences the tokenizer never saw.

A pair classifier of the BERT kind reads which segment each token is in from
``token_type_ids``. The tokenizer gives them for the input it encodes, but the
deletion test and ``evaluate`` predict shortened or masked copies of it. Those
copies keep every special token (a separator is never removed), so a token's
segment can be read off the sequence itself: walk it, matching the special
tokens of the tokenizer's pair template in order ([CLS], [SEP], [SEP]); a token
between the k-th and the (k+1)-th template token gets the type the template gives
that gap. Removing or masking other tokens never changes which gap a token is in,
so every copy keeps its tokens' original types.

The walk is checked against the tokenizer on every input (:func:`check_types`):
a separator typed into the first text would shift it, and such a line is refused.
RoBERTa-style tokenizers (no ``token_type_ids``) and models without a type
embedding need none of this: their pairs differ from single texts only in the
separators the tokenizer puts between the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..errors import BadInput

# Two texts the probe encodes; any words give the template, as long as they are not special tokens.
_PROBE = ("a", "b")


@dataclass(frozen=True)
class PairTypes:
    """The pair template as the walk uses it: the ids of its special tokens, in order, the
    type of each, and the type of the content in each gap (before the first, between, after the last)."""

    specials: tuple[int, ...]
    special_types: tuple[int, ...]
    gap_types: tuple[int, ...]  # len(specials) + 1 entries

    def types(self, ids: Sequence[int]) -> list[int]:
        """The token type of every position of ``ids`` (a pair, whole or with tokens removed or masked)."""
        result = []
        matched = 0
        for token in ids:
            if matched < len(self.specials) and int(token) == self.specials[matched]:
                result.append(self.special_types[matched])
                matched += 1
            else:
                result.append(self.gap_types[matched])
        return result

    def batch(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """[B, T] token type ids of a right-padded batch; padding gets 0 (the mask hides it)."""
        rows = ids.tolist()
        out = torch.zeros_like(ids)
        for row, (sequence, length) in enumerate(zip(rows, lengths.tolist())):
            out[row, :length] = torch.as_tensor(self.types(sequence[:length]), dtype=ids.dtype)
        return out


def needs_types(tokenizer, config) -> bool:
    """Whether the model reads segment ids: its tokenizer gives them and its embeddings have more than one type."""
    names = getattr(tokenizer, "model_input_names", ()) or ()
    return "token_type_ids" in names and int(getattr(config, "type_vocab_size", 0) or 0) > 1


def pair_types(tokenizer, config, name: str) -> PairTypes | None:
    """The walk for this tokenizer's pairs, or None where the model needs no segment ids."""
    if not needs_types(tokenizer, config):
        return None
    encoded = tokenizer(_PROBE[0], _PROBE[1], return_token_type_ids=True, return_special_tokens_mask=True)
    ids, types, special = encoded["input_ids"], encoded["token_type_ids"], encoded["special_tokens_mask"]
    sequence = encoded.sequence_ids()
    specials, special_types, gaps = [], [], [[]]
    for token, kind, flag, segment in zip(ids, types, special, sequence):
        if flag and segment is None:
            specials.append(int(token))
            special_types.append(int(kind))
            gaps.append([])
        else:
            gaps[-1].append(int(kind))
    if any(len(set(gap)) > 1 for gap in gaps) or not specials:
        raise BadInput(
            f"model {name!r}: its tokenizer's pair template gives one text's tokens several segment ids; "
            "contrastcat cannot keep them right when it removes tokens"
        )
    # An empty gap (RoBERTa's </s></s>) takes the type of the special token before it.
    gap_types = [gap[0] if gap else (special_types[k - 1] if k else 0) for k, gap in enumerate(gaps)]
    replacements = {
        getattr(tokenizer, attribute, None) for attribute in ("mask_token_id", "pad_token_id", "unk_token_id")
    }
    clash = replacements & set(specials)
    if clash:
        raise BadInput(
            f"model {name!r}: its tokenizer replaces masked tokens with a separator of its pair template "
            f"(id {min(clash)}); the segments of a masked pair could not be told apart"
        )
    return PairTypes(tuple(specials), tuple(special_types), tuple(gap_types))


class SeparatorInText(BadInput):
    """An input whose pair the walk cannot keep: one line, refusable or skippable as any bad line."""


def check_types(walk: PairTypes, ids: Sequence[int], given: Sequence[int], where: str) -> None:
    """Refuse a pair whose own segment ids the walk would not give (a separator typed into a text)."""
    if list(walk.types(ids)) != [int(t) for t in given]:
        raise SeparatorInText(
            f"{where}: a separator token typed into the first text of the pair would move where the second "
            "text's segment ids begin once tokens are removed (take it out of the text)"
        )
