"""Reports of tools/perf/run: raw CSV, markdown tables, gnuplot chart.

Kept apart from the runner so that a report can be rebuilt from a CSV
(`python3 tools/perf/perfreport.py results/latest.csv`) without rerunning
the benchmark, e.g. after changing the chart. A run has one or two fronts
(HTTP/1.1 with ab, HTTP/2 over TLS with h2load); their rows are reported
apart, each variant compared with Apache alone on the same front.
"""

import csv
import datetime
import hashlib
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys

FIELDS = ("round", "front", "workload", "concurrency", "clients", "streams", "variant",
          "requests", "complete", "failed", "non2xx", "keepalive", "seconds", "rps", "mean_ms",
          "apache_cpu_s", "cpu_us", "backend_cpu_us", "capped", "failed_detail")

CHART_LABELS = {
    "get": "GET\\nbrowser headers",
    "json-1k": "POST JSON\\n1 KB",
    "json-27k": "POST JSON\\n27.5 KB",
    "form-1k": "POST form\\n1 KB",
}

WORKLOAD_LABELS = {
    "get": "GET, browser headers",
    "json-1k": "POST 1 KB JSON",
    "json-27k": "POST 27.5 KB JSON",
    "form-1k": "POST 1 KB urlencoded",
}

# Fronts in report order: heading, what the load generator does, chart panel title.
FRONTS = {
    "h1": ("HTTP/1.1, plain TCP (`ab -k`)",
           "HTTP/1.1 keep-alive connections on plain TCP, `ab -k -c C` (C requests in flight)",
           "HTTP/1.1, ab -k"),
    "h2tls": ("HTTP/2 over TLS (`h2load`)",
              "HTTP/2 on TLS 1.3 (mod_ssl, ALPN h2, mod_http2), `h2load -c C -m M`: C "
              "connections with up to M streams each (C×M requests in flight; 4×8 is "
              "comparable to ab's 32). TLS handshakes happen once per connection per run",
              "HTTP/2 + TLS, h2load"),
}


def _cmd(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _pkg(name):
    return _cmd(["dpkg-query", "-W", "-f=${Version}", name]) or "not installed"


def machine_info(module_so):
    """What the numbers depend on, for the report's header."""
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) // 1024
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    info = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": "%s, %d logical CPUs, %d MiB RAM" % (cpu, os.cpu_count(), mem),
        "os": "%s, kernel %s" % (_cmd(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"])
                                 or platform.platform(), platform.release()),
        "apache": "%s (mpm_event), ab %s, h2load %s, OpenSSL %s"
                  % (_pkg("apache2"), _pkg("apache2-utils"), _pkg("nghttp2-client"),
                     _pkg("libssl3")),
        "modsec2": "libapache2-mod-security2 %s, modsecurity-crs %s"
                   % (_pkg("libapache2-mod-security2"), _pkg("modsecurity-crs")),
        "load_before": load,
    }
    if module_so and os.path.exists(module_so):
        with open(module_so, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:12]
        mtime = datetime.datetime.fromtimestamp(os.path.getmtime(module_so))
        info["bulwark"] = "%s (sha256 %s…, built %s)" % (module_so, digest,
                                                          mtime.strftime("%Y-%m-%d %H:%M"))
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    head = _cmd(["git", "-C", repo, "rev-parse", "--short", "HEAD"])
    info["git"] = head or "no commit yet"
    return info


# --------------------------------------------------------------------------
# Aggregation

def normalise(rows):
    """Rows of a CSV written before fronts existed are HTTP/1.1 runs of ab."""
    for r in rows:
        r["front"] = r.get("front") or "h1"
        r["clients"] = int(float(r.get("clients") or r["concurrency"]))
        r["streams"] = int(float(r.get("streams") or 1))
    return rows


def load_key(r):
    return (r["front"], int(r["clients"]), int(r["streams"]))


def medians(rows):
    """{(variant, workload, front, clients, streams): {metric: median}} over the rounds."""
    groups = {}
    for r in rows:
        groups.setdefault((r["variant"], r["workload"]) + load_key(r), []).append(r)
    out = {}
    for key, rs in groups.items():
        out[key] = {m: statistics.median(float(r[m]) for r in rs)
                    for m in ("rps", "mean_ms", "cpu_us", "backend_cpu_us")}
        out[key]["runs"] = len(rs)
        out[key]["non2xx"] = sum(float(r["non2xx"]) for r in rs)
        out[key]["failed"] = sum(float(r["failed"]) for r in rs)
        out[key]["complete"] = sum(float(r["complete"]) for r in rs)
        out[key]["capped"] = sum(int(float(r["capped"])) for r in rs)
        out[key]["rps_min"] = min(float(r["rps"]) for r in rs)
        out[key]["rps_max"] = max(float(r["rps"]) for r in rs)
    return out


def order(rows, key, known):
    seen = []
    for k in known:
        if any(r[key] == k for r in rows):
            seen.append(k)
    return seen


def loads_of(rows, front):
    """(clients, streams) of one front, by requests in flight."""
    return sorted({load_key(r)[1:] for r in rows if r["front"] == front},
                  key=lambda cm: (cm[0] * cm[1], cm[0]))


def conc_cell(front, cm):
    return "%d" % cm[0] if front == "h1" else "%d × %d" % cm


def conc_head(front):
    return "c" if front == "h1" else "clients × streams"


def conc_text(front, cm):
    """'c=32' or 'c=4 m=8', as the terminal and the check warnings say it."""
    return "c=%d" % cm[0] if front == "h1" else "c=%d m=%d" % cm


def fmt_rps(x):
    return "%.0f" % x if x >= 100 else "%.1f" % x if x >= 10 else "%.2f" % x


def fmt_ratio(x):
    return "%.2fx" % x if x >= 0.1 else "%.3fx" % x if x >= 0.001 else "%.4fx" % x


class View:
    """What the tables of one front show: its variants, workloads, loads."""

    def __init__(self, rows, front, variants_def):
        rows = [r for r in rows if r["front"] == front]
        self.front = front
        self.med = medians(rows)
        self.variants = order(rows, "variant", variants_def)
        self.workloads = order(rows, "workload", WORKLOAD_LABELS)
        self.loads = loads_of(rows, front)
        self.labels = {v: variants_def[v][0] for v in self.variants}

    def get(self, v, w, cm):
        return self.med.get((v, w, self.front) + tuple(cm))


def views(rows, variants_def):
    return [View(rows, f, variants_def) for f in order(rows, "front", FRONTS)]


# --------------------------------------------------------------------------
# Markdown

def md_summary(vw):
    # Bulwark's and mod_security2's CRS PL1 side by side: the issue's goal.
    vs = "crs-pl1" in vw.variants and "modsec2" in vw.variants
    head = "| workload | %s | %s |" % (conc_head(vw.front),
                                       " | ".join(vw.labels[v] for v in vw.variants))
    head += " CRS PL1: Bulwark / mod_security2 |" if vs else ""
    lines = [head, "|---|--:|" + "--:|" * (len(vw.variants) + vs)]
    for w in vw.workloads:
        for cm in vw.loads:
            base = vw.get("none", w, cm)
            cells = []
            for v in vw.variants:
                m = vw.get(v, w, cm)
                if not m:
                    cells.append("–")
                elif v == "none" or not base:
                    cells.append(fmt_rps(m["rps"]))
                else:
                    cells.append("%s (%s)" % (fmt_rps(m["rps"]), fmt_ratio(m["rps"] / base["rps"])))
            if vs:
                b, m = vw.get("crs-pl1", w, cm), vw.get("modsec2", w, cm)
                cells.append("%.1fx" % (b["rps"] / m["rps"]) if b and m else "–")
            lines.append("| %s | %s | %s |" % (WORKLOAD_LABELS.get(w, w), conc_cell(vw.front, cm),
                                               " | ".join(cells)))
    return lines


def md_detail(vw):
    lines = ["| workload | %s | variant | req/s | × alone | mean latency ms | Apache CPU µs/req"
             " | WAF CPU µs/req | runs | req/s min–max |" % conc_head(vw.front),
             "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|"]
    for w in vw.workloads:
        for cm in vw.loads:
            base = vw.get("none", w, cm)
            for v in vw.variants:
                m = vw.get(v, w, cm)
                if not m:
                    continue
                ratio = fmt_ratio(m["rps"] / base["rps"]) if base else "–"
                extra = "%.0f" % (m["cpu_us"] - base["cpu_us"]) if base and v != "none" else "–"
                flag = " ⚠ %d non-2xx" % m["non2xx"] if m["non2xx"] else ""
                lines.append("| %s | %s | %s%s | %s | %s | %.2f | %.0f | %s | %d | %s–%s |"
                             % (WORKLOAD_LABELS.get(w, w), conc_cell(vw.front, cm), vw.labels[v],
                                flag, fmt_rps(m["rps"]), ratio, m["mean_ms"], m["cpu_us"], extra,
                                m["runs"], fmt_rps(m["rps_min"]), fmt_rps(m["rps_max"])))
    return lines


def md_checks(checks, vw):
    if not checks:
        return ["(no check results: report rebuilt from a CSV)"]
    lines = ["| workload | " + " | ".join(vw.labels[v] for v in vw.variants) + " |",
             "|---|" + "---|" * len(vw.variants)]
    for w in vw.workloads:
        cells = []
        for v in vw.variants:
            status, ids = checks.get((vw.front, v, w), (0, []))
            cell = str(status or "no answer")
            if ids:
                cell += " (logged: %s)" % ", ".join(ids)
            if status != 200:
                cell = "**%s**" % cell
            cells.append(cell)
        lines.append("| %s | %s |" % (WORKLOAD_LABELS.get(w, w), " | ".join(cells)))
    return lines


def md_commands(commands, front):
    """The load generator's exact command per workload and concurrency."""
    mine = [c for c in commands if c[0] == front]
    if not mine:
        return []
    return (["Load-generator commands (PORT: that variant's Apache; N: the request count sized"
             " by calibration, in the CSV's `requests`; `*.body`: the body of the recorded"
             " request):", "", "```sh"] + [cmd for _, _, _, cmd in mine] + ["```", ""])


def md_front(vw, checks, commands):
    heading, how, _ = FRONTS[vw.front]
    L = ["## %s" % heading, "", how + ".", "",
         "### Requests per second (ratio to Apache alone on this front)", ""]
    L += md_summary(vw)
    L += ["", "### Detail", ""]
    L += md_detail(vw)
    L += ["", "### Check: status of one request per variant and workload", ""]
    L += md_checks(checks, vw)
    L += [""] + md_commands(commands, vw.front)
    return L


def write_md(path, png_name, csv_name, rows, checks, variants_def, command, info, params,
             commands=()):
    vws = views(rows, variants_def)
    bad = [key for vw in vws for key, m in vw.med.items() if m["non2xx"] or m["failed"]]
    L = ["# Bulwark perf: Apache alone vs Bulwark vs mod_security2", "",
         "Generated by `tools/perf/run` (see `tools/perf/README.md`). Command:", "",
         "```sh", command, "```", "",
         "Reverse proxy (Apache mpm_event) to a one-thread C backend on loopback; %s;"
         " variants interleaved, forwards and backwards in turn (A B C D E, E D C B A, …), within each workload, front and"
         " concurrency. Fronts: %s." % (params, "; ".join(FRONTS[vw.front][0] for vw in vws)), "",
         "![requests per second](%s)" % png_name, "",
         "Mean latency is the load generator's: ab's mean time per request (concurrency × time"
         " / requests), h2load's mean *time for request* (stream open to response end). CPU is"
         " utime+stime of all Apache processes (`/proc/<pid>/stat`) over the run, per completed"
         " request; *WAF CPU* is that minus Apache alone's for the same workload, front and"
         " concurrency. Every workload is benign: each variant must answer 200 (rule ids that"
         " logged below the blocking threshold are listed in the checks).", ""]
    for vw in vws:
        L += md_front(vw, checks, commands)
    if bad:
        L += ["**Warning:** non-2xx or failed responses in %d measurement(s): %s"
              % (len(bad), ", ".join("%s/%s/%s %s" % (v, w, f, conc_text(f, (c, m)))
                                     for v, w, f, c, m in bad)), ""]
    L += ["## Machine", ""] + ["- %s: %s" % (k, v) for k, v in info.items()]
    L += ["", "Raw runs: [%s](%s)." % (csv_name, csv_name), ""]
    with open(path, "w") as f:
        f.write("\n".join(L))


# --------------------------------------------------------------------------
# Chart

GNUPLOT = r"""
set terminal pngcairo size %(width)d,%(height)d font "DejaVu Sans,11" noenhanced
set output "%(png)s"
set multiplot layout %(rows)d,%(cols)d title "%(title)s"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.95
set logscale y
set yrange [%(ymin)g:%(ymax)g]
set xrange [-0.6:%(xmax)g]
set format y "%%.0f"
set grid ytics
set ylabel "requests/s (log scale)"
set key top center horizontal maxrows 2 samplen 2 font ",10"
set xtics font ",10" nomirror
set bmargin 4
%(panels_text)s
unset multiplot
"""


def _panel(data, index, vw, cm, variants_def):
    n = len(vw.variants)
    plots = ["'%s' index %d using %d:xtic(1) title '%s'" % (data, index, j + 2, variants_def[v][0])
             for j, v in enumerate(vw.variants)]
    plots += ["'%s' index %d using ($0+(%d.0-%g)/%g.0):%d:(column(%d) >= 100 ? "
              "sprintf('%%.0f', column(%d)) : sprintf('%%.1f', column(%d))) with labels "
              "rotate left offset 0,0.3 font ',8' notitle"
              % (data, index, j, (n - 1) / 2.0, n + 1, j + 2, j + 2, j + 2, j + 2)
              for j in range(n)]
    if vw.front == "h1":
        title = "%s, concurrency %d" % (FRONTS[vw.front][2], cm[0])
    else:
        title = "%s, %d client%s x %d stream%s" % (FRONTS[vw.front][2], cm[0], "s" * (cm[0] > 1),
                                                   cm[1], "s" * (cm[1] > 1))
    return 'set title "%s"\nplot %s' % (title, ", \\\n  ".join(plots))


def write_png(path, rows, variants_def):
    """Clustered bars: one panel per front and concurrency (a row of panels
    per front), one cluster per workload, one bar per variant, value on top."""
    vws = views(rows, variants_def)
    if not shutil.which("gnuplot"):
        print("perf: gnuplot not found: no chart (apt-get install gnuplot-nox)", file=sys.stderr)
        return None
    vals = [m["rps"] for vw in vws for m in vw.med.values() if m["rps"] > 0] or [1]
    # Whole decades, with one to spare on top for the key and the values.
    ymin = 10 ** math.floor(math.log10(min(vals)))
    ymax = 10 ** (math.floor(math.log10(max(vals))) + 2)
    data = path + ".dat"
    panels, index = [], 0
    with open(data, "w") as f:
        for vw in vws:
            for cm in vw.loads:
                f.write("# %s %s\n" % (vw.front, conc_text(vw.front, cm)))
                for w in vw.workloads:
                    cells = ["%.4f" % vw.get(v, w, cm)["rps"] if vw.get(v, w, cm) else "NaN"
                             for v in vw.variants]
                    f.write('"%s" %s\n' % (CHART_LABELS.get(w, w), " ".join(cells)))
                f.write("\n\n")
                panels.append(_panel(data, index, vw, cm, variants_def))
                index += 1
            # Pad a short row so that each front starts a row of its own.
            cols = max(len(v.loads) for v in vws)
            panels += ["set multiplot next"] * (cols - len(vw.loads))
    cols = max(len(vw.loads) for vw in vws)
    workloads = max(len(vw.workloads) for vw in vws)
    script = GNUPLOT % {"png": path, "rows": len(vws), "cols": cols,
                        "width": max(750 * cols, 1300), "height": 700 * len(vws),
                        "ymin": ymin, "ymax": ymax, "xmax": workloads - 0.4,
                        "title": "Apache 2.4 reverse proxy: requests/s (higher is better) - "
                                 "alone vs Bulwark (rules/small, CRS 3.3.4 PL1, PL4) vs "
                                 "mod_security2 (CRS PL1)",
                        "panels_text": "\n".join(panels)}
    with open(path + ".gp", "w") as f:
        f.write(script)
    p = subprocess.run(["gnuplot", path + ".gp"], capture_output=True, text=True)
    if p.returncode != 0:
        print("perf: gnuplot failed:\n" + p.stderr, file=sys.stderr)
        return None
    os.unlink(data)
    os.unlink(path + ".gp")
    return path


# --------------------------------------------------------------------------

def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def read_csv(path):
    with open(path, newline="") as f:
        return normalise(list(csv.DictReader(f)))


README_START = "<!-- perf-latest:start (tools/perf/run rewrites this part) -->"
README_END = "<!-- perf-latest:end -->"


def update_readme(path, rows, variants_def, command, info, commands=()):
    """Replaces the marked part of tools/perf/README.md with the summary of
    this run, so that the README always shows the latest full run."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return False
    if README_START not in text or README_END not in text:
        return False
    part = ["", "Latest run (%s, %s; %s), made by" % (info.get("date", "?"), info.get("cpu", "?"),
                                                     info.get("duration", "?")),
            "", "```sh", command, "```", "",
            "![requests per second](results/latest.png)", "",
            "Requests per second, medians (ratio to Apache alone on the same front); details,"
            " latency, CPU per request, the exact load-generator commands and the machine in"
            " [results/latest.md](results/latest.md).", ""]
    for vw in views(rows, variants_def):
        heading, how, _ = FRONTS[vw.front]
        part += ["**%s**. %s." % (heading, how), ""]
        part += md_summary(vw) + [""]
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    with open(path, "w") as f:
        f.write(head + README_START + "\n".join(part) + README_END + tail)
    return True


def write_all(out, name, rows, checks, variants_def, a, command, info, commands=()):
    os.makedirs(out, exist_ok=True)
    csv_path = os.path.join(out, name + ".csv")
    png_path = os.path.join(out, name + ".png")
    md_path = os.path.join(out, name + ".md")
    write_csv(csv_path, rows)
    rows = read_csv(csv_path)
    params = ("runs of about %g s (a fixed request count sized from a calibration run); "
              "medians of %d round%s" % (a.time, a.rounds, "s" if a.rounds > 1 else ""))
    # What the CSV does not hold, for rebuilding the report from it later.
    with open(os.path.join(out, name + ".meta.json"), "w") as f:
        json.dump({"command": command, "info": info, "params": params,
                   "variants": [[v, d[0]] for v, d in variants_def.items()],
                   "checks": [[fr, v, w, s, ids] for (fr, v, w), (s, ids) in checks.items()],
                   "commands": [list(c) for c in commands]}, f, indent=1)
    written = [csv_path]
    if write_png(png_path, rows, variants_def):
        written.append(png_path)
    write_md(md_path, name + ".png", name + ".csv", rows, checks, variants_def, command, info,
             params, commands)
    written.append(md_path)
    return written


def main(argv):
    """Rebuilds the chart and tables from a CSV of raw runs and its .meta.json."""
    src = argv[0]
    base = os.path.splitext(os.path.basename(src))[0]
    out = os.path.dirname(os.path.abspath(src))
    rows = read_csv(src)
    try:
        with open(os.path.join(out, base + ".meta.json")) as f:
            meta = json.load(f)
    except OSError:
        meta = {"command": "(unknown)", "info": machine_info(None), "params": "see the CSV",
                "checks": [], "variants": [[v, v] for v in sorted({r["variant"] for r in rows})]}
    variants = {v: (label,) for v, label in meta["variants"]}
    # Checks of a run made before fronts existed have no front: HTTP/1.1.
    checks = {tuple(c[:-2]) if len(c) == 5 else ("h1",) + tuple(c[:-2]): (c[-2], c[-1])
              for c in meta["checks"]}
    png = write_png(os.path.join(out, base + ".png"), rows, variants)
    write_md(os.path.join(out, base + ".md"), base + ".png", base + ".csv", rows, checks,
             variants, meta["command"], meta["info"], meta["params"], meta.get("commands", ()))
    print("rebuilt %s.md%s" % (base, " and .png" if png else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
