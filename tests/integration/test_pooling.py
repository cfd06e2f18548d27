"""Pooling models through `strata serve`: the openai client's embeddings.create against the
Qwen3-Embedding-style fixture (float and base64, batches, token ids, matryoshka dimensions,
chunked prefill) within 1e-4 of what transformers computed, vLLM's /v1/score, /v1/rerank and
/v1/classify on the cross-encoder fixture (and score / rerank by cosine on the embedding model),
and the 400s: bad inputs, too long inputs, generation on a pooling model and pooling on a
generative one."""
import json

import httpx
import numpy as np
import openai
import pytest
from safetensors.numpy import load_file

from conftest import LOCAL_FIXTURES

EMBEDDING = LOCAL_FIXTURES / "hf" / "qwen3_embedding"
RERANKER = LOCAL_FIXTURES / "hf" / "qwen3_reranker"


def reference(folder):
    return load_file(str(folder / "reference.safetensors")), json.loads((folder / "reference.json").read_text())


def post(server, path, body):
    return httpx.post(server.url + path, json=body, timeout=120)


def test_embeddings_match_transformers(embedder):
    tensors, facts = reference(EMBEDDING)
    texts = [p["text"] for p in facts["prompts"]]
    r = embedder.client().embeddings.create(model="tiny-embed", input=texts)  # the client asks for base64
    assert [d.index for d in r.data] == list(range(len(texts)))
    assert r.usage.prompt_tokens == sum(p["num_tokens"] for p in facts["prompts"])
    assert r.usage.total_tokens == r.usage.prompt_tokens
    for i, d in enumerate(r.data):
        assert np.abs(np.array(d.embedding) - tensors[f"embedding_{i}"]).max() < 1e-4, f"prompt {i}"
    floats = embedder.client().embeddings.create(model="tiny-embed", input=texts[3], encoding_format="float")
    assert np.abs(np.array(floats.data[0].embedding) - tensors["embedding_3"]).max() < 1e-4
    assert floats.usage.prompt_tokens == facts["prompts"][3]["num_tokens"]


def test_embeddings_of_token_ids_and_alone_equal_batched(embedder):
    tensors, _ = reference(EMBEDDING)
    ids = [tensors[f"tokens_{i}"].tolist() for i in range(4)]
    client = embedder.client()
    batched = client.embeddings.create(model="tiny-embed", input=ids, encoding_format="float").data
    for i in range(4):
        alone = client.embeddings.create(model="tiny-embed", input=ids[i], encoding_format="float").data[0]
        assert np.abs(np.array(alone.embedding) - np.array(batched[i].embedding)).max() < 1e-5
        assert np.abs(np.array(alone.embedding) - tensors[f"embedding_{i}"]).max() < 1e-4


def test_matryoshka_dimensions(embedder):
    tensors, facts = reference(EMBEDDING)
    r = embedder.client().embeddings.create(model="tiny-embed", input=facts["prompts"][1]["text"], dimensions=16,
                                            encoding_format="float")
    got = np.array(r.data[0].embedding)
    want = tensors["embedding_1"][:16] / np.linalg.norm(tensors["embedding_1"][:16])
    assert got.shape == (16,) and np.abs(got - want).max() < 1e-4
    for bad in (0, 65):
        with pytest.raises(openai.BadRequestError) as e:
            embedder.client().embeddings.create(model="tiny-embed", input="hi", dimensions=bad)
        assert "dimensions" in str(e.value)


@pytest.mark.parametrize("body, words", [
    ({"input": ""}, "empty"),
    ({"input": []}, "input"),
    ({"input": [[]]}, "empty"),
    ({"input": 5}, "input"),
    ({"input": [1.5, 2]}, "input"),
    ({"input": ["ok", {"text": "no"}]}, "input[1]"),
    ({"input": [600]}, "token id 600"),
    ({"input": "x " * 300}, "truncate_prompt_tokens"),
    ({"input": "hi", "encoding_format": "int8"}, "encoding_format"),
    ({"input": "hi", "truncate_prompt_tokens": 0}, "truncate_prompt_tokens"),
    ({"input": "hi", "truncate_prompt_tokens": 100000}, "max_model_len"),
    ({"input": "hi", "truncate_prompt_tokens": "8"}, "truncate_prompt_tokens"),
    ({"input": "hi", "temperature": 0.5}, "temperature"),
    ({}, "input"),
])
def test_bad_embedding_requests_get_400(embedder, body, words):
    r = post(embedder, "/v1/embeddings", {"model": "tiny-embed", **body})
    assert r.status_code == 400, r.text
    assert words in r.json()["error"]["message"], r.text


def test_generation_routes_refuse_a_pooling_model(embedder):
    client = embedder.client()
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="tiny-embed", messages=[{"role": "user", "content": "hi"}])
    assert "embedding model" in str(e.value)
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model="tiny-embed", prompt="hi", max_tokens=2)
    r = post(embedder, "/v1/classify", {"model": "tiny-embed", "input": "hi"})
    assert r.status_code == 400 and "embedding model" in r.json()["error"]["message"]


def test_embeddings_refused_by_a_generative_model(tiny):
    with pytest.raises(openai.BadRequestError) as e:
        tiny.client().embeddings.create(model=tiny.model, input=[1, 2, 3])
    assert "generative model" in str(e.value)
    assert post(tiny, "/v1/rerank", {"query": "a", "documents": ["b"]}).status_code == 400


def test_score_and_rerank_with_a_cross_encoder(reranker):
    tensors, facts = reference(RERANKER)
    pairs = facts["pairs"]
    query = pairs[0]["query"]
    r = post(reranker, "/v1/score", {"model": "tiny-rerank", "text_1": query,
                                     "text_2": [pairs[0]["document"], pairs[1]["document"]]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "list" and [d["index"] for d in body["data"]] == [0, 1]
    for i, d in enumerate(body["data"]):
        assert d["object"] == "score" and abs(d["score"] - float(tensors[f"score_{i}"][0])) < 1e-4
    assert body["usage"]["prompt_tokens"] == pairs[0]["num_tokens"] + pairs[1]["num_tokens"]
    pairwise = post(reranker, "/score", {"text_1": [p["query"] for p in pairs],
                                         "text_2": [p["document"] for p in pairs]}).json()
    assert [d["score"] for d in pairwise["data"]] == pytest.approx([p["score"] for p in pairs], abs=1e-4)

    docs = [pairs[0]["document"], {"text": pairs[1]["document"]}]
    ranked = post(reranker, "/v1/rerank", {"model": "tiny-rerank", "query": query, "documents": docs}).json()
    scores = [float(tensors[f"score_{i}"][0]) for i in range(2)]
    order = sorted(range(2), key=lambda i: -scores[i])
    assert [x["index"] for x in ranked["results"]] == order
    assert ranked["results"][0]["document"]["text"] == pairs[order[0]]["document"]
    assert abs(ranked["results"][0]["relevance_score"] - scores[order[0]]) < 1e-4
    top = post(reranker, "/v2/rerank", {"query": query, "documents": docs, "top_n": 1,
                                        "return_documents": False}).json()
    assert len(top["results"]) == 1 and "document" not in top["results"][0]


def test_classify_with_a_cross_encoder(reranker):
    tensors, facts = reference(RERANKER)
    ids = tensors["pair_tokens_2"].tolist()
    r = post(reranker, "/v1/classify", {"model": "tiny-rerank", "input": [ids]})
    assert r.status_code == 200, r.text
    d = r.json()["data"][0]
    assert d["label"] == "LABEL_0" and d["num_classes"] == 1
    assert abs(d["probs"][0] - facts["pairs"][2]["score"]) < 1e-4


@pytest.mark.parametrize("path, body, words", [
    ("/v1/score", {"text_1": "a"}, "text_2"),
    ("/v1/score", {"text_1": ["a", "b"], "text_2": ["c", "d", "e"]}, "text_1"),
    ("/v1/score", {"text_1": "", "text_2": "b"}, "empty"),
    ("/v1/score", {"text_1": 3, "text_2": "b"}, "string"),
    ("/v1/rerank", {"query": "a", "documents": []}, "documents"),
    ("/v1/rerank", {"query": "a", "documents": [7]}, "documents[0]"),
    ("/v1/rerank", {"query": "a", "documents": ["b"], "top_n": -1}, "top_n"),
    ("/v1/rerank", {"query": "word " * 300, "documents": ["b"]}, "truncate_prompt_tokens"),
    ("/v1/embeddings", {"input": "a"}, "classifier"),
    ("/v1/completions", {"prompt": "a"}, "classifier"),
])
def test_bad_scoring_requests_get_400(reranker, path, body, words):
    r = post(reranker, path, body)
    assert r.status_code == 400, r.text
    assert words in r.json()["error"]["message"], r.text


def test_score_and_rerank_with_an_embedding_model(embedder):
    tensors, facts = reference(EMBEDDING)
    texts = [p["text"] for p in facts["prompts"]]
    r = post(embedder, "/v1/score", {"text_1": texts[0], "text_2": texts[1:]}).json()
    for i, d in enumerate(r["data"]):
        want = float(np.dot(tensors["embedding_0"], tensors[f"embedding_{i + 1}"]))
        assert abs(d["score"] - want) < 1e-4
    ranked = post(embedder, "/v1/rerank", {"query": texts[0], "documents": texts[1:], "top_n": 2}).json()
    assert len(ranked["results"]) == 2
    assert ranked["results"][0]["relevance_score"] >= ranked["results"][1]["relevance_score"]
