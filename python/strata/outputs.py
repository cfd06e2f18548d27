"""vLLM's output shapes: RequestOutput per prompt, CompletionOutput per choice, and logprobs
as one {token_id: Logprob} dict per position."""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union


@dataclass
class Logprob:
    logprob: float
    rank: Optional[int] = None  # 1: the most likely token; None where Strata does not know it
    decoded_token: Optional[str] = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: List[int]
    cumulative_logprob: Optional[float]  # None unless the request asked for logprobs
    logprobs: Optional[List[Dict[int, Logprob]]]
    finish_reason: Optional[str] = None  # "stop", "length" or "abort"
    stop_reason: Union[int, str, None] = None  # the stop string or stop token id; None for eos

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class RequestOutput:
    request_id: str
    prompt: Optional[str]
    prompt_token_ids: List[int]
    prompt_logprobs: Optional[List[Optional[Dict[int, Logprob]]]]
    outputs: List[CompletionOutput]
    finished: bool = True
    num_cached_tokens: int = 0
    metrics: Optional[dict] = field(default=None, repr=False)


def _token_logprobs(sample, decode) -> Dict[int, Logprob]:
    """The sampled token first, then the top ones, as vLLM lists them."""
    entries = {}
    ranks = {t.token_id: i + 1 for i, t in enumerate(sample.top)}
    entries[sample.token_id] = Logprob(sample.logprob, ranks.get(sample.token_id), decode(sample.token_id))
    for i, t in enumerate(sample.top):
        entries.setdefault(t.token_id, Logprob(t.logprob, i + 1, decode(t.token_id)))
    return entries


def _prompt_logprobs(entries, decode):
    if not entries:
        return None
    out = [None]  # the first prompt token has no context to be predicted from
    for e in entries:
        d = {e.token_id: Logprob(e.logprob, e.rank, decode(e.token_id))}
        for i, t in enumerate(e.top):
            d.setdefault(t.token_id, Logprob(t.logprob, i + 1, decode(t.token_id)))
        out.append(d)
    return out


def _stop_reason(choice, params):
    """The engine names stop strings; a stop token id is read off the last token, as vLLM gives it."""
    if choice.stop_reason is not None:
        return choice.stop_reason
    if choice.finish_reason == "stop" and choice.token_ids and params.stop_token_ids:
        if choice.token_ids[-1] in params.stop_token_ids:
            return choice.token_ids[-1]
    return None


def make_request_output(request_id, prompt, prompt_ids, params, engine_output, decode) -> RequestOutput:
    """engine_output: the engine's RequestOutput; decode: token id -> its text (or None)."""
    outputs = []
    for index, choice in enumerate(engine_output.choices):
        logprobs = None
        cumulative = None
        if params.logprobs is not None:
            logprobs = [_token_logprobs(s, decode) for s in choice.logprobs]
            cumulative = float(sum(s.logprob for s in choice.logprobs))
        outputs.append(CompletionOutput(index=index, text=choice.text, token_ids=list(choice.token_ids),
                                        cumulative_logprob=cumulative, logprobs=logprobs,
                                        finish_reason=choice.finish_reason,
                                        stop_reason=_stop_reason(choice, params)))
    return RequestOutput(request_id=request_id, prompt=prompt, prompt_token_ids=list(prompt_ids),
                         prompt_logprobs=_prompt_logprobs(engine_output.prompt_logprobs, decode),
                         outputs=outputs, num_cached_tokens=engine_output.num_cached_tokens)
