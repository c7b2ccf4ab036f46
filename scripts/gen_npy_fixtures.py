#!/usr/bin/python3
"""Writes the tiny .npy files unittests/NpyTest.cpp reads, with numpy's own writer, so the
reader is checked against real numpy output rather than only against our writer.

Every value is fixed in this script (NpyTest.cpp spells the same values), so rerunning it
rewrites byte-identical files.

Usage: /usr/bin/python3 scripts/gen_npy_fixtures.py
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unittests", "fixtures", "npy")


def save(name, a, version=None):
    path = os.path.join(OUT, name + ".npy")
    if version is None:
        np.save(path, a)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, a, version=version)


def main():
    os.makedirs(OUT, exist_ok=True)
    # Supported dtypes, C order, little-endian.
    save("f32_2x3", np.array([[-1.5, 0.0, 0.25], [3.0, -0.0, 1e-30]], dtype=np.float32))
    save("f64_3", np.array([1.0 / 3.0, -2.5e300, 5e-324], dtype=np.float64))
    save("f16_5", np.array([1.0, -2.0, 65504.0, 6e-8, np.inf], dtype=np.float16))
    save("i64_3", np.array([-9223372036854775808, 0, 9223372036854775807], dtype=np.int64))
    save("i32_2x2", np.array([[-2147483648, -1], [0, 2147483647]], dtype=np.int32))
    save("bool_4", np.array([True, False, False, True]))
    save("scalar_f32", np.array(3.5, dtype=np.float32))
    save("empty_f32_0x3", np.zeros((0, 3), dtype=np.float32))
    save("empty_i64_2x0x2", np.zeros((2, 0, 2), dtype=np.int64))
    # Header format versions 2.0 and 3.0 (4-byte header length).
    save("v2_f32_3", np.array([1.0, 2.0, 3.0], dtype=np.float32), version=(2, 0))
    save("v3_f32_3", np.array([1.0, 2.0, 3.0], dtype=np.float32), version=(3, 0))
    # What the reader must reject with a clear message.
    save("fortran_f32_2x3", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    save("bigendian_f32_3", np.array([1.0, 2.0, 3.0], dtype=">f4"))
    save("u8_3", np.array([1, 2, 3], dtype=np.uint8))
    save("c64_2", np.array([1 + 2j, 3 - 4j], dtype=np.complex64))


if __name__ == "__main__":
    main()
