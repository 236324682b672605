"""What GPU code a library carries: lists the (kind, architecture) pairs of the
CUDA fat binary in its .nv_fatbin section, and checks them against the
expected ones, so a build that falls back to nvcc's default (sm_75 only: an
H100 would JIT every kernel at first launch) fails here, without a GPU or
cuobjdump.

  python3 tests/cuda_architectures.py LIB elf:80 elf:90 ptx:90
"""
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = 0xBA55ED50


def architectures(library):
    with tempfile.NamedTemporaryFile() as section:
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", library, section.name],
                       check=True)
        data = open(section.name, "rb").read()
    found, offset = set(), 0
    while offset + 16 <= len(data):
        magic, _, header_size, fat_size = struct.unpack_from("<IHHQ", data, offset)
        if magic != FATBIN_MAGIC:
            offset += 8  # fat binaries are 8-byte aligned in the section
            continue
        entry, end = offset + header_size, offset + header_size + fat_size
        while entry < end:
            kind, _, entry_header_size, size = struct.unpack_from("<HHIQ", data, entry)
            arch = struct.unpack_from("<I", data, entry + 28)[0]
            found.add(f"{ {1: 'ptx', 2: 'elf'}.get(kind, kind) }:{arch}")
            entry += entry_header_size + size
        offset = end
    return found


if __name__ == "__main__":
    have = architectures(sys.argv[1])
    want = set(sys.argv[2:])
    print("carries:", ", ".join(sorted(have)) or "no GPU code")
    if have != want:
        sys.exit(f"expected exactly: {', '.join(sorted(want))}")
