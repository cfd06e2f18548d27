"""The module's pooling API on the pooling fixtures: LLM.embed() (and PoolingParams' dimensions),
LLM.score() and LLM.classify(), within 1e-4 of transformers, truncate_prompt_tokens on ModernBERT;
the wrong model for a method is a ValueError naming it."""
import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from conftest import LOCAL_FIXTURES, strata

EMBEDDING = LOCAL_FIXTURES / "hf" / "qwen3_embedding"
RERANKER = LOCAL_FIXTURES / "hf" / "qwen3_reranker"
BERT_EMBEDDING = LOCAL_FIXTURES / "hf" / "bert_embedding"
BERT_CROSS_ENCODER = LOCAL_FIXTURES / "hf" / "bert_cross_encoder"


def reference(folder):
    return load_file(str(folder / "reference.safetensors")), json.loads((folder / "reference.json").read_text())


@pytest.fixture(scope="module")
def embedder():
    return strata.LLM(str(EMBEDDING), threads=2, max_num_batched_tokens=16, load_progress=False)


@pytest.fixture(scope="module")
def reranker():
    return strata.LLM(str(RERANKER), threads=2, load_progress=False)


def test_embed(embedder):
    tensors, facts = reference(EMBEDDING)
    texts = [p["text"] for p in facts["prompts"]]
    outputs = embedder.embed(texts)
    assert len(outputs) == len(texts)
    for i, out in enumerate(outputs):
        assert out.prompt_token_ids == tensors[f"tokens_{i}"].tolist()
        assert np.abs(np.array(out.outputs.embedding) - tensors[f"embedding_{i}"]).max() < 1e-4
    cut = embedder.embed(texts[1], pooling_params=strata.PoolingParams(dimensions=8))[0].outputs.embedding
    want = tensors["embedding_1"][:8] / np.linalg.norm(tensors["embedding_1"][:8])
    assert np.abs(np.array(cut) - want).max() < 1e-4


def test_score_with_the_embedding_model(embedder):
    tensors, facts = reference(EMBEDDING)
    texts = [p["text"] for p in facts["prompts"]]
    got = [o.outputs.score for o in embedder.score(texts[0], texts[1:])]
    want = [float(np.dot(tensors["embedding_0"], tensors[f"embedding_{i}"])) for i in (1, 2, 3)]
    assert got == pytest.approx(want, abs=1e-4)


def test_score_and_classify_with_a_cross_encoder(reranker):
    _, facts = reference(RERANKER)
    pairs = facts["pairs"]
    got = reranker.score([p["query"] for p in pairs], [p["document"] for p in pairs])
    assert [o.outputs.score for o in got] == pytest.approx([p["score"] for p in pairs], abs=1e-4)
    probs = reranker.classify([got[0].prompt_token_ids])[0].outputs.probs
    assert probs == pytest.approx([pairs[0]["score"]], abs=1e-4)


def test_wrong_model_for_the_method(embedder, reranker):
    with pytest.raises(ValueError, match="classifier"):
        embedder.classify("hi")
    with pytest.raises(ValueError, match="embedding"):
        reranker.embed("hi")
    with pytest.raises(strata.StrataError, match="pooling model"):
        embedder.generate("hi")


def test_bert_embed_and_score():
    """An encoder (BERT): sentence-transformers' mean pooling, Dense and Normalize; a cross-encoder
    scoring pairs with their token types."""
    tensors, facts = reference(BERT_EMBEDDING)
    bert = strata.LLM(str(BERT_EMBEDDING), threads=2, load_progress=False)
    outputs = bert.embed([p["text"] for p in facts["prompts"]])
    for i, out in enumerate(outputs):
        assert out.prompt_token_ids == tensors[f"tokens_{i}"].tolist()
        assert np.abs(np.array(out.outputs.embedding) - tensors[f"embedding_{i}"]).max() < 1e-4
    tensors, facts = reference(BERT_CROSS_ENCODER)
    cross = strata.LLM(str(BERT_CROSS_ENCODER), threads=2, load_progress=False)
    pairs = facts["pairs"]
    got = cross.score([p["query"] for p in pairs], [p["document"] for p in pairs])
    assert [o.outputs.score for o in got] == pytest.approx([p["score"] for p in pairs], abs=2e-3)


MODERNBERT_EMBEDDING = LOCAL_FIXTURES / "hf" / "modernbert_embedding"
MODERNBERT_RERANKER = LOCAL_FIXTURES / "hf" / "modernbert_reranker"


def test_modernbert_embed_score_and_truncation():
    """ModernBERT: sentence-transformers' max_seq_length (48) is the limit; truncate_prompt_tokens=-1
    cuts the long text to the 48 tokens sentence-transformers keeps, k cuts text to k tokens and token
    ids to their last k; a reranker scores pairs, a long one cut longest first."""
    tensors, facts = reference(MODERNBERT_EMBEDDING)
    model = strata.LLM(str(MODERNBERT_EMBEDDING), threads=2, load_progress=False)
    assert model.max_model_len == 48
    outputs = model.embed([p["text"] for p in facts["prompts"]])
    for i, out in enumerate(outputs):
        assert out.prompt_token_ids == tensors[f"tokens_{i}"].tolist()
        assert np.abs(np.array(out.outputs.embedding) - tensors[f"embedding_{i}"]).max() < 1e-4
    with pytest.raises(strata.StrataError, match="truncate_prompt_tokens"):
        model.embed(facts["long_text"])
    cut = model.embed(facts["long_text"], truncate_prompt_tokens=-1)[0]
    assert cut.prompt_token_ids == tensors["truncated_tokens"].tolist()
    assert np.abs(np.array(cut.outputs.embedding) - tensors["truncated_embedding"]).max() < 1e-4
    assert len(model.embed(facts["long_text"], truncate_prompt_tokens=7)[0].prompt_token_ids) == 7
    ids = tensors["long_tokens"].tolist()
    assert model.embed([ids], truncate_prompt_tokens=5)[0].prompt_token_ids == ids[-5:]
    for bad in (0, -2, 49):
        with pytest.raises(ValueError, match="truncate_prompt_tokens"):
            model.embed("hi", truncate_prompt_tokens=bad)
    tensors, facts = reference(MODERNBERT_RERANKER)
    reranker = strata.LLM(str(MODERNBERT_RERANKER), threads=2, load_progress=False)
    pairs = facts["pairs"]
    got = reranker.score([p["query"] for p in pairs], [p["document"] for p in pairs])
    assert [o.outputs.score for o in got] == pytest.approx([p["score"] for p in pairs], abs=2e-3)
    query, document = facts["long_pair"]
    long = reranker.score(query, document, truncate_prompt_tokens=-1)[0]
    assert long.prompt_token_ids == tensors["truncated_pair_tokens"].tolist()
    assert long.outputs.score == pytest.approx(float(tensors["truncated_score"][0]), abs=2e-3)
