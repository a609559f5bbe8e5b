#!/usr/bin/env python3
"""Checks scripts/perf-tables and the pages it writes (test docs_performance_tables_script):

- a page whose generated tables were edited by hand fails --check (exit 1, the difference
  shown), and rewriting it restores exactly the page of the repository; what lies outside the
  markers is kept as written;
- a page or manifest that do not match (a missing end marker, a table without markers) stops
  with exit 2 and a message naming it, no traceback;
- every generated row equals the row scripts/compare printed in the run's own compare.md
  (times, ompi/overpass ratio and interquartile range, verdict): the tables show what was
  measured;
- every link into docs/PERFORMANCE.md or docs/PERFORMANCE_HISTORY.md (README.md, docs/*.md)
  names a heading that exists, and every mention of a section by name in the sources
  (`docs/PERFORMANCE.md, "Transport decision"`, in code comments too) names a heading of that
  page or, for PERFORMANCE.md, one of the moved sections it lists.

  check_perf_tables.py --source DIR
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []


def fail(what, detail=""):
    failures.append(what)
    print(f"FAIL {what}" + (f"\n  {detail}" if detail else ""))


def ok(what):
    print(f"ok   {what}")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def slugs(text):
    """The anchors GitHub gives the headings of a markdown text (code blocks skipped)."""
    out, seen, fence = {}, {}, False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"^#{1,6} (.*)$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out[slug if n == 0 else f"{slug}-{n}"] = m.group(1)
    return out


def generated_blocks(text):
    return dict(re.findall(r"<!-- perf-tables:begin (\S+) -->\n(.*?)<!-- perf-tables:end \1 -->",
                           text, re.S))


def md_rows(text):
    """The rows of every markdown table: lists of cells."""
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.split("\n") if line.startswith("| ") and "---|" not in line]


def check_drift(src, script, doc, tmp):
    page = open(doc).read()
    copy = os.path.join(tmp, "PERFORMANCE.md")
    blocks = generated_blocks(page)
    name = next(n for n in blocks if n != "runs")
    m = re.search(r"\| (\d+\.\d\d) \|", blocks[name])
    edited = page.replace(blocks[name], blocks[name].replace(m.group(0), "| 0.01 |", 1), 1)
    edited = edited.replace("## Known gaps", "## Known gaps\n\nA line written by hand.", 1)
    open(copy, "w").write(edited)
    rc, out, err = run([script, "--check", "--doc", copy])
    if rc != 1 or "0.01" not in out or "scripts/perf-tables" not in err:
        fail("--check on a hand-edited table: expected exit 1 and the difference",
             f"exit {rc}, stdout {out[-300:]!r}, stderr {err[-300:]!r}")
    else:
        ok("--check on a hand-edited table: exit 1, the difference shown")
    rc, out, err = run([script, "--doc", copy])
    rewritten = open(copy).read()
    if rc != 0 or rewritten != page.replace("## Known gaps", "## Known gaps\n\nA line written "
                                            "by hand.", 1):
        fail("rewriting the edited page: expected the repository's tables back and the line "
             "outside the markers kept", f"exit {rc}, stderr {err[-300:]!r}")
    else:
        ok("rewriting restores the tables and keeps what lies outside the markers")
    rc, out, err = run([script, "--check", "--doc", copy])
    if rc != 0:
        fail("--check after rewriting", f"exit {rc}, stderr {err[-300:]!r}")
    else:
        ok("--check after rewriting: exit 0")


def check_bad_inputs(src, script, doc, tmp):
    page = open(doc).read()
    copy = os.path.join(tmp, "broken.md")
    name = next(n for n in generated_blocks(page) if n != "runs")
    cases = [
        ("a missing end marker", page.replace(f"<!-- perf-tables:end {name} -->", "", 1), name),
        ("a table without markers", page.replace(f"<!-- perf-tables:begin {name} -->", "", 1)
         .replace(f"<!-- perf-tables:end {name} -->", "", 1), name),
        ("markers of an unknown table", page + "\n<!-- perf-tables:begin nosuch -->\n"
         "<!-- perf-tables:end nosuch -->\n", "nosuch"),
    ]
    for what, text, named in cases:
        open(copy, "w").write(text)
        rc, out, err = run([script, "--check", "--doc", copy])
        if rc != 2 or named not in err or "Traceback" in out + err:
            fail(f"{what}: expected exit 2 and a message naming '{named}'",
                 f"exit {rc}, stderr {err[-300:]!r}")
        else:
            ok(f"{what}: exit 2, {err.strip()[:120]}")
    manifest = os.path.join(src, "docs", "perf", "data", "manifest.json")
    m = json.load(open(manifest))
    table = next(iter(m["tables"].values()))
    table["sources"] = ["nosuchrun"]
    bad = os.path.join(tmp, "manifest.json")
    json.dump(m, open(bad, "w"))
    rc, out, err = run([script, "--check", "--manifest", bad])
    if rc != 2 or "nosuchrun" not in err or "Traceback" in out + err:
        fail("a table fed by an unknown run: expected exit 2 naming it",
             f"exit {rc}, stderr {err[-300:]!r}")
    else:
        ok(f"a table fed by an unknown run: exit 2, {err.strip()[:120]}")


def check_against_compare(src, doc):
    """Every generated row against the row compare.md of its run printed."""
    data = os.path.join(src, "docs", "perf", "data")
    m = json.load(open(os.path.join(data, "manifest.json")))
    blocks = generated_blocks(open(doc).read())
    compared = 0
    for name, t in m["tables"].items():
        rows = md_rows(blocks.get(name, ""))
        if not rows:
            fail(f"table {name}: no rows in the page")
            continue
        head = rows[0]
        ours, base = t.get("ours", "overpass"), t.get("baseline", "ompi")
        for row in rows[1:]:
            cells = dict(zip(head, row))
            run_name = cells["run"].strip("`")
            md = os.path.join(data, run_name, "compare.md")
            if not os.path.exists(md):
                continue
            text = open(md).read()
            first = text.split("\n\n")[1] if "\n\n" in text else text
            theirs = md_rows(first)
            their_head = theirs[0]
            match = [dict(zip(their_head, r)) for r in theirs[1:]
                     if r[0] == t["coll"] and r[1] == t["np"] and r[2] == cells["bytes"]]
            if len(match) != 1:
                fail(f"table {name}, {cells['bytes']}: no single row in {run_name}/compare.md")
                continue
            want = match[0]
            pairs = [(f"{c} us", f"{c} us") for c in t["configs"]]
            pairs += [(f"{base} / {ours} [IQR]", f"{base}/{ours} [IQR]")]
            # compare.md judges every configuration against its own baseline (ompi): a table
            # with another baseline (a before/after table) judges differently.
            if base == "ompi":
                pairs.append((f"{ours} vs noise", f"{ours} vs noise"))
            for mine, theirs_col in pairs:
                if theirs_col in want and cells.get(mine) != want[theirs_col]:
                    fail(f"table {name}, {cells['bytes']}, {mine}: '{cells.get(mine)}' in the "
                         f"page, '{want[theirs_col]}' in {run_name}/compare.md")
            compared += 1
    if compared:
        ok(f"{compared} generated rows equal the rows of their runs' compare.md")
    else:
        fail("no generated row could be compared with a compare.md")


def check_links(src):
    pages = {name: open(os.path.join(src, "docs", name)).read()
             for name in ("PERFORMANCE.md", "PERFORMANCE_HISTORY.md")}
    anchors = {name: slugs(text) for name, text in pages.items()}
    # Section names a mention may use: headings, and in PERFORMANCE.md the moved sections listed.
    names = {name: [h.replace("`", "").lower() for h in anchors[name].values()]
             for name in pages}
    names["PERFORMANCE.md"] += [t.replace("`", "").lower() for t in re.findall(
        r"^- \[([^\]]+)\]\(PERFORMANCE_HISTORY\.md#", pages["PERFORMANCE.md"], re.M)]
    docs = [os.path.join(src, "README.md")] + [
        os.path.join(src, "docs", f) for f in sorted(os.listdir(os.path.join(src, "docs")))
        if f.endswith(".md")]
    links = 0
    for path in docs:
        text = open(path).read()
        for target, anchor in re.findall(r"\]\((?:docs/)?(PERFORMANCE(?:_HISTORY)?\.md)#([^)]+)\)",
                                         text):
            links += 1
            if anchor not in anchors[target]:
                fail(f"{os.path.relpath(path, src)}: link to {target}#{anchor}, no such heading")
    ok(f"{links} links into the performance pages name existing headings")

    mentions = 0
    skip = {".git", "build", "out", "data"}
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d not in skip and not d.startswith("build")]
        for f in filenames:
            if not re.search(r"\.(cc|h|c|cu|py|md|txt|cmake|def)$|^[a-z-]+$", f):
                continue
            path = os.path.join(dirpath, f)
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            # Comments wrap: join the lines with their comment markers removed.
            flat = re.sub(r"\n\s*(?://|#|\*)?\s*", " ", text)
            for target, section in re.findall(
                    r"docs/(PERFORMANCE(?:_HISTORY)?\.md),? (?:section )?\\?\"([^\"\\]+)\\?\"",
                    flat):
                mentions += 1
                want = section.replace("`", "").lower()
                if not any(n.startswith(want) for n in names[target]):
                    fail(f"{os.path.relpath(path, src)}: mentions {target}, \"{section}\", "
                         "which is no section there")
    ok(f"{mentions} mentions of performance sections by name found their sections")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    a = p.parse_args()
    script = os.path.join(a.source, "scripts", "perf-tables")
    doc = os.path.join(a.source, "docs", "PERFORMANCE.md")
    with tempfile.TemporaryDirectory() as tmp:
        check_drift(a.source, script, doc, tmp)
        check_bad_inputs(a.source, script, doc, tmp)
    check_against_compare(a.source, doc)
    check_links(a.source)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("the performance pages match their data and their links resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
