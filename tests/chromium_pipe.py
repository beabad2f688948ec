"""Headless Chromium driven through the DevTools protocol over a pipe (`--remote-debugging-pipe`:
JSON messages ending in a NUL byte on file descriptors 3 and 4), with the standard library only:
open a page, press keys, click where an element is, read the page back by JavaScript, take a
screenshot. Debian's chromium (`make browser`); tests skip without it (and fail in CI)."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

TIMEOUT = 60.0  # seconds for any one answer


def chromium_or_skip() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "Debian's chromium is not installed (make browser, or apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {message}")  # CI must run the browser tests, not skip them
        pytest.skip(message)
    return found


# key name -> (code, Windows virtual key code), as a keyboard sends them
KEYS = {"ArrowDown": ("ArrowDown", 40), "ArrowUp": ("ArrowUp", 38), "ArrowRight": ("ArrowRight", 39),
        "ArrowLeft": ("ArrowLeft", 37), "Home": ("Home", 36), "End": ("End", 35), "Tab": ("Tab", 9),
        "Escape": ("Escape", 27), "/": ("Slash", 191)}


_LAUNCH = "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); os.execv(sys.argv[3], sys.argv[3:])"


class Browser:
    def __init__(self, exe: str, profile: Path, width: int = 1600, height: int = 1200):
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()
        argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--remote-debugging-pipe",
                f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"]
        # a small launcher puts the pipe's ends on descriptors 3 and 4, where Chromium looks for them
        self._proc = subprocess.Popen([sys.executable, "-c", _LAUNCH, str(cmd_r), str(res_w), *argv],
                                      pass_fds=(cmd_r, res_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""
        self._id = 0
        targets = self._call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self._session = self._call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]

    def _call(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> Any:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self._session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            while b"\0" not in self._buf:
                if not select.select([self._res_r], [], [], max(deadline - time.monotonic(), 0))[0]:
                    raise TimeoutError(f"chromium did not answer {method} in {TIMEOUT} s")
                chunk = os.read(self._res_r, 1 << 16)
                if not chunk:
                    raise EOFError("chromium closed its DevTools pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def open(self, url: str) -> None:
        self._call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + TIMEOUT
        while self.eval("document.readyState") != "complete" or self.eval("location.href") != url:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            time.sleep(0.05)

    def eval(self, expression: str) -> Any:
        out = self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def key(self, key: str) -> None:
        """A key pressed and released, as the keyboard sends it."""
        code, vk = KEYS[key] if key in KEYS else (f"Key{key.upper()}", ord(key.upper()))
        down: dict[str, Any] = {"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk}
        if len(key) == 1:
            down["text"] = key
        self._call("Input.dispatchKeyEvent", down, session=True)
        self._call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk},
                   session=True)

    def type(self, text: str) -> None:
        self._call("Input.insertText", {"text": text}, session=True)

    def click(self, selector: str) -> None:
        """A mouse click in the middle of the first element `selector` finds, scrolled into view."""
        box = self.eval(f"(function () {{ var e = document.querySelector({json.dumps(selector)});"
                        "e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();"
                        "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self._call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                    "clickCount": 1}, session=True)

    def screenshot(self, path: Path) -> None:
        data = self._call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=30)
        os.close(self._cmd_w)
        os.close(self._res_r)
