"""Model folders the pytest suites assemble from the shared fixtures."""
import json
import shutil
import tarfile
from pathlib import Path

from pytest_paths import FIXTURES


def qwen3_with_tokenizer(folder: Path) -> Path:
    """The Qwen3 fixture's weights (hf/qwen3) beside the real Qwen3 tokenizer, whose template uses
    tools; its shapes take the qwen3 LoRA adapters of ../shared/fixtures/lora."""
    for name in ("config.json", "model.safetensors"):
        (folder / name).symlink_to(FIXTURES / "hf" / "qwen3" / name)
    with tarfile.open(FIXTURES / "tokenizers" / "qwen3.tar.gz") as tar:
        for member in tar.getmembers():
            if Path(member.name).name in ("tokenizer.json", "tokenizer_config.json") and member.isfile():
                with tar.extractfile(member) as src, open(folder / Path(member.name).name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    return folder


# A chat template that renders tools (Hermes style) for the tiny byte-level tokenizer below.
TOOLS_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n# Tools\n<tools>\n{%- for tool in tools %}\n{{ tool | tojson }}\n"
    "{%- endfor %}\n</tools>\nCall a function as <tool_call>{\"name\": ..., \"arguments\": ...}</tool_call>."
    "<|im_end|>\n{% endif %}"
    "{%- for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def byte_level_vocab(size: int):
    """GPT-2's byte-level alphabet after three special tokens, DeepSeek's marker characters, then
    pairs of frequent characters (each with its merge) up to `size` ids, so every id of the
    fixture's 512 has a text."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {b: chr(b) for b in printable}, 0
    for b in range(256):
        if b not in chars:
            chars[b], extra = chr(256 + extra), extra + 1
    vocab = {"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2}
    for b in range(256):
        vocab[chars[b]] = len(vocab)
    merges, common = [], [chars[ord(c)] for c in ' "{}:,_aeimnorst']
    for whole in "｜▁":  # DeepSeek's markers: each character one token, as only whole ones can be masked in
        c = [chars[b] for b in whole.encode()]
        for left, right in ((c[0], c[1]), (c[0] + c[1], c[2])):
            vocab[left + right] = len(vocab)
            merges.append(f"{left} {right}")
    for a in common:
        for b in common:
            if len(vocab) < size and a + b not in vocab:
                vocab[a + b] = len(vocab)
                merges.append(f"{a} {b}")
    return vocab, merges


def qwen3_with_tool_template(folder: Path) -> Path:
    """The Qwen3 fixture's weights (vocabulary 512) with a byte-level tokenizer of exactly that
    size (<|im_end|> its end of sequence) and a chat template that renders tools."""
    for name in ("config.json", "model.safetensors"):
        (folder / name).symlink_to(FIXTURES / "hf" / "qwen3" / name)
    vocab, merges = byte_level_vocab(512)
    special = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                "special": True} for i, t in enumerate(("<|endoftext|>", "<|im_start|>", "<|im_end|>"))]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}
    tokenizer = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": special, "normalizer": None,
                 "pre_tokenizer": byte_level, "post_processor": None, "decoder": byte_level,
                 "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                           "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                           "ignore_merges": False, "vocab": vocab, "merges": merges}}
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
        "bos_token": None, "add_bos_token": False, "chat_template": TOOLS_TEMPLATE}))
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": 2, "pad_token_id": 0}))
    return folder
