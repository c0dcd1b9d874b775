"""Write spreadsheet cells into a document open in LibreOffice, over UNO (run by the SYSTEM python).

Only Debian's ``/usr/bin/python3`` has ``python3-uno``; the project's virtualenv cannot import
``uno``, so :mod:`agentlab.agents.s2.cells` runs this file as a subprocess with one JSON request
on stdin and reads one JSON answer from stdout. This file must not import ``agentlab``.

Request: ``{"url": <UNO connection string>, "file": <file URI or "">, "sheet": <name or "">,
"cells": [[ref, value], ...], "save": bool}``. Answer: ``{"ok": true, "doc": <URL>, "sheet":
<name>}``, or ``{"ok": false, "reason": "not_open" | "no_sheet" | "error", "message": ...}``.
A value that is a number is written as a number, a string starting with ``=`` as a formula,
any other string as text.
"""

import json
import sys


def _document(desktop, file_uri):
    if not file_uri:
        # the active document when it is a spreadsheet; with a spreadsheet and a text document open
        # side by side (a two-application task) the active one may be the text: take the open sheet
        current = desktop.getCurrentComponent()
        if current is not None and hasattr(current, "Sheets"):
            return current
        docs = desktop.getComponents().createEnumeration()
        while docs.hasMoreElements():
            doc = docs.nextElement()
            if hasattr(doc, "Sheets"):
                return doc
        return current
    docs = desktop.getComponents().createEnumeration()
    by_name = None
    while docs.hasMoreElements():
        doc = docs.nextElement()
        url = getattr(doc, "URL", "") or ""
        if url == file_uri:
            return doc
        if url and url.rsplit("/", 1)[-1] == file_uri.rsplit("/", 1)[-1]:
            by_name = by_name or doc  # the same file name in another folder (a relative name)
    return by_name


def main():
    req = json.loads(sys.stdin.read())
    try:
        import uno  # Debian's python3-uno

        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
        ctx = resolver.resolve(req["url"])
        desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        doc = _document(desktop, req.get("file") or "")
        if doc is None or not hasattr(doc, "Sheets"):
            print(json.dumps({"ok": False, "reason": "not_open", "message": "no spreadsheet open in LibreOffice"
                              + (" for " + req["file"] if req.get("file") else "")}))
            return
        if req.get("sheet"):
            if not doc.Sheets.hasByName(req["sheet"]):
                names = list(doc.Sheets.getElementNames())
                print(json.dumps({"ok": False, "reason": "no_sheet",
                                  "message": f"no sheet {req['sheet']!r}; sheets: {', '.join(names)}"}))
                return
            sheet = doc.Sheets.getByName(req["sheet"])
        else:
            sheet = doc.CurrentController.ActiveSheet
        for ref, value in req["cells"]:
            cell = sheet.getCellRangeByName(ref)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                cell.setValue(value)
            elif isinstance(value, str) and value.startswith("="):
                cell.setFormula(value)
            else:
                cell.setString(str(value))
        if req.get("save"):
            doc.store()
        print(json.dumps({"ok": True, "doc": doc.URL, "sheet": sheet.Name}))
    except Exception as exc:  # the caller turns this into one line
        print(json.dumps({"ok": False, "reason": "error", "message": f"{type(exc).__name__}: {exc}"}))


if __name__ == "__main__":
    main()
