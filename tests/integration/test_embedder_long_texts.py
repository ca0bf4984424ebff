"""The offline embedder over texts longer than its model's window (adapters.embedding)."""

from __future__ import annotations

import numpy as np
import pytest
from cairn.adapters.embedding import OnnxMiniLmEmbedder

pytestmark = pytest.mark.integration

HEAD = "We refactored the payment gateway retry loop and its tests. " * 30  # past 256 tokens alone
TAIL = "The deploy pipeline uploads the Lambda layer to S3 and runs the CDK stack."


@pytest.fixture(scope="module")
def embedder() -> OnnxMiniLmEmbedder:
    return OnnxMiniLmEmbedder(workers=1)


def test_a_short_text_gets_the_same_vector_in_bulk_as_a_query_does(embedder):
    bulk = np.array(embedder.embed([TAIL, "Run the tests with go test"])[0])
    assert np.allclose(bulk, embedder.embed_query(TAIL), atol=1e-5)


def test_what_a_long_text_says_past_the_models_window_still_shapes_its_vector(embedder):
    long_text, head_only = embedder.embed([HEAD + TAIL, HEAD])
    query = np.array(embedder.embed_query("how does the deploy pipeline ship the Lambda layer?"))
    assert float(np.dot(long_text, query)) > float(np.dot(head_only, query)) + 0.05
    assert abs(float(np.linalg.norm(long_text)) - 1.0) < 1e-4


def test_a_mixed_length_list_gets_each_texts_own_vector_in_its_original_order():
    texts = [HEAD + TAIL, "go test ./...", TAIL, HEAD, "fix", TAIL + " " + TAIL, "mix format", HEAD + HEAD]
    one_by_one = OnnxMiniLmEmbedder(workers=1)
    alone = [one_by_one.embed([t])[0] for t in texts]
    for kwargs in ({"workers": 2}, {"workers": 1, "batch_size": 8, "batch_tokens": 1 << 20}):
        together = OnnxMiniLmEmbedder(**kwargs).embed(texts)
        for one, bulk in zip(alone, together, strict=True):
            assert float(np.dot(one, bulk)) > 1 - 1e-5
