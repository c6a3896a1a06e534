"""JUnit XML: one testsuite, one testcase per file, a failure listing the file's errors.

CI systems (GitLab, Jenkins, Azure) read this to show configs as passing or
failing tests. Warnings and notes go to the testcase's system-out. Every
text and attribute holds only characters XML 1.0 can (`xml_text`): any other
is written as an escape (`\x01`), so the document stays well-formed whatever
a key or file name holds.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TextIO

from trainspec.report.reporters import checked, relative_path
from trainspec.report.text import format_line
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.escaping import escape, terminal
from trainspec.spec.result import Result

XML_UNSAFE = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""What XML 1.0's `Char` production leaves out (ElementTree escapes markup, not these)."""


def xml_text(text: str) -> str:
    """`text` as XML 1.0 can hold it and a CI log may show it: what the terminal must not receive escaped
    (C1 controls, DEL, separators, bidi and invisible characters), then what XML cannot hold."""
    return escape(terminal(text), XML_UNSAFE)


def report(results: Iterable[Result], out: TextIO) -> None:
    every = list(results)
    results = checked(every)
    skipped = [r for r in every if r.skipped]
    failed = sum(not r.ok for r in results)
    tests = str(len(every))
    root = ET.Element("testsuites", name="trainspec", tests=tests, failures=str(failed), errors="0")
    suite = ET.SubElement(
        root, "testsuite", name="trainspec", tests=tests, failures=str(failed), errors="0", skipped=str(len(skipped))
    )
    for r in skipped:
        case = ET.SubElement(suite, "testcase", classname="trainspec.unknown", name=xml_text(relative_path(r.file)))
        ET.SubElement(case, "skipped", message=xml_text(r.skipped))
    for r in results:
        family = r.family.name if r.family is not None else "unknown"
        case = ET.SubElement(suite, "testcase", classname=f"trainspec.{family}", name=xml_text(relative_path(r.file)))
        diagnostics = sorted(r.diagnostics, key=Diagnostic.sort_key)
        errors = [d for d in diagnostics if d.is_error]
        others = [d for d in diagnostics if not d.is_error]
        if errors:
            failure = ET.SubElement(
                case, "failure", type="trainspec", message=f"{len(errors)} error{'s' if len(errors) != 1 else ''}"
            )
            failure.text = "\n".join(xml_text(format_line(d)) for d in errors)
        if others:
            ET.SubElement(case, "system-out").text = "\n".join(xml_text(format_line(d)) for d in others)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode") + "\n")
