"""`annals sillytavern install`: the SillyTavern extension (`sillytavern/extension/` in this
repository) copied into the folder SillyTavern loads third-party extensions from — a user's
`<data root>/<user>/extensions/annals/` (what SillyTavern's own "install for me" does), or,
for every user, `public/scripts/extensions/third-party/annals/` — with the Annals URL and key
it should start with (`defaults.json`, read once when its settings have no key yet)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

NAME = "annals"
SOURCE = Path(__file__).resolve().parents[2] / "sillytavern" / "extension"


class InstallError(ValueError):
    """The SillyTavern folder or the extension's own files are not where they must be."""


def extension_source() -> Path:
    if not (SOURCE / "manifest.json").is_file():
        raise InstallError(f"the extension's files are not in {SOURCE}: install Annals from "
                           "its repository (the extension ships beside the package)")
    return SOURCE


def target_dir(st_dir: Path, user: str | None, data_root: Path | None = None) -> Path:
    """Where the extension goes: `user`'s extensions folder, or the one for all users
    (`user` None)."""
    if not (st_dir / "server.js").is_file() or not (st_dir / "public" / "scripts"
                                                    / "extensions").is_dir():
        raise InstallError(f"{st_dir} is not a SillyTavern folder (it has no server.js and "
                           "public/scripts/extensions)")
    if user is None:
        return st_dir / "public" / "scripts" / "extensions" / "third-party" / NAME
    if not user or "/" in user or "\\" in user or user.startswith("."):
        raise InstallError(f"not a SillyTavern user handle: {user!r}")
    return (data_root or st_dir / "data") / user / "extensions" / NAME


def install(st_dir: Path, user: str | None = "default-user", data_root: Path | None = None,
            url: str | None = None, key: str | None = None) -> Path:
    """Copy the extension into place (a new copy replaces an old one whole: it is written
    beside it first, so a failure leaves the old one as it was) and return the folder."""
    source = extension_source()
    target = target_dir(st_dir, user, data_root)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{NAME}-", dir=target.parent))
    try:
        fresh = staging / NAME
        shutil.copytree(source, fresh, ignore=shutil.ignore_patterns("*.md", ".*"))
        defaults = {k: v for k, v in (("url", url), ("key", key)) if v}
        if defaults:
            (fresh / "defaults.json").write_text(json.dumps(defaults), encoding="utf-8")
        old = staging / "old"
        if target.exists():
            target.rename(old)
        try:
            fresh.rename(target)
        except OSError:
            if old.exists():
                old.rename(target)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
