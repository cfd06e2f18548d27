"""LLM(model, **engine_args): vLLM's engine argument names where the meaning matches, a few
of Strata's own (threads, num_kv_blocks, ssm_*), and a clear error for anything else. A model
split over ranks (tensor_parallel_size, pipeline_parallel_size) runs them with the strata command."""
import json

from strata import _engine
from strata.rank_program import strata_command

# vLLM arguments Strata has no use for, with the only value it takes for each.
_DEFAULT_ONLY = {
    "dtype": "auto",
    "data_parallel_size": 1,  # replicas behind one server: `strata serve --data-parallel-size`
    "enforce_eager": False,
    "tokenizer_mode": "auto",
}


def _model(o, v): o.model.model = "" if v is None else str(v)
def _revision(o, v): o.model.revision = v or "main"
def _quantization(o, v): o.model.quantization = v or "none"
def _tokenizer(o, v): o.tokenizer = "" if v is None else str(v)
def _kv_blocks(o, v): o.model.num_kv_blocks = v or 0
def _max_model_len(o, v): o.engine.max_model_len = v or 0
def _pooler_config(o, v): o.model.pooler_config = "" if v is None else (v if isinstance(v, str) else json.dumps(v))
def _speculative(o, v): o.engine.set_speculative_config(v if isinstance(v, str) else json.dumps(v))
def _media_path(o, v): o.allowed_local_media_path = "" if v is None else str(v)
def _set_later(o, v): pass  # read with enable_lora, below


def _limit_mm(o, v):
    """{"image": N}: images a chat prompt may hold; other modalities only at 0 (Strata takes none)."""
    if not isinstance(v, dict) or any(not isinstance(n, int) or n < 0 for n in v.values()):
        raise ValueError(f"LLM(limit_mm_per_prompt={v!r}): give a dict like {{'image': 4}}")
    others = sorted(k for k, n in v.items() if k != "image" and n != 0)
    if others:
        raise ValueError(f"LLM(limit_mm_per_prompt={v!r}): Strata takes images only; leave {', '.join(others)} at 0")
    if "image" in v:
        o.max_images_per_prompt = v["image"]


def _model_field(name):
    def apply(o, v): setattr(o.model, name, v)
    return apply


def _engine_field(name):
    def apply(o, v): setattr(o.engine, name, v)
    return apply


def _options_field(name):
    def apply(o, v): setattr(o, name, v)
    return apply


_SETTERS = {
    "model": _model,
    "trust_remote_code": lambda o, v: None,  # Strata never runs a repo's model code
    "tokenizer": _tokenizer,
    "skip_tokenizer_init": _options_field("skip_tokenizer_init"),
    "revision": _revision,
    "quantization": _quantization,
    "load_format": _model_field("load_format"),
    "device": _model_field("device"),
    "gpu_memory_utilization": _model_field("gpu_memory_utilization"),
    "num_gpu_blocks_override": _kv_blocks,
    "max_model_len": _max_model_len,
    "max_num_seqs": _engine_field("max_num_seqs"),
    "max_num_batched_tokens": _engine_field("max_num_batched_tokens"),
    "enable_chunked_prefill": _engine_field("enable_chunked_prefill"),
    "enable_prefix_caching": _engine_field("enable_prefix_caching"),
    "async_scheduling": _engine_field("async_scheduling"),
    "swap_space": _engine_field("swap_space"),
    "speculative_config": _speculative,
    "kv_cache_dtype": _model_field("kv_cache_dtype"),
    "runner": _model_field("runner"),
    "task": _model_field("task"),
    "pooler_config": _pooler_config,
    "enable_lora": _set_later,
    "max_loras": _set_later,
    "max_lora_rank": _set_later,
    "allowed_local_media_path": _media_path,
    "limit_mm_per_prompt": _limit_mm,
    "tensor_parallel_size": _model_field("tensor_parallel_size"),
    "pipeline_parallel_size": _model_field("pipeline_parallel_size"),
    "enable_expert_parallel": _model_field("enable_expert_parallel"),
    # Strata's own
    "threads": _model_field("threads"),
    "num_kv_blocks": _kv_blocks,
    "ssm_state_dtype": _model_field("ssm_state_dtype"),
    "ssm_cache_slots": _engine_field("ssm_cache_slots"),
    "ssm_snapshot_interval": _engine_field("ssm_snapshot_interval"),
    "ssm_host_cache_gb": _engine_field("ssm_host_cache_gb"),
    "load_progress": _model_field("load_progress"),
    "expert_dispatch": _model_field("expert_dispatch"),
}

_CHOICES = {
    "device": ("auto", "cpu", "cuda"),
    "load_format": ("auto", "dummy"),
    "quantization": (None, "none", "fp8"),
    "ssm_state_dtype": ("f32", "f16"),
    "kv_cache_dtype": ("auto", "fp8", "fp8_e4m3"),
    "runner": ("auto", "generate", "pooling"),
    "task": ("embed", "classify", "score", "generate"),
    "expert_dispatch": ("all-reduce", "all-to-all"),
}

# Ranges the strata command's flags check (CLI11) before the engine sees the values.
_RANGES = {
    "gpu_memory_utilization": (0.05, 1.0),
    "threads": (0, None),
    "num_kv_blocks": (0, None),
    "num_gpu_blocks_override": (0, None),
    "max_model_len": (0, None),
    "swap_space": (0, 1 << 20),
    "ssm_host_cache_gb": (0, 1 << 20),
    "max_loras": (1, None),
    "max_lora_rank": (1, None),
    "tensor_parallel_size": (1, 64),
    "pipeline_parallel_size": (1, 64),
}

ENGINE_ARGS = sorted([*_SETTERS, "seed", *_DEFAULT_ONLY])


def _check_value(name, value):
    if name in _DEFAULT_ONLY and value != _DEFAULT_ONLY[name]:
        raise ValueError(f"LLM({name}={value!r}): Strata does not support it; leave it at {_DEFAULT_ONLY[name]!r}")
    low, high = _RANGES.get(name, (None, None))
    if isinstance(value, (int, float)) and ((low is not None and value < low) or (high is not None and value > high)):
        raise ValueError(f"LLM({name}={value!r}): give a value in [{low}, {high if high is not None else '...'}]")
    if name in _CHOICES and value not in _CHOICES[name]:
        raise ValueError(f"LLM({name}={value!r}): use one of {', '.join(repr(c) for c in _CHOICES[name])}")


def engine_options(kwargs) -> "_engine.OfflineEngineOptions":
    """OfflineEngineOptions from LLM's keyword arguments; TypeError or ValueError naming the bad one."""
    unknown = sorted(k for k in kwargs if k not in _SETTERS and k not in _DEFAULT_ONLY and k != "seed")
    if unknown:
        raise TypeError(f"LLM() got unexpected keyword argument(s) {', '.join(unknown)}; "
                        f"Strata takes: {', '.join(ENGINE_ARGS)}")
    for name, value in kwargs.items():
        _check_value(name, value)
    options = _engine.OfflineEngineOptions()
    options.model.load_progress = True
    for name, value in kwargs.items():
        if name not in _SETTERS:
            continue
        try:
            _SETTERS[name](options, value)
        except TypeError:
            raise TypeError(f"LLM({name}={value!r}): {type(value).__name__} is the wrong type") from None
    if kwargs.get("enable_lora"):
        # vLLM's defaults: one adapter at a time, ranks up to 16.
        options.enable_lora(kwargs.get("max_loras") or 1, kwargs.get("max_lora_rank") or 16)
    if options.model.tensor_parallel_size * options.model.pipeline_parallel_size > 1:
        options.rank_program = strata_command() or ""  # none: the engine says how to get one
    return options
