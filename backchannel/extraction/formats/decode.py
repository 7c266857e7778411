"""Bytes to text for transcript files: BOMs, BOM-less UTF-16/32, UTF-8, then detection.

Order, first match wins:
1. a byte order mark (UTF-32 LE/BE before UTF-16, whose LE mark is a prefix of UTF-32 LE's; UTF-8);
2. no mark but the NUL pattern of UTF-32 or UTF-16 text (mostly-ASCII text in those
   encodings has NUL in three of four, or one of two, byte positions);
3. strict UTF-8;
4. charset-normalizer's best guess, accepted only when its mess ratio is under
   MAX_CHAOS; otherwise DecodeFailure saying what was tried.
Any decoded text with too many control characters is refused as binary.
"""

from __future__ import annotations

import codecs
import re

from backchannel.extraction.formats.transcript import DecodeFailure

# charset-normalizer's "chaos" is the share of the text that looks like mojibake;
# above this the guess is not worth trusting (gb2312 and cp1252 files score ~0).
MAX_CHAOS = 0.2
# Share of control characters (other than tab, LF, CR, FF, VT) above which decoded text
# is binary, not a transcript. WebVTT conformance files carry a few NULs; binaries carry many.
MAX_CONTROL_SHARE = 0.05
# The control characters below 32 other than \t \n \v \f \r: counted by the regex engine, not a
# Python loop over 20k characters (~10 ms a file).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f]")
_SNIFF_BYTES = 4096

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def decode_bytes(data: bytes, name: str | None = None) -> tuple[str, str]:
    """Decode a transcript file's bytes; return (text without BOM, encoding name).

    Raises DecodeFailure naming the problem when no encoding fits."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _strict(data[len(bom) :], encoding, name, "its byte order mark"), encoding
    guessed = _nul_pattern(data)
    if guessed:
        return _strict(data, guessed, name, "its NUL byte pattern"), guessed
    try:
        return _check_text(data.decode("utf-8"), "utf-8", name), "utf-8"
    except UnicodeDecodeError as e:
        utf8_error = f"not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start})"
    return _detect(data, name, utf8_error)


def _strict(data: bytes, encoding: str, name: str | None, why: str) -> str:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        raise DecodeFailure(
            name, f"looks like {encoding} by {why} but is not valid {encoding} at offset {e.start}"
        ) from None
    return _check_text(text, encoding, name)


def _nul_pattern(data: bytes) -> str | None:
    """Guess BOM-less UTF-32/UTF-16 from where the NUL bytes sit in the first few KB."""
    head = data[:_SNIFF_BYTES]
    if len(head) < 4 or head.count(0) < len(head) // 4:
        return None
    n4 = len(head) // 4 * 4
    if n4:
        quads = [head[i:n4:4].count(0) / (n4 // 4) for i in range(4)]
        # the two high bytes of a BMP code point are always NUL; the lowest rarely is
        if quads[0] < 0.2 and quads[2] > 0.9 and quads[3] > 0.9:
            return "utf-32-le"
        if quads[3] < 0.2 and quads[0] > 0.9 and quads[1] > 0.9:
            return "utf-32-be"
    n2 = len(head) // 2 * 2
    even = head[0:n2:2].count(0) / (n2 // 2)
    odd = head[1:n2:2].count(0) / (n2 // 2)
    if odd > 0.4 and even < 0.05:
        return "utf-16-le"
    if even > 0.4 and odd < 0.05:
        return "utf-16-be"
    return None


def _detect(data: bytes, name: str | None, utf8_error: str) -> tuple[str, str]:
    try:
        import charset_normalizer  # cheap, but only files that are not UTF-8 need it
    except ImportError:  # pragma: no cover - a declared dependency
        raise DecodeFailure(name, f"{utf8_error}, and charset-normalizer is not installed") from None
    matches = charset_normalizer.from_bytes(data)
    match = matches.best()
    if match is None:
        raise DecodeFailure(name, f"{utf8_error}, and no encoding fits (binary file?)")
    if match.chaos > MAX_CHAOS:
        raise DecodeFailure(
            name,
            f"{utf8_error}; best guess {match.encoding} reads as {match.chaos:.0%} mojibake, "
            f"over the {MAX_CHAOS:.0%} floor",
        )
    # Short Western text fits many single-byte code pages equally well ("café" is as
    # clean in cp1006 as in cp1252); among the equally good guesses, prefer cp1252,
    # what Windows tools write when they do not write UTF-8.
    for m in matches:
        if (
            m.chaos <= match.chaos + 0.01
            and m.coherence >= match.coherence - 0.05
            and "cp1252" in m.could_be_from_charset
        ):
            try:
                return _check_text(data.decode("cp1252"), "cp1252", name), "cp1252"
            except UnicodeDecodeError:
                break
    return _check_text(str(match), match.encoding, name), match.encoding


def _check_text(text: str, encoding: str, name: str | None) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    sample = text[:20000]
    if sample:
        controls = len(_CONTROL.findall(sample))
        if controls / len(sample) > MAX_CONTROL_SHARE:
            raise DecodeFailure(
                name,
                f"decodes as {encoding} but {controls} of the first {len(sample)} characters "
                "are control characters: a binary file, not a transcript",
            )
    return text
