"""LLM: vLLM's offline entry point over Strata's engine, in this process. generate() and
chat() hand the whole batch to the continuous-batching engine at once (with the GIL
released) and return one RequestOutput per prompt, in the order given, each prompt on its
LoRA adapter if it names one; a pooling model's embed(), classify() and score() do the same
with prefill-only requests. A model split over ranks (tensor_parallel_size, pipeline_parallel_size)
runs them as child processes until close(), garbage collection or interpreter exit."""
import atexit
import itertools
import json
import random
import weakref
from typing import List, Optional, Sequence, Union

from strata import _engine
from strata.engine_args import engine_options
from strata.lora.request import LoRARequest, lora_per_prompt
from strata.outputs import RequestOutput, make_request_output
from strata.pooling import (ClassificationOutput, EmbeddingOutput, PoolingParams, PoolingRequestOutput, ScoringOutput,
                            cosine)
from strata.prompts import conversations, normalize_prompts
from strata.sampling_params import SamplingParams


class LLM:
    """LLM(model=None, **engine_args). model: a Hugging Face folder, a .gguf file or a repo
    id org/name[:GGUF_TAG]; None: the embedded SmolLM2-135M-Instruct (scripts/setup.sh)."""

    def __init__(self, model: Optional[str] = None, **kwargs):
        options = engine_options({"model": model, **kwargs})
        seed = kwargs.get("seed")
        # The engine seed makes unseeded sampling repeatable: each request draws its seed here.
        self._seeds = random.Random(seed) if seed is not None else None
        self._engine = _engine.OfflineEngine(options)
        self._request_counter = itertools.count()
        _open_llms.add(self)

    def close(self) -> None:
        """Stops the engine and any other ranks (waiting for them to exit) and frees the model;
        generate() and chat() raise afterwards. Repeats are no-ops."""
        engine = getattr(self, "_engine", None)  # None when __init__ failed
        if engine is not None:
            engine.close()

    def __enter__(self) -> "LLM":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __del__(self):
        self.close()

    @property
    def max_model_len(self) -> int:
        return self._engine.max_model_len

    def get_tokenizer(self) -> "Tokenizer":
        return Tokenizer(self._engine)

    def generate(self, prompts, sampling_params: Union[SamplingParams, Sequence[SamplingParams], None] = None,
                 use_tqdm: bool = True, lora_request: Union[LoRARequest, Sequence[LoRARequest], None] = None
                 ) -> List[RequestOutput]:
        """prompts: a string, token ids, {"prompt": ...} / {"prompt_token_ids": [...]}, or a list of them.
        lora_request: one adapter for every prompt or a list, one per prompt (LLM(enable_lora=True))."""
        del use_tqdm  # accepted for vLLM's callers; nothing is drawn
        items = normalize_prompts(prompts)
        prompt_ids = [ids if ids is not None else self._engine.encode(text, True) for text, ids in items]
        return self._run([text for text, _ in items], prompt_ids, sampling_params, lora_request)

    def chat(self, messages, sampling_params=None, use_tqdm: bool = True, lora_request=None,
             chat_template: Optional[str] = None, chat_template_content_format: str = "auto",
             add_generation_prompt: bool = True, continue_final_message: bool = False,
             tools: Optional[list] = None, chat_template_kwargs: Optional[dict] = None) -> List[RequestOutput]:
        """messages: one conversation (a list of {"role", "content"}) or a list of them. Content is a
        string or parts: {"type": "text", "text": ...} and, for a model with a vision tower,
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}} (file:// URLs under
        LLM(allowed_local_media_path=...)). chat_template: a Jinja template instead of the model's."""
        del use_tqdm, chat_template_content_format
        if chat_template is not None and not isinstance(chat_template, str):
            raise TypeError(f"chat_template: expected the template's text, got {type(chat_template).__name__}")
        body = {"add_generation_prompt": add_generation_prompt}
        if tools is not None:
            body["tools"] = tools
        if chat_template_kwargs:
            body["chat_template_kwargs"] = chat_template_kwargs
        chat_prompts = [self._engine.encode_chat(json.dumps({"messages": c, **body}), chat_template or "",
                                                 continue_final_message)
                        for c in conversations(messages)]
        prompt_ids = [p.ids for p in chat_prompts]
        texts = [self._engine.decode(ids, False) for ids in prompt_ids]
        return self._run(texts, prompt_ids, sampling_params, lora_request, chat_prompts)

    def embed(self, prompts, pooling_params: Optional[PoolingParams] = None, use_tqdm: bool = True,
              truncate_prompt_tokens: Optional[int] = None) -> List[PoolingRequestOutput]:
        """Embeddings of an embedding model (LLM(model, runner="pooling") or a checkpoint that is one):
        one PoolingRequestOutput per prompt, .outputs.embedding. truncate_prompt_tokens: -1 cuts each
        prompt to the model's limit (max_model_len), k to k tokens; None refuses a longer prompt."""
        del use_tqdm
        self._require_task("embed", "embed")
        max_tokens = self._engine.truncation_max_tokens(truncate_prompt_tokens)
        dimensions = (pooling_params.dimensions if pooling_params is not None else None) or 0
        prompt_ids = self._prompt_ids(prompts, max_tokens)
        return [PoolingRequestOutput(str(next(self._request_counter)), ids, EmbeddingOutput(list(pooled)))
                for ids, pooled in zip(prompt_ids, self._pool(prompt_ids, dimensions))]

    def classify(self, prompts, use_tqdm: bool = True) -> List[PoolingRequestOutput]:
        """A classifier's probabilities per prompt (.outputs.probs): softmax, or sigmoid for one label."""
        del use_tqdm
        self._require_task("classify", "classify")
        prompt_ids = self._prompt_ids(prompts)
        return [PoolingRequestOutput(str(next(self._request_counter)), ids, ClassificationOutput(list(pooled)))
                for ids, pooled in zip(prompt_ids, self._pool(prompt_ids))]

    def score(self, data_1, data_2, use_tqdm: bool = True,
              truncate_prompt_tokens: Optional[int] = None) -> List[PoolingRequestOutput]:
        """Scores of data_1 against data_2 (strings; one against many, or pairwise): a cross-encoder's
        sigmoid of its logit over the pair as one sequence, or the cosine of an embedding model's vectors.
        truncate_prompt_tokens cuts each pair (or text) as embed() does, a pair's longer text first."""
        del use_tqdm
        max_tokens = self._engine.truncation_max_tokens(truncate_prompt_tokens)
        firsts = [data_1] if isinstance(data_1, str) else list(data_1)
        seconds = [data_2] if isinstance(data_2, str) else list(data_2)
        if not all(isinstance(t, str) for t in firsts + seconds):
            raise TypeError("score(): data_1 and data_2 are strings or lists of strings")
        if len(firsts) != 1 and len(firsts) != len(seconds):
            raise ValueError(f"score(): {len(firsts)} texts in data_1 and {len(seconds)} in data_2; give one "
                             "(scored against each) or as many as data_2 (scored pairwise)")
        if len(firsts) == 1:
            firsts = firsts * len(seconds)
        task = self._engine.task
        if task == "embed":
            vectors = self._pool([self._engine.encode(t, True, max_tokens) for t in firsts + seconds])
            n = len(firsts)
            scores = [cosine(vectors[i], vectors[n + i]) for i in range(n)]
            prompt_ids = [[] for _ in range(n)]
        else:
            self._require_task("classify", "score")
            if self._engine.num_labels != 1:
                raise ValueError(f"score(): this classifier has {self._engine.num_labels} labels; scoring takes a "
                                 "one-label cross-encoder (use classify())")
            pairs = [self._engine.encode_pair_types(a, b, True, max_tokens) for a, b in zip(firsts, seconds)]
            prompt_ids = [ids for ids, _ in pairs]
            scores = [pooled[0] for pooled in self._pool(prompt_ids, type_ids=[types for _, types in pairs])]
        return [PoolingRequestOutput(str(next(self._request_counter)), ids, ScoringOutput(score))
                for ids, score in zip(prompt_ids, scores)]

    def _require_task(self, task, method):
        if self._engine.task != task:
            raise ValueError(f"LLM.{method}() needs {'an embedding' if task == 'embed' else 'a classifier'} model; "
                             f"this one is served for '{self._engine.task}' (pick the runner with LLM(model, "
                             "runner='pooling') or task='embed' / 'classify')")

    def _prompt_ids(self, prompts, max_tokens=0):
        """Each prompt's ids; max_tokens > 0 cuts text (its end, special tokens kept) and keeps the last
        max_tokens of token-id prompts, as vLLM's truncate_prompt_tokens does."""
        return [ids[-max_tokens:] if ids is not None and max_tokens > 0
                else ids if ids is not None else self._engine.encode(text, True, max_tokens)
                for text, ids in normalize_prompts(prompts)]

    def _pool(self, prompt_ids, dimensions=0, type_ids=None):
        requests = []
        for i, ids in enumerate(prompt_ids):
            request = _engine.GenerationRequest()
            request.prompt_ids = ids
            request.set_pooling(dimensions)
            if type_ids is not None:  # segments of pair inputs; models without token types ignore them
                request.set_token_type_ids(type_ids[i])
            requests.append(request)
        return [out.pooled for out in self._engine.generate(requests, [])]

    def _run(self, texts, prompt_ids, sampling_params, lora_request=None, chat_prompts=None) -> List[RequestOutput]:
        params = _params_per_prompt(sampling_params, len(prompt_ids))
        loras = lora_per_prompt(lora_request, len(prompt_ids))
        requests = [p._to_request(ids, self.max_model_len, self._next_seed(p))
                    for p, ids in zip(params, prompt_ids)]
        for request, chat_prompt in zip(requests, chat_prompts or []):
            if chat_prompt.num_images:
                request.set_images(chat_prompt)
        engine_loras = [None if r is None else _engine.LoraRequest(r.lora_name, r.lora_int_id, r.lora_path)
                        for r in loras]
        engine_outputs = self._engine.generate(requests, engine_loras)
        decode = self._token_decoder(params)
        return [make_request_output(str(next(self._request_counter)), text, ids, p, out, decode)
                for text, ids, p, out in zip(texts, prompt_ids, params, engine_outputs)]

    def _next_seed(self, params: SamplingParams) -> Optional[int]:
        if self._seeds is None or params.seed is not None:
            return None
        return self._seeds.getrandbits(63)

    def _token_decoder(self, params):
        """token id -> its text for logprobs (None without a tokenizer), cached per call."""
        if not any(p.logprobs is not None or p.prompt_logprobs is not None for p in params):
            return None
        cache = {}

        def decode(token_id):
            if token_id not in cache:
                try:
                    cache[token_id] = self._engine.decode([token_id], False)
                except _engine.StrataError:
                    cache[token_id] = None
            return cache[token_id]
        return decode


# Closed at interpreter exit, before modules are torn down, so the other ranks stop cleanly.
_open_llms: "weakref.WeakSet[LLM]" = weakref.WeakSet()


@atexit.register
def _close_open_llms():
    for llm in list(_open_llms):
        llm.close()


class Tokenizer:
    """The engine's tokenizer: encode and decode, as Hugging Face tokenizers name them."""

    def __init__(self, engine):
        self._engine = engine

    def encode(self, text: str, add_special_tokens: bool = True) -> List[int]:
        return self._engine.encode(text, add_special_tokens)

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return self._engine.decode(list(token_ids), skip_special_tokens)

    @property
    def eos_token_ids(self) -> List[int]:
        return list(self._engine.eos_token_ids)



def _params_per_prompt(sampling_params, num_prompts) -> List[SamplingParams]:
    if sampling_params is None:
        return [SamplingParams()] * num_prompts
    if isinstance(sampling_params, SamplingParams):
        return [sampling_params] * num_prompts
    params = list(sampling_params)
    if len(params) != num_prompts:
        raise ValueError(f"sampling_params: {len(params)} given for {num_prompts} prompts; "
                         "give one SamplingParams, or one per prompt")
    for p in params:
        if not isinstance(p, SamplingParams):
            raise TypeError(f"sampling_params: expected strata.SamplingParams, got {type(p).__name__}")
    return params
