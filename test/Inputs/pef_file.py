"""The PEF container as include/shardc/pef/Pef.h lays it out, for tests that forge PEFs whose
checksum holds: the checksum (StreamDigest, include/shardc/support/Digest.h), a file's payload
and weights block, and a sealed file made of them."""
import struct

HEADER, TRAILER, BLOCK_ALIGN = 32, 8, 4096
M64 = (1 << 64) - 1


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _mix(h, w):
    h ^= (w * 0xbf58476d1ce4e5b9) & M64
    return (_rotl(h, 31) * 0x94d049bb133111eb) & M64


def digest(b):
    """StreamDigest of `b` (include/shardc/support/Digest.h), the PEF's checksum."""
    lanes = [1, 2, 3, 4]
    full = len(b) // 32 * 32
    words = struct.unpack_from("<%dQ" % (full // 8), b)
    for i in range(0, len(words), 4):
        for j in range(4):
            lanes[j] = _mix(lanes[j], words[i + j])
    tail = struct.unpack("<4Q", b[full:] + b"\0" * (32 - (len(b) - full)))
    h = (len(b) * 0x9e3779b97f4a7c15) & M64
    for j in range(4):
        h = (h + _rotl(_mix(lanes[j], tail[j]), 16 * j + 1)) & M64
    h = ((h ^ (h >> 31)) * 0xbf58476d1ce4e5b9) & M64
    return h ^ (h >> 29)


def seal(body):
    """`body` (everything before the checksum) with its checksum appended."""
    return body + struct.pack("<Q", digest(body))


def pef_parts(src):
    """A PEF's payload and weights block."""
    length, block = struct.unpack_from("<QQ", src, 16)
    start = (HEADER + length + BLOCK_ALIGN - 1) // BLOCK_ALIGN * BLOCK_ALIGN
    return src[HEADER:HEADER + length], src[start:start + block]


def pef_file(payload, block, src_header):
    """A sealed PEF of `payload` and weights `block`, the rest of its header from `src_header`."""
    head = src_header[:16] + struct.pack("<QQ", len(payload), len(block))
    pad = -(HEADER + len(payload)) % BLOCK_ALIGN
    return seal(head + payload + b"\0" * pad + block)
