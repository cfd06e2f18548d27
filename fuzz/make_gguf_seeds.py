#!/usr/bin/env python3
"""Writes the fuzz_gguf seed corpus: tiny valid GGUF v3 files (a llama model with a gpt2-style
tokenizer, a qwen3 one with a SentencePiece-style tokenizer and rope scaling, one with no
tensors). Run from anywhere: python3 fuzz/make_gguf_seeds.py."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_gguf")
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
          U64: "<Q", I64: "<q", F64: "<d"}


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def value(t, v):
    if t == STR:
        return gstr(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(value(et, x) for x in items)
    return struct.pack(SCALAR[t], v)


def gguf(kvs, tensors, alignment=32):
    """kvs: [(key, type, value)]; tensors: [(name, ne, ggml_type, data bytes)]."""
    head = struct.pack("<IIQQ", 0x46554747, 3, len(tensors), len(kvs))
    head += b"".join(gstr(k) + struct.pack("<I", t) + value(t, v) for k, t, v in kvs)
    data, offset = b"", 0
    for name, ne, gtype, raw in tensors:
        head += gstr(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<q", n) for n in ne)
        head += struct.pack("<IQ", gtype, offset)
        pad = (-len(raw)) % alignment
        data += raw + b"\0" * pad
        offset += len(raw) + pad
    head += b"\0" * ((-len(head)) % alignment)
    return head + data


def byte_level(b):
    """GPT-2's printable spelling of one byte."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    if b in keep:
        return chr(b)
    return chr(256 + [x for x in range(256) if x not in keep].index(b))


def llama_model():
    tokens = [byte_level(b) for b in range(256)] + ["Ġt", "he", "Ġthe", "<|im_start|>", "<|im_end|>"]
    types = [1] * 259 + [3, 3]
    kvs = [("general.architecture", STR, "llama"), ("general.alignment", U32, 32),
           ("llama.context_length", U32, 128), ("llama.embedding_length", U32, 32),
           ("llama.block_count", U32, 1), ("llama.feed_forward_length", U32, 64),
           ("llama.attention.head_count", U32, 4), ("llama.attention.head_count_kv", U32, 2),
           ("llama.rope.freq_base", F32, 10000.0), ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
           ("tokenizer.ggml.model", STR, "gpt2"), ("tokenizer.ggml.pre", STR, "llama-bpe"),
           ("tokenizer.ggml.tokens", ARR, (STR, tokens)), ("tokenizer.ggml.token_type", ARR, (I32, types)),
           ("tokenizer.ggml.merges", ARR, (STR, ["Ġ t", "h e", "Ġt he"])),
           ("tokenizer.ggml.bos_token_id", U32, 259), ("tokenizer.ggml.eos_token_id", U32, 260),
           ("tokenizer.chat_template", STR, "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}")]
    q8_block = struct.pack("<e", 0.5) + bytes(range(32))  # q8_0: f16 scale + 32 int8
    tensors = [("token_embd.weight", [32, 8], 0, struct.pack("<f", 1.0) * (32 * 8)),
               ("blk.0.attn_q.weight", [32, 32], 8, q8_block * 32),
               ("output_norm.weight", [32], 1, struct.pack("<e", 1.0) * 32)]
    return gguf(kvs, tensors)


def qwen3_sentencepiece():
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + ["▁", "a", "b", "▁a", "ab", "▁ab"]
    types = [2, 3, 3] + [6] * 256 + [1] * 6
    scores = [0.0] * 259 + [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0]
    kvs = [("general.architecture", STR, "qwen3"), ("qwen3.context_length", U64, 256),
           ("qwen3.embedding_length", U32, 16), ("qwen3.block_count", U32, 2),
           ("qwen3.feed_forward_length", U32, 32), ("qwen3.attention.head_count", U32, 2),
           ("qwen3.attention.head_count_kv", U32, 1), ("qwen3.attention.key_length", U32, 8),
           ("qwen3.rope.freq_base", F64, 1e6), ("qwen3.rope.scaling.type", STR, "yarn"),
           ("qwen3.rope.scaling.factor", F32, 4.0), ("qwen3.rope.scaling.original_context_length", U32, 64),
           ("qwen3.attention.layer_norm_rms_epsilon", F32, 1e-6), ("qwen3.vocab_size", U32, len(tokens)),
           ("tokenizer.ggml.model", STR, "llama"), ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
           ("tokenizer.ggml.scores", ARR, (F32, scores)), ("tokenizer.ggml.token_type", ARR, (I32, types)),
           ("tokenizer.ggml.bos_token_id", U32, 1), ("tokenizer.ggml.eos_token_id", U32, 2),
           ("tokenizer.ggml.unknown_token_id", U32, 0), ("tokenizer.ggml.add_bos_token", BOOL, True),
           ("nested", ARR, (ARR, [(U8, [1, 2]), (STR, ["x"])])), ("i8", I8, -3), ("u16", U16, 7),
           ("i16", I16, -7), ("i64", I64, -1), ("u64max", U64, 2**64 - 1)]
    tensors = [("token_embd.weight", [16, 4], 30, b"\0\x3f" * (16 * 4))]
    return gguf(kvs, tensors, alignment=32)


def no_tensors():
    return gguf([("general.architecture", STR, "llama"), ("general.alignment", U32, 64)], [], alignment=64)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, blob in [("llama_gpt2.gguf", llama_model()), ("qwen3_spm.gguf", qwen3_sentencepiece()),
                       ("no_tensors.gguf", no_tensors())]:
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(blob)
        print(name, len(blob), "bytes")
