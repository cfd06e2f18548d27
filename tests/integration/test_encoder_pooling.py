"""BERT through `strata serve --runner pooling`: the openai client's embeddings.create against the
sentence-transformers BERT fixture (mean pooling, a Dense module, Normalize) within 1e-4 of what
sentence-transformers computed, batched equal to alone; an input past the model's 128 positions is a
400; /v1/score and /v1/rerank on the BERT cross-encoder fixture (pairs with token types) within
2e-3 of transformers."""
import httpx
import numpy as np
import openai
import pytest

from conftest import LOCAL_FIXTURES, Server, load_reference as reference

EMBEDDING = LOCAL_FIXTURES / "hf" / "bert_embedding"
CROSS_ENCODER = LOCAL_FIXTURES / "hf" / "bert_cross_encoder"


@pytest.fixture(scope="module")
def bert_embedder():
    server = Server([str(EMBEDDING), "--runner", "pooling", "--device", "cpu", "--served-model-name", "tiny-bert"],
                    "bert_embedder")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def bert_cross_encoder():
    server = Server([str(CROSS_ENCODER), "--device", "cpu", "--served-model-name", "tiny-bert-rerank"],
                    "bert_cross_encoder")
    yield server
    server.stop()


def test_startup_names_the_pooling_and_the_encoder(bert_embedder):
    assert ("runner: pooling (embed: MEAN pooling, Dense 64 -> 32, normalized; bidirectional: inputs run whole, "
            "no prefix cache), served on /v1/embeddings\n") in bert_embedder.log


def test_embeddings_match_sentence_transformers(bert_embedder):
    tensors, facts = reference(EMBEDDING)
    texts = [p["text"] for p in facts["prompts"]]
    client = bert_embedder.client()
    r = client.embeddings.create(model="tiny-bert", input=texts)
    assert r.usage.prompt_tokens == sum(p["num_tokens"] for p in facts["prompts"])
    for i, d in enumerate(r.data):
        assert len(d.embedding) == 32, "the Dense module's out_features"
        assert np.abs(np.array(d.embedding) - tensors[f"embedding_{i}"]).max() < 1e-4, f"prompt {i}"
    for i, text in enumerate(texts):
        alone = client.embeddings.create(model="tiny-bert", input=text, encoding_format="float").data[0]
        assert np.abs(np.array(alone.embedding) - np.array(r.data[i].embedding)).max() < 1e-5


def test_inputs_past_the_positions_get_400(bert_embedder):
    with pytest.raises(openai.BadRequestError) as e:
        bert_embedder.client().embeddings.create(model="tiny-bert", input=[5] * 129)
    assert "128" in str(e.value)
    assert len(bert_embedder.client().embeddings.create(model="tiny-bert", input=[5] * 128).data[0].embedding) == 32


def test_score_and_rerank_with_a_bert_cross_encoder(bert_cross_encoder):
    tensors, facts = reference(CROSS_ENCODER)
    pairs = facts["pairs"]
    r = httpx.post(bert_cross_encoder.url + "/v1/score", timeout=120,
                   json={"text_1": [p["query"] for p in pairs], "text_2": [p["document"] for p in pairs]})
    assert r.status_code == 200, r.text
    got = [d["score"] for d in r.json()["data"]]
    assert got == pytest.approx([float(tensors[f"score_{i}"][0]) for i in range(len(pairs))], abs=2e-3)
    ranked = httpx.post(bert_cross_encoder.url + "/v1/rerank", timeout=120,
                        json={"query": pairs[0]["query"], "documents": [pairs[0]["document"], pairs[1]["document"]]})
    scores = [float(tensors[f"score_{i}"][0]) for i in range(2)]
    assert [x["index"] for x in ranked.json()["results"]] == sorted(range(2), key=lambda i: -scores[i])
