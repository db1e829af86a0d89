"""File names as text people can read, when the name is not valid UTF-8.

A POSIX file name is bytes.  Python decodes the bytes that are not UTF-8 to lone surrogates
(U+DC80..U+DCFF, PEP 383), so that the str still opens the file; but such a str cannot be
encoded to UTF-8, and ImGui (a TypeError), the window title and JSON refuse it.  Everything
shown to the user goes through `printable`, which writes those bytes as ``\\xNN`` (and any other
lone surrogate as ``\\uNNNN``); `from_printable` turns a printed name back into the file's.
"""
import os
import re

_ESCAPED_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def printable(text):
    """`text` (a str, or anything str() takes) with each lone surrogate written as an escape;
    text that is valid UTF-8 comes back as it is."""
    text = str(text)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:    # a byte that was not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:  # a surrogate that no file name decodes to
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def from_printable(text):
    """The file name that `printable` wrote as `text` (its \\xNN escapes of bytes >= 0x80
    back to the bytes' surrogates)."""
    return _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), text)


def encodable(path):
    """Whether the str `path` can name a file here: no NUL, and no lone surrogate but those
    of bytes that were not UTF-8."""
    try:
        return b"\0" not in os.fsencode(path)
    except (UnicodeError, TypeError):
        return False
