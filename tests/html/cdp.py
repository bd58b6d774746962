"""cdp.py - a tiny Chrome DevTools Protocol client over --remote-debugging-pipe
for the HTML page tests (python3 standard library only).

Chromium reads commands on its fd 3 and writes replies and events on fd 4,
each a JSON object ended by a NUL byte. Browser(...).open_page(url) gives a
Page whose evaluate() runs JavaScript in the page; every event is kept in
Browser.events so a test can look at console messages, exceptions, log
entries and network requests afterwards."""
import fcntl
import json
import os
import queue
import subprocess
import threading
import time


class CdpError(Exception):
    pass


def chromium_command(chromium, user_data_dir, extra=()):
    """Headless chromium with its network unreachable by name; the caller
    may also run it in a network namespace of its own (unshare -n)."""
    return [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--mute-audio",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--user-data-dir=" + user_data_dir] + list(extra)


def without_network(command):
    """command run in a new network namespace when this process may make one."""
    try:
        ok = subprocess.run(["unshare", "-n", "true"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return (["unshare", "-n"] + command, True) if ok else (command, False)


class Browser:
    def __init__(self, command, timeout=60):
        self.timeout = timeout
        self.events = []
        self._replies = {}
        self._incoming = queue.Queue()
        self._next_id = 0
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def place_pipes():
            # Move both ends above 3 and 4 first so neither dup2 clobbers the other.
            high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 20)
            high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 20)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)
            os.close(high_r)
            os.close(high_w)

        self.process = subprocess.Popen(
            command + ["--remote-debugging-pipe"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=place_pipes, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self.stderr_lines = []
        threading.Thread(target=self._read_replies, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self):
        for line in self.process.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace").rstrip())

    def _read_replies(self):
        buffer = b""
        while True:
            chunk = os.read(self._from_child, 65536)
            if not chunk:
                self._incoming.put(None)
                return
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                self._incoming.put(json.loads(message))

    def _pump(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CdpError("timed out waiting for chromium")
        try:
            message = self._incoming.get(timeout=remaining)
        except queue.Empty:
            raise CdpError("timed out waiting for chromium")
        if message is None:
            raise CdpError("chromium closed the pipe (exited %s): %s" %
                           (self.process.poll(), " | ".join(self.stderr_lines[-5:])))
        if "id" in message:
            self._replies[message["id"]] = message
        else:
            self.events.append(message)

    def send(self, method, params=None, session=None):
        self._next_id += 1
        command = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = session
        os.write(self._to_child, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while self._next_id not in self._replies:
            self._pump(deadline)
        reply = self._replies.pop(self._next_id)
        if "error" in reply:
            raise CdpError("%s: %s" % (method, reply["error"].get("message")))
        return reply.get("result", {})

    def wait_event(self, method, session=None, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method and (session is None or event.get("sessionId") == session):
                    return event
            seen = len(self.events)
            self._pump(deadline)

    def open_page(self, url, width, height):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Runtime", "Log", "Network", "Page"):
            page.send(domain + ".enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", session)
        return page

    def close(self):
        try:
            self.send("Browser.close")
        except CdpError:
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Page:
    def __init__(self, browser, session):
        self.browser = browser
        self.session = session

    def send(self, method, params=None):
        return self.browser.send(method, params, self.session)

    def evaluate(self, expression):
        """The value of a JavaScript expression (promises awaited)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CdpError("evaluate failed: %s" % text)
        return result["result"].get("value")

    def wait_until(self, expression, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return
            time.sleep(0.1)
        raise CdpError("timed out waiting for: " + expression)

    def settle(self, seconds):
        """Lets transitions run (d3 animates frames for a few hundred ms)."""
        self.evaluate("new Promise(r => setTimeout(r, %d))" % int(seconds * 1000))
