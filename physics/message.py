"""How what a user wrote appears in an error message: quoted, and cut short, so that a message
stays one short line whatever the input (a name of 300,000 characters, a scene of 10,000
bodies whose names a message lists). Used by the engine's checks and the scene loader."""

import json

QUOTE_CHARS = 60     # a quoted name or value is cut to about this many characters
LIST_CHARS = 120     # a list of names, to about this many


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


def shortened(message, room=400):
    """`message` with each line's text after its first ": " (the file or the subject it names,
    kept whole) cut in the middle to about `room` characters: the entry and field at the start
    and the reason at the end stay, a long name or value quoted in between is cut."""
    lines = []
    for line in str(message).split("\n"):
        head, sep, rest = line.partition(": ")
        if not sep:
            head, rest = "", line
        if len(rest) > room:
            keep = room - 5
            rest = rest[:keep * 2 // 3] + " ... " + rest[-(keep - keep * 2 // 3):]
        lines.append(head + sep + rest)
    return "\n".join(lines)
