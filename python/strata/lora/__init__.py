"""LoRA adapters for LLM(model, enable_lora=True): strata.lora.request.LoRARequest, as vLLM's vllm.lora.request."""
from strata.lora.request import LoRARequest

__all__ = ["LoRARequest"]
