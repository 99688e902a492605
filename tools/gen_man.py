#!/usr/bin/python3
"""gen_man.py: the man pages weir(1), weir-GROUP(1) and airflow(1), made from the help text
of the built program, so that `man weir-dags` and `weir dags --help` never disagree.

    python3 tools/gen_man.py BUILD/weir OUTDIR VERSION DOCDIR

The command groups are those `weir --help` lists under "commands:" (less `help`; the
internal `launch` too, whose page weir-launch(1) is also the lean launcher's, the program
`weir-launch`, which takes the same arguments); each page's text is `weir help
GROUP`: its "usage:" lines become the SYNOPSIS, the rest the DESCRIPTION, kept as laid
out (no-fill), since the help is laid out by hand. A group whose help cannot be printed
stops the build (exit 1, naming it)."""

import os
import re
import subprocess
import sys

COMMAND_LINE = re.compile(r"^  ([a-z][a-z-]*)(?: [A-Z]+)?\s+(\S.*)$")


def roff_text(line):
    """One line of text as roff: backslashes and minus signs escaped, a leading
    dot or quote kept from being read as a request."""
    line = line.replace("\\", "\\e").replace("-", "\\-")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def help_text(weir, args, name="weir"):
    """`weir ARGS` as text, the program run by `name` (the binary is also `airflow`); exits
    naming the command when it fails."""
    done = subprocess.run([name] + args, executable=weir, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, WEIR_SERVER="http://127.0.0.1:9", COLUMNS="80"))
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit("gen_man: `%s %s` failed (exit %d): %s"
                 % (name, " ".join(args), done.returncode, done.stderr.strip()))
    return done.stdout.rstrip("\n").split("\n")


def commands(lines):
    """(name, description) of each group of `weir --help`'s "commands:" section."""
    out, inside = [], False
    for line in lines:
        if line == "commands:":
            inside = True
            continue
        if inside and not line.strip():
            break
        m = COMMAND_LINE.match(line) if inside else None
        if m and m.group(1) != "help":
            out.append((m.group(1), m.group(2)))
    return out


def split_usage(lines):
    """The leading usage lines (the first starts "usage:", the next are indented, up to
    the first blank line) and the lines after them."""
    if not lines or not lines[0].startswith("usage:"):
        return [], lines
    n = 1
    while n < len(lines) and lines[n].startswith(" ") and lines[n].strip():
        n += 1
    # the next lines stand under the first's text, 7 columns in ("usage: ")
    usage = [lines[0][len("usage: "):]] + [line[7:] if not line[:7].strip() else line.strip()
                                          for line in lines[1:n]]
    rest = lines[n:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    return usage, rest


def page(name, summary, lines, version, see_also, docdir):
    """The roff text of one page."""
    usage, rest = split_usage(lines)
    out = ['.TH %s 1 "" "weir %s" "weir manual"' % (name.upper().replace("-", "\\-"), version),
           ".SH NAME",
           "%s \\- %s" % (roff_text(name), roff_text(summary)),
           ".SH SYNOPSIS", ".nf"]
    out += [roff_text(u) for u in usage] or [roff_text(name.replace("-", " ", 1))]
    out += [".fi"]
    if rest:
        out += [".SH DESCRIPTION", ".nf"]
        out += [roff_text(line) if line.strip() else "" for line in rest]
        out += [".fi"]
    out += [".SH SEE ALSO", ",\n".join(".BR %s (1)" % roff_text(s) for s in see_also)]
    docs = roff_text(docdir)
    out += [".PP", "The documentation: %s/README.md and %s/docs/." % (docs, docs)]
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 5:
        sys.exit("usage: gen_man.py WEIR OUTDIR VERSION DOCDIR")
    weir, outdir, version, docdir = argv[1:]
    os.makedirs(outdir, exist_ok=True)
    top = help_text(weir, ["--help"])
    groups = commands(top)
    if not groups:
        sys.exit("gen_man: `weir --help` lists no commands under \"commands:\"")
    pages = {"weir": page("weir", "distributed jobs and DAG workflows", top, version,
                          ["weir-" + g for g, _ in groups] + ["airflow"], docdir)}
    # the binary run as `airflow` (the link beside it): Airflow's command line, whose help
    # is argparse's
    pages["airflow"] = page("airflow", "Airflow's command line for ops scripts, on weir",
                            help_text(weir, ["--help"], name="airflow"), version, ["weir"],
                            docdir)
    for group, summary in groups:
        pages["weir-" + group] = page("weir-" + group, summary,
                                      help_text(weir, ["help", group]), version, ["weir"],
                                      docdir)
    for old in os.listdir(outdir):
        if old.endswith(".1") and old[:-2] not in pages:
            os.remove(os.path.join(outdir, old))
    for name, text in pages.items():
        with open(os.path.join(outdir, name + ".1"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main(sys.argv)
