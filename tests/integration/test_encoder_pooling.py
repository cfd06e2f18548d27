"""BERT through `strata serve --runner pooling`: the openai client's embeddings.create against the
sentence-transformers BERT fixture (mean pooling, a Dense module, Normalize) within 1e-4 of what
sentence-transformers computed, batched equal to alone; an input past the model's 128 positions is a
400; /v1/score and /v1/rerank on the BERT cross-encoder fixture (pairs with token types) within
2e-3 of transformers. ModernBERT's embedding and reranker fixtures the same way, with
sentence-transformers' max_seq_length as the limit and truncate_prompt_tokens cutting inputs to it."""
import httpx
import numpy as np
import openai
import pytest

from conftest import LOCAL_FIXTURES, Server, load_reference as reference

EMBEDDING = LOCAL_FIXTURES / "hf" / "bert_embedding"
CROSS_ENCODER = LOCAL_FIXTURES / "hf" / "bert_cross_encoder"


def served_on_cpu(folder, name, *args):
    """A module-scoped fixture: `strata serve FOLDER` on the CPU as model `name`."""
    @pytest.fixture(scope="module")
    def server():
        started = Server([str(folder), *args, "--device", "cpu", "--served-model-name", name], name)
        yield started
        started.stop()
    return server


bert_embedder = served_on_cpu(EMBEDDING, "tiny-bert", "--runner", "pooling")
bert_cross_encoder = served_on_cpu(CROSS_ENCODER, "tiny-bert-rerank")


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


MODERNBERT_EMBEDDING = LOCAL_FIXTURES / "hf" / "modernbert_embedding"
MODERNBERT_RERANKER = LOCAL_FIXTURES / "hf" / "modernbert_reranker"


modernbert_embedder = served_on_cpu(MODERNBERT_EMBEDDING, "tiny-modernbert")
modernbert_reranker = served_on_cpu(MODERNBERT_RERANKER, "tiny-modernbert-rerank")


def test_modernbert_embeddings_and_truncation(modernbert_embedder):
    """max_seq_length 48 (sentence_bert_config.json) is the limit: the long text is a 400 naming it and
    truncate_prompt_tokens; with -1 it is cut to exactly the 48 tokens sentence-transformers keeps."""
    tensors, facts = reference(MODERNBERT_EMBEDDING)
    client = modernbert_embedder.client()
    texts = [p["text"] for p in facts["prompts"]]
    r = client.embeddings.create(model="tiny-modernbert", input=texts, encoding_format="float")
    assert r.usage.prompt_tokens == sum(p["num_tokens"] for p in facts["prompts"])
    for i, d in enumerate(r.data):
        assert np.abs(np.array(d.embedding) - tensors[f"embedding_{i}"]).max() < 1e-4, f"prompt {i}"
    with pytest.raises(openai.BadRequestError) as e:
        client.embeddings.create(model="tiny-modernbert", input=facts["long_text"])
    assert "limit of 48 tokens" in str(e.value) and "truncate_prompt_tokens" in str(e.value)
    cut = client.embeddings.create(model="tiny-modernbert", input=[facts["long_text"], texts[0]],
                                   encoding_format="float", extra_body={"truncate_prompt_tokens": -1})
    assert cut.usage.prompt_tokens == 48 + facts["prompts"][0]["num_tokens"]
    assert np.abs(np.array(cut.data[0].embedding) - tensors["truncated_embedding"]).max() < 1e-4
    ids = tensors["long_tokens"].tolist()
    for k, body in ((10, facts["long_text"]), (5, ids)):
        r = client.embeddings.create(model="tiny-modernbert", input=body, extra_body={"truncate_prompt_tokens": k})
        assert r.usage.prompt_tokens == k
    r = httpx.post(modernbert_embedder.url + "/v1/embeddings", timeout=120,
                   json={"input": "hi", "truncate_prompt_tokens": 49})
    assert r.status_code == 400 and "max_model_len (48)" in r.json()["error"]["message"], r.text


def test_modernbert_score_and_rerank_with_truncation(modernbert_reranker):
    tensors, facts = reference(MODERNBERT_RERANKER)
    pairs = facts["pairs"]
    r = httpx.post(modernbert_reranker.url + "/v1/score", timeout=120,
                   json={"text_1": [p["query"] for p in pairs], "text_2": [p["document"] for p in pairs]})
    assert r.status_code == 200, r.text
    got = [d["score"] for d in r.json()["data"]]
    assert got == pytest.approx([float(tensors[f"score_{i}"][0]) for i in range(len(pairs))], abs=2e-3)
    query, document = facts["long_pair"]
    r = httpx.post(modernbert_reranker.url + "/v1/rerank", timeout=120, json={"query": query, "documents": [document]})
    assert r.status_code == 400 and "truncate_prompt_tokens" in r.json()["error"]["message"], r.text
    r = httpx.post(modernbert_reranker.url + "/v1/rerank", timeout=120,
                   json={"query": query, "documents": [document, pairs[0]["document"]], "truncate_prompt_tokens": -1})
    assert r.status_code == 200, r.text
    assert r.json()["usage"]["prompt_tokens"] == 128 + pairs[0]["num_tokens"]
    score = {x["index"]: x["relevance_score"] for x in r.json()["results"]}[0]
    assert score == pytest.approx(float(tensors["truncated_score"][0]), abs=2e-3)
    r = httpx.post(modernbert_reranker.url + "/v1/score", timeout=120,
                   json={"text_1": query, "text_2": document, "truncate_prompt_tokens": 20})
    assert r.status_code == 200 and r.json()["usage"]["prompt_tokens"] == 20, r.text
    r = httpx.post(modernbert_reranker.url + "/v1/classify", timeout=120,
                   json={"input": [document, [5] * 200], "truncate_prompt_tokens": 16})
    assert r.status_code == 200 and r.json()["usage"]["prompt_tokens"] == 32, r.text
