#!/usr/bin/env python3
"""Checks the documentation's cross-references: every relative Markdown link, and every file
path written in the text (`docs/schema.md`, `bindings/c/examples/migration.c`, `FORMAT.md`...),
in README.md, CHANGELOG.md, docs/, benchmarks/README.md, include/cove.h and the Python package
must name a file or folder of the repository. Prints each missing target with the file and line
that names it, and exits 1 when there is one. Standard library only.

Usage: check-links.py [REPOSITORY_ROOT]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)

# The files whose references are checked.
PATTERNS = ["README.md", "CHANGELOG.md", "docs/**/*.md", "benchmarks/README.md", "include/cove.h",
            "bindings/python/**/*.py", "bindings/python/**/*.md", "bindings/c/examples/*.c"]

# [text](target) and ![alt](target); the target ends at a space or the closing parenthesis.
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# A path from the repository's root, or a bare name of a Markdown file.
TOP_LEVEL = r"(?:docs|benchmarks|bindings|include|Sources|Tests|cmake|pkgconfig|\.ci)"
PATH_REFERENCE = re.compile(r"(?<![\w./$-])(" + TOP_LEVEL + r"/[\w./+-]*[\w/]|[\w+-][\w.+-]*\.md)(?![\w/])")


def files_to_check():
    seen = set()
    for pattern in PATTERNS:
        for path in sorted(ROOT.glob(pattern)):
            parts = path.relative_to(ROOT).parts
            skipped = any(part == "build" or part.endswith(".egg-info") for part in parts)
            if path.is_file() and not skipped and path not in seen:
                seen.add(path)
                yield path


def exists(target, source, from_root=True):
    """Whether `target` names a file or folder, from the source's folder or (for a path written
    in the text, not a Markdown link, which a reader's browser resolves from the page) the root."""
    bases = (source.parent, ROOT) if from_root else (source.parent,)
    return any((base / target).exists() for base in bases)


def problems(source):
    text = source.read_text(encoding="utf-8")
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if source.suffix == ".md" and line.lstrip().startswith("```"):
            in_fence = not in_fence
        links, targets = [], []
        if source.suffix == ".md" and not in_fence:
            for match in MARKDOWN_LINK.finditer(line):
                target = match.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue  # a URL, or an anchor in the same page
                links.append(target.split("#", 1)[0])
        for match in PATH_REFERENCE.finditer(line):
            target = match.group(1).rstrip(".")
            if "*" in target or target.endswith("/..."):
                continue  # a pattern, not a file
            targets.append(target)
        for target in dict.fromkeys(links):
            if target and not exists(target, source, from_root=False):
                yield number, target
        for target in dict.fromkeys(targets):
            if target and target not in links and not exists(target, source):
                yield number, target


def main():
    missing = 0
    checked = 0
    for source in files_to_check():
        checked += 1
        for number, target in problems(source):
            missing += 1
            print(f"{source.relative_to(ROOT)}:{number}: no such file: {target}")
    if missing:
        print(f"check-links: {missing} reference(s) to missing files in {checked} files")
        return 1
    print(f"check-links: every reference in {checked} files names an existing file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
