"""Token counting for context budgets: the vendored MiniLM WordPiece tokenizer, loaded once per process.

Agents count tokens with their own tokenizers (Claude's, o200k for Codex), which we cannot ship. A
WordPiece count of the same text is a close, slightly pessimistic proxy for English and code, and it is
the one definition every budget check uses (the service, the tests and the benchmark), so "within the
budget" means the same thing everywhere. Padding and truncation from the tokenizer's file are turned
off: they exist for the embedder's fixed-width batches and would cap every count at 128.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path

_TOKENIZER_PATH = Path(__file__).resolve().parent.parent / "adapters" / "embedding_data" / "tokenizer.json"
_lock = threading.Lock()


@cache
def _tokenizer():
    from tokenizers import Tokenizer

    with _lock:
        tok = Tokenizer.from_file(str(_TOKENIZER_PATH))
        tok.no_padding()
        tok.no_truncation()
    return tok


def count_tokens(text: str) -> int:
    """WordPiece tokens in `text`, without the [CLS]/[SEP] a model input would add."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def count_many(texts: list[str]) -> list[int]:
    """Counts for several texts in one batched call (the tokenizer parallelises batches)."""
    if not texts:
        return []
    encodings = _tokenizer().encode_batch(texts, add_special_tokens=False)
    return [len(e.ids) if t else 0 for e, t in zip(encodings, texts, strict=True)]
