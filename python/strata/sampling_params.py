"""SamplingParams with vLLM's names and defaults; a few vLLM fields Strata lacks are accepted
only at their defaults, so code written for vLLM that spells them out still runs."""
import json as _json
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional, Union

from strata import _engine

# vLLM fields Strata does not implement, with the only value it takes for each.
_DEFAULT_ONLY = {
    "best_of": None,
    "min_tokens": 0,
    "detokenize": True,
    "spaces_between_special_tokens": True,
    "include_stop_str_in_output": False,
    "truncate_prompt_tokens": None,
    "bad_words": None,
    "allowed_token_ids": None,
    "logits_processors": None,
}


@dataclass(kw_only=True)
class StructuredOutputsParams:
    """vLLM's structured outputs: exactly one of a JSON schema (a dict or JSON text), a regex,
    a list of choices, a GBNF grammar, or any JSON object; enforced by constrained decoding."""
    json: Optional[Union[str, Dict[str, Any]]] = None
    regex: Optional[str] = None
    choice: Optional[List[str]] = None
    grammar: Optional[str] = None
    json_object: Optional[bool] = None

    def __post_init__(self):
        given = [name for name in ("json", "regex", "choice", "grammar", "json_object") if getattr(self, name)]
        if len(given) != 1:
            raise ValueError(f"StructuredOutputsParams takes exactly one of json, regex, choice, grammar, "
                             f"json_object; got {given or 'none'}")

    def _apply(self, request):
        if self.json is not None:
            request.set_json_schema(self.json if isinstance(self.json, str) else _json.dumps(self.json))
        elif self.regex is not None:
            request.set_regex(self.regex)
        elif self.choice is not None:
            request.set_choice([str(c) for c in self.choice])
        elif self.grammar is not None:
            request.set_grammar(self.grammar)
        else:
            request.json_object = True


GuidedDecodingParams = StructuredOutputsParams  # vLLM's older name


@dataclass(kw_only=True)
class SamplingParams:
    n: int = 1
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: Optional[int] = None
    stop: Optional[Union[str, List[str]]] = None
    stop_token_ids: Optional[List[int]] = None
    ignore_eos: bool = False
    max_tokens: Optional[int] = 16  # None: up to the context length
    logprobs: Optional[int] = None
    prompt_logprobs: Optional[int] = None
    skip_special_tokens: bool = True
    logit_bias: Optional[Dict[int, float]] = None
    best_of: Optional[int] = None
    min_tokens: int = 0
    detokenize: bool = True
    spaces_between_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    truncate_prompt_tokens: Optional[int] = None
    bad_words: Optional[List[str]] = None
    allowed_token_ids: Optional[List[int]] = None
    logits_processors: Optional[list] = field(default=None, repr=False)
    structured_outputs: Optional[StructuredOutputsParams] = None
    guided_decoding: Optional[StructuredOutputsParams] = None  # vLLM's older name

    def __post_init__(self):
        for name, default in _DEFAULT_ONLY.items():
            value = getattr(self, name)
            if value != default and not (name == "best_of" and value == self.n):
                raise ValueError(f"SamplingParams({name}={value!r}): Strata does not support {name}; "
                                 f"leave it at {default!r}")
        if isinstance(self.stop, str):
            self.stop = [self.stop]
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"SamplingParams(max_tokens={self.max_tokens}): max_tokens must be at least 1")

    def clone(self) -> "SamplingParams":
        return SamplingParams(**{f.name: getattr(self, f.name) for f in fields(self)})

    def _to_request(self, prompt_ids, max_model_len, default_seed=None):
        """The engine request for one prompt (the engine checks the ranges and names them)."""
        sampling = _engine.EngineSamplingParams()
        sampling.temperature = self.temperature
        sampling.top_p = self.top_p
        sampling.top_k = self.top_k
        sampling.min_p = self.min_p
        sampling.repetition_penalty = self.repetition_penalty
        sampling.presence_penalty = self.presence_penalty
        sampling.frequency_penalty = self.frequency_penalty
        seed = self.seed if self.seed is not None else default_seed
        sampling.seed = None if seed is None else seed % (1 << 64)  # vLLM takes any int
        sampling.logprobs = -1 if self.logprobs is None else self.logprobs
        if self.logit_bias:
            sampling.set_logit_bias([(int(t), float(b)) for t, b in self.logit_bias.items()])
        request = _engine.GenerationRequest()
        request.prompt_ids = list(prompt_ids)
        request.sampling = sampling
        request.max_tokens = (self.max_tokens if self.max_tokens is not None
                              else max(max_model_len - len(prompt_ids), 0))
        request.stop = list(self.stop or [])
        request.stop_token_ids = list(self.stop_token_ids or [])
        request.ignore_eos = self.ignore_eos
        request.skip_special_tokens = self.skip_special_tokens
        request.n = self.n
        request.prompt_logprobs = -1 if self.prompt_logprobs is None else self.prompt_logprobs
        if self.structured_outputs is not None and self.guided_decoding is not None:
            raise ValueError("SamplingParams: give structured_outputs or guided_decoding, not both")
        constraint = self.structured_outputs or self.guided_decoding
        if constraint is not None:
            constraint._apply(request)
        return request
