"""What tape's argument parser knows, read the one way that scripts/manpages.py (the manual
pages) and scripts/reference.py (docs/reference/commands.md) both use, so that the two say the
same synopsis and option names as `--help`.

    import tapehelp
    root = tapehelp.dump("PATH/TO/tape")          # the root command, as the parser dumps it
    for path, command in tapehelp.commands(root):  # every command, depth first, help left out
        print(tapehelp.synopsis(path, command))    # tape clip move <file> <clips> ... [--to <to>]
"""

import json
import subprocess


def dump(tape):
    """The root command of `tape --experimental-dump-help`: every command's abstract,
    discussion, arguments and options."""
    result = subprocess.run(
        [tape, "--experimental-dump-help"], check=True, capture_output=True, text=True)
    return json.loads(result.stdout)["command"]


def commands(root):
    """Every command under `root` and `root` itself, depth first, as (path, command) with path
    the words after `tape`; the parser's own `help` subcommand left out."""
    found = []

    def walk(path, command):
        found.append((path, command))
        for sub in command.get("subcommands", []):
            if sub.get("commandName") != "help":
                walk(path + [sub["commandName"]], sub)

    walk([], root)
    return found


def is_help(argument):
    """Whether `argument` is the `-h, --help` flag every command takes."""
    return argument["kind"] == "flag" and any(
        n["name"] == "help" for n in argument.get("names", []))


def names(argument):
    """`-o, --output <output>` for an option, `<file>` (`<clips> ...` when it repeats) for a
    positional."""
    if argument["kind"] == "positional":
        shown = "<%s>" % argument.get("valueName", "value")
        return shown + (" ..." if argument.get("isRepeating") else "")
    shown = []
    for name in argument.get("names", []):
        dash = "-" if name["kind"] == "short" else "--"
        shown.append(dash + name["name"])
    if argument["kind"] == "option":
        shown[-1] += " <%s>" % argument.get("valueName", "value")
    return ", ".join(shown)


def synopsis(path, command):
    """`tape clip move <file> <clips> ... [--to <to>]`: the command's words, then each shown
    argument as its last name, optional ones in brackets (`-h, --help` left out)."""
    words = ["tape"] + path
    for argument in command.get("arguments", []):
        if not argument.get("shouldDisplay", True) or is_help(argument):
            continue
        shown = names(argument)
        if argument["kind"] != "positional":
            shown = shown.split(", ")[-1]
            if argument.get("isRepeating"):
                shown += " ..."
        if argument.get("isOptional"):
            shown = "[" + shown + "]"
        words.append(shown)
    if command.get("subcommands"):
        words.append("<subcommand>")
    return " ".join(words)
