"""Lowers the glibc versions an ELF file asks for, where glibc shows the older version is the
same code (scripts/build-wheel.sh, docs/installation.md "The tag").

A binary linked against glibc 2.34 or later asks for `pthread_create@GLIBC_2.34`,
`dlopen@GLIBC_2.34` and the like: glibc 2.32-2.34 moved libpthread's and libdl's functions
into libc under new versions, and kept the old versions there (`pthread_create@GLIBC_2.2.5`)
as aliases of the same code. Such a binary does not load on an older glibc although nothing it
calls is new there. For each symbol required at a version newer than --glibc, this rewrites the
requirement to the newest version not newer than --glibc under which the build machine's glibc
defines the symbol, if that version and every later one are the same code as the one linked
(the same address, size and type). A symbol with no such version (a new function, or a
changed one such as libm's `exp@GLIBC_2.29`) is an error and nothing is written: it must be
provided another way (src/util/glibc_compat.cpp, in the wheel's core).

The rewrite edits the symbol version tables in place (`.gnu.version`, `.gnu.version_r`; no size
changes): the symbol's version index is pointed at the entry for the old version, made by
renaming a too-new entry when there is none, and entries no symbol uses any more are unlinked.
Where the old version's name is not in the string table (which cannot grow here) the
reference is left without a version; the loader then binds it to the library's base version
(GLIBC_2.2.5) if the symbol has one, else to its default version, so this is done only where
both are the same code as well. The loader matches a versioned reference in whichever loaded
library defines that name and version, so on a glibc before the move the old versions are
found in libpthread, libdl and the rest: the file is given those as needed libraries too
(`patchelf --add-needed`; since glibc 2.34 they are empty stubs that every glibc still ships).

usage: retarget_glibc.py --glibc 2.28 FILE...              rewrite ELF files in place
       retarget_glibc.py --glibc 2.28 --wheel WHEEL        rewrite the ELF files in a wheel
       retarget_glibc.py --glibc 2.28 --copy DIR SONAME... rewritten copies of system libraries
"""

import argparse
import base64
import hashlib
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerDefSection, GNUVerNeedSection, GNUVerSymSection
from elftools.elf.sections import SymbolTableSection

# Where the functions that glibc 2.32-2.34 merged into libc lived before (the release notes'
# list): an old-version reference is found there on a glibc before the move. Name prefixes.
FORMER_HOMES = {
    "libpthread.so.0": ("pthread_", "sem_", "__pthread_"),
    "libdl.so.2": (
        "dladdr",
        "dlclose",
        "dlerror",
        "dlinfo",
        "dlmopen",
        "dlopen",
        "dlsym",
        "dlvsym",
    ),
    "librt.so.1": ("aio_", "lio_", "mq_", "shm_", "timer_"),
    "libutil.so.1": ("forkpty", "openpty", "login", "logout", "logwtmp"),
    "libanl.so.1": ("gai_", "getaddrinfo_a"),
}
VERNEED = struct.Struct("<HHIII")  # vn_version, vn_cnt, vn_file, vn_aux, vn_next
VERNAUX = struct.Struct("<IHHII")  # vna_hash, vna_flags, vna_other, vna_name, vna_next
VERSYM_HIDDEN = 0x8000


def glibc_version(name: str) -> tuple[int, ...] | None:
    """(2, 34) for "GLIBC_2.34"; None for other version names (GLIBC_PRIVATE, GCC_3.0)."""
    prefix, _, number = name.partition("_")
    if prefix != "GLIBC" or not number.replace(".", "").isdigit():
        return None
    return tuple(int(part) for part in number.split("."))


def elf_hash(name: bytes) -> int:
    """The SysV ELF hash, which version entries carry next to their name."""
    h = 0
    for byte in name:
        h = ((h << 4) + byte) & 0xFFFFFFFF
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


def system_library(soname: str) -> Path:
    """The file the dynamic loader would load for ``soname`` (x86-64 entries of ldconfig)."""
    listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True)
    for line in listing.stdout.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name == soname and "x86-64" in rest:
            return Path(rest.rpartition("=> ")[2])
    raise SystemExit(f"retarget_glibc: {soname} is not in the loader's cache (ldconfig -p)")


@dataclass(frozen=True)
class Definition:
    version: str
    index: int  # of the version in the library's version definitions
    code: tuple[int, int, str]  # address, size and type: equal for aliases of one function


def definitions(library: Path) -> dict[str, list[Definition]]:
    """Every exported symbol of ``library`` with each version it is defined under."""
    with open(library, "rb") as stream:
        elf = ELFFile(stream)
        dynsym = elf.get_section_by_name(".dynsym")
        versym = elf.get_section_by_name(".gnu.version")
        verdef = elf.get_section_by_name(".gnu.version_d")
        assert isinstance(dynsym, SymbolTableSection) and isinstance(versym, GNUVerSymSection)
        assert isinstance(verdef, GNUVerDefSection)
        names = {}
        for entry, auxiliaries in verdef.iter_versions():
            names[entry["vd_ndx"]] = next(iter(auxiliaries)).name
        found: dict[str, list[Definition]] = {}
        for index, symbol in enumerate(dynsym.iter_symbols()):
            if symbol["st_shndx"] == "SHN_UNDEF" or not symbol.name:
                continue
            ndx = versym.get_symbol(index)["ndx"]
            ndx = ndx if isinstance(ndx, int) else 1
            version = names.get(ndx & ~VERSYM_HIDDEN)
            if version is not None:
                code = (symbol["st_value"], symbol["st_size"], symbol["st_info"]["type"])
                definition = Definition(version, ndx & ~VERSYM_HIDDEN, code)
                found.setdefault(symbol.name, []).append(definition)
        return found


@dataclass
class Auxiliary:
    """One required version (Elf64_Vernaux) of one needed library, and where it lies."""

    offset: int
    previous: int  # offset of the field that links to this entry (vn_aux or a vna_next)
    flags: int
    version_index: int  # vna_other: what .gnu.version holds for the symbols of this version
    name: str


def _read_verneed(
    data: bytes, section_offset: int, strings: bytes
) -> list[tuple[str, int, list[Auxiliary]]]:
    """(library, offset of its Elf64_Verneed, its required versions) for each needed library."""
    result = []
    offset = section_offset
    while True:
        _, count, file, aux, following = VERNEED.unpack_from(data, offset)
        library = strings[file : strings.index(b"\0", file)].decode()
        auxiliaries = []
        link = offset + 8  # the vn_aux field
        position = offset + aux
        for _ in range(count):
            _, flags, other, name, next_ = VERNAUX.unpack_from(data, position)
            text = strings[name : strings.index(b"\0", name)].decode()
            auxiliaries.append(Auxiliary(position, link, flags, other, text))
            link = position + 12  # the vna_next field
            position += next_
        result.append((library, offset, auxiliaries))
        if not following:
            return result
        offset += following


class Unportable(Exception):
    """Symbols that no older glibc version provides as the same code."""


def _old_version(
    name: str, required: str, provided: list[Definition], glibc: tuple[int, ...]
) -> str | None:
    """The newest version not newer than ``glibc`` under which ``provided`` defines ``name``,
    if it and every later version are the code that ``name@required`` binds to; else None."""
    linked = next((d for d in provided if d.version == required), None)
    older = [d for d in provided if (v := glibc_version(d.version)) is not None and v <= glibc]
    if linked is None or not older:
        return None
    newest = max(older, key=lambda d: glibc_version(d.version) or ())
    since = [
        d for d in provided if (glibc_version(d.version) or ()) >= glibc_version(newest.version)
    ]
    return newest.version if all(d.code == linked.code for d in since) else None


def _unversioned_is_same(provided: list[Definition], old: str) -> bool:
    """Whether a reference without a version binds to the code of ``old`` on every glibc
    since the one that made ``old`` the default. The loader binds such a reference to the
    symbol's definition at the library's base version (version index 2, GLIBC_2.2.5 on x86-64)
    where there is one, else to its default version, which on those glibc versions is ``old`` or
    a later one: _old_version has checked that the later ones are the same code."""
    code = next(d.code for d in provided if d.version == old)
    return all(d.code == code for d in provided if d.index == 2)


def _unlink(data: bytearray, entry: Auxiliary, verneed_offset: int) -> None:
    """Takes ``entry`` out of its library's chain of required versions. Entries are unlinked
    last first, so the links read here are current."""
    link = struct.unpack_from("<I", data, entry.previous)[0]
    following = struct.unpack_from("<I", data, entry.offset + 12)[0]
    if following:
        struct.pack_into("<I", data, entry.previous, link + following)
    elif entry.previous != verneed_offset + 8:
        struct.pack_into("<I", data, entry.previous, 0)
    else:
        raise SystemExit("retarget_glibc: a library whose every required version is too new")
    count = struct.unpack_from("<H", data, verneed_offset + 2)[0]
    struct.pack_into("<H", data, verneed_offset + 2, count - 1)


def retarget(path: Path, glibc: tuple[int, ...]) -> list[str]:
    """Rewrites ``path`` in place so that it asks for no glibc version newer than ``glibc``;
    what was rewritten, one line per symbol. Raises Unportable, leaving the file unchanged."""
    data = bytearray(path.read_bytes())
    with open(path, "rb") as stream:
        elf = ELFFile(stream)
        if elf.elfclass != 64 or not elf.little_endian:
            raise SystemExit(f"retarget_glibc: {path} is not a 64-bit little-endian ELF file")
        verneed = elf.get_section_by_name(".gnu.version_r")
        if not isinstance(verneed, GNUVerNeedSection):
            return []
        dynsym = elf.get_section_by_name(".dynsym")
        versym = elf.get_section_by_name(".gnu.version")
        assert isinstance(dynsym, SymbolTableSection) and isinstance(versym, GNUVerSymSection)
        undefined = {
            index: symbol.name
            for index, symbol in enumerate(dynsym.iter_symbols())
            if symbol["st_shndx"] == "SHN_UNDEF" and symbol.name
        }
        versym_offset = versym["sh_offset"]
        strings = elf.get_section_by_name(".dynstr").data()
        libraries = _read_verneed(bytes(data), verneed["sh_offset"], strings)
        needed = [
            t.needed
            for t in elf.get_section_by_name(".dynamic").iter_tags()
            if t.entry.d_tag == "DT_NEEDED"
        ]

    def versym_of(index: int) -> int:
        return struct.unpack_from("<H", data, versym_offset + 2 * index)[0]

    rewritten, missing, homes = [], [], set()
    for library, verneed_offset, auxiliaries in libraries:
        too_new = [a for a in auxiliaries if (v := glibc_version(a.name)) is not None and v > glibc]
        if not too_new:
            continue
        provided = definitions(system_library(library))
        entries = {a.name: a for a in auxiliaries if a not in too_new}
        spare = list(too_new)  # every symbol of these moves: each can be renamed to an old version
        for index, name in undefined.items():
            required = next(
                (a for a in too_new if a.version_index == versym_of(index) & 0x7FFF), None
            )
            if required is None:
                continue
            old = _old_version(name, required.name, provided.get(name, []), glibc)
            if old is None:
                missing.append(f"{name}@{required.name} ({library})")
                continue
            found = strings.find(old.encode() + b"\0")
            if old not in entries and found >= 0 and spare:
                # No entry for the old version yet: rename a too-new one to it (its name must be
                # in .dynstr already: the string table cannot grow here).
                entry = spare.pop()
                following = struct.unpack_from("<I", data, entry.offset + 12)[0]
                struct.pack_into(
                    "<IHHII",
                    data,
                    entry.offset,
                    elf_hash(old.encode()),
                    entry.flags,
                    entry.version_index,
                    found,
                    following,
                )
                entries[old] = entry
            if old in entries:
                hidden = versym_of(index) & VERSYM_HIDDEN
                struct.pack_into(
                    "<H", data, versym_offset + 2 * index, entries[old].version_index | hidden
                )
            elif _unversioned_is_same(provided[name], old):
                # No name for the old version: a reference without one (VER_NDX_GLOBAL).
                struct.pack_into("<H", data, versym_offset + 2 * index, 1)
                old = f"{old} (unversioned)"
            else:
                missing.append(f"{name}@{required.name} ({library}): no room to name {old}")
                continue
            rewritten.append(f"{name}: {required.name} -> {old} ({library})")
            if library == "libc.so.6":
                homes.update(h for h, prefixes in FORMER_HOMES.items() if name.startswith(prefixes))
        if missing:
            continue  # nothing is written: only the other libraries' refusals are still looked for
        # The too-new entries no symbol uses now.
        for entry in reversed(spare):
            _unlink(data, entry, verneed_offset)
    if missing:
        raise Unportable(", ".join(missing))
    path.write_bytes(data)
    for home in sorted(homes - set(needed)):
        subprocess.run(["patchelf", "--add-needed", home, str(path)], check=True)
    return rewritten


def retarget_wheel(wheel: Path, glibc: tuple[int, ...]) -> list[str]:
    """Rewrites every ELF file in ``wheel`` (and their lines in its RECORD)."""
    report = []
    with tempfile.TemporaryDirectory() as folder:
        rewritten = Path(folder) / wheel.name
        with (
            zipfile.ZipFile(wheel) as source,
            zipfile.ZipFile(rewritten, "w", zipfile.ZIP_DEFLATED) as target,
        ):
            contents = {info.filename: source.read(info) for info in source.infolist()}
            record_name = next(name for name in contents if name.endswith(".dist-info/RECORD"))
            changed = {}
            for name, content in contents.items():
                if not content.startswith(b"\x7fELF"):
                    continue
                member = Path(folder) / "member"
                member.write_bytes(content)
                report += [f"{name}: {line}" for line in retarget(member, glibc)]
                changed[name] = member.read_bytes()
            contents.update(changed)
            record = []
            for line in contents[record_name].decode().splitlines():
                name = line.rsplit(",", 2)[0]
                if name in changed:
                    digest = base64.urlsafe_b64encode(hashlib.sha256(changed[name]).digest())
                    line = f"{name},sha256={digest.rstrip(b'=').decode()},{len(changed[name])}"
                record.append(line)
            contents[record_name] = ("\n".join(record) + "\n").encode()
            for info in source.infolist():
                target.writestr(info, contents[info.filename])
        shutil.move(rewritten, wheel)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--glibc", required=True, help="the oldest glibc to load on, e.g. 2.28")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--wheel", type=Path, help="rewrite the ELF files in this wheel")
    mode.add_argument(
        "--copy",
        type=Path,
        metavar="DIR",
        help="write rewritten copies of the system libraries named (sonames) into DIR",
    )
    parser.add_argument("files", nargs="*", help="ELF files to rewrite, or sonames with --copy")
    args = parser.parse_args()
    glibc = glibc_version("GLIBC_" + args.glibc)
    if glibc is None:
        parser.error(f"--glibc {args.glibc}: not a version such as 2.28")
    try:
        if args.wheel:
            report = retarget_wheel(args.wheel, glibc)
        elif args.copy:
            report = []
            args.copy.mkdir(parents=True, exist_ok=True)
            for soname in args.files:
                copy = args.copy / soname
                shutil.copyfile(system_library(soname), copy)
                report += [f"{soname}: {line}" for line in retarget(copy, glibc)]
        else:
            report = [f"{f}: {line}" for f in args.files for line in retarget(Path(f), glibc)]
    except Unportable as error:
        sys.exit(f"retarget_glibc: no glibc {args.glibc} version with the same code for: {error}")
    print("\n".join(report) or f"retarget_glibc: nothing newer than glibc {args.glibc}")


if __name__ == "__main__":
    main()
