"""Opening a .zip of documents safely: names checked, sizes bounded before and while reading.

A member whose name is absolute or climbs out of the archive (``..``), an encrypted
member, too many members, a declared size over the limits or an implausible compression
ratio (a zip bomb) refuses the whole archive; reading stops at the declared size, so a
lying header cannot unpack more than it announced.
"""

from __future__ import annotations

import posixpath
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import FileRejected, Problem, define, gettext_noop, of_file

NOT_ZIP = define("zip.not_zip", gettext_noop("not a readable .zip archive"))
TOO_MANY_FILES = define(
    "zip.too_many_files", gettext_noop("%(n)s files, over the limit of %(limit)s")
)
ZIP_BOMB = define(
    "zip.zip_bomb",
    gettext_noop("unpacks to %(size)s bytes, over the limit of %(limit)s (a zip bomb?)"),
)
ZIP_RATIO = define(
    "zip.ratio",
    gettext_noop(
        "unpacks to %(size)s bytes from %(packed)s, %(ratio)s to 1, over the limit of "
        "%(limit)s to 1 (a zip bomb?)"
    ),
)
CORRUPT_ZIP = define("zip.corrupt_zip", gettext_noop("a corrupt .zip archive"))
OVER_DECLARED = define("zip.over_declared", gettext_noop("unpacks to more than its declared size"))

UNSAFE_PATH = define(
    "zip.unsafe_path",
    gettext_noop("%(member)s is an unsafe path (absolute or outside the archive)"),
)
ENCRYPTED_MEMBER = define("zip.encrypted_member", gettext_noop("encrypted inside the archive"))
MEMBER_TOO_BIG = define(
    "zip.member_too_big", gettext_noop("%(size)s bytes, over the limit of %(limit)s")
)
MEMBER_RATIO = define(
    "zip.member_ratio", gettext_noop("compressed %(ratio)s to 1, a zip bomb? refused")
)
SKIPPED = ("__MACOSX/", ".DS_Store", "Thumbs.db")


@dataclass(frozen=True)
class ArchiveLimits:
    max_members: int = 5000
    max_unpacked_bytes: int = 2 * 1024**3
    max_member_bytes: int = 200 * 1024**2
    max_ratio: int = 100  # unpacked ÷ packed, of any member and of the whole archive,
    ratio_from: int = 1024**2  # counted once this much is unpacked


def _safe_name(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    normal = posixpath.normpath(name)
    if normal.startswith("..") or "/../" in f"/{name}" or normal.startswith("/"):
        return None
    return normal


def unpack(
    path: Path, name: str, into: Path, limits: ArchiveLimits = ArchiveLimits()
) -> list[tuple[str, Path]]:
    """The archive's files written under ``into``, as (name inside the archive, path)."""
    if not zipfile.is_zipfile(path):
        raise FileRejected([of_file(name, NOT_ZIP())])
    errors: list[Problem] = []
    out: list[tuple[str, Path]] = []
    try:
        with zipfile.ZipFile(path) as archive:
            infos = [i for i in archive.infolist() if not i.is_dir()]
            infos = [i for i in infos if not any(s in i.filename for s in SKIPPED)]
            if len(infos) > limits.max_members:
                too_many = TOO_MANY_FILES(n=f"{len(infos):,}", limit=f"{limits.max_members:,}")
                raise FileRejected([of_file(name, too_many)])
            total = sum(i.file_size for i in infos)
            packed = max(sum(i.compress_size for i in infos), 1)
            if total > limits.ratio_from and total > limits.max_ratio * packed:
                ratio = ZIP_RATIO(
                    size=f"{total:,}",
                    packed=f"{packed:,}",
                    ratio=f"{total // packed:,}",
                    limit=limits.max_ratio,
                )
                raise FileRejected([of_file(name, ratio)])
            if total > limits.max_unpacked_bytes:
                bomb = ZIP_BOMB(size=f"{total:,}", limit=f"{limits.max_unpacked_bytes:,}")
                raise FileRejected([of_file(name, bomb)])
            for info in infos:
                member = _safe_name(info)
                if member is None:
                    errors.append(of_file(name, UNSAFE_PATH(member=repr(info.filename))))
                    continue
                label = f"{name}/{member}"
                if info.flag_bits & 0x1:
                    errors.append(of_file(label, ENCRYPTED_MEMBER()))
                elif info.file_size > limits.max_member_bytes:
                    over = MEMBER_TOO_BIG(
                        size=f"{info.file_size:,}", limit=f"{limits.max_member_bytes:,}"
                    )
                    errors.append(of_file(label, over))
                elif info.file_size > limits.ratio_from and info.file_size > limits.max_ratio * max(
                    info.compress_size, 1
                ):
                    ratio = info.file_size // max(info.compress_size, 1)
                    errors.append(of_file(label, MEMBER_RATIO(ratio=f"{ratio:,}")))
            if errors:
                raise FileRejected(errors)
            for number, info in enumerate(infos):
                member = _safe_name(info)
                target = into / f"{number:05d}{Path(member).suffix.lower()[:10]}"
                _copy(archive, info, target, f"{name}/{member}")
                out.append((member, target))
    except zipfile.BadZipFile:
        raise FileRejected([of_file(name, CORRUPT_ZIP())]) from None
    return out


def _copy(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, label: str) -> None:
    written = 0
    with archive.open(info) as source, target.open("wb") as sink:
        while block := source.read(1 << 20):
            written += len(block)
            if written > info.file_size:
                raise FileRejected([of_file(label, OVER_DECLARED())])
            sink.write(block)
