#!/usr/bin/env python3
"""Writes Sources/CLazyLibraries/stubs.c: the C libraries Tape loads only when a command uses them.

Why: each shared library a program names is loaded and relocated at every start, needed or not.
libsndfile (with FLAC, Vorbis, Opus, mpg123, LAME), libcrypto, ALSA, lilv (serd, sord, sratom)
and soxr (libgomp) cost about 2.5 ms of CPU per process on this machine, a third of
`tape --help`, though only render, import, play and the effects commands call them. So Tape
does not link them: the target CLazyLibraries defines each of their functions that Tape may
call as a stub that, on the first call into its library, opens it with dlopen (by its SONAME,
as the loader would), looks every stub of that library up at once (so that the audio thread
never resolves a symbol), then calls through. A library that cannot be loaded is an error that
names the Debian package.

The stubs are generated from the libraries' own headers (clang's AST; every non-variadic,
non-inline function the headers below declare that takes no va_list, for libcrypto only the digest calls), so a
call Tape adds later is there already; a function outside them is a link error naming it: add
its header or prefix here and run this script again (from the repository root):

  scripts/lazy-libraries.py
"""
import json
import os
import subprocess
import sys
import tempfile

# (SONAME, Debian package, include of the header, headers whose functions are stubbed
#  (file name suffixes), name prefixes (None: every function)).
LIBRARIES = [
    ("libsndfile.so.1", "libsndfile1", "sndfile.h", ["/sndfile.h"], None),
    ("libsoxr.so.0", "libsoxr0", "soxr.h", ["/soxr.h"], None),
    ("libcrypto.so.3", "libssl3", "openssl/evp.h", ["/openssl/evp.h"],
     ["EVP_Digest", "EVP_MD_CTX_", "EVP_sha", "EVP_MD_get_", "EVP_MD_fetch", "EVP_MD_free"]),
    ("liblilv-0.so.0", "liblilv-0-0", "lilv-0/lilv/lilv.h", ["/lilv/lilv.h"], None),
    ("libasound.so.2", "libasound2", "alsa/asoundlib.h",
     ["/alsa/pcm.h", "/alsa/error.h", "/alsa/global.h"], None),
]

OUTPUT = "Sources/CLazyLibraries/stubs.c"


def declarations(include):
    """Top-level function declarations of a header: (name, return type, parameter types,
    the header declaring it)."""
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as source:
        source.write(f"#include <{include}>\n")
    try:
        dump = subprocess.run(
            ["clang", "-x", "c", "-fsyntax-only", "-Xclang", "-ast-dump=json", source.name],
            check=True, capture_output=True, text=True).stdout
    finally:
        os.remove(source.name)
    file = None
    for node in json.loads(dump).get("inner", []):
        # Locations are written as differences from the node before: the file is named only
        # when it changes.
        for where in (node.get("loc", {}), node.get("range", {}).get("begin", {})):
            where = where.get("expansionLoc", where)
            if "file" in where:
                file = where["file"]
                break
        if node.get("kind") != "FunctionDecl" or node.get("isImplicit"):
            continue
        if node.get("storageClass") == "static" or node.get("inline") or node.get("variadic"):
            continue
        signature = node["type"]["qualType"]
        if signature.endswith("..."):
            continue
        parameters = [
            child["type"]["qualType"] for child in node.get("inner", [])
            if child.get("kind") == "ParmVarDecl"]
        # "R (P)": the return type is what precedes the parameter list's opening parenthesis.
        depth = 0
        for index in range(len(signature) - 1, -1, -1):
            if signature[index] == ")":
                depth += 1
            elif signature[index] == "(":
                depth -= 1
                if depth == 0:
                    break
        result = signature[:index].strip()
        if "(" in result or "..." in signature[index:] or "va_list" in signature:
            continue  # returns a function pointer, or variadic: none is called by Tape
        yield node["name"], result, parameters, file


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    tables = []
    stubs = []
    for library, (soname, package, include, headers, prefixes) in enumerate(LIBRARIES):
        names = []
        seen = set()
        for name, result, parameters, file in declarations(include):
            if name in seen or not file or not any(file.endswith(h) for h in headers):
                continue
            if prefixes and not any(name.startswith(p) for p in prefixes):
                continue
            seen.add(name)
            slot = len(names)
            names.append(name)
            arguments = ", ".join(f"a{i}" for i in range(len(parameters)))
            declared = ", ".join(
                f"__typeof__({type}) a{i}" for i, type in enumerate(parameters)) or "void"
            call = f"((__typeof__(&{name}))tape_lazy_function({library}, {slot}))({arguments})"
            returns = "" if result == "void" else "return "
            # Hidden (the assembler's directive: some headers declare their functions visible
            # by attribute): a Swift executable exports its symbols, and exported stubs took
            # each library's calls of its own functions; ALSA, which finds itself with
            # dladdr(snd_dlopen), opened the tape binary instead and could open no device but
            # a bare card.
            stubs.append(
                f"__typeof__({result}) {name}({declared}) {{\n  {returns}{call};\n}}\n"
                f'__asm__(".hidden {name}");\n')
        if not names:
            sys.exit(f"no functions found for {soname}")
        tables.append((soname, package, names))
    with open(OUTPUT, "w") as out:
        out.write("// Generated by scripts/lazy-libraries.py: do not edit; run it again.\n")
        out.write("// Each function calls its library's, loaded on the first call (the script "
                  "says why).\n\n")
        out.write('#include "lazy.h"\n\n')
        out.write('#pragma clang diagnostic ignored "-Wdeprecated-declarations"\n\n')
        for library, (soname, package, names) in enumerate(tables):
            out.write(f"static const char *const names{library}[] = {{\n")
            for name in names:
                out.write(f'  "{name}",\n')
            out.write("};\n")
            out.write(f"static void *_Atomic slots{library}[{len(names)}];\n\n")
        out.write("struct tape_lazy_library tape_lazy_libraries[] = {\n")
        for library, (soname, package, names) in enumerate(tables):
            out.write(f'  {{"{soname}", "{package}", names{library}, slots{library}, '
                      f"{len(names)}, 0}},\n")
        out.write("};\n\n")
        out.write("\n".join(stubs))
    print(f"{OUTPUT}: " + ", ".join(f"{soname} {len(names)}" for soname, _, names in tables))


if __name__ == "__main__":
    main()
