"""Model folders the pytest suites assemble from the shared fixtures."""
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
