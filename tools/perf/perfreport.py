"""Reports of tools/perf/run: raw CSV, markdown table, gnuplot chart.

Kept apart from the runner so that a report can be rebuilt from a CSV
(`python3 tools/perf/perfreport.py results/latest.csv`) without rerunning
the benchmark, e.g. after changing the chart.
"""

import csv
import datetime
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys

FIELDS = ("round", "workload", "concurrency", "variant", "requests", "complete", "failed",
          "non2xx", "keepalive", "seconds", "rps", "mean_ms", "apache_cpu_s", "cpu_us",
          "backend_cpu_us", "capped", "failed_detail")

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
        "apache": "%s (mpm_event), ab %s" % (_pkg("apache2"), _pkg("apache2-utils")),
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

def medians(rows):
    """{(variant, workload, conc): {metric: median}} over the rounds."""
    groups = {}
    for r in rows:
        groups.setdefault((r["variant"], r["workload"], int(r["concurrency"])), []).append(r)
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


def fmt_rps(x):
    return "%.0f" % x if x >= 100 else "%.1f" % x if x >= 10 else "%.2f" % x


def fmt_ratio(x):
    return "%.2fx" % x if x >= 0.1 else "%.3fx" % x if x >= 0.001 else "%.4fx" % x


# --------------------------------------------------------------------------
# Markdown

def md_summary(med, variants, labels, workloads, concs):
    # Bulwark's and mod_security2's CRS PL1 side by side: the issue's goal.
    vs = "crs-pl1" in variants and "modsec2" in variants
    head = "| workload | c | " + " | ".join(labels[v] for v in variants) + " |"
    head += " CRS PL1: Bulwark / mod_security2 |" if vs else ""
    lines = [head, "|---|--:|" + "--:|" * (len(variants) + vs)]
    for w in workloads:
        for c in concs:
            base = med.get(("none", w, c))
            cells = []
            for v in variants:
                m = med.get((v, w, c))
                if not m:
                    cells.append("–")
                elif v == "none" or not base:
                    cells.append(fmt_rps(m["rps"]))
                else:
                    cells.append("%s (%s)" % (fmt_rps(m["rps"]), fmt_ratio(m["rps"] / base["rps"])))
            if vs:
                b, m = med.get(("crs-pl1", w, c)), med.get(("modsec2", w, c))
                cells.append("%.1fx" % (b["rps"] / m["rps"]) if b and m else "–")
            lines.append("| %s | %d | %s |" % (WORKLOAD_LABELS.get(w, w), c, " | ".join(cells)))
    return lines


def md_detail(med, variants, labels, workloads, concs):
    lines = ["| workload | c | variant | req/s | × alone | mean latency ms | "
             "Apache CPU µs/req | WAF CPU µs/req | runs | req/s min–max |",
             "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|"]
    for w in workloads:
        for c in concs:
            base = med.get(("none", w, c))
            for v in variants:
                m = med.get((v, w, c))
                if not m:
                    continue
                ratio = fmt_ratio(m["rps"] / base["rps"]) if base else "–"
                extra = "%.0f" % (m["cpu_us"] - base["cpu_us"]) if base and v != "none" else "–"
                flag = " ⚠ %d non-2xx" % m["non2xx"] if m["non2xx"] else ""
                lines.append("| %s | %d | %s%s | %s | %s | %.2f | %.0f | %s | %d | %s–%s |"
                             % (WORKLOAD_LABELS.get(w, w), c, labels[v], flag, fmt_rps(m["rps"]),
                                ratio, m["mean_ms"], m["cpu_us"], extra, m["runs"],
                                fmt_rps(m["rps_min"]), fmt_rps(m["rps_max"])))
    return lines


def md_checks(checks, variants, labels, workloads):
    if not checks:
        return ["(no check results: report rebuilt from a CSV)"]
    lines = ["| workload | " + " | ".join(labels[v] for v in variants) + " |",
             "|---|" + "---|" * len(variants)]
    for w in workloads:
        cells = []
        for v in variants:
            status, ids = checks.get((v, w), (0, []))
            cell = str(status or "no answer")
            if ids:
                cell += " (logged: %s)" % ", ".join(ids)
            if status != 200:
                cell = "**%s**" % cell
            cells.append(cell)
        lines.append("| %s | %s |" % (WORKLOAD_LABELS.get(w, w), " | ".join(cells)))
    return lines


def write_md(path, png_name, csv_name, rows, checks, variants_def, command, info, params):
    med = medians(rows)
    variants = order(rows, "variant", variants_def)
    workloads = order(rows, "workload", WORKLOAD_LABELS)
    concs = sorted({int(r["concurrency"]) for r in rows})
    labels = {v: variants_def[v][0] for v in variants}
    bad = [(k, m) for k, m in med.items() if m["non2xx"] or m["failed"]]
    L = ["# Bulwark perf: Apache alone vs Bulwark vs mod_security2", "",
         "Generated by `tools/perf/run` (see `tools/perf/README.md`). Command:", "",
         "```sh", command, "```", "",
         "Reverse proxy (Apache mpm_event) to a one-thread C backend on loopback; `ab -k`;"
         " %s; variants interleaved (A B C D E, A B C D E, …)." % params, "",
         "![requests per second](%s)" % png_name, "",
         "## Requests per second (ratio to Apache alone)", ""]
    L += md_summary(med, variants, labels, workloads, concs)
    L += ["", "## Detail", "",
          "Mean latency is ab's mean time per request; CPU is utime+stime of all Apache processes"
          " (`/proc/<pid>/stat`) over the run, per completed request; *WAF CPU* is that minus"
          " Apache alone's for the same workload and concurrency.", ""]
    L += md_detail(med, variants, labels, workloads, concs)
    L += ["", "## Check: status of one request per variant and workload", "",
          "Every workload is benign: each variant must answer 200. Rule ids that logged"
          " (below the blocking threshold) are listed.", ""]
    L += md_checks(checks, variants, labels, workloads)
    if bad:
        L += ["", "**Warning:** non-2xx or failed responses in %d measurement(s): %s"
              % (len(bad), ", ".join("%s/%s/c=%d" % k for k, _ in bad))]
    L += ["", "## Machine", ""] + ["- %s: %s" % (k, v) for k, v in info.items()]
    L += ["", "Raw runs: [%s](%s)." % (csv_name, csv_name), ""]
    with open(path, "w") as f:
        f.write("\n".join(L))


# --------------------------------------------------------------------------
# Chart

GNUPLOT = r"""
set terminal pngcairo size 1500,700 font "DejaVu Sans,11" noenhanced
set output "%(png)s"
set multiplot layout 1,%(panels)d title "%(title)s"
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


def write_png(path, rows, variants_def):
    """Clustered bars: one panel per concurrency, one cluster per workload,
    one bar per variant, value on top of each bar."""
    med = medians(rows)
    variants = order(rows, "variant", variants_def)
    workloads = order(rows, "workload", WORKLOAD_LABELS)
    concs = sorted({int(r["concurrency"]) for r in rows})
    if not shutil_which("gnuplot"):
        print("perf: gnuplot not found: no chart (apt-get install gnuplot-nox)", file=sys.stderr)
        return None
    vals = [m["rps"] for m in med.values() if m["rps"] > 0] or [1]
    # Whole decades, with one to spare on top for the key and the values.
    ymin, ymax = 10 ** _floor_log10(min(vals)), 10 ** (_floor_log10(max(vals)) + 2)
    data = path + ".dat"
    n = len(variants)
    panels = []
    with open(data, "w") as f:
        for i, c in enumerate(concs):
            f.write("# c=%d\n" % c)
            for w in workloads:
                cells = ["%.4f" % med[(v, w, c)]["rps"] if (v, w, c) in med else "NaN" for v in variants]
                f.write('"%s" %s\n' % (CHART_LABELS.get(w, w), " ".join(cells)))
            f.write("\n\n")
            plots = ["'%s' index %d using %d:xtic(1) title '%s'" % (data, i, j + 2, variants_def[v][0])
                     for j, v in enumerate(variants)]
            plots += ["'%s' index %d using ($0+(%d.0-%g)/%g.0):%d:(column(%d) >= 100 ? "
                      "sprintf('%%.0f', column(%d)) : sprintf('%%.1f', column(%d))) with labels "
                      "rotate left offset 0,0.3 font ',8' notitle"
                      % (data, i, j, (n - 1) / 2.0, n + 1, j + 2, j + 2, j + 2, j + 2)
                      for j, v in enumerate(variants)]
            panels.append('set title "concurrency %d, keep-alive"\nplot %s' % (c, ", \\\n  ".join(plots)))
    script = GNUPLOT % {"png": path, "panels": len(concs), "ymin": ymin, "ymax": ymax,
                        "xmax": len(workloads) - 0.4,
                        "title": "Apache 2.4 reverse proxy, ab -k: requests/s (higher is better) - "
                                 "alone vs Bulwark (rules/small, CRS 3.3.4 PL1, PL4) vs mod_security2 "
                                 "(CRS PL1)",
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


def shutil_which(name):
    import shutil
    return shutil.which(name)


def _floor_log10(x):
    import math
    return math.floor(math.log10(x))


# --------------------------------------------------------------------------

def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


README_START = "<!-- perf-latest:start (tools/perf/run rewrites this part) -->"
README_END = "<!-- perf-latest:end -->"


def update_readme(path, rows, variants_def, command, info):
    """Replaces the marked part of tools/perf/README.md with the summary of
    this run, so that the README always shows the latest full run."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return False
    if README_START not in text or README_END not in text:
        return False
    med = medians(rows)
    variants = order(rows, "variant", variants_def)
    workloads = order(rows, "workload", WORKLOAD_LABELS)
    concs = sorted({int(r["concurrency"]) for r in rows})
    labels = {v: variants_def[v][0] for v in variants}
    part = ["", "Latest run (%s, %s; %s), made by" % (info.get("date", "?"), info.get("cpu", "?"),
                                                     info.get("duration", "?")),
            "", "```sh", command, "```", "",
            "![requests per second](results/latest.png)", "",
            "Requests per second, medians (ratio to Apache alone); details, latency, CPU per"
            " request and the machine in [results/latest.md](results/latest.md):", ""]
    part += md_summary(med, variants, labels, workloads, concs) + [""]
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    with open(path, "w") as f:
        f.write(head + README_START + "\n".join(part) + README_END + tail)
    return True


def write_all(out, name, rows, checks, variants_def, a, command, info):
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
                   "checks": [[v, w, s, ids] for (v, w), (s, ids) in checks.items()]}, f, indent=1)
    written = [csv_path]
    if write_png(png_path, rows, variants_def):
        written.append(png_path)
    write_md(md_path, name + ".png", name + ".csv", rows, checks, variants_def, command, info, params)
    written.append(md_path)
    return written


if __name__ == "__main__":
    # Rebuild the chart and tables from a CSV of raw runs and its .meta.json.
    src = sys.argv[1]
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
    checks = {(v, w): (s, ids) for v, w, s, ids in meta["checks"]}
    png = write_png(os.path.join(out, base + ".png"), rows, variants)
    write_md(os.path.join(out, base + ".md"), base + ".png", base + ".csv", rows, checks,
             variants, meta["command"], meta["info"], meta["params"])
    print("rebuilt %s.md%s" % (base, " and .png" if png else ""))
