#!/usr/bin/env python3
"""An 8 s ping-pong (2 strands, a fixed data port) against a fresh `volley serve`, alone and
then with 500 idle data connections from 127.0.0.2 opened on its data port as the run starts:
each run's wall time and exit status, and how many of the 500 are still open 14 s after they
connected. The figures in docs/security.md; tests/faults/strangers_test.cpp checks the same
with 1 s steps. Usage: tests/faults/idle_strangers.py [VOLLEY_BINARY] (default build/src/volley)"""
import os, socket, subprocess, sys, tempfile, threading, time

volley = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "src", "volley")
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

ctl, data = free_port(), free_port()
serve = subprocess.Popen([volley, "serve", "--listen", f"127.0.0.1:{ctl}"], stderr=subprocess.DEVNULL)
time.sleep(0.5)
prof = tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False)
prof.write(f"""<?xml version="1.0"?>
<profile name="pp"><group nthreads="2">
<transaction iterations="1"><flowop type="connect" options="remotehost=127.0.0.1 protocol=tcp port={data}"/></transaction>
<transaction duration="8s"><flowop type="write" options="size=64"/><flowop type="read" options="size=64"/></transaction>
<transaction iterations="1"><flowop type="disconnect"/></transaction>
</group></profile>""")
prof.close()

def run():
    t = time.time()
    r = subprocess.run([volley, "run", prof.name, "-P", str(ctl), "-q"], capture_output=True, text=True)
    return time.time() - t, r.returncode, r.stderr.strip()[-200:]

def flood(n, out):
    socks = []
    while len(socks) < n:
        s = socket.socket(); s.bind(("127.0.0.2", 0)); s.settimeout(0.2)
        try:
            s.connect(("127.0.0.1", data)); socks.append(s)
        except OSError:
            s.close(); time.sleep(0.002)
    out["connected_at"] = time.time(); out["socks"] = socks

try:
    took, rc, err = run()
    print(f"without strangers: {took:.1f} s, exit {rc} {err}")
    out = {}
    th = threading.Thread(target=flood, args=(500, out)); th.start()
    took, rc, err = run()
    th.join()
    print(f"with 500 idle strangers: {took:.1f} s, exit {rc} {err}")
    wait = out["connected_at"] + 14 - time.time()
    if wait > 0: time.sleep(wait)
    still = 0
    for s in out["socks"]:
        s.setblocking(False)
        try:
            b = s.recv(1)
            if b: still += 1
        except BlockingIOError:
            still += 1
        except OSError:
            pass
    print(f"still open 14 s after they connected: {still} of 500")
finally:
    serve.terminate(); serve.wait()
    os.unlink(prof.name)
