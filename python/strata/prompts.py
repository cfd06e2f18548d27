"""The prompt shapes vLLM's generate() and chat() take, brought to one form each."""
from typing import List, Optional, Tuple

PromptItem = Tuple[Optional[str], Optional[List[int]]]  # (text, token ids): one is set


def _is_token_ids(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(t, int) and not isinstance(t, bool) for t in value)


def _one_prompt(prompt) -> PromptItem:
    if isinstance(prompt, str):
        return prompt, None
    if isinstance(prompt, dict):
        if "prompt_token_ids" in prompt:
            ids = prompt["prompt_token_ids"]
            if not _is_token_ids(ids):
                raise TypeError("prompt_token_ids must be a list of ints")
            return prompt.get("prompt"), list(ids)
        if isinstance(prompt.get("prompt"), str):
            return prompt["prompt"], None
        raise TypeError(f"a dict prompt needs 'prompt' (a string) or 'prompt_token_ids'; got keys {sorted(prompt)}")
    if _is_token_ids(prompt):
        return None, list(prompt)  # the engine refuses an empty one, saying so
    raise TypeError(f"a prompt is a string, a list of token ids or a dict; got {type(prompt).__name__}")


def normalize_prompts(prompts) -> List[PromptItem]:
    """One prompt (a string, token ids, a dict) or a list of them."""
    if isinstance(prompts, (str, dict)) or (_is_token_ids(prompts) and prompts):
        return [_one_prompt(prompts)]
    if isinstance(prompts, (list, tuple)):
        return [_one_prompt(p) for p in prompts]
    raise TypeError(f"prompts: expected a string, token ids, a dict or a list of them; got {type(prompts).__name__}")


def conversations(messages) -> List[List[dict]]:
    """One conversation (a list of message dicts) or a list of them."""
    if not isinstance(messages, (list, tuple)) or not messages:
        raise TypeError("messages: give a conversation (a list of {'role': ..., 'content': ...}) or a list of them")
    batch = [messages] if isinstance(messages[0], dict) else list(messages)
    for conversation in batch:
        if not isinstance(conversation, (list, tuple)) or not all(isinstance(m, dict) for m in conversation):
            raise TypeError("messages: each conversation is a list of {'role': ..., 'content': ...} dicts")
    return [list(conversation) for conversation in batch]
