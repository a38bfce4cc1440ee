#!/usr/bin/env python3
"""Seeds a fuzz target's corpus from the repository's fixtures.

    seeds.py ROOT TARGET DIR

Each seed is written as DIR/seed-<sha1 of its bytes>, so seeding again adds nothing new.
Targets whose input starts with a selector byte (see fuzz/fuzz_targets/) get it here.
"""

import glob
import hashlib
import os
import sqlite3
import struct
import sys
import tempfile

MAX_LEN = 65536  # scripts/fuzz.sh's -max_len


def files(root, *patterns):
    out = []
    for p in patterns:
        out += sorted(glob.glob(os.path.join(root, p), recursive=True))
    def ours(f):
        rel = os.path.relpath(f, root)
        return not rel.startswith(("fuzz/", "target/")) and "/target/" not in rel

    return [f for f in out if ours(f)]


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def wml(root):
    pats = ["workloads/*.f", "crates/**/*.f"]
    corpus = os.environ.get("IOLAB_FILEBENCH_CORPUS")
    if corpus:
        pats.append(os.path.join(corpus, "*.f"))
    return [read(f) for f in files(root, *pats)]


def experiment(root):
    return [read(f) for f in files(root, "examples/**/*.toml", "crates/iolab-experiment/tests/**/*.toml")]


def file_list(root):
    return [(b"\x01" if "day" in os.path.basename(f) else b"\x00") + read(f)
            for f in files(root, "examples/**/*.list", "crates/**/*.list")]


def trace_iolab(root):
    # Version 1 (crates/iolab-tracefile/src/iolab.rs): a 96-byte header, 32-byte records.
    def header(count):
        h = bytearray(96)
        h[0:8] = b"IOLABTRC"
        h[8:14] = struct.pack("<HHH", 1, 96, 32)
        h[16:28] = struct.pack("<III", 512, 7, 0)
        h[32:48] = struct.pack("<QQ", 1000, count)
        h[64:68] = b"vda\0"
        return bytes(h)

    recs = b""
    for i, op in enumerate([0, 1, 2, 3, 4, 5, 1, 0]):
        lat = 2**64 - 1 if i == 3 else 100 * i
        recs += struct.pack("<QQQIBBH", 10 * i, 4096 * i, lat, 4096 if op != 2 else 0, op, i * 9 % 64, 0)
    return [header(8) + recs, header(2**64 - 1) + recs, header(3) + recs[:3 * 32 + 5]]


def trace_oracle(root):
    out = []
    for f in files(root, "crates/**/*.oracleGeneral"):
        data = read(f)[: MAX_LEN - 1]
        out += [b"\x00" + data, b"\x01" + data[: 24 * 20]]
    return out


def trace_csv(root):
    out = []
    for f in files(root, "crates/**/*.csv", "examples/**/*.csv"):
        data = read(f)
        # iolab's default columns, then libCacheSim's spelling of the same spec.
        out.append(b"\n" + data[:8192])
        out.append(b"time-col=1,obj-id-col=2,obj-size-col=3,header=true,delimiter=,\n" + data[:4096])
    return out


# iolab-tools' ADAPTERS order.
TOOLS = ["fio", "iperf3", "sysbench", "unixbench", "bonnie", "iozone", "filebench", "generic"]


def tool_output(root):
    out = []
    for i, tool in enumerate(TOOLS):
        base = os.path.join(root, "crates/iolab-tools/testdata", tool)
        stems = sorted({os.path.splitext(f)[0] for f in glob.glob(base + "/*") if not f.endswith(".md")})
        for s in stems:
            file1 = read(s + ".json") or read(s + ".csv") or read(s + ".yaml")
            parts = [read(s + ".stdout"), read(s + ".stderr"), file1, read(s + ".report")]
            out.append(bytes([i, 0]) + b"\0".join(parts))
    return out


# fuzz_targets/proc.rs's PARSERS order, by fixture name.
PROC = [
    ("diskstats", 0), ("stat_a", 2), ("stat_b", 2), ("_stat.txt", 2), ("vmstat", 3),
    ("pressure", 4), ("pid_status", 5), ("self_status", 5), ("pid_stat", 6), ("self_stat", 6),
    ("cpuinfo", 7), ("meminfo", 12), ("mountinfo", 13),
]
PROC_TEXT = [
    (1, b"  100 0 800 50 20 0 160 10 0 60 60 0 0 0 0 0 0\n"),
    (8, b'NAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n'),
    (9, b"12345.67 23456.78\n"),
    (10, b"cpu  1 2 3 4\nbtime 1700000000\n"),
    (11, b"mq-deadline kyber [none]\n"),
    (14, b"0-3,5,7-8\n"),
    (15, b"Filename\tType\tSize\tUsed\tPriority\n/dev/vda2 partition 1000 0 -2\n"),
    (16, b"259:3\n"),
    (17, b"/var/tmp/img (deleted)\n"),
]


def proc(root):
    out = [bytes([i]) + t for i, t in PROC_TEXT]
    for f in files(root, "crates/iolab-monitor/tests/fixtures/**/*.txt", "crates/iolab-sys/tests/fixtures/**/*"):
        if not os.path.isfile(f):
            continue
        name = os.path.basename(f)
        for key, i in PROC:
            if key in name:
                out.append(bytes([i]) + read(f))
                break
    return out


def db_import(root):
    """Databases of every schema version (the frozen migrations), each with a row in every
    table where one fits, so that import has experiments to copy."""
    migrations = files(root, "crates/iolab-store/tests/data/schema_v*.sql")
    migrations.sort(key=lambda f: int(os.path.basename(f)[8:-4]))
    out = []
    with tempfile.TemporaryDirectory() as d:
        for n in range(1, len(migrations) + 1):
            path = os.path.join(d, f"v{n}.db")
            c = sqlite3.connect(path)
            # Small pages keep a database of every table within -max_len.
            c.execute("PRAGMA page_size = 512")
            for m in migrations[:n]:
                c.executescript(read(m).decode())
            c.execute(f"PRAGMA user_version = {n}")
            fill(c)
            c.commit()
            c.execute("VACUUM")
            c.close()
            out.append(read(path))
    return out


def fill(c):
    tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    # A few passes, so that a table whose references are filled later still gets its row.
    for _ in range(3):
        for t in tables:
            if c.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]:
                continue
            cols = c.execute(f'PRAGMA table_info("{t}")').fetchall()
            values = []
            for _cid, name, typ, _notnull, _default, _pk in cols:
                typ = (typ or "").upper()
                if name == "status":
                    values.append("done")
                elif "INT" in typ:
                    values.append(1)
                elif "REAL" in typ:
                    values.append(1.5)
                elif "BLOB" in typ:
                    values.append(b"x")
                elif name.endswith("json"):
                    values.append("{}")
                else:
                    values.append(name)
            names = ", ".join(f'"{col[1]}"' for col in cols)
            marks = ", ".join("?" for _ in cols)
            try:
                c.execute(f'INSERT INTO "{t}" ({names}) VALUES ({marks})', values)
            except sqlite3.Error:
                pass


def main():
    root, target, out = sys.argv[1:4]
    seeds = globals()[target](root)
    if not seeds:
        sys.exit(f"seeds.py: no seeds for {target}")
    os.makedirs(out, exist_ok=True)
    for s in seeds:
        s = s[:MAX_LEN]
        name = os.path.join(out, "seed-" + hashlib.sha1(s).hexdigest())
        if not os.path.exists(name):
            with open(name, "wb") as f:
                f.write(s)


if __name__ == "__main__":
    main()
