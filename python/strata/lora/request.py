"""LoRARequest: a PEFT adapter for generate() and chat(), as vLLM's vllm.lora.request.LoRARequest.
The engine loads it from lora_path the first time its lora_int_id is asked for, into one of
LLM(max_loras=...) slots, and keeps it there while it is used."""
from typing import List, Optional


class LoRARequest:
    """LoRARequest(lora_name, lora_int_id, lora_path): lora_int_id (at least 1) names the adapter;
    two requests with the same id use the same loaded adapter."""

    def __init__(self, lora_name: str, lora_int_id: int, lora_path: str = "", base_model_name: Optional[str] = None):
        if not isinstance(lora_int_id, int) or isinstance(lora_int_id, bool) or lora_int_id < 1:
            raise ValueError(f"LoRARequest(lora_int_id={lora_int_id!r}): the id must be an int of at least 1")
        if not lora_path:
            raise ValueError(f"LoRARequest('{lora_name}'): give lora_path, the adapter's PEFT folder")
        self.lora_name = lora_name
        self.lora_int_id = lora_int_id
        self.lora_path = str(lora_path)
        self.base_model_name = base_model_name

    @property
    def adapter_id(self) -> int:
        return self.lora_int_id

    @property
    def name(self) -> str:
        return self.lora_name

    @property
    def path(self) -> str:
        return self.lora_path

    def __eq__(self, other) -> bool:
        return isinstance(other, LoRARequest) and self.lora_name == other.lora_name

    def __hash__(self) -> int:
        return hash(self.lora_name)

    def __repr__(self) -> str:
        return f"LoRARequest(lora_name={self.lora_name!r}, lora_int_id={self.lora_int_id}, lora_path={self.lora_path!r})"


def lora_per_prompt(lora_request, num_prompts: int) -> List[Optional[LoRARequest]]:
    """One LoRARequest (or None) for every prompt, or a list of them, one per prompt."""
    if lora_request is None or isinstance(lora_request, LoRARequest):
        return [lora_request] * num_prompts
    if not isinstance(lora_request, (list, tuple)):
        raise TypeError(f"lora_request: expected a LoRARequest or a list of them, got {type(lora_request).__name__}")
    if len(lora_request) != num_prompts:
        raise ValueError(f"lora_request: {len(lora_request)} given for {num_prompts} prompts; give one LoRARequest, "
                         "or one per prompt")
    for r in lora_request:
        if r is not None and not isinstance(r, LoRARequest):
            raise TypeError(f"lora_request: expected strata.LoRARequest or None, got {type(r).__name__}")
    return list(lora_request)
