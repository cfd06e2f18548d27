"""Where the pytest suites (tests/python, tests/integration) find the build, the fixtures and
the embedded model: STRATA_BUILD_DIR (relative to the repo; default build) and
STRATA_CACHE_DIR (default ~/.cache/strata), as scripts/test.sh and setup.sh use them."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("STRATA_BUILD_DIR", REPO / "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
BINARY = BUILD / "strata"
FIXTURES = REPO.parent / "shared" / "fixtures"
LOCAL_FIXTURES = REPO / "tests" / "fixtures"
CACHE = Path(os.environ.get("STRATA_CACHE_DIR", Path.home() / ".cache" / "strata"))
SMOL = CACHE / "models" / "smollm2-135m-instruct-q4_1.gguf"
