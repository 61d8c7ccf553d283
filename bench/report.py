#!/usr/bin/env python3
"""Turns the runs bench/run.sh collected into docs/benchmarks.md's tables and gnuplot's plots.

    report.py RUNS_DIR [--plots DOCS_DIR]

RUNS_DIR holds one file per run, named KIND.ROUND, or KIND.ROUND.PART for a run of some of a sweep's sizes (a
round's parts make one sweep; run.sh writes them), either followed by .pairN for a round's N-th pair of a comparison
that pairs more than once a round (the collectives): pingpong-{sm,tcp,inproc,procs,procs-cold,network,h2c,tls,tls-floor,...} with
"size<TAB>half_rtt_us<TAB>MB/s" lines, collectives-{ompi,pmpi,pmpi-cold} with "operation<TAB>size<TAB>us" lines,
faces-{fsharp,vb} (the allreduce lines of collectives-pmpi through the F# and Visual Basic faces, run in the
same pairs as the collectives), overlap-{ompi,pmpi} with
"iallreduce<TAB>size<TAB>allreduce_us<TAB>pure_us<TAB>compute_us<TAB>total_us<TAB>overlap_pct" lines,
firstmessages-{ompi,pmpi,pmpiaot} with "last_round_trip<TAB>half_rtt_us[<TAB>methods_compiled<TAB>jit_ms]" lines (one
per window of round trips; pmpiaot: published Native AOT), launch-{ompi,pmpi,pmpiaot}-N (pmpi: the ReadyToRun hello; pmpiaot: the Native AOT one) with a "# wall SECONDS" line
and one "rank<TAB>size<TAB>rss_kb" line per rank, plus
`machine` (one line), `load` (the load average before each round), `reclaim` (the CPU ms the kernel's
memory-reclaim threads had used, before each round and at the end), `placement` (bench/native/placement.c's samples
of how far apart the host had the cores) and `apart` (one "KIND ROUND[.N] FIRST_SIZE APART/KNOWN again|kept" line per
run during which they were apart: run.sh ran it again, or kept it when it had no attempts left). Within a round the
Open MPI and PMPI runs of a comparison ran back to back, in an order that alternates between rounds and pairs, so
each pair gives one ratio per figure; the tables show the median ratio and its min–max over the pairs. Prints Markdown; with
--plots, also writes benchmarks-latency.png, benchmarks-bandwidth.png and benchmarks-launch.png into DOCS_DIR
(gnuplot's pngcairo).
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

# Paths a user compares, each PMPI path against the Open MPI path it should be judged by, and the goals:
# (ratio kind, size range, bound) where a latency goal is PMPI/Open MPI ≤ bound and a bandwidth goal ≥ bound.
PINGPONG_PATHS = [
    ("Same node, two processes: `pmpi run -n 2` (shared memory) beside Open MPI shared memory", "procs", "sm",
     [("latency", 1, 1, 3.0), ("bandwidth", 65536, 16 << 20, 0.5)]),
    ("Same node, two processes, no warm-up (a user's own program: `pmpi run -n 2` without `--jit-warmup`) beside Open MPI shared memory",
     "procs-cold", "sm", [("latency", 1, 1, 3.0), ("bandwidth", 65536, 16 << 20, 0.5)]),
    ("Network path: PMPI's gRPC device (`pmpi run --links network -n 2`) beside Open MPI over TCP loopback", "network", "tcp",
     [("latency", 1, 1, 3.0), ("bandwidth", 1 << 20, 16 << 20, 0.8)]),
    ("In-process device (ranks as threads) beside Open MPI shared memory", "inproc", "sm", []),
]
# TLS against PMPI's own cleartext path, same processes and placement: the cost of encryption. A small message's
# latency is judged here (issue 52: at most 1.5× h2c at 1 B); bandwidth against the crypto floor below, since no TLS
# stack keeps near plaintext bandwidth over loopback (OpenSSL's own keeps 0.3–0.5× of TCP here).
TLS_PATH = ("TLS beside h2c: two rank processes on an address beyond loopback (a network namespace)", "tls", "h2c",
            [("latency", 1, 1, 1.5)])
# TLS against the crypto floor on the same hops: OpenSSL's own TLS between two processes on the namespace's address.
TLS_FLOOR_PATH = ("TLS beside the crypto floor: two rank processes beside OpenSSL's own TLS between two processes on the same address "
                  "(bench/native/tls_pingpong.py)", "tls", "tls-floor", [("bandwidth", 1 << 20, 16 << 20, 0.9)])
# OpenSSL's TLS against plain TCP between two processes, no MPI: what encryption costs natively on this machine,
# the scale for the row above.
NATIVE_TLS_PATH = ("For scale, OpenSSL's own TLS beside plain TCP loopback (bench/native/tls_pingpong.py, no MPI)",
                   "tls-native", "tcp-native", [])
# .NET's SslStream against plain sockets, two threads over TCP loopback, no MPI, at every size: what PMPI's rank
# streams pay for TLS before PMPI adds anything.
DOTNET_TLS_PATH = ("For scale, .NET's own TLS beside plain sockets: SslStream, two threads over TCP loopback (`Pmpi.Bench tlsfloor`, no MPI)",
                   "tls-dotnet", "tcp-dotnet", [])
COLLECTIVE_GOALS = {8: 3.0, 1 << 20: 1.5}   # latency PMPI/Open MPI at most
# A user's first ping-pong (issue 52: "a ping-pong in the rank's first second, no warm-up"): all its round trips
# together, from the first, at most this many times Open MPI's.
FIRST_MESSAGES_GOAL = 3.0
LAUNCH_GOAL_SECONDS, LAUNCH_GOAL_RATIO, RSS_GOAL_MB = 1.5, 3.0, 60

LABELS = {"sm": "Open MPI shared memory", "tcp": "Open MPI TCP", "inproc": "PMPI in-process", "procs": "PMPI shared memory",
          "procs-cold": "PMPI shared memory, no warm-up", "network": "PMPI gRPC",
          "tls": "PMPI two processes, TLS"}
PAIR_NAMES = {"h2c": ("TLS", "h2c"), "tls-floor": ("PMPI TLS", "OpenSSL TLS"), "tcp-native": ("OpenSSL TLS", "TCP"), "tcp-dotnet": ("SslStream", "socket")}   # (ours, theirs) where not PMPI/Open MPI


def size_label(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else (f"{n >> 10} KB" if n >= 1024 else f"{n} B")


def read_runs(directory):
    """{kind: {(round, pair): [lines]}} for every KIND.ROUND[.PART][.pairN] file (pair 1 without it), a pair's parts
    in order of their first size, "[0] " tags dropped."""
    runs = defaultdict(lambda: defaultdict(list))
    names = [m for m in (re.fullmatch(r"([^.]+)\.(\d+)(?:\.(\d+))?(?:\.pair(\d+))?", n) for n in os.listdir(directory)) if m]
    for match in sorted(names, key=lambda m: (m.group(1), int(m.group(2)), int(m.group(4) or 1), int(m.group(3) or 0))):
        with open(os.path.join(directory, match.group(0)), encoding="utf-8") as f:
            runs[match.group(1)][int(match.group(2)), int(match.group(4) or 1)] += [
                re.sub(r"^\[\d+\] ", "", line.rstrip("\n")) for line in f]
    return runs


def table_rows(lines, key_types):
    """{key: value} from tab-separated data lines: the key is the first fields, converted by key_types (one type:
    the key is that value, else a tuple), the value the next field as a float; other lines are skipped."""
    rows = {}
    for line in lines:
        parts = line.split("\t")
        if line.startswith("#") or len(parts) <= len(key_types):
            continue
        try:
            key = tuple(convert(p) for convert, p in zip(key_types, parts))
            rows[key if len(key) > 1 else key[0]] = float(parts[len(key_types)])
        except ValueError:
            continue
    return rows


def spread(values, digits=2):
    """ "median (min–max)" of ratios, or the median alone for one value."""
    if not values:
        return "–"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}×"
    return f"{med:.{digits}f}× ({min(values):.{digits}f}–{max(values):.{digits}f})"


def verdict(values, bound, at_most):
    """Whether the goal was met in every pair, in none, or only in some (a figure that did not reproduce): then
    whether the median, which the tables show and the goal is judged by, met it, and in how many pairs."""
    def meets(v):
        return v <= bound if at_most else v >= bound

    met = [meets(v) for v in values]
    if not met:
        return "–"
    if all(met):
        return "met"
    if not any(met):
        return "missed"
    if meets(statistics.median(values)):
        return f"met by the median, in {sum(met)} of {len(met)} pairs"
    return f"missed by the median, met in {sum(met)} of {len(met)} pairs"


class Report:
    def __init__(self, runs):
        self.runs = runs
        self.lines = []
        self.unreproduced = []
        self.medians = {}   # (kind, size) -> median half round trip, for the plots
        self.launch_medians = {}   # N -> {"ompi": s, "pmpi": s, "pmpiaot": s}, for the plot

    def out(self, text=""):
        self.lines.append(text)

    def paired(self, pmpi_kind, ref_kind, key_types):
        """{key: [(pmpi, reference)]} over the pairs that have both runs."""
        pairs = defaultdict(list)
        for pair, pmpi_lines in self.runs.get(pmpi_kind, {}).items():
            ref_lines = self.runs.get(ref_kind, {}).get(pair)
            if ref_lines is None:
                continue
            ours, theirs = table_rows(pmpi_lines, key_types), table_rows(ref_lines, key_types)
            for key in ours.keys() & theirs.keys():
                pairs[key].append((ours[key], theirs[key]))
        return pairs

    def note_spread(self, what, values):
        if len(values) > 1 and max(values) > 2 * min(values):
            self.unreproduced.append(f"{what}: the pairs' ratios spread more than 2× ({min(values):.2f}–{max(values):.2f}).")

    def note_goal(self, what, values, bound, at_most):
        result = verdict(values, bound, at_most)
        if result not in ("met", "missed"):
            self.unreproduced.append(f"{what}: goal {'≤' if at_most else '≥'} {bound}× {result} "
                                     f"(ratios {min(values):.2f}–{max(values):.2f}).")
        return result

    def pingpong(self):
        for kind in LABELS:
            per_size = defaultdict(list)
            for lines in self.runs.get(f"pingpong-{kind}", {}).values():
                for size, t in table_rows(lines, (int,)).items():
                    per_size[size].append(t)
            for size, times in per_size.items():
                self.medians[kind, size] = statistics.median(times)
        for title, pmpi, ref, goals in PINGPONG_PATHS + [TLS_PATH, TLS_FLOOR_PATH, NATIVE_TLS_PATH, DOTNET_TLS_PATH]:
            pairs = self.paired(f"pingpong-{pmpi}", f"pingpong-{ref}", (int,))
            if not pairs:
                continue
            self.out(f"### {title}")
            self.out()
            ours_name, theirs_name = PAIR_NAMES.get(ref, ("PMPI", "Open MPI"))
            self.out(f"| size | {theirs_name} µs | {ours_name} µs | latency {ours_name}/{theirs_name} | {theirs_name} MB/s "
                     f"| {ours_name} MB/s | bandwidth {ours_name}/{theirs_name} | goal |")
            self.out("|---:|---:|---:|---:|---:|---:|---:|---|")
            for size in sorted(pairs):
                ours = [p for p, _ in pairs[size]]
                theirs = [r for _, r in pairs[size]]
                latency = [p / r for p, r in pairs[size]]
                bandwidth = [r / p for p, r in pairs[size]]
                goal_text = []
                for kind, low, high, bound in goals:
                    if low <= size <= high:
                        values = latency if kind == "latency" else bandwidth
                        mark = "≤" if kind == "latency" else "≥"
                        result = self.note_goal(f"{title}, {size_label(size)} {kind}", values, bound, kind == "latency")
                        goal_text.append(f"{kind} {mark} {bound}×: {result}")
                self.note_spread(f"{title}, {size_label(size)} latency", latency)
                med_ours, med_theirs = statistics.median(ours), statistics.median(theirs)
                self.out(f"| {size_label(size)} | {med_theirs:.2f} | {med_ours:.2f} | {spread(latency)} "
                         f"| {size / med_theirs:.0f} | {size / med_ours:.0f} | {spread(bandwidth)} "
                         f"| {'; '.join(goal_text)} |")
            self.out()

    def collectives(self):
        pairs = self.paired("collectives-pmpi", "collectives-ompi", (str, int))
        if not pairs:
            return
        self.out("### Collectives, 4 ranks on one node: `pmpi run -n 4` beside `mpirun -np 4` (shared memory)")
        self.out()
        # No warm-up: the same program as a user's own runs it, paired with the same Open MPI run.
        cold = self.paired("collectives-pmpi-cold", "collectives-ompi", (str, int))
        self.out("| operation | size | Open MPI µs | PMPI µs | latency PMPI/Open MPI | goal | PMPI no warm-up µs | no warm-up/Open MPI |")
        self.out("|---|---:|---:|---:|---:|---|---:|---:|")
        for (operation, size) in sorted(pairs, key=lambda k: (k[0], k[1])):
            values = pairs[operation, size]
            ratios = [p / r for p, r in values]
            self.note_spread(f"{operation} {size_label(size)}", ratios)
            goal = ""
            if size in COLLECTIVE_GOALS:
                bound = COLLECTIVE_GOALS[size]
                goal = f"≤ {bound}×: {self.note_goal(f'{operation} {size_label(size)}', ratios, bound, True)}"
            cold_values = cold.get((operation, size), [])
            cold_cells = (f"{statistics.median(p for p, _ in cold_values):.2f} | {spread([p / r for p, r in cold_values])}"
                          if cold_values else "– | –")
            self.out(f"| {operation} | {size_label(size)} | {statistics.median(r for _, r in values):.2f} "
                     f"| {statistics.median(p for p, _ in values):.2f} | {spread(ratios)} | {goal} | {cold_cells} |")
        self.out()

    def faces(self):
        """Allreduce through each language's face beside C#'s and Open MPI's, from the same pairs."""
        kinds = {"C#": "collectives-pmpi", "F#": "faces-fsharp", "VB": "faces-vb"}
        per_size = defaultdict(lambda: defaultdict(list))   # size -> face -> [(face µs, Open MPI µs, C# µs)]
        for key, ref_lines in self.runs.get("collectives-ompi", {}).items():
            theirs = table_rows(ref_lines, (str, int))
            ours = {face: table_rows(self.runs.get(kind, {}).get(key, []), (str, int)) for face, kind in kinds.items()}
            for face in ("F#", "VB"):
                for (operation, size), t in ours[face].items():
                    if operation == "allreduce" and (operation, size) in theirs and (operation, size) in ours["C#"]:
                        per_size[size][face].append((t, theirs[operation, size], ours["C#"][operation, size]))
        if not per_size:
            return
        self.out("### Allreduce through each face, 4 ranks: F# (`Mpi.allreduceArray (+)`) and Visual Basic "
                 "(`Allreduce(values, ReduceOperation.Sum)`) beside C# (`Allreduce(values, Operation<double>.Add, ref result)`) and Open MPI")
        self.out()
        self.out("| size | face | Open MPI µs | C# µs | face µs | face/Open MPI | face/C# |")
        self.out("|---:|---|---:|---:|---:|---:|---:|")
        for size in sorted(per_size):
            for face, values in sorted(per_size[size].items()):
                over_ompi = [t / r for t, r, _ in values]
                over_csharp = [t / c for t, _, c in values]
                self.note_spread(f"allreduce {size_label(size)} through the {face} face", over_ompi)
                self.out(f"| {size_label(size)} | {face} | {statistics.median(r for _, r, _ in values):.2f} "
                         f"| {statistics.median(c for _, _, c in values):.2f} | {statistics.median(t for t, _, _ in values):.2f} "
                         f"| {spread(over_ompi)} | {spread(over_csharp)} |")
        self.out()

    def overlap(self):
        """Iallreduce beside computation: each side's times and overlap, medians over the rounds."""
        sides = {}
        for side in ("ompi", "pmpi"):
            rows = defaultdict(list)   # size -> [(allreduce, pure, compute, total, overlap)]
            for lines in self.runs.get(f"overlap-{side}", {}).values():
                for line in lines:
                    parts = line.split("\t")
                    if parts[0] == "iallreduce" and len(parts) == 7:
                        rows[int(parts[1])].append(tuple(float(p) for p in parts[2:]))
            sides[side] = rows
        sizes = sorted(sides["ompi"].keys() & sides["pmpi"].keys())
        if not sizes:
            return
        self.out("### Nonblocking allreduce beside computation, 2 ranks: osu_iallreduce's method (bench/native/overlap.c)")
        self.out()
        self.out("Pure: Iallreduce then Wait; compute: as long as pure, no MPI call; total: Iallreduce, compute, Wait. "
                 "Overlap = 100 (1 − (total − compute) / pure): 100 when the collective completes while the rank computes.")
        self.out()
        self.out("| size | side | Allreduce µs | pure µs | compute µs | total µs | overlap % |")
        self.out("|---:|---|---:|---:|---:|---:|---:|")
        for size in sizes:
            for side, name in (("ompi", "Open MPI"), ("pmpi", "PMPI")):
                columns = list(zip(*sides[side][size]))
                medians = [statistics.median(c) for c in columns]
                overlap = columns[4]
                self.out(f"| {size_label(size)} | {name} | {medians[0]:.2f} | {medians[1]:.2f} | {medians[2]:.2f} | {medians[3]:.2f} "
                         f"| {medians[4]:.0f} ({min(overlap):.0f}–{max(overlap):.0f}) |")
        self.out()

    def first_messages(self):
        """A user's first ping-pong, window by window, and all its round trips together: PMPI as built (with what
        its JIT compiled meanwhile) and published Native AOT, each paired with the same round's Open MPI run."""
        def windows(lines):
            """[(last round trip, half round trip µs, methods compiled, JIT ms)] in order; the counts are None
            where the line has none."""
            rows = []
            for line in lines:
                parts = line.split("\t")
                if not line.startswith("#") and len(parts) >= 2 and parts[0].isdigit():
                    counts = (int(parts[2]), float(parts[3])) if len(parts) >= 4 else (None, None)
                    rows.append((int(parts[0]), float(parts[1])) + counts)
            return rows

        def with_total(rows):
            """{window: µs} with "all" added: the mean over every round trip of the windows."""
            if not rows:
                return {}
            figures = {end: t for end, t, _, _ in rows}
            starts = [0] + [end for end, _, _, _ in rows[:-1]]
            figures["all"] = sum(t * (end - start) for (end, t, _, _), start in zip(rows, starts)) / rows[-1][0]
            return figures

        theirs = {rnd: with_total(windows(lines)) for rnd, lines in self.runs.get("firstmessages-ompi", {}).items()}
        sides = {}
        compiled = defaultdict(list)
        for kind in ("pmpi", "pmpiaot"):
            pairs = defaultdict(list)   # window -> [(PMPI µs, Open MPI µs)]
            for rnd, lines in self.runs.get(f"firstmessages-{kind}", {}).items():
                rows = windows(lines)
                if kind == "pmpi":
                    for end, _, methods, jit_ms in rows:
                        if methods is not None:
                            compiled[end].append((methods, jit_ms))
                for window, t in with_total(rows).items():
                    if window in theirs.get(rnd, {}):
                        pairs[window].append((t, theirs[rnd][window]))
            sides[kind] = pairs
        if not sides["pmpi"]:
            return
        ends = sorted(w for w in sides["pmpi"] if w != "all")
        self.out("### A user's first ping-pong: 1 B from the first message after init, no warm-up "
                 "(bench/Pmpi.Bench.FirstMessages beside bench/native/firstmessages.c)")
        self.out()
        self.out("Each row is a window of the program's round trips, its mean half round trip; the last row is all of them. "
                 "PMPI as `dotnet build` leaves it (JIT-compiled as it runs; beside it, the methods rank 0's JIT compiled "
                 "during the window and the time it spent, medians) and published Native AOT (nothing compiled at run time).")
        self.out()
        self.out("| round trips | Open MPI µs | PMPI µs | PMPI/Open MPI | PMPI compiled (JIT ms) | PMPI Native AOT µs "
                 "| Native AOT/Open MPI | goal |")
        self.out("|---|---:|---:|---:|---:|---:|---:|---|")
        for window, start in zip(ends + ["all"], [0] + ends[:-1] + [0]):
            label = f"all {ends[-1]:,}" if window == "all" else (f"{window:,}" if window == 1 else f"{start + 1:,}–{window:,}")
            ours = sides["pmpi"][window]
            ratios = [p / r for p, r in ours]
            aot = sides["pmpiaot"].get(window, [])
            counts = compiled.get(window, [])
            compiled_text = (f"{statistics.median(m for m, _ in counts):.0f} ({statistics.median(j for _, j in counts):.0f})"
                             if counts else "")
            goal = ""
            if window == "all":
                goal = f"≤ {FIRST_MESSAGES_GOAL}×: {self.note_goal('a user first ping-pong, all its round trips', ratios, FIRST_MESSAGES_GOAL, True)}"
            aot_cells = (f"{statistics.median(p for p, _ in aot):.2f} | {spread([p / r for p, r in aot])}" if aot else "– | –")
            self.out(f"| {label} | {statistics.median(r for _, r in ours):.2f} | {statistics.median(p for p, _ in ours):.2f} "
                     f"| {spread(ratios)} | {compiled_text} | {aot_cells} | {goal} |")
        self.out()

    def launch(self, pmpi_kind, hello):
        counts = sorted({int(k.rsplit("-", 1)[1]) for k in self.runs if k.startswith(f"launch-{pmpi_kind}-")})
        if not counts:
            return
        self.out(f"### Launch: `pmpi run -n N` of a hello beside `mpirun -np N` of the C hello (wall time, whole command; "
                 f"`pmpi` published Native AOT, the hello {hello})")
        self.out()
        self.out("| N | mpirun s | pmpi run s | ratio | per-rank RSS, Open MPI MB | per-rank RSS, PMPI MB | goal |")
        self.out("|---:|---:|---:|---:|---:|---:|---|")
        for n in counts:
            walls = defaultdict(list)
            rss = defaultdict(list)
            ratios = []
            for rnd, lines in self.runs[f"launch-{pmpi_kind}-{n}"].items():
                theirs = self.runs.get(f"launch-ompi-{n}", {}).get(rnd)
                if theirs is None:
                    continue
                pair = {}
                for impl, impl_lines in (("pmpi", lines), ("ompi", theirs)):
                    wall = next((float(l.split()[2]) for l in impl_lines if l.startswith("# wall ")), None)
                    if wall is None:
                        continue
                    pair[impl] = wall
                    walls[impl].append(wall)
                    rss[impl] += [float(l.split("\t")[2]) / 1024 for l in impl_lines
                                  if re.fullmatch(r"\d+\t\d+\t\d+", l)]
                if len(pair) == 2:
                    ratios.append(pair["pmpi"] / pair["ompi"])
            if not ratios:
                continue
            med = {impl: statistics.median(values) for impl, values in walls.items()}
            self.launch_medians.setdefault(n, {})["ompi"] = med["ompi"]
            self.launch_medians[n][pmpi_kind] = med["pmpi"]
            goal = ""
            if n == 16:
                results = verdict(walls["pmpi"], LAUNCH_GOAL_SECONDS, True), verdict(ratios, LAUNCH_GOAL_RATIO, True)
                goal = f"≤ {LAUNCH_GOAL_SECONDS} s: {results[0]}; ≤ {LAUNCH_GOAL_RATIO}×: {results[1]}"
            rss_text = {impl: f"{statistics.median(values):.0f}" if values else "–" for impl, values in rss.items()}
            if rss.get("pmpi"):
                rss_goal = verdict([statistics.median(rss["pmpi"])], RSS_GOAL_MB, True)
                goal = "; ".join(g for g in (goal, f"RSS ≤ {RSS_GOAL_MB} MB: {rss_goal}") if g)
            self.out(f"| {n} | {med['ompi']:.2f} | {med['pmpi']:.2f} | {spread(ratios)} "
                     f"| {rss_text.get('ompi', '–')} | {rss_text.get('pmpi', '–')} | {goal} |")
        self.out()

    def plots(self, docs):
        """Log–log latency and bandwidth against size, one line per path, and launch time against N."""
        data = tempfile.mkdtemp()
        series = []
        for kind, label in LABELS.items():
            sizes = sorted(size for (k, size) in self.medians if k == kind)
            if not sizes:
                continue
            path = os.path.join(data, kind)
            with open(path, "w", encoding="utf-8") as f:
                for size in sizes:
                    t = self.medians[kind, size]
                    f.write(f"{size}\t{t}\t{size / t}\n")
            series.append((path, label))
        common = ("set terminal pngcairo size 900,560 font ',10'; set logscale xy; set grid; set key top left; "
                  "set xlabel 'message size (bytes)'; set format x '%.0s%cB'; ")
        latency = ", ".join(f"'{p}' using 1:2 with linespoints title '{l}'" for p, l in series)
        bandwidth = ", ".join(f"'{p}' using 1:3 with linespoints title '{l}'" for p, l in series)
        scripts = [
            common + f"set output '{docs}/benchmarks-latency.png'; set ylabel 'half round trip (µs)'; "
                     f"set title 'Ping-pong latency (median of the rounds)'; plot {latency}",
            common + f"set output '{docs}/benchmarks-bandwidth.png'; set ylabel 'bandwidth (MB/s)'; "
                     f"set title 'Ping-pong bandwidth (median of the rounds)'; plot {bandwidth}",
        ]
        if self.launch_medians:
            path = os.path.join(data, "launch")
            kinds = [("ompi", "mpirun -np N"), ("pmpi", "pmpi run -n N, ReadyToRun hello"),
                     ("pmpiaot", "pmpi run -n N, Native AOT hello")]
            with open(path, "w", encoding="utf-8") as f:
                for n, med in sorted(self.launch_medians.items()):
                    f.write("\t".join([str(n)] + [str(med.get(kind, "NaN")) for kind, _ in kinds]) + "\n")
            lines = ", ".join(f"'{path}' using 1:{column} with linespoints title '{title}'"
                              for column, (_, title) in enumerate(kinds, start=2))
            scripts.append(
                "set terminal pngcairo size 900,560 font ',10'; set grid; set key top left; "
                f"set output '{docs}/benchmarks-launch.png'; set xlabel 'ranks (N)'; set ylabel 'wall time (s)'; "
                f"set title 'Launch of a hello on one node (median of the rounds)'; plot {lines}")
        for script in scripts:
            subprocess.run(["gnuplot", "-e", script], check=True, timeout=60)


def placement(directory):
    """A sentence on the host's placement of the cores during the rounds, from run.sh's `placement` and `apart`
    (the same bound as run.sh: apart above 2.5 times the fastest tenth of the samples), or nothing without them."""
    try:
        with open(os.path.join(directory, "placement"), encoding="utf-8") as f:
            samples = sorted(int(fields[2]) for fields in (line.split("\t") for line in f)
                             if len(fields) == 3 and fields[2].strip().isdigit())
        with open(os.path.join(directory, "apart"), encoding="utf-8") as f:
            runs_apart = [line.split() for line in f if line.strip()]
    except FileNotFoundError:
        return ""
    if not samples:
        return ""
    bound = 2.5 * samples[(len(samples) - 1) // 10]
    near = [v for v in samples if v <= bound]
    far = [v for v in samples if v > bound]
    text = (f" The host had the cores apart in {100 * len(far) / len(samples):.0f} % of {len(samples):,} samples "
            f"(bench/native/placement.c: a cache line's round trip between two cores, median {statistics.median(near):.0f} ns "
            f"near" + (f", {statistics.median(far):.0f} ns apart" if far else "") + ")")
    kept = [f"{kind} round {rnd.replace('.', ', pair ')}" + (f" from {size_label(int(size))}" if size.isdigit() else "")
            for kind, rnd, size, _, outcome in runs_apart if outcome == "kept"]
    again = len(runs_apart) - len(kept)
    outcomes = [f"{again} runs ran again because the cores were apart during them"] if again else []
    if kept:
        outcomes.append(f"{len(kept)} are in the tables though the cores were apart during them ({', '.join(kept)})")
    text += "; " + (", and ".join(outcomes) if outcomes else "no run had them apart") + "."
    return text


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    directory = args[0]
    docs = args[args.index("--plots") + 1] if "--plots" in args else None
    runs = read_runs(directory)
    report = Report(runs)
    with open(os.path.join(directory, "machine"), encoding="utf-8") as f:
        machine = f.read().strip()
    with open(os.path.join(directory, "load"), encoding="utf-8") as f:
        loads = [float(line.split()[0]) for line in f if line.strip()]
    rounds = max((rnd for r in runs.values() for rnd, _ in r), default=0)
    collective_pairs = max((p for _, p in runs.get("collectives-pmpi", {})), default=1)
    reclaim = ""
    reclaim_path = os.path.join(directory, "reclaim")
    if os.path.exists(reclaim_path):
        with open(reclaim_path, encoding="utf-8") as f:
            marks = [int(line) for line in f if line.strip()]
        taken = [later - earlier for earlier, later in zip(marks, marks[1:])]
        if taken:
            reclaim = (f"; the kernel's memory reclaim (kdamond, kswapd) took {', '.join(f'{ms:,} ms' for ms in taken)} "
                       "of CPU in them")
    report.out(f"Machine: {machine}. {rounds} rounds; the 1-minute load average at the start of each round: "
               f"{', '.join(f'{l:.2f}' for l in loads)}{reclaim}.{placement(directory)} Ratios are PMPI over Open MPI for time (below 1: "
               "PMPI faster) and Open MPI over PMPI for bandwidth turned round (above 1: PMPI faster): the median of "
               "the back-to-back pairs, with its min–max" +
               (f" (one pair a round; the collectives {collective_pairs})" if collective_pairs > 1 else "") + ".")
    report.out()
    report.pingpong()
    report.collectives()
    report.faces()
    report.overlap()
    report.first_messages()
    report.launch("pmpi", "ReadyToRun (bench/Pmpi.Bench.Hello.ReadyToRun)")
    report.launch("pmpiaot", "Native AOT (bench/Pmpi.Bench.Hello)")
    report.out("### Figures that did not reproduce")
    report.out()
    if report.unreproduced:
        for line in report.unreproduced:
            report.out(f"- {line}")
    else:
        report.out("- None: every goal was met in all pairs or missed in all, and no ratio spread more than 2×.")
    print("\n".join(report.lines))
    if docs:
        report.plots(docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
