#!/usr/bin/python3
"""Order a croissant in the desktop window, as a customer would, through
the window's accessibility tree (AT-SPI): every control has a role and a
name, so the smoke test presses them by name like a screen reader user.

    desktop-order.py    (inside the smoke test's session: Xvfb, a session
                         bus and the AT-SPI bus, the app running)

Exits 0 once the cart lists one croissant; otherwise prints what it saw
and exits 1. The demo speaks French at first: the names are French.
"""
import sys
import time

import pyatspi

TIMEOUT = 30  # seconds for each step: a loaded machine is slow, never wrong


def app():
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        a = desktop.getChildAtIndex(i)
        if a is not None and a.name == "comptoir":
            return a
    return None


def find(acc, pred):
    if acc is None:
        return None
    try:
        if pred(acc):
            return acc
        for i in range(acc.childCount):
            found = find(acc.getChildAtIndex(i), pred)
            if found is not None:
                return found
    except Exception:  # a node that went away while walking
        return None
    return None


def tree(acc, depth=0, out=None):
    out = [] if out is None else out
    try:
        if acc.name:
            out.append("  " * depth + f"{acc.getRoleName()}: {acc.name}")
        for i in range(acc.childCount):
            tree(acc.getChildAtIndex(i), depth + 1, out)
    except Exception:
        pass
    return out


def wait_for(what, pred):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found = find(app(), pred)
        if found is not None:
            return found
        time.sleep(0.2)
    print(f"desktop-order: {what} never appeared; the window showed:", file=sys.stderr)
    print("\n".join(tree(app()) if app() else ["(no application)"]), file=sys.stderr)
    sys.exit(1)


def press(prefix, roles=("push button", "toggle button", "page tab")):
    control = wait_for(
        f"a control named {prefix!r}",
        lambda a: a.getRoleName() in roles and a.name.startswith(prefix),
    )
    control.queryAction().doAction(0)


press("Sur place")
press("Viennoiseries")
press("Croissant")
press("Ajouter")
press("Voir le panier")
wait_for(
    "a cart line of one croissant",
    lambda a: a.getRoleName() == "list item"
    and a.name.startswith("Croissant")
    and find(a, lambda q: q.name == "Quantité 1") is not None,
)
print("desktop-order: a croissant was ordered and is in the cart")
