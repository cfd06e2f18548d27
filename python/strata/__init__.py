"""Strata in-process: vLLM's offline API over Strata's continuous-batching engine.

    from strata import LLM, SamplingParams
    llm = LLM("HuggingFaceTB/SmolLM2-135M-Instruct")   # or a folder, a .gguf; None: the embedded SmolLM2
    outputs = llm.generate(["The capital of France is"], SamplingParams(temperature=0, max_tokens=8))
    print(outputs[0].outputs[0].text)

A pooling model: LLM("Qwen/Qwen3-Embedding-0.6B").embed(["a", "b"])[0].outputs.embedding, and
LLM(reranker).score("query", ["doc 1", "doc 2"]).

LoRA adapters: LLM(model, enable_lora=True).generate(prompts, lora_request=LoRARequest(name, 1, path)).

Several ranks: LLM(model, tensor_parallel_size=2, pipeline_parallel_size=1) runs the other ranks as
`strata rank` child processes until llm.close() (or garbage collection, or interpreter exit).

Engine errors are raised as StrataError (a ValueError) with the engine's message.
"""
from strata._engine import StrataError
from strata.llm import LLM
from strata.lora.request import LoRARequest
from strata.outputs import CompletionOutput, Logprob, RequestOutput
from strata.pooling import (ClassificationOutput, EmbeddingOutput, PoolingParams, PoolingRequestOutput,
                            ScoringOutput)
from strata.sampling_params import GuidedDecodingParams, SamplingParams, StructuredOutputsParams

__all__ = ["LLM", "LoRARequest", "SamplingParams", "StructuredOutputsParams", "GuidedDecodingParams", "RequestOutput", "CompletionOutput", "Logprob", "StrataError", "PoolingParams",
           "PoolingRequestOutput", "EmbeddingOutput", "ClassificationOutput", "ScoringOutput"]
