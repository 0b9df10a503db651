#!/usr/bin/env python3
"""The browser viewer in a real browser: headless Chromium, driven over the
DevTools protocol (on a pipe, so no extra package is needed), loads the page
built by `bash tools/web.sh build` from a loopback HTTP server.

Checks:
  - auto runs (URL parameters) give the same units, arrived, wall contacts,
    stuck, steps and stretch as native `quadnav sim` for the same level or
    map, goal, units, seed and mode (quad, grid8, gridvec);
  - a goal clicked on the canvas, then stepped with the page's buttons: all
    units arrive, no wall contact, the same figures as the native sim;
  - a quad clicked with the block tool is blocked and repaired in the page;
  - the level editor: two rectangles drawn with the mouse, saved (a real
    download), accepted by the native loader (`quadnav info`), reloaded in
    the page; an overlapping pair gets the loader's message;
  - mode=crowd (units with bodies): the same units, arrived, stuck, wall
    contacts, overlap pairs, max overlap and steps as native
    `quadnav sim --crowd` on the town level; all arrive, no wall contact;
  - the file picker, mode switch, wheel zoom, right-drag pan, painting walls;
  - the page opened from disk (file://) runs the bundled levels;
  - frame times with 1,000 units on the town level and 5,000 on a 512 x 512
    map (when the shared MovingAI copy is there), printed, not asserted.
A screenshot of each stage is kept in BUILD/web-test/. Ends with one line
"N passed, N failed".

usage: web_test.py WEB_DIR QUADNAV
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import base64
import queue

WEB, QUADNAV = sys.argv[1], os.path.abspath(sys.argv[2])
OUT = os.path.join(os.path.dirname(os.path.abspath(WEB)), "web-test")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Chrome:
    """Chromium with --remote-debugging-pipe: JSON messages ending in NUL on
    file descriptors 3 (to the browser) and 4 (from it)."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="qn-web-chrome-")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()
        hi_r, hi_w = os.dup(to_r), os.dup(from_w)
        for fd in (hi_r, hi_w):
            os.set_inheritable(fd, True)

        def child():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--mute-audio",
                "--window-size=1400,860", "--remote-debugging-pipe",
                "--user-data-dir=" + self.profile, "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=child, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_r, from_w, hi_r, hi_w):
            os.close(fd)
        self.next_id = 0
        self.replies = {}
        self.events = queue.Queue()
        self.cond = threading.Condition()
        threading.Thread(target=self._reader, daemon=True).start()
        self.session = None

    def _reader(self):
        buf = b""
        while True:
            chunk = os.read(self.from_r, 1 << 16)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                m = json.loads(msg)
                if "id" in m:
                    with self.cond:
                        self.replies[m["id"]] = m
                        self.cond.notify_all()
                else:
                    self.events.put(m)

    def send(self, method, params=None, session=True, timeout=120):
        self.next_id += 1
        i = self.next_id
        m = {"id": i, "method": method, "params": params or {}}
        if session and self.session:
            m["sessionId"] = self.session
        os.write(self.to_w, json.dumps(m).encode() + b"\0")
        with self.cond:
            if not self.cond.wait_for(lambda: i in self.replies, timeout):
                raise TimeoutError(method)
            r = self.replies.pop(i)
        if "error" in r:
            raise RuntimeError(f"{method}: {r['error']}")
        return r.get("result", {})

    def open_page(self):
        t = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        a = self.send("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True},
                      session=False)
        self.session = a["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")

    def goto(self, url):
        self.send("Page.navigate", {"url": url})
        self.wait("window.qnApp && qnApp.views.length > 0 || !!document.getElementById('status').className", 60)

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                            "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait(self, expr, timeout=120):
        end = time.time() + timeout
        while time.time() < end:
            try:
                if self.eval(expr):
                    return True
            except RuntimeError:
                pass
            time.sleep(0.05)
        raise TimeoutError(expr)

    def mouse(self, kind, x, y, button="left", buttons=1):
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                               "buttons": buttons, "clickCount": 1})

    def click(self, x, y):
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y, buttons=0)

    def drag(self, a, b):
        self.mouse("mousePressed", a[0], a[1])
        for k in range(1, 6):
            self.mouse("mouseMoved", a[0] + (b[0] - a[0]) * k / 5, a[1] + (b[1] - a[1]) * k / 5)
        self.mouse("mouseReleased", b[0], b[1], buttons=0)

    def click_id(self, element_id):
        r = self.eval(f"(() => {{ const r = document.getElementById('{element_id}')"
                      f".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        self.click(r[0], r[1])

    def screenshot(self, path):
        r = self.send("Page.captureScreenshot", {"format": "png"})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def native(path, goal, units, seed, mode):
    args = [QUADNAV, "sim", path, "--units", str(units), "--seed", str(seed), "--json",
            "--mode", mode]
    if goal:
        args += ["--goal", goal]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def same_figures(name, web, nat):
    keys = ["units", "arrived", "wall_contacts", "stuck", "steps"]
    diff = {k: (web.get(k), nat.get(k)) for k in keys if web.get(k) != nat.get(k)}
    for k in ("stretch_mean", "stretch_p95"):
        if abs(web.get(k, 1e9) - nat[k]) > 1e-4:
            diff[k] = (web.get(k), nat[k])
    check(f"{name}: page = native quadnav sim", not diff, json.dumps(diff))


def results(c, timeout=300):
    c.wait("document.getElementById('results').textContent.length > 0", timeout)
    return json.loads(c.eval("document.getElementById('results').textContent"))


def auto_runs(c, base):
    cases = [("levels/town.json", "data/levels/town.json", None, 400, 7, "quad"),
             ("levels/town.json", "data/levels/town.json", None, 300, 2, "gridvec"),
             ("maps/arena.map", "data/maps/arena.map", "30.5,20.5", 400, 5, "quad"),
             ("maps/arena.map", "data/maps/arena.map", "30.5,20.5", 300, 3, "grid8"),
             ("maps/Berlin_0_256.map", "data/maps/Berlin_0_256.map", "128.5,130.5", 300, 11,
              "gridvec")]
    for url, path, goal, units, seed, mode in cases:
        key = "map" if url.endswith(".map") else "level"
        q = f"{key}={url}&units={units}&seed={seed}&mode={mode}&auto=1"
        if goal:
            q += f"&goal={goal}"
        c.goto(f"{base}/index.html?{q}")
        web = results(c)
        if "error" in web:
            check(f"auto {url} {mode}", False, web["error"])
            continue
        nat = native(os.path.join(ROOT, path), goal, units, seed, mode)
        same_figures(f"auto {url} {mode} units={units} seed={seed}", web, nat)
        check(f"auto {url} {mode}: all arrived, no wall contact",
              web["arrived"] == units and web["wall_contacts"] == 0, json.dumps(web))
    c.screenshot(os.path.join(OUT, "auto-berlin-gridvec.png"))


def native_crowd(path, goal, units, seed, steps=None):
    args = [QUADNAV, "sim", "--crowd", path, "--goal", goal, "--units", str(units), "--seed",
            str(seed), "--json"]
    if steps:
        args += ["--steps", str(steps)]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def crowd_runs(c, base):
    """mode=crowd: units with bodies (qn_crowd through tools/crowd_scene.c),
    the same placement and stepping as `quadnav sim --crowd`. Two runs to
    the end: to the plaza, where every unit arrives natively (checked, then
    the same asked of the page), and to the gate, where a few stay stuck
    after the 8,000-step budget natively (equal figures only); and 1,000
    units for 600 frames, whose frame time is printed."""
    cases = [("60,45", 400, 7, None, True), ("2,45", 250, 3, None, False),
             ("60,45", 1000, 1, 600, False)]
    for goal, units, seed, frames, all_arrive in cases:
        q = f"level=levels/town.json&goal={goal}&units={units}&seed={seed}&mode=crowd&auto=1"
        if frames:
            q += f"&frames={frames}"
        c.goto(f"{base}/index.html?{q}")
        web = results(c, 600)
        name = f"crowd town goal={goal} units={units} seed={seed}" + (f" frames={frames}" if frames else "")
        if "error" in web:
            check(name, False, web["error"])
            continue
        nat = native_crowd(os.path.join(ROOT, "data/levels/town.json"), goal, units, seed, frames)
        keys = ["units", "arrived", "stuck", "wall_contacts", "overlap_pairs", "steps"]
        diff = {k: (web.get(k), nat[k]) for k in keys if web.get(k) != nat[k]}
        if abs(web.get("max_overlap", 1e9) - nat["max_overlap"]) > 1e-6 * max(1.0, nat["max_overlap"]):
            diff["max_overlap"] = (web.get("max_overlap"), nat["max_overlap"])
        check(f"{name}: page = native quadnav sim --crowd", not diff, json.dumps(diff))
        check(f"{name}: the results JSON has the crowd keys",
              all(k in web for k in keys + ["max_overlap", "frame_ms_mean"]), json.dumps(web))
        if all_arrive:
            check(f"{name}: native run: all arrived, no wall contact",
                  nat["arrived"] == units and nat["wall_contacts"] == 0, json.dumps(nat))
            check(f"{name}: page: all arrived, no wall contact",
                  web["arrived"] == units and web["wall_contacts"] == 0, json.dumps(web))
        if frames:
            print(f"figure crowd_town_{units}: frame_ms_mean {web['frame_ms_mean']:.3f}, p95 "
                  f"{web['frame_ms_p95']:.3f} over {web['frames']} frames (one crowd step and a "
                  f"draw each; 60 fps needs 16.7 ms); page step_us_mean {web['step_us_mean']:.1f} "
                  f"(qn_crowd_step alone, wall clock in the browser) vs native "
                  f"{nat['step_us_mean']:.1f} "
                  f"(crowd step alone, CPU clock); arrived {web['arrived']}/{units} after "
                  f"{web['steps']} steps")
        discs = c.eval("(() => { const v = qnApp.views[0]; return v.mode.name === 'crowd' && "
                       "v.uradius.length === v.n && v.uradius.every((r) => Math.abs(r - 0.25) < 1e-6); })()")
        check(f"{name}: every unit read back with its radius (drawn as a disc)", discs)
        c.screenshot(os.path.join(OUT, f"crowd-town-{units}.png"))


def screen_of(c, x, y, view=0):
    return c.eval(f"(() => {{ const v = qnApp.views[{view}], r = v.canvas.getBoundingClientRect(), "
                  f"m = qnApp.cam; return [r.left + ({x} - m.x) * m.s, r.top + ({y} - m.y) * m.s]; }})()")


def clicked_goal(c, base):
    units, seed = 500, 4
    c.goto(f"{base}/index.html?level=levels/town.json&units={units}&seed={seed}")
    c.click_id("play")  # pause
    c.wait("!qnApp.running")
    sx, sy = screen_of(c, 20.3, 70.6)
    c.click(sx, sy)
    goal = c.eval("qnApp.goal")
    check("clicked goal reaches the page", goal and abs(goal[0] - 20.3) < 0.5 and
          abs(goal[1] - 70.6) < 0.5, str(goal))
    c.eval("document.getElementById('speed').value = 50")
    for i in range(200):
        if c.eval("qnApp.views.every(v => v.done)"):
            break
        c.click_id("stepbtn")
        if i == 1:
            c.screenshot(os.path.join(OUT, "clicked-goal-running.png"))
    c.wait("qnApp.views.every(v => v.done)", 60)
    c.wait("document.getElementById('results').textContent.length > 0", 30)
    c.screenshot(os.path.join(OUT, "clicked-goal.png"))
    web = json.loads(c.eval("document.getElementById('results').textContent"))
    check("clicked goal: all arrived, no wall contact",
          web["arrived"] == units and web["wall_contacts"] == 0, json.dumps(web))
    nat = native(os.path.join(ROOT, "data/levels/town.json"), f"{goal[0]},{goal[1]}", units, seed,
                 "quad")
    same_figures("clicked goal", web, nat)


def block_quad(c, base):
    c.goto(f"{base}/index.html?level=levels/town.json&units=300&seed=2&side=grid8")
    c.click_id("play")
    c.eval("document.querySelector('input[name=tool][value=block]').click()")
    q = c.eval("(() => { const v = qnApp.views[0]; for (let i = 0; i < v.qcost.length; i++) "
               "if (!v.qblocked[i] && isFinite(v.fcost[i]) && v.fcost[i] > 5) return i; return -1; })()")
    cx, cy = c.eval(f"(() => {{ const q = qnApp.views[0].quads; let x = 0, y = 0; "
                    f"for (let k = 0; k < 4; k++) {{ x += q[8 * {q} + 2 * k] / 4; y += q[8 * {q} + 2 * k + 1] / 4; }} return [x, y]; }})()")
    sx, sy = screen_of(c, cx, cy)
    c.click(sx, sy)
    blocked = c.eval(f"qnApp.views[0].qblocked[{q}] === 1 && !isFinite(qnApp.views[0].fcost[{q}])")
    check("block tool: the clicked quad is blocked and the field repaired", blocked)
    walls = c.eval("(() => { const g = qnApp.views[1].grid; let n = 0; "
                   "for (const b of g.costs) n += b === 255; return n; })()")
    check("block tool: side-by-side grid view stamps walls", walls > 0, str(walls))
    c.screenshot(os.path.join(OUT, "side-by-side-blocked.png"))


def editor(c, base):
    downloads = os.path.join(OUT, "downloads")
    shutil.rmtree(downloads, ignore_errors=True)
    os.makedirs(downloads)
    c.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads},
           session=False)
    c.goto(f"{base}/index.html?level=levels/maze.json&units=10")
    c.click_id("play")
    c.click_id("edit")
    c.click_id("enew")
    a = screen_of(c, 2, 2)
    b = screen_of(c, 12, 8)
    d = screen_of(c, 20, 8)
    c.drag(a, b)
    c.drag((b[0], a[1]), d)  # touches the first along x = 12
    n = c.eval("qnApp.editor.level.quads.length")
    check("editor: two rectangles drawn with the mouse", n == 2, str(n))
    # A quad by four clicks (drawn clockwise on screen: the editor rewinds it),
    # a cost, a named goal.
    c.eval("document.querySelector('input[name=etool][value=quad]').click()")
    for x, y in ((2, 8), (2, 12), (12, 12), (12, 8)):
        c.click(*screen_of(c, x, y))
    c.eval("document.querySelector('input[name=etool][value=cost]').click()")
    c.click(*screen_of(c, 5, 10))
    c.eval("document.querySelector('input[name=etool][value=goal]').click()")
    c.eval("document.getElementById('ename').value = 'exit'")
    c.click(*screen_of(c, 18, 5))
    c.click_id("esave")
    path = os.path.join(downloads, "edited.json")
    end = time.time() + 20
    while time.time() < end and not os.path.exists(path):
        time.sleep(0.1)
    check("editor: saved file downloaded", os.path.exists(path))
    if os.path.exists(path):
        r = subprocess.run([QUADNAV, "info", path, "--json"], capture_output=True, text=True)
        info = json.loads(r.stdout) if r.stdout else {}
        check("editor: native loader accepts the saved level",
              r.returncode == 0 and info.get("quads") == 3 and info.get("portals") == 2 and
              info.get("goals") == 1, r.stdout + r.stderr)
        with open(path) as f:
            saved = json.load(f)
        check("editor: the saved quad cost and goal name",
              saved["quads"][2].get("cost") == 2 and saved["goals"][0]["name"] == "exit",
              json.dumps(saved)[:300])
        os.makedirs(os.path.join(WEB, "test-out"), exist_ok=True)
        shutil.copy(path, os.path.join(WEB, "test-out", "edited.json"))
        c.goto(f"{base}/index.html?level=test-out/edited.json&units=50&auto=1")
        web = results(c, 60)
        check("editor: saved level reloads and runs in the page (to its named goal)",
              web.get("arrived") == 50 and web.get("goal") == [18, 5] and
              c.eval("qnApp.views[0].qcost.length") == 3, json.dumps(web))
        c.screenshot(os.path.join(OUT, "editor-saved-reloaded.png"))
    c.goto(f"{base}/index.html?level=levels/maze.json&units=10")
    c.click_id("play")
    c.click_id("edit")
    c.click_id("enew")
    c.drag(screen_of(c, 2, 2), screen_of(c, 10, 10))
    c.drag(screen_of(c, 6, 6), screen_of(c, 14, 14))
    c.click_id("evalidate")
    msg = c.eval("document.getElementById('emsg').textContent")
    hl = c.eval("qnApp.editor.hl")
    check("editor: the loader's message for overlapping quads, at the element",
          "overlaps" in msg and "quads[1]" in msg and hl == 1, msg)
    c.screenshot(os.path.join(OUT, "editor-overlap.png"))


def ui(c, base):
    """File picker, mode switch, wheel zoom, right-drag pan, painting walls."""
    c.goto(f"{base}/index.html?level=levels/town.json&units=50")
    c.click_id("play")
    doc = c.send("DOM.getDocument")
    node = c.send("DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": "#file"})
    arena = os.path.join(ROOT, "data", "maps", "arena.map")
    c.send("DOM.setFileInputFiles", {"nodeId": node["nodeId"], "files": [arena]})
    c.wait("qnApp.name === 'arena.map' && qnApp.views[0].isMap", 30)
    check("file picker: a .map opens", True)
    c.eval("(() => { const m = document.getElementById('mode'); m.value = 'grid8'; "
           "m.dispatchEvent(new Event('change')); })()")
    c.wait("qnApp.views[0] && qnApp.views[0].mode.name === 'grid8'", 30)
    cx, cy = screen_of(c, 25, 20)
    s0 = c.eval("qnApp.cam.s")
    c.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": cx, "y": cy, "deltaX": 0,
                                        "deltaY": -300})
    s1 = c.eval("qnApp.cam.s")
    check("wheel zooms in", s1 > s0 * 1.2, f"{s0} -> {s1}")
    x0 = c.eval("qnApp.cam.x")
    c.mouse("mousePressed", cx, cy, button="right", buttons=2)
    c.mouse("mouseMoved", cx + 60, cy, button="right", buttons=2)
    c.mouse("mouseReleased", cx + 60, cy, button="right", buttons=0)
    x1 = c.eval("qnApp.cam.x")
    check("right-drag pans", abs((x0 - x1) * s1 - 60) < 1, f"{x0} -> {x1}")
    c.eval("document.querySelector('input[name=tool][value=block]').click()")
    walls = "qnApp.views[0].grid.costs.reduce((n, b) => n + (b === 255), 0)"
    w0 = c.eval(walls)
    a, b = screen_of(c, 20, 12), screen_of(c, 30, 12)
    c.drag(a, b)
    w1 = c.eval(walls)
    check("painting walls in grid mode stamps cells", w1 - w0 >= 10, f"{w0} -> {w1}")
    c.screenshot(os.path.join(OUT, "ui-painted.png"))


def from_disk(c, base):
    """The page opened as a file: the embedded module and bundled levels."""
    page = "file://" + os.path.abspath(os.path.join(WEB, "index.html"))
    c.goto(page + "?level=levels/maze.json&units=100&seed=5&mode=gridvec&auto=1")
    web = results(c)
    nat = native(os.path.join(ROOT, "data/levels/maze.json"), None, 100, 5, "gridvec")
    same_figures("opened from disk (file://)", web, nat)


def rebuild_us(c):
    """The same goal built again, now that the module's code is compiled and
    warm (the first build also pays for the browser's lazy compilation)."""
    return c.eval("(() => { const v = qnApp.views[0]; v.setGoal(v.goal); return v.m.build_us; })()")


def frame_times(c, base):
    figures = {}
    c.goto(f"{base}/index.html?level=levels/town.json&units=1000&seed=1&mode=quad&auto=1")
    web = results(c)
    web["rebuild_us"] = rebuild_us(c)
    figures["town_1000_quad"] = web
    c.screenshot(os.path.join(OUT, "town-1000.png"))
    nat = native(os.path.join(ROOT, "data/levels/town.json"), None, 1000, 1, "quad")
    baselines = {"town_1000_quad": nat}
    big = os.path.join(WEB, "maps", "Boston_0_512.map")
    if os.path.exists(big):
        c.goto(f"{base}/index.html?map=maps/Boston_0_512.map&goal=256.5,256.5&units=5000&seed=1"
               f"&mode=quad&auto=1&frames=600")
        figures["boston512_5000_quad"] = results(c, 600)
        figures["boston512_5000_quad"]["rebuild_us"] = rebuild_us(c)
        c.screenshot(os.path.join(OUT, "boston-5000.png"))
        baselines["boston512_5000_quad"] = native(big, "256.5,256.5", 5000, 1, "quad")
    for k, nat in baselines.items():
        r = figures[k]
        if "error" in r:
            continue
        print(f"figure {k} baseline: native sample_ns {nat['sample_ns']:.1f}, build_us "
              f"{nat['build_us']:.1f}; page sample_ns {r['sample_ns']:.1f} "
              f"({r['sample_ns'] / nat['sample_ns']:.2f} x native; browser clock), sample+move per "
              f"unit {r['unit_step_ns']:.1f} ns (whole steps timed), build_us {r['build_us']:.1f} "
              f"first, {r['rebuild_us']:.1f} again")
        r["native"] = nat
    for k, r in figures.items():
        if "error" in r:
            check(f"frame time run {k}", False, r["error"])
            continue
        fps = 1000.0 / r["frame_ms_mean"] if r["frame_ms_mean"] > 0 else float("inf")
        print(f"figure {k}: frame_ms_mean {r['frame_ms_mean']:.3f}, p95 {r['frame_ms_p95']:.3f}, "
              f"max {r['frame_ms_max']:.3f} (sim step {r['step_ms_mean']:.3f} ms mean; "
              f"{fps:.0f} frames/s at the mean; 60 fps needs 16.7 ms), {r['frames']} frames, "
              f"arrived {r['arrived']}/{r['units']}, wall_contacts {r['wall_contacts']}")
        check(f"frame time run {k}: no wall contact", r["wall_contacts"] == 0)
    # The interactive page (requestAnimationFrame, one step a frame): frames
    # the browser showed in 5 s with 1,000 units walking on the town.
    c.goto(f"{base}/index.html?level=levels/town.json&units=1000&seed=1&mode=quad")
    c.wait("qnApp.rafMs && qnApp.rafMs.length > 5", 60)
    c.eval("qnApp.rafMs = []")
    time.sleep(5)
    raf = c.eval("qnApp.rafMs")
    walking = c.eval("qnApp.views[0].ustate.reduce((n, x) => n + (x === 1), 0)")
    c.screenshot(os.path.join(OUT, "town-1000-interactive.png"))
    if raf:
        raf.sort()
        figures["town_1000_interactive"] = {
            "frames_in_5s": len(raf), "fps": 1000.0 * len(raf) / sum(raf),
            "interval_ms_p95": raf[max(0, -(-95 * len(raf) // 100) - 1)], "walking_at_end": walking}
        print(f"figure town_1000_interactive: {len(raf)} frames in 5 s "
              f"({figures['town_1000_interactive']['fps']:.1f} fps; frame interval p95 "
              f"{figures['town_1000_interactive']['interval_ms_p95']:.1f} ms), {walking} units still walking")
    with open(os.path.join(OUT, "figures.json"), "w") as f:
        json.dump(figures, f, indent=1)


def main():
    if not CHROMIUM:
        print("web: chromium is missing (apt-get install chromium)")
        print("0 passed, 1 failed")
        return 1
    os.makedirs(OUT, exist_ok=True)
    wasm = os.path.getsize(os.path.join(WEB, "quadnav.wasm"))
    print(f"figure quadnav.wasm {wasm} bytes (target < 300 KB)")
    check("quadnav.wasm is under 300 KB", wasm < 300 * 1024, str(wasm))
    sys.path.insert(0, os.path.join(ROOT, "tools", "web"))
    import serve
    srv = serve.server(os.path.abspath(WEB))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    c = Chrome()
    try:
        c.open_page()
        only = os.environ.get("QN_WEB_ONLY")
        for stage in (auto_runs, crowd_runs, clicked_goal, block_quad, editor, ui, from_disk, frame_times):
            if only and stage.__name__ not in only.split(","):
                continue
            try:
                stage(c, base)
            except Exception as e:  # a stage that breaks is a failure, the rest still run
                check(stage.__name__, False, f"{type(e).__name__}: {e}")
    finally:
        c.close()
        srv.shutdown()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
