"""The symbol versions an ELF file asks of the libraries it loads with, read with pyelftools
(which auditwheel, in the `wheel` extra, brings), for the portable wheel's tests
(tests/test_wheel.py, tests/test_retarget_glibc.py)."""

import io
import re

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection, GNUVerSymSection
from elftools.elf.sections import SymbolTableSection


def required_versions(elf: bytes) -> dict[str, tuple[str, str | None]]:
    """Each undefined dynamic symbol with the library and version it asks for (version None:
    any, the reference has none)."""
    parsed = ELFFile(io.BytesIO(elf))
    verneed = parsed.get_section_by_name(".gnu.version_r")
    versym = parsed.get_section_by_name(".gnu.version")
    dynsym = parsed.get_section_by_name(".dynsym")
    assert isinstance(dynsym, SymbolTableSection) and isinstance(versym, GNUVerSymSection)
    assert isinstance(verneed, GNUVerNeedSection)
    versions = {
        auxiliary["vna_other"]: (library.name, auxiliary.name)
        for library, auxiliaries in verneed.iter_versions()
        for auxiliary in auxiliaries
    }
    required = {}
    for index, symbol in enumerate(dynsym.iter_symbols()):
        if symbol["st_shndx"] == "SHN_UNDEF" and symbol.name:
            ndx = versym.get_symbol(index)["ndx"]
            required[symbol.name] = (
                versions.get(ndx, ("", None)) if isinstance(ndx, int) else ("", None)
            )
    return required


def needed_versions(elf: bytes) -> set[tuple[str, str]]:
    """(library, version) of every version the file needs: what the loader checks, and
    auditwheel reads, before any symbol is bound."""
    verneed = ELFFile(io.BytesIO(elf)).get_section_by_name(".gnu.version_r")
    assert isinstance(verneed, GNUVerNeedSection)
    return {
        (lib.name, aux.name) for lib, auxiliaries in verneed.iter_versions() for aux in auxiliaries
    }


def needed_libraries(elf: bytes) -> list[str]:
    """The DT_NEEDED entries."""
    dynamic = ELFFile(io.BytesIO(elf)).get_section_by_name(".dynamic")
    return [tag.needed for tag in dynamic.iter_tags() if tag.entry.d_tag == "DT_NEEDED"]


def glibc_version(version: str | None) -> tuple[int, ...] | None:
    """(2, 27) for GLIBC_2.27, (2, 2, 5) for GLIBC_2.2.5; None for other versions."""
    match = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)+)", version or "")
    return tuple(int(part) for part in match.group(1).split(".")) if match else None
