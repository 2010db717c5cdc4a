"""Editable wheel post-processing for editable_backend.py (no dependency beyond the standard
library, so the tests import it directly): drop the directory lines of the wheel's ``.pth``
files where the ``.pth`` imports a finder that resolves the packages without them."""
from __future__ import annotations

import base64
import hashlib
import os
import zipfile


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def packages_only_pth(text: str) -> str:
    """The ``.pth`` text without its directory lines, when it imports a finder."""
    lines = text.splitlines()
    imports = [ln for ln in lines if ln.startswith("import ")]
    return "\n".join(imports) + "\n" if imports else text


def strip_editable_paths(wheel_path: str) -> list[str]:
    """Rewrite the editable wheel's ``.pth`` files in place; returns the lines dropped."""
    dropped: list[str] = []
    with zipfile.ZipFile(wheel_path) as zin:
        items = [(info, zin.read(info)) for info in zin.infolist()]
    new: dict[str, bytes] = {}
    for info, data in items:
        if info.filename.endswith(".pth") and "/" not in info.filename:
            text = data.decode("utf-8")
            kept = packages_only_pth(text)
            if kept != text:
                dropped += [ln for ln in text.splitlines() if ln and ln not in kept.splitlines()]
                new[info.filename] = kept.encode("utf-8")
    if not new:
        return dropped
    tmp = wheel_path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        for info, data in items:
            if info.filename in new:
                data = new[info.filename]
            elif info.filename.endswith(".dist-info/RECORD"):
                rows = data.decode("utf-8").splitlines()
                for i, row in enumerate(rows):
                    name = row.split(",", 1)[0]
                    if name in new:
                        rows[i] = _record_line(name, new[name])
                data = ("\n".join(rows) + "\n").encode("utf-8")
            zout.writestr(info, data)
    os.replace(tmp, wheel_path)
    return dropped
