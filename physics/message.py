"""How what a user wrote appears in an error message: quoted, and cut short, so that a message
stays one short line whatever the input (a name of 300,000 characters, a scene of 10,000
bodies whose names a message lists). Used by the engine's checks and the scene loader."""

import json
import re

QUOTE_CHARS = 48     # a quoted name or value is cut to about this many characters
LIST_CHARS = 90      # a list of names, to about this many
CUT_CHARS = 16       # a cut name in a line that is still too long, to this many
# a name `quoted` cut: its shown start, then ..." (N characters)
_CUT_NAME = re.compile(r'"((?:[^"\\]|\\.){' + str(CUT_CHARS) +
                       r'})(?:[^"\\]|\\.)*\.\.\."( \([\d,]+ characters\))')


def quoted(text, room=QUOTE_CHARS):
    """`text` in double quotes, escaped as JSON writes it (so a control character or a
    backslash is visible and the line stays one line), cut to about `room` characters; a
    longer text says how long it was."""
    text = str(text)
    shown = json.dumps(text[:room], ensure_ascii=False)
    if len(shown) > room + 2:
        shown = shown[:room + 1].rstrip("\\") + '"'
    if len(text) <= room and shown == json.dumps(text, ensure_ascii=False):
        return shown
    return f"{shown[:-1]}...\" ({len(text):,} characters)"


def listing(names, room=LIST_CHARS):
    """Names joined by ", " (each quoted short when long) up to about `room` characters,
    then how many there are in all; "none" for no names."""
    names = list(names)
    if not names:
        return "none"
    shown, used = [], 0
    for name in names:
        text = str(name)
        text = text if len(text) <= QUOTE_CHARS // 2 and "\n" not in text and \
            "\r" not in text else quoted(text, QUOTE_CHARS // 2)
        used += len(text) + 2
        if used > room and shown:
            return ", ".join(shown) + f", ... ({len(names):,} in all)"
        shown.append(text)
    return ", ".join(shown)


def shortened(message, room=400, names_room=260):
    """`message` with each line's text after its first ": " (the file or the subject it names,
    kept whole) kept short: beyond `names_room` characters the names `quoted` already cut are
    cut further, to CUT_CHARS; beyond `room`, the text is cut in the middle (the entry and
    field at the start and the reason at the end stay)."""
    lines = []
    for line in str(message).split("\n"):
        head, sep, rest = line.partition(": ")
        if not sep:
            head, rest = "", line
        if names_room < len(rest) <= 4 * room:   # (a longer text is only cut in the middle)
            rest = _CUT_NAME.sub(r'"\1..."\2', rest)
        if len(rest) > room:
            keep = room - 5
            rest = rest[:keep * 2 // 3] + " ... " + rest[-(keep - keep * 2 // 3):]
        lines.append(head + sep + rest)
    return "\n".join(lines)
