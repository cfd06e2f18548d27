"""Where the `strata` command is: LLM(tensor_parallel_size=N, pipeline_parallel_size=M) runs the
other ranks as `strata rank` (this process is Python, so it cannot start copies of itself as the
command does). A build tree holds it beside the package (BUILD/strata for BUILD/python/strata);
`pip install .` puts it in the environment's scripts folder."""
import os
import shutil
import sysconfig
from pathlib import Path
from typing import Optional


def strata_command() -> Optional[str]:
    """The strata executable of this build or installation; None when there is none."""
    package = Path(__file__).resolve().parent
    for path in (package.parent.parent / "strata", Path(sysconfig.get_path("scripts")) / "strata"):
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return shutil.which("strata")
