"""tests/browser/cdp.py — a minimal client of Chromium's DevTools protocol over --remote-debugging-pipe
(Python's standard library only): start headless Chromium, open one page, evaluate script, click."""
import json
import os
import subprocess
import time


class Browser:
    """Headless Chromium with one page (tab) open at URL; commands go to that page's session."""

    def __init__(self, chromium, url, width=1280, height=900, timeout=120):
        self.timeout = timeout
        to_chrome_r, self._to_chrome = os.pipe()  # Chromium reads commands on its fd 3
        self._from_chrome, from_chrome_w = os.pipe()  # and writes replies and events on its fd 4

        def give_fds():  # copies first: a pipe may already be fd 3 or 4, and dup2 onto itself keeps CLOEXEC
            reads, writes = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(reads, 3)
            os.dup2(writes, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=give_fds, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer, self._next_id, self.session = b"", 0, None
        target = self.command("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.command("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.exceptions = []  # every uncaught exception the page threw (Runtime.exceptionThrown)
        self.command("Page.enable")
        self.command("Runtime.enable")
        self.command("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        self.command("Page.navigate", url=url)
        self.wait_for_event("Page.loadEventFired")

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            if time.time() > deadline:
                raise TimeoutError("no answer from Chromium's DevTools pipe")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe (did it crash?)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(message)
        if message.get("method") == "Runtime.exceptionThrown":
            details = message["params"]["exceptionDetails"]
            self.exceptions.append(details.get("exception", {}).get("description", details.get("text")))
        return message

    def command(self, method, **params):
        """Sends METHOD with PARAMS and returns its result; a protocol error raises RuntimeError."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.time() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})

    def wait_for_event(self, method):
        deadline = time.time() + self.timeout
        while self._read_message(deadline).get("method") != method:
            pass

    def evaluate(self, expression):
        """The value of a JavaScript EXPRESSION in the page (JSON-serialisable); a thrown error raises."""
        result = self.command("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(f"page script failed: {details.get('exception', {}).get('description', details.get('text'))}")
        return result["result"].get("value")

    def click(self, x, y):
        """A real left click (press and release) at viewport coordinates X, Y."""
        for kind in ("mousePressed", "mouseReleased"):
            self.command("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self):
        try:
            self.command("Browser.close")
        except (RuntimeError, OSError, TimeoutError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
