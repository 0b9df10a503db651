#!/usr/bin/env python3
"""The command line as a hostile or careless user meets it (issues 10 and 11):
outputs never destroy an input or a file the tool did not create, inputs are
read once (FIFOs, process substitution), one rule for maps and levels in
every command, one option parser, exit status 2 for usage and 1 for bad
input, one JSON object with --json, the step budget of sim, progress lines
only on a terminal. Closes with "N passed, N failed"."""
import json
import os
import pty
import resource
import signal
import subprocess
import sys
import tempfile
import threading

from tally import check, failures, finish

QN = sys.argv[1]
DATA = os.environ.get("QN_DATA_DIR", "data")
TOWN = os.path.join(DATA, "levels", "town.json")
MAZE = os.path.join(DATA, "levels", "maze.json")
ARENA = os.path.join(DATA, "maps", "arena.map")


def run(args, stdin=None, timeout=120, preexec=None, stderr_tty=False):
    if stderr_tty:
        return run_tty(args, timeout)
    p = subprocess.run([QN] + args, input=stdin, capture_output=True, text=True,
                       timeout=timeout, preexec_fn=preexec)
    return p.returncode, p.stdout, p.stderr


def run_tty(args, timeout):
    """Runs with stderr on a pseudo-terminal; returns what it printed there."""
    master, slave = pty.openpty()
    p = subprocess.Popen([QN] + args, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    chunks = []

    def drain():
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:
                return
            if not b:
                return
            chunks.append(b)

    t = threading.Thread(target=drain)
    t.start()
    out, _ = p.communicate(timeout=timeout)
    t.join(5)
    os.close(master)
    return p.returncode, out, b"".join(chunks).decode(errors="replace")



def one_json(name, out):
    lines = [l for l in out.splitlines() if l.strip()]
    check(name + ": one line", len(lines) == 1, out[:200])
    try:
        j = json.loads(out)
        check(name + ": an object", isinstance(j, dict), out[:200])
        return j if isinstance(j, dict) else {}
    except ValueError as e:
        failures.append(f"{name}: not JSON: {e}: {out[:200]}")
        return {}


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def mode_of(path):
    return os.stat(path).st_mode & 0o777 if os.path.exists(path) else None


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def leftovers(folder, keep):
    return sorted(set(os.listdir(folder)) - set(keep))


tmp = tempfile.mkdtemp(prefix="qn_hard_")
os.chdir(tmp)
arena_bytes = read(ARENA)
town_bytes = read(TOWN)
write("a.map", arena_bytes.decode())
write("town.json", town_bytes.decode())

# ---- output == input: refused, input untouched ------------------------------
for out in ("a.map", "./a.map", os.path.join(tmp, "a.map")):
    rc, _, err = run(["import-map", "a.map", "-o", out])
    check(f"import-map a.map -o {out} refused", rc == 1 and "input" in err, (rc, err))
    check(f"import-map a.map -o {out} leaves the map", read("a.map") == arena_bytes)
os.symlink("a.map", "link.map")
rc, _, err = run(["import-map", "a.map", "-o", "link.map"])
check("import-map -o symlink to the input refused", rc == 1, (rc, err))
check("... map untouched, link kept", read("a.map") == arena_bytes and os.path.islink("link.map"))
os.link("a.map", "hard.map")
rc, _, err = run(["import-map", "hard.map", "--output=a.map"])
check("import-map -o hard link of the input refused", rc == 1, (rc, err))
check("... map untouched", read("a.map") == arena_bytes)
rc, _, err = run(["bake", "town.json", "-o", "./town.json"])
check("bake L.json -o ./L.json refused", rc == 1 and "input" in err, (rc, err))
rc, _, err = run(["render", "town.json", "-o", "town.json"])
check("render L.json -o L.json refused", rc == 1 and "input" in err, (rc, err))
check("... level untouched", read("town.json") == town_bytes)
check("no files left behind", leftovers(tmp, ["a.map", "link.map", "hard.map", "town.json"]) == [],
      os.listdir(tmp))
write("a.map", arena_bytes.decode())  # each reproducer below on its own
write("town.json", town_bytes.decode())

# ---- failed writes never remove what the tool did not create ----------------


def fsize_limit(n):
    def f():
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    return f


write("old.json", "precious")
rc, _, err = run(["import-map", "a.map", "-o", "old.json"], preexec=fsize_limit(1000))
check("write past the file size limit fails", rc == 1 and "File too large" in err, (rc, err))
check("... the existing file is kept whole", read("old.json") == b"precious")
check("... and no temporary file is left", leftovers(tmp, ["a.map", "link.map", "hard.map",
                                                          "town.json", "old.json"]) == [],
      os.listdir(tmp))
write("target.json", "precious too")
os.symlink("target.json", "out-link.json")
rc, _, err = run(["import-map", "a.map", "-o", "out-link.json"], preexec=fsize_limit(1000))
check("failed write through a symlink", rc == 1, (rc, err))
check("... target untouched and link kept",
      read("target.json") == b"precious too" and os.path.islink("out-link.json"))
rc, out, err = run(["import-map", "a.map", "-o", "out-link.json", "--json"])
check("write through a symlink", rc == 0 and os.path.islink("out-link.json"), (rc, err))
check("... replaces the file it names", (read("target.json") or b"").startswith(b"{"))
rc, _, err = run(["render", "town.json", "-o", "old.json"], preexec=fsize_limit(1000))
check("render: failed write keeps the old file", rc == 1 and read("old.json") == b"precious",
      (rc, err))
rc, _, err = run(["import-map", "a.map", "-o", "/nonexistent-dir/x.json"])
check("write error says why", rc == 1 and "No such file or directory" in err, err)
rc, _, err = run(["import-map", "a.map", "-o", "new.json"])
check("a new file is written", rc == 0 and (read("new.json") or b"").startswith(b"{"), err)
mask = os.umask(0)
os.umask(mask)
check("... with the usual mode", mode_of("new.json") == 0o666 & ~mask, mode_of("new.json"))
os.chmod("old.json", 0o640)
rc, _, err = run(["import-map", "a.map", "-o", "old.json"])
check("an existing file keeps its mode", rc == 0 and mode_of("old.json") == 0o640,
      mode_of("old.json"))


def fifo_reader(path, box, close_early=False):
    def go():
        with open(path, "rb") as f:
            box.append(f.read(10) if close_early else f.read())
    t = threading.Thread(target=go)
    t.start()
    return t


os.mkfifo("out.fifo")
box = []
t = fifo_reader("out.fifo", box)
rc, _, err = run(["import-map", "a.map", "-o", "out.fifo"])
t.join(30)
check("-o FIFO: plain write", rc == 0 and box and box[0].startswith(b"{") and
      box[0].rstrip().endswith(b"}"), (rc, err))
check("... the FIFO stays", os.path.exists("out.fifo") and not os.path.isfile("out.fifo"))
box = []
t = fifo_reader("out.fifo", box, close_early=True)


def no_sigpipe():
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)


BIG = os.path.join(DATA, "maps", "Berlin_0_256.map")  # a level far larger than a pipe's buffer
rc, _, err = run(["import-map", BIG, "-o", "out.fifo"], preexec=no_sigpipe)
t.join(30)
check("-o FIFO whose reader leaves: an error", rc == 1 and "Broken pipe" in err, (rc, err))
check("... the FIFO is not removed", os.path.exists("out.fifo"))
rc, out, err = run(["import-map", "a.map", "-o", "-", "--json"])
check("-o - writes the level on stdout", rc == 0 and json.loads(out).get("format") == 1, err[:200])
check("... and the summary on stderr", '"quads"' in err, err)
rc, out, err = run(["render", "town.json", "-o", "-"])
check("render -o -", rc == 0 and out.startswith("<svg") or "<svg" in out[:200], (rc, err))

# ---- inputs read once: FIFOs and process substitution -----------------------


def fifo_writer(path, data):
    def go():
        with open(path, "wb") as f:
            f.write(data)
    t = threading.Thread(target=go)
    t.start()
    return t


os.mkfifo("in.fifo")
for what, data in (("level", town_bytes), ("map", arena_bytes)):
    t = fifo_writer("in.fifo", data)
    try:
        rc, out, err = run(["info", "in.fifo", "--json"], timeout=20)
    except subprocess.TimeoutExpired:
        rc, out, err = -1, "", "timed out"
    t.join(5)
    j = one_json(f"info --json on a FIFO ({what})", out) if rc == 0 else {}
    check(f"info --json on a FIFO ({what}): valid", rc == 0 and j.get("valid") is True, (rc, err))
    check(f"info --json on a FIFO ({what}): kind", j.get("kind") == what, j)
for cmd in (["info", "<(cat %s)" % TOWN],
            ["field", "<(cat %s)" % ARENA, "--goal", "10,10", "--json"],
            ["path", "<(cat %s)" % ARENA, "--from", "3,3", "--to", "40,40"],
            ["sim", "<(cat %s)" % TOWN, "--units", "5"],
            ["sim", "<(cat %s)" % ARENA, "--units", "5", "--goal", "10.5,10.5"],
            ["sim", "<(cat %s)" % TOWN, "--units", "5", "--mode", "grid8"],
            ["bake", "<(cat %s)" % TOWN, "-o", "baked.qnm"]):
    p = subprocess.run(["bash", "-c", QN + " " + " ".join(cmd)], capture_output=True, text=True,
                       timeout=60)
    check("process substitution: " + cmd[0], p.returncode == 0, p.stderr)
p = subprocess.run([QN, "info", "-"], input=town_bytes, capture_output=True, timeout=30)
check("info - reads stdin", p.returncode == 0, p.stderr)

# ---- one rule for maps: by content, in every command ------------------------
write("arena-no-ext.txt", arena_bytes.decode())
write("level.map", town_bytes.decode())  # a level with a misleading name
write("bom.map", "\ufeff" + arena_bytes.decode())
write("blank.map", " \n" * 100 + arena_bytes.decode())  # a kind read past the first bytes
for f, kind in ((ARENA, "map"), ("arena-no-ext.txt", "map"), ("level.map", "level"),
                ("bom.map", "map"), ("blank.map", "map")):
    rc, out, err = run(["info", f, "--json"])
    j = one_json("info " + f, out)
    check(f"info {f} is a {kind}", rc == 0 and j.get("kind") == kind and j.get("quads", 0) > 0,
          (rc, err))
goal = ["--goal", "10.5,10.5"]
for cmd in (["info", "arena-no-ext.txt"], ["field", "arena-no-ext.txt"] + goal,
            ["sim", "arena-no-ext.txt", "--units", "20"] + goal,
            ["path", "arena-no-ext.txt", "--from", "3,3", "--to", "40,40"],
            ["compare", "arena-no-ext.txt", "--units", "5"],
            ["render", "arena-no-ext.txt", "--units", "5", "-o", "r.svg"] + goal,
            ["path", "level.map", "--from", "10,10", "--to", "60,45"],
            ["field", "level.map"], ["sim", "level.map", "--units", "5"]):
    rc, _, err = run(cmd)
    check("map or level by content: " + " ".join(cmd[:2]), rc == 0, err)
rc, _, err = run(["sample", "arena-no-ext.txt"] + goal, stdin="10.5 10.5\n")
check("sample on a map", rc == 0, err)
rc, _, err = run(["import-map", "town.json", "-o", "x.json"])
check("import-map of a level: a clear error", rc == 1 and "not a MovingAI map" in err, err)

# ---- sample: one output line per input line, any length ---------------------
long_line = "1.5 1.5" + " " * 5000 + "\n"
lines = "10 10\n" + long_line + "x" * 3000 + "\n" + "12 10\n"
rc, out, err = run(["sample", TOWN], stdin=lines)
outs = out.splitlines()
check("sample: one line out per line in", rc == 0 and len(outs) == 4, outs[:6])
check("sample: the long line is read whole", len(outs) == 4 and outs[2].endswith("invalid") and
      not outs[1].endswith("invalid"), outs)
rc, out, err = run(["sample", TOWN, "--json"], stdin=lines)
j = one_json("sample --json", out)
s = j.get("samples", [])
check("sample --json: one item per line", rc == 0 and j.get("lines") == 4 and len(s) == 4, j)
check("sample --json: invalid line has null x", len(s) == 4 and s[2]["x"] is None and
      s[2]["status"] == "invalid" and s[0]["line"] == 1, s)

# ---- one option parser: unknown options, =value, extra arguments ------------
rc, _, err = run(["info", TOWN, "--units", "5", "--threads", "9"])
check("info --units: usage error naming it", rc == 2 and "--units" in err and
      err.count("\n") == 1, (rc, err))
rc, _, err = run(["info", TOWN, "extra"])
check("extra argument named", rc == 2 and "'extra'" in err, (rc, err))
rc, out, err = run(["field", TOWN, "--goal=60,45", "--json", "--radius=0"])
j = one_json("--goal=X,Y", out)
check("--goal=60,45 accepted", rc == 0 and j.get("goal") == [60, 45] and j.get("radius") == 0,
      (rc, err))
rc, _, err = run(["field", TOWN, "--json=1"])
check("flag with a value", rc == 2 and "--json" in err, (rc, err))
rc, _, err = run(["field", TOWN, "--goal"])
check("missing value", rc == 2 and "--goal" in err, (rc, err))
for cmd in ("info", "field", "sample", "sim", "path", "compare", "render", "scen", "import-map",
            "bench", "demo"):
    rc, _, err = run([cmd, "--no-such-option"], stdin="")
    check(cmd + ": unknown option is a usage error", rc == 2 and "--no-such-option" in err and
          err.count("\n") == 1, (rc, err))

# ---- exit codes: 2 for usage, 1 for bad input --------------------------------
for cmd in (["field", TOWN], ["sample", TOWN], ["sim", TOWN], ["demo"], ["path", TOWN,
            "--from", "10,10", "--to", "60,45"], ["compare", TOWN],
            ["render", TOWN, "-o", "x.svg"]):
    rc, _, err = run(cmd + ["--radius", "abc"], stdin="")
    check(cmd[0] + " --radius abc exits 2", rc == 2 and err.count("\n") == 1, (rc, err))
for cmd in (["compare", TOWN], ["render", TOWN, "-o", "x.svg"], ["field", TOWN],
            ["sim", TOWN], ["compare", ARENA], ["render", ARENA, "-o", "x.svg"],
            ["field", ARENA]):
    rc, _, err = run(cmd + ["--goal", "abc"])
    check(" ".join(cmd[:2]) + " --goal abc exits 2", rc == 2, (rc, err))
for cmd in (["render", ARENA, "-o", "x.svg"], ["field", ARENA], ["sim", ARENA]):
    rc, _, err = run(cmd)
    check(" ".join(cmd[:2]) + " without --goal exits 2", rc == 2 and "--goal" in err, (rc, err))
write("broken.json", '{"format": 1, "quads": [')
for cmd in (["info"], ["field"], ["sim"], ["path", "--from", "1,1", "--to", "2,2"],
            ["compare"], ["render", "-o", "x.svg"]):
    rc, _, err = run([cmd[0], "broken.json"] + cmd[1:])
    check(cmd[0] + " on a broken level exits 1", rc == 1 and err.count("\n") == 1, (rc, err))
for cmd in ("sim", "compare", "render"):
    extra = ["-o", "x.svg"] if cmd == "render" else []
    rc, _, err = run([cmd, TOWN, "--units", "1000001"] + extra)
    check(cmd + ": the same --units limit", rc == 2 and "1000000" in err, (rc, err))

# ---- one default radius ------------------------------------------------------
radii = {}
for cmd in (["field", TOWN, "--json"], ["sim", TOWN, "--units", "5", "--json"],
            ["compare", TOWN, "--units", "5", "--json"]):
    rc, out, _ = run(cmd)
    radii[cmd[0]] = json.loads(out).get("radius") if rc == 0 else None
check("one default radius (0.25)", set(radii.values()) == {0.25}, radii)
rc, _, err = run(["field", TOWN, "--help"])
check("field --help states the default radius", "0.25" in _, _)

# ---- JSON: one object, null for unreachable ----------------------------------
write("islands.json", json.dumps({"format": 1, "name": "islands", "quads": [
    {"rect": [0, 0, 4, 4]}, {"rect": [10, 0, 14, 4]}],
    "goals": [{"name": "g", "at": [1, 1]}]}))
rc, out, err = run(["field", "islands.json", "--json"])
j = one_json("field islands", out)
f = {e["quad"]: e for e in j.get("field", [])}
check("unreachable quad: cost and next null", rc == 0 and f.get(1, {}).get("cost", 0) is None and
      f.get(1, {}).get("next", 0) is None, j)
check("goal quad: next null, cost 0", f.get(0, {}).get("next", 0) is None and
      f.get(0, {}).get("cost") == 0, f.get(0))
rc, out, err = run(["sim", TOWN, "--units", "10", "--step", "0.2", "--json"])
j = one_json("sim json", out)
check("floats written short", j.get("step") == 0.2 and "0.200000" not in out, out)
check("times named by unit", all(k in j for k in ("sample_ns", "build_us")), j)

if os.path.exists("/dev/full"):
    for cmd in (["field", TOWN], ["info", TOWN, "--json"], ["path", TOWN, "--from", "10,10",
                                                            "--to", "60,45"]):
        with open("/dev/full", "w") as full:
            p = subprocess.run([QN] + cmd, stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=60)
        check(cmd[0] + " > /dev/full fails with the reason", p.returncode == 1 and
              "No space left on device" in p.stderr, (p.returncode, p.stderr))
rc, out, _ = run(["bench", "--quick", "--no-grid", "--no-live"])
units = [l.split()[-2:] for l in out.splitlines() if len(l.split()) >= 2]
timed = [(u, k) for u, k in units if u in ("ms", "us", "ns")]
check("bench: every time key names its unit", rc == 0 and timed and
      all("_" + u in k for u, k in timed), timed)

# ---- info: goals and spawns in open quads -----------------------------------
for where, at, status in (("goals", [20, 1], "QN_E_OUTSIDE"), ("spawns", [11, 1], "QN_E_BLOCKED")):
    lv = {"format": 1, "name": "bad-" + where,
          "quads": [{"rect": [0, 0, 4, 4]}, {"rect": [10, 0, 14, 4], "blocked": True}],
          "goals": [{"name": "g", "at": [1, 1]}], "spawns": [{"name": "s", "at": [2, 2]}]}
    lv[where].append({"name": "x", "at": at})
    write("bad.json", json.dumps(lv))
    rc, out, err = run(["info", "bad.json", "--json"])
    j = one_json("info " + where, out)
    check(f"info: a {where[:-1]} outside the open quads is invalid",
          rc == 1 and j.get("valid") is False and j.get("status") == status and
          j.get("path") == where + "[1]", (rc, out, err))

# ---- sim: the step budget -----------------------------------------------------
write("corridor.json", json.dumps({"format": 1, "name": "corridor",
                                   "quads": [{"rect": [0, 0, 500, 1]}],
                                   "goals": [{"name": "end", "at": [499.5, 0.5]}],
                                   "spawns": [{"name": "start", "at": [0.5, 0.5]}]}))
rc, out, err = run(["sim", "corridor.json", "--units", "1", "--spawns", "--step", "0.0001",
                    "--json"], timeout=300)
j = one_json("sim long corridor", out)
check("a unit that merely needs many steps arrives", rc == 0 and j.get("arrived") == 1 and
      j.get("steps", 0) > 4000000, (rc, out, err))
rc, out, err = run(["sim", "corridor.json", "--units", "1", "--spawns", "--step", "0.0001",
                    "--max-steps", "1000", "--json"])
j = one_json("sim --max-steps", out)
check("--max-steps stops it and says so", rc == 0 and j.get("stuck") == 1 and
      j.get("out_of_steps") == 1 and j.get("max_steps") == 1000, out)
rc, _, err = run(["sim", TOWN, "--max-steps", "0"])
check("--max-steps 0 is a usage error", rc == 2, (rc, err))
rc, out, _ = run(["sim", "--help"])
check("sim --help documents the budget", "--max-steps" in out and "budget" in out, out)

# ---- progress lines: on a terminal only ---------------------------------------
rc, out, err = run(["compare", MAZE, "--units", "30"])
check("no progress when stderr is not a terminal", rc == 0 and err == "", err)
rc, out, err = run(["compare", MAZE, "--units", "30"], stderr_tty=True)
check("progress when stderr is a terminal", rc == 0 and "compare:" in err, (rc, err))
check("... and nothing of it on stdout", "compare:" not in out.split("\n")[0][:9] and
      "unit runs" not in out, out[:200])

finish()
