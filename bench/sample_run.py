#!/usr/bin/env python3
"""Samples a running `volley run` and the processes under it until it exits (used by
bench/many_connections.sh).

usage: sample_run.py PID OUT.json [INTERVAL_S (0.5)]
       sample_run.py --still-running OUT.json   (prints the PIDs of the processes it saw that
                                                 are still running: same PID, same start time)

Every INTERVAL_S: the kernel's socket counts and memory (/proc/net/sockstat: TCP inuse, orphan,
tw, alloc, mem in pages), the connection-tracking count when the kernel tracks connections
(/proc/sys/net/netfilter/nf_conntrack_count), and every process under PID (the master, its child
processes, the local slave and its children): its role, and its anonymous resident memory
(RssAnon: heap, stacks, what malloc holds; no shared library pages) and peak resident memory
(VmHWM). Writes {"samples": [...], "processes": {pid: {...}}} to OUT.json when PID is gone. Reads
/proc only; starts and stops nothing.
"""
import json
import os
import sys
import time


def sockstat():
    out = {}
    with open("/proc/net/sockstat") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name != "TCP":
                continue
            words = rest.split()
            out = {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}
    return out


def conntrack():
    try:
        with open("/proc/sys/net/netfilter/nf_conntrack_count") as f:
            return int(f.read())
    except OSError:
        return None


def parents():
    """pid -> ppid for every process now."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        out[int(name)] = int(fields[1])
    return out


def descendants(root, ppid_of):
    children = {}
    for pid, ppid in ppid_of.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def start_time(pid):
    """When process `pid` started (clock ticks after boot), or None once it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    return None if fields[0] == "Z" else int(fields[19])


def status(pid):
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("RssAnon", "VmHWM"):
                    values[key] = int(rest.split()[0]) * 1024
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            values["cmdline"] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    return values


def role(pid, root, ppid_of, cmdline, roles):
    if pid == root:
        return "master"
    parent = roles.get(ppid_of.get(pid))
    if "--exit-with-parent" in cmdline:
        return "slave relay"
    if parent == "master":
        return "master child"
    if parent == "slave relay":
        return "slave child"
    return "other"


def still_running(path):
    with open(path) as f:
        seen = json.load(f)["processes"]
    alive = [pid for pid, p in seen.items()
             if p.get("start") is not None and start_time(int(pid)) == p["start"]]
    print(" ".join(alive))


def main():
    if sys.argv[1] == "--still-running":
        still_running(sys.argv[2])
        return
    root, out_path = int(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
    samples, processes, roles = [], {}, {}
    while os.path.exists(f"/proc/{root}"):
        now = time.time()
        sample = {"t": now, "tcp": sockstat(), "conntrack": conntrack()}
        ppid_of = parents()
        for pid in descendants(root, ppid_of):  # each parent before its children
            values = status(pid)
            if values is None:
                continue
            roles.setdefault(pid, role(pid, root, ppid_of, values["cmdline"], roles))
            p = processes.setdefault(
                str(pid), {"role": roles[pid], "cmdline": values["cmdline"], "first_seen": now,
                           "start": start_time(pid), "rss_anon_max": 0, "hwm": 0})
            p["last_seen"] = now
            p["rss_anon_max"] = max(p["rss_anon_max"], values.get("RssAnon", 0))
            p["hwm"] = max(p["hwm"], values.get("VmHWM", 0))
        samples.append(sample)
        time.sleep(interval)
    with open(out_path, "w") as f:
        json.dump({"samples": samples, "processes": processes}, f)


if __name__ == "__main__":
    main()
