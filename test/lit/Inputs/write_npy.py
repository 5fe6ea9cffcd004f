"""Writes .npy files for test/lit/interpret/bad-input.tsl: PREFIX.<case>.npy, one good and
several malformed (no numpy needed)."""
import struct
import sys


def npy(header, data, declared_len=None):
    header = header.encode()
    length = len(header) if declared_len is None else declared_len
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", length) + header + data


floats = struct.pack("<16f", *range(16))
prefix = sys.argv[1]
cases = {
    "good": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (16,), }\n", floats),
    "past-end": npy("{'descr': '<f4', 'shape': (16,), }", b"", declared_len=32767),
    "no-shape": npy("{'descr': '<f4', 'fortran_order': False, }\n", floats),
    "size": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (20,), }\n", floats),
    "bad-shape": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, x), }\n", floats),
    "huge": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }\n", floats),
    "overflow": npy("{'descr': '<f4', 'fortran_order': False, "
                    "'shape': (4294967296, 4294967296, 4294967296), }\n", floats),
}
for name, content in cases.items():
    with open(f"{prefix}.{name}.npy", "wb") as f:
        f.write(content)
