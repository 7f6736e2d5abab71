#!/usr/bin/env python3
"""Writes tape's manual pages from its argument parser: `tape.1`, and one page per subcommand
(`tape-render.1`, `tape-clip-move.1`, as git names its own), into a folder.

    scripts/manpages.py PATH/TO/tape OUTPUT_FOLDER

It reads what the parser knows (`tape --experimental-dump-help`: every command's abstract,
discussion, arguments and options), so the pages say what `--help` says and never drift from it.
"""

import os
import subprocess
import sys

import tapehelp
from tapehelp import names, synopsis

EXIT_CODES = [
    ("0", "success"),
    ("64", "a usage error: a word, an option or a value the command does not take"),
    ("65", "bad data: an edit the project refuses, a damaged project, audio that is not what was imported"),
    ("66", "a missing input: no such project, source or file"),
    ("70", "an internal error (please report it)"),
    ("74", "an input or output error: a disk full, a file that cannot be written, a device that went away"),
    ("75", "busy: another process held the project's write lock for longer than the busy timeout"),
    ("77", "permission denied: an edit of a project this user may not write"),
    ("130", "stopped by Ctrl-C (a command stopped by another signal ends by it)"),
]


def roff(text):
    """Text as roff reads it: backslashes doubled, a line that starts with a dot or a quote
    escaped."""
    text = text.replace("\\", "\\e")
    lines = []
    for line in text.split("\n"):
        if line.startswith(".") or line.startswith("'"):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def page(path, command, version):
    title = "-".join(["tape"] + path)
    lines = [
        '.TH "%s" "1" "" "tape %s" "Tape Manual"' % (title.upper(), version),
        ".SH NAME",
        roff("%s \\- %s" % (title, command.get("abstract", ""))).replace("\\e-", "\\-"),
        ".SH SYNOPSIS",
        ".B " + roff(synopsis(path, command)),
    ]
    discussion = command.get("discussion", "")
    if discussion:
        lines.append(".SH DESCRIPTION")
        for paragraph in discussion.strip().split("\n"):
            if paragraph.startswith("Example: "):
                continue
            lines += [".PP", roff(paragraph)]
    shown = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]
    if shown:
        lines.append(".SH OPTIONS")
        for argument in shown:
            lines += [".TP", ".B " + roff(names(argument)), roff(argument.get("abstract", ""))]
            if "defaultValue" in argument:
                lines.append(roff("(default: %s)" % argument["defaultValue"]))
    examples = [p[len("Example: "):] for p in discussion.split("\n") if p.startswith("Example: ")]
    if examples:
        lines.append(".SH EXAMPLES")
        for example in examples:
            lines += [".PP", ".nf", roff(example), ".fi"]
    subcommands = [s for s in command.get("subcommands", []) if s.get("shouldDisplay", True)]
    if subcommands:
        lines.append(".SH SUBCOMMANDS")
        for sub in subcommands:
            lines += [
                ".TP",
                ".B " + roff(" ".join(["tape"] + path + [sub["commandName"]])),
                roff(sub.get("abstract", "")),
            ]
    lines.append(".SH EXIT STATUS")
    for code, meaning in EXIT_CODES:
        lines += [".TP", ".B " + code, roff(meaning)]
    see = ["tape(1)"] if path else []
    see += ["tape-%s(1)" % "-".join(path + [s["commandName"]]) for s in subcommands]
    if see:
        lines += [".SH SEE ALSO", roff(", ".join(see))]
    return title, "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: scripts/manpages.py PATH/TO/tape OUTPUT_FOLDER\n")
        sys.exit(64)
    tape, folder = sys.argv[1], sys.argv[2]
    root = tapehelp.dump(tape)
    version = subprocess.run(
        [tape, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    pages = [page(path, command, version) for path, command in tapehelp.commands(root)]
    os.makedirs(folder, exist_ok=True)
    for title, text in pages:
        with open(os.path.join(folder, title + ".1"), "w", encoding="utf-8") as out:
            out.write(text)
    print(len(pages))


if __name__ == "__main__":
    main()
