"""vLLM's pooling shapes: PoolingParams, and the outputs of LLM.embed(), LLM.classify() and
LLM.score() (EmbeddingRequestOutput, ClassificationRequestOutput, ScoringRequestOutput)."""
import math
from dataclasses import dataclass
from typing import List, Optional


@dataclass
class PoolingParams:
    """dimensions: keep the first `dimensions` values of a matryoshka model's embedding
    (renormalised); models without matryoshka training refuse it."""
    dimensions: Optional[int] = None


@dataclass
class EmbeddingOutput:
    embedding: List[float]

    @property
    def hidden_size(self) -> int:
        return len(self.embedding)


@dataclass
class ClassificationOutput:
    probs: List[float]

    @property
    def num_classes(self) -> int:
        return len(self.probs)


@dataclass
class ScoringOutput:
    score: float


@dataclass
class PoolingRequestOutput:
    request_id: str
    prompt_token_ids: List[int]
    outputs: object  # EmbeddingOutput, ClassificationOutput or ScoringOutput
    finished: bool = True


EmbeddingRequestOutput = PoolingRequestOutput
ClassificationRequestOutput = PoolingRequestOutput
ScoringRequestOutput = PoolingRequestOutput


def cosine(a: List[float], b: List[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / max(norm, 1e-12)
